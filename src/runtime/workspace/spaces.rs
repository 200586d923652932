//! Spaces (D11): the active space, and where a space's folders are; and the rule every folder
//! name under `aidlc/` follows.

use camino::{Utf8Path, Utf8PathBuf};

use crate::compile::discover::workspace_root;
use crate::leaves::js_text::js_trim;

/// Cursors and the clone id are one short line; anything longer is not one of ours.
pub(super) const CURSOR_MAX_BYTES: u64 = 4 * 1024;

/// A cursor's text, invalid UTF-8 replaced; `None` if missing, unreadable, not a regular file
/// or larger than [`CURSOR_MAX_BYTES`].
pub(super) fn read_cursor(path: &Utf8Path) -> Option<String> {
    let bytes = crate::leaves::fs_util::read_bounded(path, CURSOR_MAX_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The active space: the trimmed content of `aidlc/active-space`, else `default`. Never an error:
/// a missing, empty or unreadable cursor, or one that is not a plain folder name (it holds `/`,
/// is `..`, ...), means `default`. The reference takes any text; refusing path-like names keeps
/// every derived path inside `aidlc/spaces/`.
pub fn active_space(project_dir: &Utf8Path) -> String {
    let cursor = workspace_root(project_dir).join("active-space");
    read_cursor(&cursor)
        .map(|text| js_trim(&text).to_owned())
        .filter(|name| is_plain_folder_name(name))
        .unwrap_or_else(|| "default".to_owned())
}

/// Whether `name` can be joined to a folder as exactly one new path component: not empty, not
/// `.` or `..`, and free of separators, NUL and other control characters.
pub fn is_plain_folder_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control)
}

/// `aidlc/spaces/<space>/`.
pub fn space_dir(project_dir: &Utf8Path, space: &str) -> Utf8PathBuf {
    workspace_root(project_dir).join("spaces").join(space)
}

/// `aidlc/spaces/<space>/intents/`: the intent records, the registry and the active-intent
/// cursor; also the record root when no intent resolves.
pub fn intents_dir(project_dir: &Utf8Path, space: &str) -> Utf8PathBuf {
    space_dir(project_dir, space).join("intents")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::workspace::test_support::{temp_project, write};

    #[test]
    fn active_space_defaults_without_a_cursor() {
        let (_dir, project) = temp_project();
        assert_eq!(active_space(&project), "default");
    }

    #[test]
    fn active_space_reads_the_trimmed_cursor() {
        let (_dir, project) = temp_project();
        write(&project.join("aidlc/active-space"), "\u{feff} team-a \r\n");
        assert_eq!(active_space(&project), "team-a");
    }

    #[test]
    fn active_space_refuses_empty_and_path_like_names() {
        let (_dir, project) = temp_project();
        for text in ["", "  \n", "..", ".", "../../etc", "a/b", "a\\b", "a\u{0}b"] {
            write(&project.join("aidlc/active-space"), text);
            assert_eq!(active_space(&project), "default", "cursor {text:?}");
        }
    }

    #[test]
    fn active_space_treats_a_folder_cursor_as_missing() {
        let (_dir, project) = temp_project();
        std::fs::create_dir_all(project.join("aidlc/active-space")).unwrap();
        assert_eq!(active_space(&project), "default");
    }

    #[test]
    fn space_paths_nest_under_the_workspace_root() {
        let project = Utf8Path::new("/p");
        assert_eq!(space_dir(project, "s"), "/p/aidlc/spaces/s");
        assert_eq!(intents_dir(project, "s"), "/p/aidlc/spaces/s/intents");
    }
}
