//! Names and paths refused before anything is written.
//!
//! A plugin name becomes part of file names (`plugin-contrib-<name>.json`), sentinel markers
//! (`<!-- plugin:<name>:… -->`), runner folders and stage slugs, so it is checked once, here,
//! before it is used for anything: lower-case kebab case, and none of the reserved names (`core`,
//! `aidlc`, `aidlc-*`). A path a manifest names must stay inside the plugin's root.

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};

use crate::plugin::tree_source::{EntryKind, Follow, TreeSource};

/// Names a plugin may not take: the implicit core plugin and its namespace.
const RESERVED_NAMES: [&str; 2] = ["core", "aidlc"];
const RESERVED_PREFIX: &str = "aidlc-";

/// Why `name` cannot name a plugin, or `None` when it can.
pub fn plugin_name_refusal(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the plugin has no name".to_owned());
    }
    if name.contains("..") || name.contains('/') || name.contains('\\') {
        return Some(format!(
            "plugin name \"{name}\" contains a path separator or \"..\""
        ));
    }
    if RESERVED_NAMES.contains(&name) || name.starts_with(RESERVED_PREFIX) {
        return Some(format!(
            "plugin name \"{name}\" is reserved: \"core\", \"aidlc\" and \"aidlc-*\" name the core framework"
        ));
    }
    if !crate::compile::stage_graph::plugins_key::is_kebab_name(name) {
        return Some(format!(
            "plugin name \"{name}\" is not lower-case kebab case (letters, digits and single dashes, starting with a letter)"
        ));
    }
    None
}

/// `declared` (a folder a manifest names, relative to the plugin root) as a path under `root`,
/// or why it leaves the root: absolute, with `..`, or (after links, as `source` answers for
/// them) resolving outside.
pub fn contained_path(
    source: &dyn TreeSource,
    root: &Utf8Path,
    declared: &str,
) -> Result<Utf8PathBuf, String> {
    let relative = Utf8Path::new(declared.trim());
    if relative.as_str().is_empty() {
        return Err("the path is empty".to_owned());
    }
    let mut inside = Utf8PathBuf::new();
    for component in relative.components() {
        match component {
            Utf8Component::Normal(part) => inside.push(part),
            Utf8Component::CurDir => {}
            Utf8Component::ParentDir => {
                return Err(format!("\"{declared}\" leaves the plugin root (\"..\")"));
            }
            Utf8Component::RootDir | Utf8Component::Prefix(_) => {
                return Err(format!("\"{declared}\" is absolute"));
            }
        }
    }
    let joined = root.join(&inside);
    // With no `..` and no symbolic link on the way down, the path is inside; only a link (a
    // rare case) needs the resolution, which costs a `readlink` per component.
    let mut walked = root.to_owned();
    let through_a_link = inside.components().any(|component| {
        walked.push(component);
        source.kind(&walked, Follow::No) == EntryKind::Link
    });
    if !through_a_link {
        return Ok(joined);
    }
    if let (Ok(real_root), Ok(real_path)) = (source.canonical(root), source.canonical(&joined))
        && !real_path.starts_with(&real_root)
    {
        return Err(format!(
            "\"{declared}\" resolves to {real_path}, outside the plugin root"
        ));
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_malformed_plugin_names_are_refused() {
        for name in [
            "core",
            "aidlc",
            "aidlc-extra",
            "Test-Pro",
            "../payload",
            "a/b",
            "a..b",
            "-a",
            "a-",
            "a--b",
            "1a",
            "",
            "a_b",
        ] {
            assert!(plugin_name_refusal(name).is_some(), "{name} was accepted");
        }
        for name in ["test-pro", "a", "x2", "compliance-eu-2"] {
            assert_eq!(plugin_name_refusal(name), None, "{name}");
        }
    }

    #[test]
    fn a_declared_folder_must_stay_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        std::fs::create_dir_all(root.join("stages")).unwrap();
        let overlay = crate::plugin::tree_source::Overlay::new();
        let disk = crate::plugin::tree_source::DiskSource::new(&overlay);
        assert_eq!(
            contained_path(&disk, &root, "stages/").unwrap(),
            root.join("stages")
        );
        assert!(contained_path(&disk, &root, "../etc").is_err());
        assert!(contained_path(&disk, &root, "stages/../../x").is_err());
        assert!(contained_path(&disk, &root, "/etc").is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/tmp", root.join("out")).unwrap();
            assert!(contained_path(&disk, &root, "out").is_err());
        }
    }
}
