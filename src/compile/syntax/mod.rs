//! Pure text → tree → typed-definition functions. No salsa, no file system, no JSON output.
//!
//! Architecture invariant: nothing here panics on bad input and no function hands a problem in the
//! user's file to the caller as a bare error: each returns what it could read plus diagnostics
//! (the low-level `frontmatter::split` returns a `Result` that `document` turns into one).

pub mod document;
pub mod field_schema;
pub mod frontmatter;
pub mod manifest;
pub mod stage;
pub mod vocabulary;
pub mod yaml;
pub mod yaml_subset;
