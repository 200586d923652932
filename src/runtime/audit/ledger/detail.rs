//! Fire ids and the detail file a failed fire leaves (D26): its path under the
//! install's detail folder (`Workspace::sensor_detail_dir`, which follows the install's
//! version), its body byte for byte as the reference writes it, and its atomic write (D26
//! states the invariants).

use camino::{Utf8Path, Utf8PathBuf};

use crate::leaves::fs_util::Flush;
use crate::leaves::fs_util::contained::{self, ContainedWriteError, ProjectPath};
use crate::leaves::random_hex::random_lowercase_hex;

/// A fresh fire id: 8 random lowercase hex characters (4 random bytes, as `randomBytes(4)`).
/// Collisions are not checked, as in the reference; pairing tolerates them.
pub fn new_fire_id() -> String {
    random_lowercase_hex(8)
}

/// `<detail_dir>/<stage>/<sensor-id>-<fire-id>.md`, where `detail_dir` is the install's detail
/// folder (`<record>/.aidlc-engine/sensors`, or `<record>/.aidlc-sensors` on 2.5 and 2.6).
pub fn detail_file_path(
    detail_dir: &Utf8Path,
    stage: &str,
    sensor_id: &str,
    fire_id: &str,
) -> Utf8PathBuf {
    detail_dir
        .join(stage)
        .join(format!("{sensor_id}-{fire_id}.md"))
}

/// The fire a detail file is about; `absolute_output_path` is the path as fired, not the
/// relative audit field.
#[derive(Debug, Clone, Copy)]
pub struct DetailFire<'a> {
    pub sensor_id: &'a str,
    pub stage: &'a str,
    pub timestamp: &'a str,
    pub fire_id: &'a str,
    pub absolute_output_path: &'a str,
}

/// What a detail file records under its header.
#[derive(Debug, Clone, Copy)]
pub enum DetailVerdict<'a> {
    /// A failure: `**Pass**: false` and the worker's JSON, printed as
    /// `JSON.stringify(value, null, 2)`, byte for byte as the reference writes it.
    Failed(&'a serde_json::Value),
    /// A fire that evaluated nothing but wrote on stderr (ours: the reference writes detail
    /// files for failures only): the note in place of `**Pass**`.
    NotEvaluated(&'a str),
}

/// A detail file's body (LF newlines): the reference's header and verdict, then our section
/// with the last lines of the worker's stderr (the reference's readers stop at the
/// `## Findings` fence), so that the reason a worker gave is kept; no section when it wrote
/// nothing on stderr.
pub fn detail_file_body(
    fire: &DetailFire<'_>,
    verdict: DetailVerdict<'_>,
    stderr_tail: &str,
) -> String {
    let (status, findings) = match verdict {
        DetailVerdict::Failed(worker_json) => (
            "**Pass**: false".to_owned(),
            format!(
                "\n## Findings\n\n```json\n{}\n```\n",
                crate::leaves::js_json::pretty_json(worker_json)
            ),
        ),
        DetailVerdict::NotEvaluated(note) => (format!("**Note**: {note}"), String::new()),
    };
    format!(
        "# {} finding \u{2014} {}\n\n**Timestamp**: {}\n**Fire id**: {}\n**Output path**: {}\n{status}\n{findings}{}",
        fire.sensor_id,
        fire.stage,
        fire.timestamp,
        fire.fire_id,
        fire.absolute_output_path,
        stderr_section(stderr_tail)
    )
}

fn stderr_section(stderr_tail: &str) -> String {
    let tail = stderr_tail.trim_end();
    if tail.trim().is_empty() {
        return String::new();
    }
    let fence = if tail.contains("```") { "~~~~" } else { "```" };
    format!("\n## Worker stderr (last lines)\n\n{fence}text\n{tail}\n{fence}\n")
}

/// Write a detail file through the file-system layer ([`contained::write_file`]).
///
/// The temporary is not flushed before the rename: a detail file is a record of the fire, as
/// the ledger row that names it is, and like that row (appended without a flush, as the
/// reference appends it) it is written on the write hook's path, where waiting for the disk
/// cost a millisecond or more per failing fire. An interrupted run (Ctrl-C, a kill) still
/// leaves no half-written detail file; a power cut may lose the last ones, as it may the
/// ledger's last rows.
pub fn write_detail_file(
    project_dir: &Utf8Path,
    path: &Utf8Path,
    body: &str,
) -> std::io::Result<()> {
    let contained =
        ProjectPath::of_absolute(project_dir, path).map_err(ContainedWriteError::Refused)?;
    contained::write_file(&contained, body.as_bytes(), Flush::No).map_err(Into::into)
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reads back the files it wrote, whole"
)]
mod tests {
    use super::*;
    use crate::runtime::audit::ledger::test_support::temp_project;
    use crate::runtime::workspace::sensor_detail_dir;

    #[test]
    fn the_detail_file_is_byte_exact() {
        let json = serde_json::json!({
            "pass": false,
            "findings_count": 2,
            "findings": [{"line": 3, "message": "no source for \"x\""}, {}],
            "empty": [],
        });
        let fire = DetailFire {
            sensor_id: "claim-sources",
            stage: "intent-capture",
            timestamp: "2026-09-04T10:11:13Z",
            fire_id: "a65d19af",
            absolute_output_path: "/work/proj/aidlc/x.md",
        };
        let body = detail_file_body(&fire, DetailVerdict::Failed(&json), "");
        let expected = "# claim-sources finding \u{2014} intent-capture\n\n\
            **Timestamp**: 2026-09-04T10:11:13Z\n**Fire id**: a65d19af\n\
            **Output path**: /work/proj/aidlc/x.md\n**Pass**: false\n\n## Findings\n\n```json\n\
            {\n  \"pass\": false,\n  \"findings_count\": 2,\n  \"findings\": [\n    {\n      \"line\": 3,\n      \
            \"message\": \"no source for \\\"x\\\"\"\n    },\n    {}\n  ],\n  \"empty\": []\n}\n```\n";
        assert_eq!(body, expected);
    }

    #[test]
    fn the_detail_path_is_under_the_detail_folder_one_folder_per_stage() {
        assert_eq!(
            detail_file_path(
                &sensor_detail_dir(Utf8Path::new("/r")),
                "intent-capture",
                "linter",
                "0badf00d"
            ),
            "/r/.aidlc-engine/sensors/intent-capture/linter-0badf00d.md"
        );
    }

    #[test]
    fn detail_files_are_written_through_a_temporary_file_of_ours() {
        let (_dir, root) = temp_project();
        let path = detail_file_path(&sensor_detail_dir(&root), "s", "linter", "00000001");
        write_detail_file(&root, &path, "one").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one");
        let folder = path.parent().unwrap();
        assert_eq!(std::fs::read_dir(folder).unwrap().count(), 1);
        // Someone else's temporary (the reference writes `<path>.tmp`) is neither used nor
        // removed.
        std::fs::write(format!("{path}.tmp"), "foreign").unwrap();
        write_detail_file(&root, &path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(
            std::fs::read_to_string(format!("{path}.tmp")).unwrap(),
            "foreign"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dead_writers_detail_temporary_is_swept() {
        let (_dir, root) = temp_project();
        let path = detail_file_path(&sensor_detail_dir(&root), "s", "linter", "00000002");
        let folder = path.parent().unwrap();
        std::fs::create_dir_all(folder).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let leftover = folder.join(format!(".linter-00000001.md.aidlc-{dead}-0123456789ab.tmp"));
        std::fs::write(&leftover, "half").unwrap();
        write_detail_file(&root, &path, "body").unwrap();
        assert!(!leftover.exists());
        assert_eq!(std::fs::read_dir(folder).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_detail_folder_that_links_outside_is_refused() {
        let (_dir, root) = temp_project();
        let (_outside_dir, outside) = temp_project();
        std::fs::create_dir_all(root.join(".aidlc-engine")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".aidlc-engine/sensors")).unwrap();
        let path = detail_file_path(&sensor_detail_dir(&root), "s", "linter", "00000003");
        let error = write_detail_file(&root, &path, "body").unwrap_err();
        assert!(
            error.to_string().contains("escapes the project root"),
            "{error}"
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn fire_ids_are_eight_lowercase_hex_characters() {
        let id = new_fire_id();
        assert_eq!(id.len(), 8);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }
}
