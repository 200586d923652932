//! `aidlc.lock.json` at the project root: what was composed, so that `sync` knows what to keep,
//! update and remove, and so that a removal gives back the exact bytes a plugin was composed on.
//!
//! ```json
//! {
//!   "lockfileVersion": 1,
//!   "harness": ".claude",
//!   "plugins": {
//!     "test-pro": {
//!       "version": "0.1.0",
//!       "kind": "path",
//!       "source": "../plugins/test-pro",
//!       "integrity": "blake3:…",
//!       "dependencies": ["core"],
//!       "files": { ".claude/agents/test-pro-metrics-agent.md": "blake3:…" }
//!     }
//!   },
//!   "stages": {
//!     ".claude/aidlc-common/stages/construction/build-and-test.md": {
//!       "base": "…the stage's text before any contribution…",
//!       "composed": "blake3:…"
//!     }
//!   }
//! }
//! ```
//!
//! The shape follows the reference's example lock (`lockfileVersion`, `harness`, per plugin its
//! `version`, `source`, `commit`, `integrity` and `dependencies`); `files` and `stages` are what
//! this composer needs to be reversible. It is read strictly: an unknown key or a value of the
//! wrong type refuses the command (a lock that cannot be trusted cannot say what to remove).

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use crate::leaves::fs_util::contained::ProjectPath;
use crate::plugin::Problem;

pub const LOCK_FILE_NAME: &str = "aidlc.lock.json";
const LOCKFILE_VERSION: u32 = 1;

/// Where a plugin comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A folder on disk, read again by every sync.
    Path,
    /// A git repository, cloned at a commit; its tree is kept under `aidlc/plugins/<name>/`.
    Git,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LockedPlugin {
    pub version: String,
    pub kind: SourceKind,
    /// As the user gave it: a path (relative to the project when it was given relative) or a
    /// git URL.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The project-relative folder holding a git plugin's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendored: Option<String>,
    pub integrity: String,
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// Every file the plugin put in the install (copies, its sidecar, its vendored tree), by
    /// project-relative path, with the BLAKE3 of the bytes written.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Files that were already in the install with the same bytes when the plugin was composed:
    /// they stay when it is removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<String>,
}

impl LockedPlugin {
    /// The files the plugin put in the install whose bytes are no longer the ones recorded
    /// (edited, or gone), by project-relative path: the drift between the composition and the
    /// installed copies.
    pub fn changed_files(&self, project_dir: &Utf8Path) -> Vec<String> {
        self.files
            .iter()
            .filter(|(path, hash)| !file_has_hash(project_dir, path, hash))
            .map(|(path, _)| path.clone())
            .collect()
    }
}

fn file_has_hash(project_dir: &Utf8Path, path: &str, hash: &str) -> bool {
    crate::leaves::fs_util::read_input(&project_dir.join(path))
        .is_ok_and(|bytes| content_hash(&bytes) == hash)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedStage {
    /// The stage's whole text before composition.
    pub base: String,
    /// The BLAKE3 of the composed text written.
    pub composed: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Lock {
    pub lockfile_version: u32,
    pub harness: String,
    #[serde(default)]
    pub plugins: BTreeMap<String, LockedPlugin>,
    #[serde(default)]
    pub stages: BTreeMap<String, LockedStage>,
}

impl Lock {
    pub fn empty(harness_dir: &str) -> Self {
        Self {
            lockfile_version: LOCKFILE_VERSION,
            harness: harness_dir.to_owned(),
            plugins: BTreeMap::new(),
            stages: BTreeMap::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.plugins.is_empty() && self.stages.is_empty()
    }

    /// The composed core stages whose text is no longer the composed one, by project-relative
    /// path.
    pub fn changed_stages(&self, project_dir: &Utf8Path) -> Vec<String> {
        self.stages
            .iter()
            .filter(|(path, stage)| !file_has_hash(project_dir, path, &stage.composed))
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// The plugin that owns `path`, if one does.
    pub fn owner_of(&self, path: &str) -> Option<&str> {
        self.plugins
            .iter()
            .find(|(_, plugin)| plugin.files.contains_key(path))
            .map(|(name, _)| name.as_str())
    }

    /// The bytes of the lock file (two-space JSON and a final newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        let value = serde_json::to_value(self).unwrap_or_else(|error| {
            unreachable!("a lock of strings and maps always serialises: {error}")
        });
        format!("{}\n", crate::leaves::js_json::pretty_json(&value)).into_bytes()
    }
}

pub fn lock_path(project_dir: &Utf8Path) -> Utf8PathBuf {
    project_dir.join(LOCK_FILE_NAME)
}

/// The lock of the project, or an empty one when there is none. A lock of another harness is
/// refused: one project composes one harness folder.
pub fn read_lock(project_dir: &Utf8Path, harness_dir: &str) -> Result<Lock, Problem> {
    let path = lock_path(project_dir);
    let text = match crate::leaves::fs_util::read_input_text(&path) {
        Ok(text) => text,
        Err(error) if error.is_not_found() => {
            return Ok(Lock::empty(harness_dir));
        }
        Err(error) => {
            return Err(
                Problem::new(format!("cannot read the lock file: {error}")).at_path(LOCK_FILE_NAME)
            );
        }
    };
    let lock: Lock = serde_json::from_str(&text).map_err(|error| {
        Problem::new(format!("the lock file cannot be read: {error}"))
            .at_path(LOCK_FILE_NAME)
            .with_help("restore it from version control; it records what was composed and is needed to remove it")
    })?;
    if lock.lockfile_version != LOCKFILE_VERSION {
        return Err(Problem::new(format!(
            "the lock file has lockfileVersion {}, this aidlc reads {LOCKFILE_VERSION}",
            lock.lockfile_version
        ))
        .at_path(LOCK_FILE_NAME));
    }
    if lock.harness != harness_dir {
        return Err(Problem::new(format!(
            "the lock file records plugins composed into {}, not {harness_dir}",
            lock.harness
        ))
        .at_path(LOCK_FILE_NAME)
        .with_help(format!("pass --harness for {}", lock.harness)));
    }
    check_lock_paths(project_dir, &lock, &text)?;
    Ok(lock)
}

/// Every path the lock names (the composed stages, each plugin's files, adopted files and
/// vendored folder) parsed into the project: a path the composition may write or remove. The
/// first that is not refuses the lock, naming the entry and why, before anything is written.
fn check_lock_paths(project_dir: &Utf8Path, lock: &Lock, text: &str) -> Result<(), Problem> {
    let check = |key: &[&str], path: &str| {
        ProjectPath::parse(project_dir, path).map(drop).map_err(|refusal| {
            Problem::new(format!(
                "the lock file's entry \"{path}\" under `{}` is not a path the composition may write: {refusal}",
                key.join(".")
            ))
            .at_path(LOCK_FILE_NAME)
            .at_key_item_in(text, key, Some(path))
            .with_help("a lock file names only files inside the project, outside .git; restore it from version control")
        })
    };
    for path in lock.stages.keys() {
        check(&["stages"], path)?;
    }
    for (name, plugin) in &lock.plugins {
        for path in plugin.files.keys() {
            check(&["plugins", name, "files"], path)?;
        }
        for path in &plugin.adopted {
            check(&["plugins", name, "adopted"], path)?;
        }
        if let Some(vendored) = &plugin.vendored {
            check(&["plugins", name, "vendored"], vendored)?;
        }
    }
    Ok(())
}

/// `blake3:<hex>` of `bytes`.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("blake3:{}", crate::compile::discover::hash_hex(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_round_trips_and_unknown_keys_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        assert_eq!(
            read_lock(&project, ".claude").unwrap(),
            Lock::empty(".claude")
        );
        let mut lock = Lock::empty(".claude");
        lock.plugins.insert(
            "p".into(),
            LockedPlugin {
                version: "0.1.0".into(),
                kind: SourceKind::Path,
                source: "../p".into(),
                rev: None,
                commit: None,
                vendored: None,
                integrity: "blake3:00".into(),
                dependencies: vec!["core".into()],
                files: BTreeMap::from([("a".to_owned(), content_hash(b"x"))]),
                adopted: Vec::new(),
            },
        );
        std::fs::write(lock_path(&project), lock.to_bytes()).unwrap();
        assert_eq!(read_lock(&project, ".claude").unwrap(), lock);
        assert_eq!(lock.owner_of("a"), Some("p"));
        assert!(read_lock(&project, ".codex").is_err());
        let text = String::from_utf8(lock.to_bytes())
            .unwrap()
            .replace("\"files\"", "\"filez\"");
        std::fs::write(lock_path(&project), text).unwrap();
        assert!(read_lock(&project, ".claude").is_err());
    }

    #[test]
    fn a_lock_naming_a_path_outside_the_project_or_in_git_is_refused_with_its_entry() {
        let dir = tempfile::tempdir().unwrap();
        let project = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        for escape in ["/etc/passwd", "../outside", "a/../../b", ".git/config", ""] {
            for key in ["stages", "files"] {
                let mut lock = Lock::empty(".claude");
                if key == "stages" {
                    lock.stages.insert(
                        escape.to_owned(),
                        LockedStage {
                            base: String::new(),
                            composed: content_hash(b""),
                        },
                    );
                } else {
                    lock.plugins.insert(
                        "p".into(),
                        LockedPlugin {
                            version: "0.1.0".into(),
                            kind: SourceKind::Path,
                            source: "../p".into(),
                            rev: None,
                            commit: None,
                            vendored: None,
                            integrity: "blake3:00".into(),
                            dependencies: Vec::new(),
                            files: BTreeMap::from([(escape.to_owned(), content_hash(b"x"))]),
                            adopted: Vec::new(),
                        },
                    );
                }
                std::fs::write(lock_path(&project), lock.to_bytes()).unwrap();
                let refusal = read_lock(&project, ".claude").unwrap_err();
                assert!(
                    refusal.message().contains(key) && refusal.message().contains(escape),
                    "{key} {escape}: {}",
                    refusal.message()
                );
            }
        }
    }
}
