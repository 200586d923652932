//! A composed install's diagnostics carried back to the plugin files whose text they point at
//! (docs/decisions.md D52, D53): the compile reads the installed copies, the author edits the
//! plugin's own files.
//!
//! Data flow: the plugin trees (read before the composition) and the base text of each core
//! stage a contribution changed → [`AuthoredFiles`] → [`AuthoredFiles::carried_back`] over the
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
//!   span lies in text the contribution wrote (`plugin::contributed_text`), its message then
//!   naming the core stage; any other diagnostic keeps its installed file and span, with the
//!   composed text;
//! - pure once built: nothing here reads the disk but [`stage_texts`].

use std::collections::BTreeMap;
use std::ops::Range;

use camino::{Utf8Path, Utf8PathBuf};

use crate::diagnostics::Diagnostic;
use crate::discover::Layout;
use crate::harness::Harness;
use crate::plugin::contributed_text::{self, ContributionFile};
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

/// A contribution file as read, parsed only when a diagnostic needs it.
struct ContributionSource {
    plugin: String,
    source: Utf8PathBuf,
    authored: String,
}

/// What the composition made of the plugins' files, to carry diagnostics back to them.
pub struct AuthoredFiles {
    /// Project-relative installed path → the plugin file copied there.
    shipped: BTreeMap<Utf8PathBuf, ShippedFile>,
    /// The plugins' Markdown contribution files.
    contributions: Vec<ContributionSource>,
    /// Each core stage a contribution changed, by its project-relative path: its text before.
    bases: BTreeMap<Utf8PathBuf, String>,
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
    /// no base texts yet ([`Self::with_bases`]).
    pub fn of_trees<'t>(trees: impl IntoIterator<Item = &'t PluginTree>, layout: &Layout) -> Self {
        let harness_root = layout.project_dir.join(layout.harness.dir_name());
        let mut shipped = BTreeMap::new();
        let mut contributions = Vec::new();
        for tree in trees {
            for file in &tree.files {
                let Some(text) = file.text() else {
                    continue;
                };
                let folder = match file.subtree {
                    Subtree::Stages => layout.stages_dir.clone(),
                    Subtree::Scopes => layout.scopes_dir.clone(),
                    Subtree::Agents => layout.agents_dir.clone(),
                    Subtree::Sensors => layout.sensors_dir.clone(),
                    Subtree::Knowledge => harness_root.join("knowledge"),
                    Subtree::Tools => harness_root.join("tools"),
                    Subtree::Overlays => {
                        if file.is_markdown() {
                            contributions.push(ContributionSource {
                                plugin: tree.name().to_owned(),
                                source: file.source.clone(),
                                authored: text.to_owned(),
                            });
                        }
                        continue;
                    }
                    Subtree::Memory => continue,
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
            bases: BTreeMap::new(),
            harness: layout.harness,
        }
    }

    /// The base text of each core stage the composition changed, by its project-relative path
    /// (the lock file's `stages`, or the fresh framework's stages read before composing).
    #[must_use]
    pub fn with_bases(mut self, bases: BTreeMap<Utf8PathBuf, String>) -> Self {
        self.bases = bases;
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
        let contributions: Vec<ContributionFile> = self
            .contributions
            .iter()
            .filter_map(|file| {
                ContributionFile::read(&file.plugin, file.source.clone(), file.authored.clone())
            })
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
                && let Some((contribution, found, slug)) =
                    self.in_contribution(&contributions, file, composed, at)
            {
                let shown = (naming.authored)(&contribution.in_plugin);
                sources.insert(shown.clone(), contribution.authored.clone());
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
                if let Some(file) = diagnostic.file.take() {
                    let (file, span, note) = carry(&file, diagnostic.span.take());
                    diagnostic.file = Some(file);
                    diagnostic.span = span;
                    if let Some(note) = note {
                        diagnostic.message.push_str(&note);
                    }
                }
                for related in &mut diagnostic.related {
                    let (file, span, _) = carry(&related.file, related.span.take());
                    related.file = file;
                    related.span = span;
                }
                diagnostic
            })
            .collect();
        (carried, sources)
    }

    /// Where `span` of the composed core stage `file` (project-relative) is in one of
    /// `contributions`, when a contribution wrote that text: the file, the span there, and the
    /// stage's slug.
    fn in_contribution<'c>(
        &self,
        contributions: &'c [ContributionFile],
        file: &Utf8Path,
        composed: &str,
        span: &Range<usize>,
    ) -> Option<(&'c ContributionFile, Range<usize>, String)> {
        let base = self.bases.get(file)?;
        if base == composed {
            return None;
        }
        let slug = file.file_stem()?;
        let (index, found) = contributed_text::span_in_contribution(
            slug,
            base,
            composed,
            span,
            contributions,
            self.harness.dir_name(),
        )?;
        Some((&contributions[index], found, slug.to_owned()))
    }
}

/// Every Markdown file under `folder`, by its project-relative path (an unreadable one is left
/// out: its diagnostics keep their installed file).
pub fn stage_texts(layout: &Layout, folder: &Utf8Path, out: &mut BTreeMap<Utf8PathBuf, String>) {
    let Ok(entries) = folder.read_dir_utf8() else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            stage_texts(layout, path, out);
        } else if path.extension() == Some("md")
            && let Ok(text) = std::fs::read_to_string(path)
        {
            out.insert(layout.display(path), text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Code;

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
        let tree = crate::plugin::tree::read_tree(&root).unwrap();
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
}
