//! What `aidlc compile --check` found out of date, as the compile's report carries it beside
//! its diagnostics: one [`Drift`] per stage whose node would change (on its stage file), per
//! removed stage and for the scope grid (on the output).

use std::borrow::Cow;

use camino::Utf8PathBuf;

use crate::report::problem::{Level, Location, Problem};

/// An output file `compile --check` found out of date, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Project-relative: the stage file, or the output file.
    pub file: Utf8PathBuf,
    /// The output that would change (`stage-graph.json`, `scope-grid.json`).
    pub output: String,
    /// The stage, when one is concerned.
    pub stage: Option<String>,
    /// `changed`, `added`, `removed`, or `framing`/`grid` for the whole file.
    pub change: &'static str,
    pub message: String,
}

/// The help every drift shares.
pub const DRIFT_HELP: &str = "run `aidlc compile` and commit the outputs it writes";

/// The rule id of drift in the compile's SARIF.
pub const DRIFT_RULE: &str = "stale-output";

impl Drift {
    /// The drift as a problem: an error on its file, titled with the output it concerns.
    pub fn problem(&self) -> Problem<'_> {
        Problem {
            location: Some(Location::file(&self.file)),
            help: Some(Cow::Borrowed(DRIFT_HELP)),
            title: Some(Cow::Owned(format!("{} is out of date", self.output))),
            ..Problem::new(DRIFT_RULE, Level::Error, self.message.as_str())
        }
    }
}
