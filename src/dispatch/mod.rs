//! The sensor dispatcher: firing sensors, running workers and reading their verdicts.
//!
//! [`fire`] is one fire from pre-flight to printed verdict; [`hook`] is the write hook that
//! fires the active stage's write-fired sensors; [`registry`] loads the live manifests and
//! [`stage_graph`] the compiled graph; [`glob`] is the one `matches` matcher (D5).
//! The shipped sensors it runs natively live in their own module, `sensors` (D8).
//! [`process`] runs one worker process safely: in its own process group, with no stdin, its
//! stdout kept up to a cap and the tail of its stderr, and everything bounded by one deadline,
//! after which the whole group is stopped.
//! [`verdict`] turns what happened into exactly one verdict of a closed set (D4), by the
//! reference's truth table (upstream §4.6).
//! [`time_limit`] holds the enclosing limits above each fire's cap (the write hook's allowance,
//! the gate's dispatch cap, `gate check --timeout`) and the reading of their values.

pub mod fire;
pub mod glob;
pub mod hook;
pub mod process;
pub mod registry;
pub mod stage_graph;
pub mod time_limit;
pub mod verdict;
