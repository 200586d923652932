//! Go to definition, find references and hover, over the name sites `resolve` indexes.
//!
//! The name under the cursor is found among the file's own sites (`resolve::stage_name_sites`,
//! `manifest_name_sites`, `agent_name_sites`, read from the frontmatter outline, so a file with
//! errors is still navigable); where it is declared and used comes from `resolve::name_index`.
//! What hover says comes from the compile's queries: the manifest as `parse::parsed_manifest`
//! validated it, the stage's number as `stage_graph::numbering::stage_number` gave it.

use std::fmt::Write as _;

use camino::Utf8Path;
use lsp_types::{Hover, HoverContents, Location, MarkupContent, MarkupKind};

use super::positions::TextPositions;
use super::server_state::{FileKind, ServerState};
use super::uri::uri_of_path;
use crate::compile::db::SourceFile;
use crate::compile::resolve::{
    IndexedSite, NameSite, SiteName, SiteRole, agent_name_sites, manifest_name_sites, name_index,
    stage_name_sites,
};

/// How many importing stages a hover lists before it says how many more there are.
const MAX_LISTED: usize = 12;

/// The name site at a byte offset of a file (its start to its end, both included, so a cursor
/// just after a word still finds it).
pub fn site_at(
    state: &ServerState,
    file: SourceFile,
    kind: FileKind,
    offset: usize,
) -> Option<NameSite> {
    let db = &state.db;
    let sites = match kind {
        FileKind::Stage => stage_name_sites(db, file),
        FileKind::Manifest => manifest_name_sites(db, file),
        FileKind::Agent => agent_name_sites(db, file),
        FileKind::Scope | FileKind::Rule | FileKind::HarnessSettings | FileKind::Generated => {
            return None;
        }
    };
    sites
        .iter()
        .find(|site| site.span.start <= offset && offset <= site.span.end)
        .cloned()
}

/// Where the name under the cursor is declared: the manifest's `id:`, the stage's `slug:`,
/// the producing stages' `produces` items, the agent file's `name:`.
pub fn definition(
    state: &ServerState,
    file: SourceFile,
    kind: FileKind,
    offset: usize,
) -> Option<Vec<Location>> {
    let locations = references(state, file, kind, offset, Some(SiteRole::Declaration))?;
    (!locations.is_empty()).then_some(locations)
}

/// Every place that names what is under the cursor with `role` (with any role for `None`):
/// from a manifest's `id:` (or an import), the stages importing it; from a slug, the stages
/// requiring it; and so on.
pub fn references(
    state: &ServerState,
    file: SourceFile,
    kind: FileKind,
    offset: usize,
    role: Option<SiteRole>,
) -> Option<Vec<Location>> {
    let site = site_at(state, file, kind, offset)?;
    let sites = name_index(&state.db).get(&site.name)?;
    Some(
        sites
            .iter()
            .filter(|site| role.is_none_or(|role| site.role == role))
            .filter_map(|site| location_of(state, site))
            .collect(),
    )
}

fn location_of(state: &ServerState, site: &IndexedSite) -> Option<Location> {
    let display = site.file.path(&state.db);
    let uri = match state.document(&state.absolute_path(display)) {
        Some(document) => document.uri.clone(),
        None => uri_of_path(&state.absolute_path(display))?,
    };
    let text = state.text_of(site.file)?;
    let range = TextPositions::new(text, state.unit).range(&site.span);
    Some(Location::new(uri, range))
}

/// What the name under the cursor is: a sensor's manifest and its importers, a stage's phase,
/// number and outputs, an artifact's producers and consumers, an agent's file.
pub fn hover(
    state: &ServerState,
    file: SourceFile,
    kind: FileKind,
    offset: usize,
) -> Option<Hover> {
    let site = site_at(state, file, kind, offset)?;
    let index = name_index(&state.db);
    let sites: &[IndexedSite] = index.get(&site.name).map_or(&[], Vec::as_slice);
    let markdown = match &site.name {
        SiteName::Sensor(id) => sensor_hover(state, id, sites),
        SiteName::Stage(slug) => stage_hover(state, slug, sites),
        SiteName::Artifact(artifact) => artifact_hover(state, artifact, sites),
        SiteName::Agent(name) => agent_hover(state, name, sites),
    };
    let text = state.text_of(file)?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(TextPositions::new(text, state.unit).range(&site.span)),
    })
}

fn declarations(sites: &[IndexedSite]) -> impl Iterator<Item = &IndexedSite> {
    sites
        .iter()
        .filter(|site| site.role == SiteRole::Declaration)
}

fn references_of(sites: &[IndexedSite]) -> impl Iterator<Item = &IndexedSite> {
    sites.iter().filter(|site| site.role == SiteRole::Reference)
}

fn sensor_hover(state: &ServerState, id: &str, sites: &[IndexedSite]) -> String {
    let db = &state.db;
    let mut out = format!("**sensor `{id}`**\n\n");
    match declarations(sites).next() {
        None => out.push_str("No manifest declares this id.\n"),
        Some(declaration) => {
            let path = declaration.file.path(db);
            match &crate::compile::parse::parsed_manifest(db, declaration.file).manifest {
                None => {
                    let _ = writeln!(
                        out,
                        "Declared in `{path}`, which has errors: the compile does not load it (see its diagnostics)."
                    );
                }
                Some(manifest) => {
                    let matches = manifest.matches.as_deref().map_or_else(
                        || "every path (not set)".to_owned(),
                        |glob| format!("`{glob}`"),
                    );
                    let timeout = manifest.timeout_seconds.map_or_else(
                        || "not set (the dispatcher's 1200)".to_owned(),
                        |seconds| seconds.to_string(),
                    );
                    let _ = writeln!(
                        out,
                        "{}\n\n- kind: `{}`\n- default_severity: `{}`\n- fire_on: `{}`\n- matches: {matches}\n- timeout_seconds: {timeout}\n- manifest: `{path}`",
                        manifest.description.trim(),
                        manifest.kind,
                        manifest.default_severity.as_str(),
                        manifest.fire_on.as_str(),
                    );
                }
            }
        }
    }
    out.push('\n');
    out.push_str(&listed_stages("Imported by", state, references_of(sites)));
    out
}

fn stage_hover(state: &ServerState, slug: &str, sites: &[IndexedSite]) -> String {
    let db = &state.db;
    let mut out = format!("**stage `{slug}`**");
    let Some(declaration) = declarations(sites).next() else {
        out.push_str("\n\nNo stage file declares this slug.\n");
        return out;
    };
    if let Some(name) = frontmatter_scalar(state, declaration.file, "name") {
        let _ = write!(out, " — {name}");
    }
    let phase =
        frontmatter_scalar(state, declaration.file, "phase").unwrap_or_else(|| "?".to_owned());
    let number = crate::compile::stage_graph::numbering::stage_number(db, declaration.file)
        .as_ref()
        .map_or_else(
            || "none yet (the stage has errors)".to_owned(),
            |(number, _)| format!("`{number}`"),
        );
    let produces: Vec<String> = stage_name_sites(db, declaration.file)
        .iter()
        .filter_map(|site| match (&site.name, site.role) {
            (SiteName::Artifact(artifact), SiteRole::Declaration) => Some(format!("`{artifact}`")),
            _ => None,
        })
        .collect();
    let produces = if produces.is_empty() {
        "nothing".to_owned()
    } else {
        produces.join(", ")
    };
    let _ = write!(
        out,
        "\n\n- phase: `{phase}`\n- number: {number}\n- produces: {produces}\n- file: `{}`\n\n",
        declaration.file.path(db)
    );
    out.push_str(&listed_stages("Required by", state, references_of(sites)));
    out
}

fn artifact_hover(state: &ServerState, artifact: &str, sites: &[IndexedSite]) -> String {
    format!(
        "**artifact `{artifact}`**\n\n{}\n{}",
        listed_stages("Produced by", state, declarations(sites)),
        listed_stages("Consumed by", state, references_of(sites))
    )
}

fn agent_hover(state: &ServerState, name: &str, sites: &[IndexedSite]) -> String {
    let db = &state.db;
    let mut out = format!("**agent `{name}`**\n\n");
    match declarations(sites).next() {
        Some(declaration) => {
            if let Some(display_name) = frontmatter_scalar(state, declaration.file, "display_name")
            {
                let _ = writeln!(out, "{display_name}\n");
            }
            let _ = writeln!(out, "- file: `{}`", declaration.file.path(db));
        }
        None if name == "orchestrator" => {
            out.push_str("The conductor itself: it needs no agent file.\n");
        }
        None => out.push_str("No agent file declares this name.\n"),
    }
    out.push('\n');
    out.push_str(&listed_stages("Named by", state, references_of(sites)));
    out
}

/// The scalar text of a top-level frontmatter key of `file`.
fn frontmatter_scalar(state: &ServerState, file: SourceFile, key: &str) -> Option<String> {
    crate::compile::parse::frontmatter_outline(&state.db, file)
        .as_ref()?
        .value(key)
        .and_then(crate::compile::syntax::document::scalar_string)
        .map(str::to_owned)
}

/// "Imported by 3 stages: `a`, `b`, `c`": the stages of the files of `sites`, at most
/// [`MAX_LISTED`] of them shown.
fn listed_stages<'a>(
    lead: &str,
    state: &ServerState,
    sites: impl Iterator<Item = &'a IndexedSite>,
) -> String {
    let mut slugs: Vec<String> = sites
        .filter_map(|site| slug_of_stage_file(state, site.file))
        .collect();
    slugs.dedup();
    if slugs.is_empty() {
        return format!("{lead} no stage.\n");
    }
    let shown: Vec<String> = slugs
        .iter()
        .take(MAX_LISTED)
        .map(|slug| format!("`{slug}`"))
        .collect();
    let more = slugs.len().saturating_sub(MAX_LISTED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "{lead} {}: {}{tail}.\n",
        crate::leaves::english::counted(slugs.len(), "stage"),
        shown.join(", ")
    )
}

/// The slug a stage file declares, for lists of stages.
fn slug_of_stage_file(state: &ServerState, file: SourceFile) -> Option<String> {
    stage_name_sites(&state.db, file)
        .iter()
        .find_map(|site| match (&site.name, site.role) {
            (SiteName::Stage(slug), SiteRole::Declaration) => Some(slug.clone()),
            _ => None,
        })
        .or_else(|| {
            let path: &Utf8Path = file.path(&state.db);
            path.file_stem().map(str::to_owned)
        })
}
