//! The sensor dispatcher: running workers and reading their verdicts.
//!
//! [`process`] runs one worker process safely: in its own process group, with no stdin, its
//! stdout kept up to a cap and the tail of its stderr, and everything bounded by one deadline,
//! after which the whole group is stopped.
//! [`verdict`] turns what happened into exactly one verdict of a closed set (D4), by the
//! reference's truth table (upstream §4.6).

pub mod process;
pub mod verdict;
