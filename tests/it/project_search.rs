//! Where a command finds its project: the search stops at the repository root, never adopts the
//! home folder's harness folder, and calls a harness folder without stage definitions no AI-DLC
//! project; a file written there is named where it is.

use camino::{Utf8Path, Utf8PathBuf};

use crate::support::{Run, TestProject};

/// A home folder holding only Claude Code's own settings, and a working folder below it.
struct HomeWithAgentSettings {
    project: TestProject,
    home: Utf8PathBuf,
}

impl HomeWithAgentSettings {
    fn new() -> Self {
        let project = TestProject::empty();
        project.write(
            "home/.claude/settings.json",
            "{\n  \"theme\": \"dark\"\n}\n",
        );
        let home = project.path("home");
        Self { project, home }
    }

    fn run_in(&self, cwd: &Utf8Path, args: &[&str]) -> Run {
        std::fs::create_dir_all(cwd).expect("create the working folder");
        let mut command = self.project.command(cwd, args);
        command.env("HOME", self.home.as_str());
        Run::from(command.output().expect("run aidlc"))
    }

    /// Every file under the home folder's `.claude`, relative to it.
    fn agent_folder_files(&self) -> Vec<String> {
        let mut files = Vec::new();
        let mut pending = vec![self.home.join(".claude")];
        while let Some(folder) = pending.pop() {
            for entry in folder.read_dir_utf8().expect("list a folder") {
                let entry = entry.expect("a folder entry");
                if entry.file_type().expect("an entry's type").is_dir() {
                    pending.push(entry.path().to_owned());
                } else {
                    let relative = entry.path().strip_prefix(&self.home).expect("under home");
                    files.push(relative.to_string());
                }
            }
        }
        files.sort();
        files
    }
}

#[test]
fn compile_and_hook_install_below_the_home_folder_never_adopt_its_agent_settings() {
    let setup = HomeWithAgentSettings::new();
    let notes = setup.home.join("work/notes");
    for args in [&["compile"][..], &["hook", "install"][..]] {
        let run = setup.run_in(&notes, args);
        assert_eq!(run.status, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("no AI-DLC project found")
                && run.stderr.contains(&format!(
                    "below the home folder {} (whose own harness folder is never a project)",
                    setup.home
                )),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("aidlc init"), "{}", run.stderr);
    }
    assert_eq!(
        setup.agent_folder_files(),
        [".claude/settings.json"],
        "nothing is written into the home folder's harness folder"
    );
    assert_eq!(
        setup.project.read("home/.claude/settings.json"),
        "{\n  \"theme\": \"dark\"\n}\n"
    );
}

#[test]
fn the_project_search_stops_at_the_repository_root() {
    let setup = HomeWithAgentSettings::new();
    let repository = setup.home.join("work/repo");
    std::fs::create_dir_all(repository.join(".git")).expect("a .git folder");
    let run = setup.run_in(&repository.join("src/deep"), &["compile"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("up to the repository root {repository}")),
        "{}",
        run.stderr
    );
    // A project above the repository root is not this repository's project either.
    let above = setup.project.path("outer");
    setup
        .project
        .write("outer/.claude/aidlc-common/stages/inception/first.md", "x");
    let nested = above.join("vendor/lib");
    std::fs::create_dir_all(nested.join(".git")).expect("a nested .git");
    let run = setup.run_in(&nested, &["compile"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        !setup.project.exists("outer/.claude/tools"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_harness_folder_without_stage_definitions_is_not_an_aidlc_project() {
    let setup = HomeWithAgentSettings::new();
    let repository = setup.home.join("work/repo");
    std::fs::create_dir_all(repository.join(".git")).expect("a .git folder");
    setup
        .project
        .write("home/work/repo/.claude/settings.json", "{}\n");
    for args in [&["compile"][..], &["hook", "install"][..]] {
        let run = setup.run_in(&repository.join("src"), args);
        assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "not an AI-DLC project: {repository}/.claude holds no stage definitions (looked in {repository}/.claude/aidlc-common/stages)"
            )),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(!setup.project.exists("home/work/repo/.claude/tools"));
    assert_eq!(
        setup.project.read("home/work/repo/.claude/settings.json"),
        "{}\n"
    );
}

#[test]
fn a_written_file_is_named_where_it_is_when_the_project_is_found_above() {
    let project = TestProject::minimal();
    let below = project.path("docs/notes");
    std::fs::create_dir_all(&below).expect("a folder below the project");
    let run = project.run_in(&below, &["compile"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "wrote {}/.claude/tools/data/stage-graph.json and scope-grid.json",
            project.root
        )),
        "{}",
        run.stderr
    );
    let run = project.run_in(&below, &["hook", "install"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("wrote {}/.claude/settings.json", project.root)),
        "{}",
        run.stderr
    );
    // From the project folder itself the short form stays.
    let run = project.run(&["compile", "--force"]);
    assert!(
        run.stderr
            .contains("; up to date: .claude/tools/data/stage-graph.json and scope-grid.json"),
        "{}",
        run.stderr
    );
}
