//! The integration tests: one binary, one file per capability.
//!
//! A test goes in the file of the capability it checks, whatever made someone write it: a new
//! refusal of `gate check` goes in `gate`, a new write-hook case in `engine`, a new compile
//! diagnostic in `compile`. A file is named after a capability, never after an issue, a round
//! of fixes or a kind of failure; a new file is made only when no capability below fits, and is
//! one `mod` line here plus one entry in this list. Helpers two files share go in `support`
//! (`support/` for a builder of its own); an insta snapshot is named after its test's module,
//! so a test that moves takes its `.snap` file along (`git mv`, bytes unchanged). The scenarios
//! S1–S18 of docs/failure-modes.md are one end-to-end test each, `scenario_NN_<what it
//! proves>`, in the file of their capability (a `Failure scenario SN` section) and built on
//! `support::scenario_project`.
//!
//! - `support`: the temp-project builder, the snapshot filters, bounded waits, FIFOs and
//!   oversized files every test uses; `support::stage_with_sensors`: a stage with two
//!   deliverables and fake gate or write sensors, for the gate's and the dispatch's tests;
//!   `support::scenario_project`: the project the failure scenarios start from;
//! - `compile`: `aidlc init` and `aidlc compile` end to end: graph bytes, formats, exit codes,
//!   every kind of broken input diagnosed (snapshotted) with the old graph kept, gate-fired
//!   bindings that can never fire, manifests as strict as at fire time, diagnostics on very long
//!   lines, FIFOs among the inputs, and a `compile --check` that writes nothing;
//! - `compile_fuzz`: mutated manifests and stage files never panic, and a failing compile
//!   leaves the previous graph alone (property-based);
//! - `project_search`: where a command finds its project: the repository root, never the home
//!   folder's harness folder, a harness folder without stages is no project;
//! - `containment`: every write stays inside the project whatever a planted journal, a lock
//!   file or a linked harness folder says, the read-only commands write nothing, and a git
//!   plugin's `.git/` is never composed;
//! - `incremental`: the salsa event log shows which queries re-run after an edit;
//! - `up_to_date`: the no-op path and everything that must defeat it;
//! - `watch`: `compile --watch` driven by real file edits;
//! - `watch_plugins`: `compile --watch` in an install with a composed plugin: an edit of the
//!   plugin's folder is synced into the install and compiled, refusals keep the install (D53);
//! - `lsp`: `aidlc lsp` driven by a JSON-RPC client over its stdio (diagnostics, navigation,
//!   completion, quick fixes, bad requests and headers, cancellation), and by headless Neovim;
//! - `doctor`: `aidlc doctor`, each row driven to pass and to fail or warn, nothing written;
//! - `engine`: `aidlc engine sensor …`, the worker protocol and the write hook, with fake
//!   workers: verdicts and ambiguous output, the audit lock, values read back from the graph,
//!   a worker's children, signals, special files, output that cannot be written, the write
//!   hook in a fresh clone;
//! - `time_limits`: the enclosing time limits (the write hook's allowance, the gate's dispatch
//!   cap, `gate check --timeout`) stop sleeping workers, record drops and never pass;
//! - `sensor_cli`: the reference's own pinning scenarios for `sensor list`, `sensor describe` and
//!   the `fire` refusals (t92, t93), against our binary;
//! - `learnings`: `engine learnings surface|persist`: the round trip to a sensor that fires,
//!   a replay that changes nothing, selection values written as given, `memory.md` read with
//!   the compile's limits, the refusals, and the reference's bytes (Bun);
//! - `ledger_integrity`: the ledger stays whole and inside the project (torn tails, the terminal
//!   row's lock wait, unstamped locks, leftover temporaries, folders that link outside);
//! - `workers`: the native shipped workers agree in-process and out-of-process;
//! - `gate`: `aidlc gate check` (deliverables, parallel and sharded runs, exit codes), a stale
//!   graph refused at the gate, blocking bindings that never fired, nothing checked is not
//!   green, the staleness bracket, deliverables that are not regular files;
//! - `reports`: the CI reports of `gate check`: typed findings, pretty and grouped human
//!   output, SARIF that GitHub's validator accepts, `JUnit` valid against its schema, paths in
//!   a monorepo and from the repository root, `--report` into special files and through links,
//!   `gate merge` re-planned from the project, colours, the progress line, a worker's stderr
//!   kept, the verdict's exit status with a closed stdout, and the compile's CI formats;
//! - `gate_step`: `aidlc engine gate start|revise`, the conductor's gate step (enforcement,
//!   fingerprints, explicit `--artifacts`, the override receipt, the gate row and its notices);
//! - `receipts`: `engine log decision|answer` and `engine hook record-human-turn`, byte for byte
//!   with the reference, their refusals, and the override completed with aidlc commands alone;
//! - `reference_installs`: the real installs the reference made (2.5.36, 2.6.54) are read and
//!   written byte for byte as their own tools do, side by side with the reference (Bun), and
//!   their sensors run natively with the install's own health, detail and selections files;
//! - `authoring`: shell completions, the man page, the JSON Schemas (the default framework and
//!   the reference installs validate) and `aidlc graph` (rendered by graphviz);
//! - `harnesses`: each harness's own payloads fed to the hooks, the reference's own hooks under
//!   Bun beside aidlc's giving the same audit rows, `hook install` on each projection and new
//!   project, and `doctor` reading each registration;
//! - `hook_payload_fuzz`: every harness's payloads, mutated, never panic the payload readers
//!   nor break the hooks (property-based);
//! - `plugins`: `aidlc plugin add|remove|list|sync`: the reference's plugin composed as the
//!   reference composer composes it (Bun), idempotence, removal, kills, the guards, git sources,
//!   100 plugins, lock files, journals and plugin files that are not bounded regular files;
//! - `plugin_owner`: `aidlc sensors` names each sensor's plugin, and gate reports name the
//!   plugin of the stage behind each finding, in every format;
//! - `plugin_own_tree`: `aidlc compile` in a plugin's own tree: the installed graph byte for
//!   byte, errors at the plugin's file and span, nothing written (D52);
//! - `plugin_selection`: `harness.json` `plugins` at compile, byte for byte with the reference
//!   compile (Bun), the closure check and the strict reading of the key;
//! - `disabled_stages`: the stages that selection disables, at run time: the write hook fires
//!   nothing for them, a gate asked for one refuses with the fix, a check over every stage says
//!   how many it skipped (D49);
//! - `guard`: the pre-tool guard (`aidlc engine hook guard`, D34);
//! - `hook_install`: `aidlc hook install` on no settings file, an empty one, one with other
//!   hooks, the 2.6.54 reference install's, a malformed one and one that is not a bounded
//!   regular file;
//! - `shell_writes`: writes through the shell: the guard's snapshot before a shell call, the
//!   write hook's firing on what the call created or modified, deletes, renames, ignored files,
//!   a missing snapshot, and the never-ran notice of `gate start`, `doctor` and `gate check`;
//! - `install`: the npm package (packed, installed offline, run through `npx`), the GitHub
//!   Action and the pre-commit hooks;
//! - `layering`: the top-level modules of `src/` import one another without a cycle;
//! - `docs`: the documentation stays in step with the code;
//! - `synthetic` (`tests/support/synthetic.rs`, shared with the benchmarks): generated projects of
//!   any size; `synthetic_projects`: they are deterministic and compile without a diagnostic.
#![expect(
    clippy::disallowed_methods,
    reason = "integration tests build their fixture projects directly on the disk and read back what they and aidlc wrote, whole; the file-system layer's rule is for the engine"
)]

mod authoring;
mod compile;
mod compile_fuzz;
mod containment;
mod disabled_stages;
mod docs;
mod doctor;
mod engine;
mod gate;
mod gate_step;
mod guard;
mod harnesses;
mod hook_install;
mod hook_payload_fuzz;
mod incremental;
mod install;
mod layering;
mod learnings;
mod ledger_integrity;
mod lsp;
mod plugin_own_tree;
mod plugin_owner;
mod plugin_selection;
mod plugins;
mod project_search;
mod receipts;
mod reference_installs;
mod reports;
mod sensor_cli;
mod shell_writes;
mod support;
#[path = "../support/synthetic.rs"]
mod synthetic;
mod synthetic_projects;
mod time_limits;
mod up_to_date;
mod watch;
mod watch_plugins;
mod workers;
