//! What `aidlc compile --check` found out of date ([`Drift`], computed by the compile), as a
//! problem of the compile's report beside its diagnostics.

use std::borrow::Cow;

use crate::compile::Drift;
use crate::report::problem::{Level, Location, Origin, Problem};

/// The help every drift shares.
pub const DRIFT_HELP: &str = "run `aidlc compile` and commit the outputs it writes";

/// The rule id of drift in the compile's SARIF.
pub const DRIFT_RULE: &str = "stale-output";

/// `drift` as a problem: an error on its file, titled with the output it concerns.
pub fn drift_problem(drift: &Drift) -> Problem<'_> {
    Problem {
        origin: Origin::Drift,
        location: Some(Location::file(&drift.file)),
        help: Some(Cow::Borrowed(DRIFT_HELP)),
        title: Some(Cow::Owned(format!("{} is out of date", drift.output))),
        ..Problem::new(DRIFT_RULE, Level::Error, drift.message.as_str())
    }
}
