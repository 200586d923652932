//! Where a plugin comes from: a folder, or a git repository cloned with the system `git`.
//!
//! `aidlc plugin add PATH` reads the folder (and every later sync reads it again, so a plugin's
//! author sees their edits on the next sync). `aidlc plugin add GIT-URL[@REV]` clones into a
//! temporary folder, checks out `REV`, and composes that tree; its files are kept under
//! `aidlc/plugins/<name>/` so that later syncs (and teammates) need no network.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};

use crate::plugin::{PluginError, Problem};
use crate::runtime::worker_process::{WorkerCommand, run_worker};

/// How long one `git` command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(300);

/// A source as the user wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    Path(Utf8PathBuf),
    Git { url: String, rev: Option<String> },
}

/// Read `text` as a git URL (`https://`, `http://`, `ssh://`, `git://`, `file://`, `git@host:`,
/// or a path ending in `.git`), with an optional `@REV` after the repository, else as a path.
pub fn parse_source(text: &str) -> SourceSpec {
    let looks_remote = ["https://", "http://", "ssh://", "git://", "file://"]
        .iter()
        .any(|scheme| text.starts_with(scheme))
        || (text.starts_with("git@") && text.contains(':'));
    let (repository, rev) = split_rev(text);
    if looks_remote || crate::plugin::tree::has_extension(repository.trim_end_matches('/'), "git") {
        return SourceSpec::Git {
            url: repository.to_owned(),
            rev: rev.map(str::to_owned),
        };
    }
    SourceSpec::Path(Utf8PathBuf::from(text))
}

/// `url@rev` → (`url`, `rev`): the last `@` after the last `/` and `:` (so `git@host:x` keeps
/// its user).
fn split_rev(text: &str) -> (&str, Option<&str>) {
    let after_path = text.rfind(['/', ':']).map_or(0, |at| at + 1);
    match text[after_path..].rfind('@') {
        Some(at) if at + after_path > 0 => {
            let at = after_path + at;
            let rev = &text[at + 1..];
            if rev.is_empty() {
                (text, None)
            } else {
                (&text[..at], Some(rev))
            }
        }
        _ => (text, None),
    }
}

/// A clone, deleted when dropped.
#[derive(Debug)]
pub struct Clone {
    _dir: tempfile::TempDir,
    pub root: Utf8PathBuf,
    pub commit: String,
}

fn git(args: &[&str], cwd: &Utf8Path) -> Result<String, PluginError> {
    let mut command = WorkerCommand::new("git", cwd);
    command.args = args.iter().map(|arg| (*arg).to_owned()).collect();
    command.env = vec![
        ("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned()),
        ("GIT_ASKPASS".to_owned(), "true".to_owned()),
    ];
    command.timeout = GIT_TIMEOUT;
    let run = run_worker(&command);
    if let Some(error) = &run.spawn_error {
        return Err(PluginError::Environment(
            Problem::new(format!("cannot run git ({error})"))
                .with_help("install git, or add the plugin from a folder"),
        ));
    }
    if run.timed_out {
        return Err(PluginError::environment(format!(
            "git {} did not finish within {} s",
            args.join(" "),
            GIT_TIMEOUT.as_secs()
        )));
    }
    if run.exit_code != Some(0) {
        return Err(PluginError::Environment(Problem::new(format!(
            "git {} failed: {}",
            args.join(" "),
            run.stderr_tail.trim()
        ))));
    }
    Ok(String::from_utf8_lossy(&run.stdout).trim().to_owned())
}

/// Clone `url` into a temporary folder and check out `rev` (the default branch's head when
/// `None`).
pub fn clone_repository(
    url: &str,
    rev: Option<&str>,
    cwd: &Utf8Path,
) -> Result<Clone, PluginError> {
    let dir = tempfile::Builder::new()
        .prefix("aidlc-plugin-clone-")
        .tempdir()
        .map_err(|error| {
            PluginError::environment(format!("cannot create a temporary folder: {error}"))
        })?;
    let root = Utf8PathBuf::from_path_buf(dir.path().join("repository"))
        .map_err(|_| PluginError::environment("the temporary folder's path is not UTF-8"))?;
    git(
        &[
            "clone",
            "--quiet",
            "--no-hardlinks",
            "--",
            url,
            root.as_str(),
        ],
        cwd,
    )?;
    if let Some(rev) = rev {
        if rev.starts_with('-') {
            return Err(PluginError::refused(Problem::new(format!(
                "\"{rev}\" is not a revision"
            ))));
        }
        git(
            &[
                "-c",
                "advice.detachedHead=false",
                "checkout",
                "--quiet",
                rev,
                "--",
            ],
            &root,
        )?;
    }
    let commit = git(&["rev-parse", "HEAD"], &root)?;
    Ok(Clone {
        _dir: dir,
        root,
        commit,
    })
}

/// Every file of a clone, project-relative under `vendored`, excluding `.git/`.
pub fn vendored_files(
    clone_root: &Utf8Path,
    vendored: &Utf8Path,
) -> std::io::Result<Vec<(Utf8PathBuf, Vec<u8>)>> {
    fn visit(
        folder: &Utf8Path,
        clone_root: &Utf8Path,
        vendored: &Utf8Path,
        out: &mut Vec<(Utf8PathBuf, Vec<u8>)>,
    ) -> std::io::Result<()> {
        for entry in folder.read_dir_utf8()? {
            let entry = entry?;
            if entry.file_name() == ".git" {
                continue;
            }
            let kind = std::fs::symlink_metadata(entry.path())?.file_type();
            if kind.is_dir() {
                visit(entry.path(), clone_root, vendored, out)?;
            } else if kind.is_file() {
                let relative = entry
                    .path()
                    .strip_prefix(clone_root)
                    .unwrap_or(entry.path());
                let bytes = crate::leaves::fs_util::read_input(entry.path())
                    .map_err(|error| std::io::Error::other(format!("{}: {error}", entry.path())))?;
                out.push((vendored.join(relative), bytes));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    visit(clone_root, clone_root, vendored, &mut out)?;
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_told_apart() {
        assert_eq!(
            parse_source("../plugins/x"),
            SourceSpec::Path("../plugins/x".into())
        );
        assert_eq!(
            parse_source("https://example.org/o/r.git@v1.0"),
            SourceSpec::Git {
                url: "https://example.org/o/r.git".into(),
                rev: Some("v1.0".into())
            }
        );
        assert_eq!(
            parse_source("git@example.org:o/r.git"),
            SourceSpec::Git {
                url: "git@example.org:o/r.git".into(),
                rev: None
            }
        );
        assert_eq!(
            parse_source("/tmp/x/repo.git@main"),
            SourceSpec::Git {
                url: "/tmp/x/repo.git".into(),
                rev: Some("main".into())
            }
        );
        assert_eq!(
            parse_source("file:///tmp/r"),
            SourceSpec::Git {
                url: "file:///tmp/r".into(),
                rev: None
            }
        );
    }
}
