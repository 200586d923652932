//! A composed install's diagnostics carried back to the plugin files whose text they point at
//! (docs/decisions.md D52, D53): the compile reads the installed copies, the author edits the
//! plugin's own files.
//!
//! Data flow: the plugin trees (read before the composition) and the text the composition
//! recorded contributions wrote into core stages → [`AuthoredFiles`] → [`AuthoredFiles::carried_back`] over the
//! compile's diagnostics and the texts they point into → diagnostics on the authored files, with
//! their spans and snippets there, and the texts of those files. `plugin add|sync` (their
//! `CompileFailed`, printed by the command and by `compile --watch`) and the own-tree compile
//! use it; they differ only in how a file is named ([`Naming`]).
//!
//! Invariants:
//! - a diagnostic in a copy a plugin shipped goes to that plugin's file, its span mapped back
//!   across the `{{HARNESS_DIR}}` substitution (`plugin::placeholder_span`), with the authored
//!   text as its snippet;
//! - a diagnostic in a core stage a contribution changed goes to the contribution only when its
//!   span lies in text the contribution wrote, as the composition recorded it
//!   (`plugin::contributed_text`), its message then
//!   naming the core stage; any other diagnostic keeps its installed file and span, with the
//!   composed text;
//! - a diagnostic's message, label, help and related notes name a shipped copy as its location
//!   would be named: each whole installed path of a copy (as the compile prints it,
//!   project-relative) is replaced by its plugin file's name ([`rename_paths_in`]); any other
//!   path in them, a core file's, is left as printed;
//! - pure: nothing here reads the disk.

use std::collections::BTreeMap;
use std::ops::Range;

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::Layout;
use crate::harness::Harness;
use crate::leaves::diagnostics::Diagnostic;
use crate::plugin::contributed_text::{self, ContributedText};
use crate::plugin::manifest::Subtree;
use crate::plugin::placeholder_span::{HARNESS_PLACEHOLDER, authored_span};
use crate::plugin::tree::PluginTree;

/// One file a plugin shipped, as it lands in the install.
struct ShippedFile {
    /// Where it was read (absolute, in the plugin's tree).
    source: Utf8PathBuf,
    /// Its text as authored.
    authored: String,
    /// Whether the composition substituted `{{HARNESS_DIR}}` in it (Markdown files).
    substituted: bool,
}

/// What the composition made of the plugins' files, to carry diagnostics back to them.
pub struct AuthoredFiles {
    /// Project-relative installed path → the plugin file copied there.
    shipped: BTreeMap<Utf8PathBuf, ShippedFile>,
    /// The plugins' Markdown contribution files (absolute, in the plugins' trees) → their text
    /// as authored (normalised as the composition reads it).
    contributions: BTreeMap<Utf8PathBuf, String>,
    /// The text contributions wrote into the core stages, as the composition recorded it.
    contributed: ContributedText,
    harness: Harness,
}

/// How a carried-back diagnostic names its file.
pub struct Naming<'a> {
    /// A plugin's file, given by its absolute path in the plugin's tree.
    pub authored: &'a dyn Fn(&Utf8Path) -> Utf8PathBuf,
    /// A file of the install no plugin file stands for, given project-relative.
    pub installed: &'a dyn Fn(&Utf8Path) -> Utf8PathBuf,
}

/// Where a diagnostic's file and span are shown, and a sentence to add to its message when the
/// file is a contribution standing for a core stage.
type Carried = (Utf8PathBuf, Option<Range<usize>>, Option<String>);

impl AuthoredFiles {
    /// The files of `trees` as the composition lays them out in the install of `layout`, with
    /// no contributed text yet ([`Self::with_contributed`]).
    pub fn of_trees<'t>(trees: impl IntoIterator<Item = &'t PluginTree>, layout: &Layout) -> Self {
        let mut shipped = BTreeMap::new();
        let mut contributions = BTreeMap::new();
        for tree in trees {
            for file in &tree.files {
                let Some(text) = file.text() else {
                    continue;
                };
                if file.subtree == Subtree::Overlays && file.is_markdown() {
                    // As the composition read it: the text its recorded spans index.
                    let text = crate::plugin::contribution::normalised_text(text);
                    contributions.insert(file.source.clone(), text);
                }
                let Some(folder) = crate::plugin::compose::installed_folder(layout, file.subtree)
                else {
                    continue;
                };
                shipped.insert(
                    layout.display(&folder.join(&file.relative)),
                    ShippedFile {
                        source: file.source.clone(),
                        authored: text.to_owned(),
                        substituted: file.is_markdown(),
                    },
                );
            }
        }
        Self {
            shipped,
            contributions,
            contributed: ContributedText::new(),
            harness: layout.harness,
        }
    }

    /// The text the composition recorded contributions wrote into the core stages.
    #[must_use]
    pub fn with_contributed(mut self, contributed: ContributedText) -> Self {
        self.contributed = contributed;
        self
    }

    /// `diagnostics` (on installed files, project-relative, whose composed texts are `texts`)
    /// carried back to the plugins' files, and the text of each file they now name.
    pub fn carried_back(
        &self,
        diagnostics: &[Diagnostic],
        texts: &BTreeMap<Utf8PathBuf, String>,
        naming: &Naming<'_>,
    ) -> (Vec<Diagnostic>, BTreeMap<Utf8PathBuf, String>) {
        let renamed: BTreeMap<&str, Utf8PathBuf> = self
            .shipped
            .iter()
            .map(|(installed, shipped)| (installed.as_str(), (naming.authored)(&shipped.source)))
            .collect();
        let mut sources = BTreeMap::new();
        let mut carry = |file: &Utf8Path, span: Option<Range<usize>>| -> Carried {
            if let Some(shipped) = self.shipped.get(file) {
                let shown = (naming.authored)(&shipped.source);
                sources.insert(shown.clone(), shipped.authored.clone());
                let harness_dir = if shipped.substituted {
                    self.harness.dir_name()
                } else {
                    HARNESS_PLACEHOLDER
                };
                let span = span.map(|span| authored_span(&shipped.authored, harness_dir, span));
                return (shown, span, None);
            }
            let composed = texts.get(file);
            if let (Some(composed), Some(at)) = (composed, &span)
                && let Some((source, authored, found, slug)) =
                    self.in_contribution(file, composed, at)
            {
                let shown = (naming.authored)(source);
                sources.insert(shown.clone(), authored.to_owned());
                let note = format!(
                    " (text this contribution wrote into core stage \"{slug}\", {})",
                    (naming.installed)(file)
                );
                return (shown, Some(found), Some(note));
            }
            let shown = (naming.installed)(file);
            if let Some(text) = composed {
                sources.insert(shown.clone(), text.clone());
            }
            (shown, span, None)
        };
        let carried = diagnostics
            .iter()
            .map(|diagnostic| {
                let mut diagnostic = diagnostic.clone();
                let texts = [diagnostic.label.as_mut(), diagnostic.help.as_mut()];
                for text in texts.into_iter().flatten() {
                    rename_paths_in(text, &renamed);
                }
                rename_paths_in(&mut diagnostic.message, &renamed);
                if let Some(file) = diagnostic.file.take() {
                    let (file, span, note) = carry(&file, diagnostic.span.take());
                    diagnostic.file = Some(file);
                    diagnostic.span = span;
                    if let Some(note) = note {
                        diagnostic.message.push_str(&note);
                    }
                }
                for related in &mut diagnostic.related {
                    rename_paths_in(&mut related.message, &renamed);
                    let (file, span, _) = carry(&related.file, related.span.take());
                    related.file = file;
                    related.span = span;
                }
                diagnostic
            })
            .collect();
        (carried, sources)
    }

    /// Where `span` of the composed core stage `file` (project-relative) is in a contribution,
    /// when a contribution wrote that text: the contribution file, its authored text, the span
    /// there, and the stage's slug.
    fn in_contribution(
        &self,
        file: &Utf8Path,
        composed: &str,
        span: &Range<usize>,
    ) -> Option<(&Utf8Path, &str, Range<usize>, String)> {
        let recorded = contributed_text::range_holding(self.contributed.get(file)?, span)?;
        let authored = self.contributions.get(&recorded.source)?;
        let found = contributed_text::span_in_contribution(
            recorded,
            span,
            composed,
            authored,
            self.harness.dir_name(),
        )?;
        Some((
            &recorded.source,
            authored,
            found,
            file.file_stem()?.to_owned(),
        ))
    }
}

/// `text` with each whole installed path of `renamed` (project-relative, `/` separators, as the
/// compile prints paths in its messages) replaced by the name its plugin file is shown by.
///
/// A path is whole when neither the character before it nor the one after it continues a path
/// ([`continues_a_path`]; a `.` after it ends a sentence when no path character follows it), so
/// `a/b.md` is not found inside `xa/b.md`, `../a/b.md` or `a/b.md.bak`. One pass from the left,
/// the longest whole path at a place first: a replacement is never searched again.
fn rename_paths_in(text: &mut String, renamed: &BTreeMap<&str, Utf8PathBuf>) {
    if renamed.is_empty() {
        return;
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(here) = text[at..].chars().next() {
        let starts_whole = text[..at]
            .chars()
            .next_back()
            .is_none_or(|before| !continues_a_path(before));
        let found = if starts_whole {
            renamed
                .iter()
                .filter(|(installed, _)| {
                    text[at..].starts_with(**installed)
                        && ends_a_path(&text[at + installed.len()..])
                })
                .max_by_key(|(installed, _)| installed.len())
        } else {
            None
        };
        if let Some((installed, shown)) = found {
            out.push_str(&text[copied..at]);
            out.push_str(shown.as_str());
            at += installed.len();
            copied = at;
        } else {
            at += here.len_utf8();
        }
    }
    if copied > 0 {
        out.push_str(&text[copied..]);
        *text = out;
    }
}

/// Whether `c` can be part of a path as a message prints one (so a path next to it is not whole).
fn continues_a_path(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '\\' | '~' | '+' | '@' | '%')
}

/// Whether a path followed by `rest` ends there: nothing follows, or a character that does not
/// continue a path, or a `.` that ends the sentence (nothing of a path after it).
fn ends_a_path(rest: &str) -> bool {
    let mut after = rest.chars();
    match after.next() {
        None => true,
        Some('.') => after.next().is_none_or(|next| !continues_a_path(next)),
        Some(next) => !continues_a_path(next),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leaves::diagnostics::Code;
    use crate::plugin::tree::TreeReader;

    #[test]
    fn a_shipped_copy_is_carried_to_the_authored_file_and_another_file_stays_installed() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().join("acme")).unwrap();
        std::fs::create_dir_all(root.join(".aidlc-plugin")).unwrap();
        std::fs::write(
            root.join(".aidlc-plugin/plugin.json"),
            "{\"name\": \"acme\", \"version\": \"1.0.0\"}",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("knowledge")).unwrap();
        let authored = "see {{HARNESS_DIR}}/x and `oops`\n";
        std::fs::write(root.join("knowledge/notes.md"), authored).unwrap();
        let tree = crate::plugin::tree::FromDisk.read_tree(&root).unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().join("project")).unwrap();
        let layout = Layout::new(&project, Harness::Claude, &|_| None);
        let files = AuthoredFiles::of_trees([&tree], &layout);

        let installed = Utf8PathBuf::from(".claude/knowledge/notes.md");
        let composed = authored.replace(HARNESS_PLACEHOLDER, ".claude");
        let at = composed.find("`oops`").unwrap();
        let other = Utf8PathBuf::from(".claude/aidlc-common/stages/x.md");
        let diagnostics = [
            Diagnostic::error(Code::PluginRefused, "in the copy")
                .in_file(installed.clone())
                .at(at..at + 6),
            Diagnostic::error(Code::PluginRefused, "elsewhere")
                .in_file(other.clone())
                .at(0..1),
        ];
        let texts = BTreeMap::from([(installed, composed), (other.clone(), "x".to_owned())]);
        let as_read = |source: &Utf8Path| source.to_owned();
        let as_installed = |installed: &Utf8Path| installed.to_owned();
        let naming = Naming {
            authored: &as_read,
            installed: &as_installed,
        };
        let (carried, sources) = files.carried_back(&diagnostics, &texts, &naming);

        let source = root.join("knowledge/notes.md");
        assert_eq!(carried[0].file.as_ref(), Some(&source));
        assert_eq!(&authored[carried[0].span.clone().unwrap()], "`oops`");
        assert_eq!(sources.get(&source).map(String::as_str), Some(authored));
        assert_eq!(carried[1].file.as_ref(), Some(&other));
        assert_eq!(carried[1].span, Some(0..1));
        assert_eq!(sources.get(&other).map(String::as_str), Some("x"));
    }

    fn renamed_paths() -> BTreeMap<&'static str, Utf8PathBuf> {
        BTreeMap::from([
            (
                ".claude/aidlc-common/stages/construction/acme-check.md",
                Utf8PathBuf::from("/plugins/acme/stages/construction/acme-check.md"),
            ),
            (
                ".claude/sensors/aidlc-acme-lint.md",
                Utf8PathBuf::from("/plugins/acme/sensors/aidlc-acme-lint.md"),
            ),
        ])
    }

    fn renamed(text: &str) -> String {
        let mut text = text.to_owned();
        rename_paths_in(&mut text, &renamed_paths());
        text
    }

    #[test]
    fn every_whole_installed_path_in_a_message_is_renamed_and_a_core_path_is_left() {
        assert_eq!(
            renamed(
                "Duplicate producers for consumed artifact \"cd-config\" in .claude/aidlc-common/stages/construction/acme-check.md (stage \"acme-check\"), .claude/aidlc-common/stages/operation/core.md (stage \"core\") — consumed by stage \"x\" in .claude/aidlc-common/stages/construction/acme-check.md. Rename one."
            ),
            "Duplicate producers for consumed artifact \"cd-config\" in /plugins/acme/stages/construction/acme-check.md (stage \"acme-check\"), .claude/aidlc-common/stages/operation/core.md (stage \"core\") — consumed by stage \"x\" in /plugins/acme/stages/construction/acme-check.md. Rename one."
        );
        assert_eq!(
            renamed(
                "change `matches` in .claude/sensors/aidlc-acme-lint.md, or \".claude/sensors/aidlc-acme-lint.md\":3"
            ),
            "change `matches` in /plugins/acme/sensors/aidlc-acme-lint.md, or \"/plugins/acme/sensors/aidlc-acme-lint.md\":3"
        );
        assert_eq!(
            renamed(".claude/sensors/aidlc-acme-lint.md"),
            "/plugins/acme/sensors/aidlc-acme-lint.md"
        );
    }

    #[test]
    fn a_path_inside_a_longer_path_is_not_renamed() {
        for longer in [
            "x.claude/sensors/aidlc-acme-lint.md",
            "../.claude/sensors/aidlc-acme-lint.md",
            "/project/.claude/sensors/aidlc-acme-lint.md",
            ".claude/sensors/aidlc-acme-lint.md.bak",
            ".claude/sensors/aidlc-acme-lint.md/x",
            ".claude/sensors/aidlc-acme-lint.mdx",
            "sub.claude/sensors/aidlc-acme-lint.md_old",
        ] {
            let text = format!("see {longer} here");
            assert_eq!(renamed(&text), text, "{longer}");
        }
        assert_eq!(renamed("no path at all — ü"), "no path at all — ü");
    }

    #[test]
    fn the_related_notes_help_and_label_of_a_carried_diagnostic_are_renamed_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().join("acme")).unwrap();
        std::fs::create_dir_all(root.join(".aidlc-plugin")).unwrap();
        std::fs::write(
            root.join(".aidlc-plugin/plugin.json"),
            "{\"name\": \"acme\", \"version\": \"1.0.0\"}",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("sensors")).unwrap();
        std::fs::write(
            root.join("sensors/aidlc-acme-lint.md"),
            "---\nid: acme-lint\n---\n",
        )
        .unwrap();
        let tree = crate::plugin::tree::FromDisk.read_tree(&root).unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().join("project")).unwrap();
        let layout = Layout::new(&project, Harness::Claude, &|_| None);
        let files = AuthoredFiles::of_trees([&tree], &layout);

        let installed = ".claude/sensors/aidlc-acme-lint.md";
        let core = ".claude/aidlc-common/stages/inception/core.md";
        let diagnostics = [Diagnostic::error(
            Code::DuplicateSensorId,
            format!("also declared in {installed}. Rename one of them."),
        )
        .in_file(core)
        .at(0..1)
        .with_label(format!("as in {installed}"))
        .with_help(format!("change `matches` in {installed}, or not {core}"))
        .with_related(installed, None, format!("first declared in {installed}"))];
        let texts = BTreeMap::from([(Utf8PathBuf::from(core), "x".to_owned())]);
        let in_plugin = |source: &Utf8Path| source.strip_prefix(&root).unwrap().to_owned();
        let labelled = |installed: &Utf8Path| Utf8Path::new("<framework>").join(installed);
        let naming = Naming {
            authored: &in_plugin,
            installed: &labelled,
        };
        let (carried, _) = files.carried_back(&diagnostics, &texts, &naming);

        let shown = "sensors/aidlc-acme-lint.md";
        let carried = &carried[0];
        assert_eq!(
            carried.message,
            format!("also declared in {shown}. Rename one of them.")
        );
        assert_eq!(
            carried.label.as_deref(),
            Some(format!("as in {shown}").as_str())
        );
        assert_eq!(
            carried.help.as_deref(),
            Some(format!("change `matches` in {shown}, or not {core}").as_str()),
            "the core stage's path is left as printed"
        );
        assert_eq!(carried.related[0].file, shown);
        assert_eq!(
            carried.related[0].message,
            format!("first declared in {shown}")
        );
        assert_eq!(
            carried.file.as_deref(),
            Some(Utf8Path::new(
                "<framework>/.claude/aidlc-common/stages/inception/core.md"
            ))
        );
    }
}
