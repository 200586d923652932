//! The one check that keeps a folder the engine writes into inside the project, once every
//! symbolic link on its way is resolved (docs/decisions.md D30, applied to every folder the engine writes into).
//!
//! Invariant: a folder is checked before anything is created in it, and again after its missing
//! parts are created, so a link swapped in meanwhile is caught before anything is written; a
//! folder that already exists whole is checked once (nothing is created, so there is no
//! "meanwhile" to check again).

use camino::{Utf8Path, Utf8PathBuf};

/// Why a folder the engine was about to write into was refused (the reference's wording for a
/// produce folder that escapes, D30, applied to every folder the engine writes into).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteFolderError {
    #[error(
        "Refusing to write into \"{folder}\": it is not inside the project root \"{project}\"."
    )]
    NotUnderProject {
        folder: Utf8PathBuf,
        project: Utf8PathBuf,
    },
    #[error(
        "Refusing to write into \"{folder}\": it resolves to \"{resolved}\", which escapes the project root \"{project}\" after canonicalization."
    )]
    Escapes {
        folder: Utf8PathBuf,
        resolved: Utf8PathBuf,
        project: Utf8PathBuf,
    },
    #[error("Refusing to write into \"{folder}\": cannot resolve \"{path}\": {detail}")]
    Unresolvable {
        folder: Utf8PathBuf,
        path: Utf8PathBuf,
        detail: String,
    },
    #[error("cannot create the folder {folder}: {detail}")]
    CannotCreate { folder: Utf8PathBuf, detail: String },
}

/// Check that `folder`, which the engine is about to create or write into, stays inside the
/// project once every symbolic link on its way is resolved: it must lie under `project_dir` as
/// written (no `..`), and its deepest existing ancestor (itself, when it exists; a dangling link
/// counts as existing and cannot be resolved) must canonicalise under the canonical project.
/// Writes nothing. Returns where the folder resolves.
pub fn check_write_folder(
    project_dir: &Utf8Path,
    folder: &Utf8Path,
) -> Result<Utf8PathBuf, WriteFolderError> {
    resolve_write_folder(project_dir, folder).map(|(resolved, _)| resolved)
}

/// [`check_write_folder`]'s check, and whether nothing on the folder's path is missing.
fn resolve_write_folder(
    project_dir: &Utf8Path,
    folder: &Utf8Path,
) -> Result<(Utf8PathBuf, bool), WriteFolderError> {
    let lexically_inside = folder.starts_with(project_dir)
        && !folder
            .components()
            .any(|component| component == camino::Utf8Component::ParentDir);
    if !lexically_inside {
        return Err(WriteFolderError::NotUnderProject {
            folder: folder.to_owned(),
            project: project_dir.to_owned(),
        });
    }
    let unresolvable = |path: &Utf8Path, error: &std::io::Error| WriteFolderError::Unresolvable {
        folder: folder.to_owned(),
        path: path.to_owned(),
        detail: error.to_string(),
    };
    let project = project_dir
        .canonicalize_utf8()
        .map_err(|error| unresolvable(project_dir, &error))?;
    let mut existing = folder;
    let mut missing = Vec::new();
    loop {
        match std::fs::symlink_metadata(existing) {
            Ok(_) => break,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(unresolvable(existing, &error));
                };
                missing.push(name);
                existing = parent;
            }
            Err(error) => return Err(unresolvable(existing, &error)),
        }
    }
    let mut resolved = existing
        .canonicalize_utf8()
        .map_err(|error| unresolvable(existing, &error))?;
    resolved.extend(missing.iter().rev());
    if resolved.starts_with(&project) {
        Ok((resolved, missing.is_empty()))
    } else {
        Err(WriteFolderError::Escapes {
            folder: folder.to_owned(),
            resolved,
            project,
        })
    }
}

/// [`check_write_folder`], then create the missing folders, then check again (a link swapped in
/// while the folders were made is caught before anything is written into them); a folder that
/// exists whole is checked once.
#[expect(
    clippy::disallowed_methods,
    reason = "the file-system layer itself: the folder was resolved inside the project just above and is resolved again once created"
)]
pub fn create_write_folder(
    project_dir: &Utf8Path,
    folder: &Utf8Path,
) -> Result<(), WriteFolderError> {
    let (_, nothing_missing) = resolve_write_folder(project_dir, folder)?;
    // Whole: the folder is a folder (or a link to one), so creating it would change nothing;
    // a file in its place is left for the creation to refuse.
    if nothing_missing && std::fs::metadata(folder).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    std::fs::create_dir_all(folder).map_err(|error| WriteFolderError::CannotCreate {
        folder: folder.to_owned(),
        detail: error.to_string(),
    })?;
    check_write_folder(project_dir, folder).map(drop)
}
