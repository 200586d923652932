//! Pure text → tree → typed-definition functions. No salsa, no file system, no JSON output.
//!
//! Architecture invariant: nothing here panics on bad input and nothing returns `Err` for a
//! problem in the user's file; every function returns what it could read plus diagnostics.

pub mod document;
pub mod frontmatter;
pub mod manifest;
pub mod stage;
pub mod yaml;
