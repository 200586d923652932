//! The environment variables that name the project folder.
//!
//! `AIDLC_PROJECT_DIR` is the engine's own and the reference's; `CLAUDE_PROJECT_DIR` is what
//! Claude Code sets for every hook command it runs, and what the reference's hooks and tools
//! read on every harness (its adapters set it for the core hooks they run). No other harness
//! sets a variable of its own: Codex and Kiro CLI say where the project is in the payload's
//! `cwd`, Kiro IDE and opencode run their hooks in the project folder.
//!
//! Invariant: the first variable that is set decides; set but empty, it names no folder (the
//! later variables are not read then).

/// The engine's own variable, read first.
pub const AIDLC_PROJECT_DIR: &str = "AIDLC_PROJECT_DIR";
/// Claude Code's variable, read second.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";

/// The variables that name the project, in the order they are read.
pub const PROJECT_DIR_VARIABLES: [&str; 2] = [AIDLC_PROJECT_DIR, CLAUDE_PROJECT_DIR];

/// The project folder the environment names: the first of [`PROJECT_DIR_VARIABLES`] that is
/// set, unless it is empty.
pub fn project_dir_from(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    PROJECT_DIR_VARIABLES
        .iter()
        .find_map(|name| env(name))
        .filter(|value| !value.is_empty())
}

/// The variables a sensor worker process gets, so that a worker written for any harness (the
/// reference's read `CLAUDE_PROJECT_DIR`) finds the project: every one of
/// [`PROJECT_DIR_VARIABLES`], set to `project_dir`.
pub fn worker_environment(project_dir: &str) -> Vec<(String, String)> {
    PROJECT_DIR_VARIABLES
        .iter()
        .map(|name| ((*name).to_owned(), project_dir.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_variable_set_decides_and_an_empty_one_names_nothing() {
        let both = |name: &str| Some(format!("/{name}"));
        assert_eq!(
            project_dir_from(&both).as_deref(),
            Some("/AIDLC_PROJECT_DIR")
        );
        let empty_first = |name: &str| {
            Some(if name == AIDLC_PROJECT_DIR {
                String::new()
            } else {
                "/claude".to_owned()
            })
        };
        assert_eq!(project_dir_from(&empty_first), None);
        let claude_only = |name: &str| (name == CLAUDE_PROJECT_DIR).then(|| "/claude".to_owned());
        assert_eq!(project_dir_from(&claude_only).as_deref(), Some("/claude"));
        assert_eq!(project_dir_from(&|_| None), None);
    }

    #[test]
    fn a_worker_gets_every_project_variable() {
        assert_eq!(
            worker_environment("/p"),
            [
                ("AIDLC_PROJECT_DIR".to_owned(), "/p".to_owned()),
                ("CLAUDE_PROJECT_DIR".to_owned(), "/p".to_owned())
            ]
        );
    }
}
