//! The folders the engine writes into in a record: the engine folder, detail files, hook
//! health. Each is checked by `crate::leaves::write_folder` before anything is created in it.

use camino::{Utf8Path, Utf8PathBuf};

/// The record-local folder of the newest engine's state (detail files, learnings selections),
/// under a record root.
pub const ENGINE_DIR: &str = ".aidlc-engine";
/// The first-run marker in the hook health folder; it holds the ISO time of the first run.
pub const FIRST_RUN_MARKER_FILE: &str = ".first-fired";

// --- Record-local folders -----------------------------------------------------------------------

/// `<record_root>/.aidlc-engine/sensors`: the newest detail folder (\[gate\], D26); an install
/// of another version asks `GraphFormat::sensor_detail_dir` (`install_version.rs`).
pub fn sensor_detail_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(ENGINE_DIR).join("sensors")
}

/// `<record_root>/.aidlc-sensors`: where detail files go on a [2.5]/[2.6] install
/// (`install_version`); the write hook's recursion guard skips it on every install.
pub fn legacy_sensor_detail_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(".aidlc-sensors")
}

/// `<record_root>/.aidlc-hooks-health`: hook heartbeats, drop logs and the first-run marker,
/// where every version's `hooksHealthDir` puts them and its doctor reads them (D28, D46).
pub fn hooks_health_dir(record_root: &Utf8Path) -> Utf8PathBuf {
    record_root.join(".aidlc-hooks-health")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leaves::write_folder::{WriteFolderError, check_write_folder, create_write_folder};
    use crate::runtime::workspace::test_support::temp_project;
    use crate::runtime::workspace::*;

    #[test]
    fn record_local_folders() {
        let root = Utf8Path::new("/r");
        assert_eq!(sensor_detail_dir(root), "/r/.aidlc-engine/sensors");
        assert_eq!(legacy_sensor_detail_dir(root), "/r/.aidlc-sensors");
        assert_eq!(hooks_health_dir(root), "/r/.aidlc-hooks-health");
        assert_eq!(state_file_path(root), "/r/aidlc-state.md");
    }

    #[test]
    fn folders_inside_the_project_pass_whether_or_not_they_exist() {
        let (_dir, project) = temp_project();
        let project = project.canonicalize_utf8().unwrap();
        std::fs::create_dir_all(project.join("aidlc/x")).unwrap();
        for folder in [
            project.clone(),
            project.join("aidlc/x"),
            project.join("aidlc/x/audit/deeper"),
        ] {
            assert_eq!(check_write_folder(&project, &folder), Ok(folder.clone()));
        }
        let made = project.join("aidlc/x/.aidlc-engine/sensors/s");
        create_write_folder(&project, &made).unwrap();
        assert!(made.is_dir());
    }

    /// A folder that exists whole is checked once and not created again; one that is a link
    /// out of the project is still refused, and a file in a folder's place still fails.
    #[cfg(unix)]
    #[test]
    fn a_folder_that_exists_whole_is_checked_once_and_still_refused_when_it_escapes() {
        let (_dir, project) = temp_project();
        let project = project.canonicalize_utf8().unwrap();
        let folder = project.join("aidlc/x/audit");
        std::fs::create_dir_all(&folder).unwrap();
        create_write_folder(&project, &folder).unwrap();
        let (_outside_dir, outside) = temp_project();
        let outside = outside.canonicalize_utf8().unwrap();
        std::os::unix::fs::symlink(&outside, project.join("aidlc/out")).unwrap();
        assert!(matches!(
            create_write_folder(&project, &project.join("aidlc/out")),
            Err(WriteFolderError::Escapes { .. })
        ));
        std::fs::write(project.join("aidlc/file"), "").unwrap();
        assert!(matches!(
            create_write_folder(&project, &project.join("aidlc/file")),
            Err(WriteFolderError::CannotCreate { .. })
        ));
    }

    #[test]
    fn folders_outside_the_project_by_their_path_are_refused() {
        let (_dir, project) = temp_project();
        for folder in [
            Utf8PathBuf::from("/elsewhere/audit"),
            project.join("../audit"),
            project.join("aidlc/../../audit"),
        ] {
            assert!(
                matches!(
                    check_write_folder(&project, &folder),
                    Err(WriteFolderError::NotUnderProject { .. })
                ),
                "{folder}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_on_the_way_out_of_the_project_is_refused_and_nothing_is_created() {
        let (_dir, project) = temp_project();
        let project = project.canonicalize_utf8().unwrap();
        let (_outside_dir, outside) = temp_project();
        let outside = outside.canonicalize_utf8().unwrap();
        let record = project.join("aidlc/spaces/default/intents/r");
        std::fs::create_dir_all(&record).unwrap();
        std::os::unix::fs::symlink(&outside, record.join(".aidlc-engine")).unwrap();
        let folder = record.join(".aidlc-engine/sensors/stage");
        let error = create_write_folder(&project, &folder).unwrap_err();
        assert_eq!(
            error,
            WriteFolderError::Escapes {
                folder: folder.clone(),
                resolved: outside.join("sensors/stage"),
                project: project.clone(),
            }
        );
        assert_eq!(
            error.to_string(),
            format!(
                "Refusing to write into \"{folder}\": it resolves to \"{outside}/sensors/stage\", which escapes the project root \"{project}\" after canonicalization."
            )
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

        // A dangling link cannot be resolved, so it is refused too.
        std::os::unix::fs::symlink(outside.join("gone"), record.join("audit")).unwrap();
        assert!(matches!(
            create_write_folder(&project, &record.join("audit")),
            Err(WriteFolderError::Unresolvable { .. })
        ));
        assert!(!outside.join("gone").exists());

        // A link that stays inside the project is fine.
        std::fs::create_dir_all(project.join("elsewhere-inside")).unwrap();
        std::os::unix::fs::symlink(project.join("elsewhere-inside"), record.join("inside"))
            .unwrap();
        assert_eq!(
            check_write_folder(&project, &record.join("inside/x")),
            Ok(project.join("elsewhere-inside/x"))
        );
    }
}
