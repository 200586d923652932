//! Templates: `<templates-dir>/<stem>.md` (the team's) before
//! `<framework-templates-dir>/<stem>.md`; for a template-eligible stem its headings replace the
//! floor, for any other the template is ignored with a `config_warning`.

use camino::{Utf8Path, Utf8PathBuf};

use super::headings::h2_headings;
use super::verdict::{SectionsVerdict, TemplateUse};
use crate::runtime::sensors::text::read_text_lossy;

/// The first `<dir>/<stem>.md` that exists, team folder before framework folder.
pub(super) fn resolve_template(stem: &str, template_dirs: &[Utf8PathBuf]) -> Option<Utf8PathBuf> {
    template_dirs
        .iter()
        .map(|dir| dir.join(format!("{stem}.md")))
        .find(|path| path.exists())
}

/// Apply the template at `template_path` to the verdict of the deliverable `stem`: its headings
/// when `stem` is in `template_eligible`, else only a `config_warning`.
pub(super) fn apply_template(
    verdict: &mut SectionsVerdict,
    template_eligible: &[String],
    stage: Option<&str>,
    stem: &str,
    template_path: &Utf8Path,
) -> Result<(), String> {
    if !template_eligible.iter().any(|eligible| eligible == stem) {
        let stage = stage.unwrap_or("?");
        let config_warning = format!(
            "template {stem}.md resolved but artifact \"{stem}\" is not template-eligible for stage \
             \"{stage}\" (questions/timestamp markers are excluded); template ignored, keeping the \
             generic >=2-H2 floor."
        );
        verdict.template = Some(TemplateUse::Ineligible { config_warning });
        return Ok(());
    }
    let template_body = read_text_lossy(template_path)
        .map_err(|error| format!("failed to read template {template_path}: {error}"))?;
    verdict.apply_template_headings(h2_headings(&template_body), template_path.as_str());
    Ok(())
}
