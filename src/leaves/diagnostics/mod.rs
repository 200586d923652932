//! Problems in the user's files, as plain values.
//!
//! Queries return diagnostics inside their results (never through salsa accumulators and never
//! by printing); only `cli` turns them into text, through the report stack (`report`).
//!
//! Message style: a terse sentence that stands alone, naming the offending value; `help` says how
//! to fix it. Messages that the reference implementation also prints keep the reference's wording
//! so that people moving between the two recognise them.

use std::ops::Range;

use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};
use strum::{Display, EnumIter, EnumMessage, IntoStaticStr};

pub mod page;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Severity {
    Error,
    Warning,
}

/// A closed set of diagnostic codes. Names describe the problem, not the fix; the code a user
/// sees is the variant's name in kebab-case. Each variant's doc comment is its section of
/// `docs/diagnostics.md`, which [`page::diagnostics_page`] generates (a test keeps the committed
/// page equal to it). Serialised (in the compile fingerprint) by variant name.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    Display,
    EnumIter,
    IntoStaticStr,
    EnumMessage,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Code {
    // Reading files.
    /// An input file was listed but could not be read (for example, no read permission).
    /// The message is `cannot read the file: <OS error>`.
    /// It applies to every file the compile reads: sensor manifests, stage files, agents, scopes, rule files and the existing `stage-graph.json`.
    /// The rest of the compile goes on without that file.
    ///
    /// How to fix it: check the file's permissions, or remove the file.
    UnreadableFile,
    /// The file's bytes are not valid UTF-8.
    /// The message is `the file is not valid UTF-8 (first bad byte at offset <n>)`, with the byte offset of the first invalid byte.
    ///
    /// How to fix it: save the file as UTF-8.
    InvalidUtf8,
    /// The file contains a NUL byte in its first 8 KiB, so it is taken for a binary file, not Markdown.
    /// The message is `the file looks binary (it contains NUL bytes), not Markdown`.
    ///
    /// How to fix it: remove the file, or replace it with a Markdown file.
    BinaryFile,
    /// The file is larger than 4 MiB (4194304 bytes), the limit for an input file.
    /// The message is `the file is <size> bytes; inputs larger than 4194304 bytes are refused`.
    /// Frontmatter files are a few KiB; a file this big is almost certainly a mistake, such as a log or a binary.
    ///
    /// How to fix it: keep frontmatter files small and move large content elsewhere.
    FileTooLarge,
    // Frontmatter and YAML.
    /// The file does not start with a `---` line, or the `---` that opens the frontmatter is never closed.
    /// The frontmatter must open on the very first line (an optional UTF-8 byte order mark is allowed) and close at the first following line that is exactly `---` (trailing spaces and `\r` are allowed).
    /// The message depends on the kind of file:
    ///
    /// - `Sensor manifest missing YAML frontmatter (---...---)`
    /// - `Stage file missing YAML frontmatter (---...---)`
    /// - `Agent file missing frontmatter`
    /// - `Scope file missing frontmatter`
    ///
    /// Rule files may have no frontmatter at all, so they never get this diagnostic.
    ///
    /// Example (no closing fence):
    ///
    /// ```markdown
    /// ---
    /// id: linter
    /// kind: deterministic
    ///
    /// # linter sensor
    /// ```
    ///
    /// How to fix it: start the file with a line `---`, then the YAML fields, then a closing line that is exactly `---`.
    MissingFrontmatter,
    /// The frontmatter is not valid YAML, or it is valid YAML but not a mapping of `key: value` lines.
    /// For a syntax error, the message is the YAML parser's, and the span points where the parser stopped.
    /// For a frontmatter that is a list or a single value, the message is `frontmatter must be a YAML mapping of `key: value` lines, got <type>`.
    /// The file is not read any further.
    ///
    /// A common case: in a flow mapping, values that contain brackets must be quoted.
    ///
    /// ```yaml
    /// input_schema: { deliverables: string[] }
    /// ```
    ///
    /// How to fix it: fix the YAML at the position shown.
    /// For the case above, quote the value (`{ deliverables: "string[]" }`) or use the block form, which needs no quotes:
    ///
    /// ```yaml
    /// input_schema:
    ///   deliverables: string[]
    /// ```
    YamlSyntax,
    /// A key appears twice in the same mapping.
    /// The message is ``duplicate key `<key>` ``; the second occurrence is labelled "declared again here" and the first is shown as "first declared here".
    /// Duplicate keys are refused (D3), including inside nested mappings.
    ///
    /// Example:
    ///
    /// ```yaml
    /// id: linter
    /// kind: deterministic
    /// id: lint
    /// ```
    ///
    /// How to fix it: remove one of the two lines; a key may appear only once.
    ///
    /// The same code is used when two agent files declare the same `name:`, with the message `Duplicate agent slug "<name>" in <path>: already declared in <first path>. Rename one of them.`
    /// Fix that by giving each agent file a unique `name:`.
    DuplicateKey,
    /// A top-level field has a `# comment` after its value on the same line.
    /// The message is ``comment after the value of `<key>` ``, with the label "the reference reads this comment as part of the value".
    /// YAML ignores such a comment, but the reference implementation reads it into the value, so the file would mean one thing to this engine and another to the reference (D3).
    /// This applies to single-line values (plain or quoted); block scalars (`|`, `>`) are not checked.
    /// An item of a top-level block list with a comment after it (`- upstream-coverage  # cites upstream` under `sensors:`) is refused the same way, with the message ``comment after the item `<item>` of `<key>` ``: the reference reads `upstream-coverage  # cites upstream` as the item, an id that names nothing.
    ///
    /// Example:
    ///
    /// ```yaml
    /// kind: deterministic # the only kind
    /// ```
    ///
    /// How to fix it: move the comment to its own line above the field.
    ///
    /// ```yaml
    /// # the only kind
    /// kind: deterministic
    /// ```
    TrailingComment,
    /// The frontmatter uses a YAML feature this engine does not accept.
    /// Today that is aliases, with the message `YAML anchors and aliases are not supported in frontmatter`; the span points at the alias (`*name`).
    ///
    /// Example:
    ///
    /// ```yaml
    /// produces: &outputs [design-doc]
    /// optional_produces: *outputs
    /// ```
    ///
    /// How to fix it: write the value out in full at each place it is used.
    UnsupportedYaml,
    // Sensor manifests.
    /// A required field is absent, or present with an empty value (`key:` with nothing after it is an empty value, never the next line).
    /// The message depends on the kind of file:
    ///
    /// - Sensor manifests: `missing required field: <field>`, for `id`, `kind`, `command`, `default_severity` and `description`.
    /// - Stage files: `missing required field: <field>`, for `slug`, `phase`, `execution`, `condition`, `lead_agent`, `mode`, `inputs` and `outputs`.
    /// - Agent files: `Agent file <path> missing required frontmatter: <fields>`, for `name` and `display_name`.
    /// - Scope files: `Scope file <path> missing required frontmatter: name`.
    ///
    /// The span is the key when it is present with an empty value, and the opening `---` when it is absent.
    ///
    /// Example (a manifest without `command`):
    ///
    /// ```yaml
    /// ---
    /// id: linter
    /// kind: deterministic
    /// default_severity: advisory
    /// description: Runs the linter
    /// ---
    /// ```
    ///
    /// How to fix it: add the field with a value, for example `command: aidlc engine sensor-linter`.
    MissingRequiredField,
    /// A sensor manifest field has a value of the wrong shape or outside its allowed set.
    /// The messages are:
    ///
    /// - `<field> must be a non-empty string` when a field that takes one value holds a list or a mapping, or when `command`, `description` or `id` is blank.
    /// - `kind must be "deterministic" (got "<value>"); other kinds reserved for future releases`.
    /// - `default_severity must be one of: "advisory", "blocking" (got "<value>")`.
    /// - `fire_on must be one of: "write", "gate" (got "<value>")`; an absent or empty `fire_on` means `write`.
    /// - `timeout_seconds must be a positive integer (got "<value>")`; `300s`, `0`, `-5` and `1.5` are all refused (D3).
    /// - `timeout_seconds must be a positive integer, not a quoted string (got "<value>")`; a number must be written without quotes (`"30"` is a string in YAML), and a block scalar (`|`) is refused the same way.
    /// - `matches is not a valid glob: <reason> (got "<value>")`; the pattern is compiled at compile time by the same matcher the write hook, `fire` and gate dispatch use (D5), so an unclosed `{` or `[`, or a range like `[z-a]`, is refused here rather than when the sensor first fires. `matches: ""` is not an error: it is dropped, as if omitted.
    ///
    /// Example:
    ///
    /// ```yaml
    /// kind: llm
    /// default_severity: critical
    /// timeout_seconds: "300"
    /// matches: "**/*.{ts"
    /// ```
    ///
    /// How to fix it: use `kind: deterministic`; `default_severity: advisory` (reports only) or `blocking` (a failed gate check stops the gate); `fire_on: write` (fires when an agent writes a matching file) or `gate` (fires when the stage's gate opens); a whole number of seconds greater than zero, without quotes, such as `timeout_seconds: 300`; and a glob whose groups are closed, such as `matches: "**/*.{ts,js}"` (escape a literal brace or bracket as `[{]` or `[[]`).
    InvalidFieldValue,
    /// A manifest's `id:` differs from the id its file name declares (`aidlc-<id>.md`).
    /// The message is `id "<id>" must match filename stem "<stem>" (file should be aidlc-<id>.md)`, with the label "the file name declares `<stem>`".
    ///
    /// Example, in `.claude/sensors/aidlc-linter.md`:
    ///
    /// ```yaml
    /// id: lint
    /// ```
    ///
    /// How to fix it: rename the file to `aidlc-<id>.md`, or set `id:` to the file name without `aidlc-` and `.md`.
    SensorIdMismatch,
    /// Two manifests declare the same `id:`.
    /// The message is `duplicate sensor id "<id>" — also declared in <first path>. Rename one of them.`
    /// As in the reference, duplicates are found on the declared ids, before the other checks, and the second manifest is not loaded.
    /// Since a valid id must equal its file name, this usually comes with a `sensor-id-mismatch` on one of the two files.
    ///
    /// Example: `aidlc-lint.md` and `aidlc-linter.md` both contain
    ///
    /// ```yaml
    /// id: linter
    /// ```
    ///
    /// How to fix it: give each manifest its own id, equal to its file name without `aidlc-` and `.md`.
    DuplicateSensorId,
    /// A warning: a file in the sensors folder looks like a manifest but the discovery rule does not load it, so it never fires.
    /// Only files named `aidlc-<id>.md` directly in the sensors folder load, with `<id>` a lower-case letter followed by lower-case letters, digits and hyphens.
    /// The message is the path followed by the reason:
    ///
    /// - `<path> does not match `aidlc-<id>.md` (lower-case id), so it is not loaded and never fires` (no `aidlc-` prefix, upper case, or a wrong extension such as `.yaml` or `.MD`);
    /// - `<path> is nested in a subfolder; the flat sensor scan never reads subfolders`.
    ///
    /// `README.md` and hidden files are not reported.
    ///
    /// Example: `.claude/sensors/Lint.md`.
    ///
    /// How to fix it: rename the file as the help line says (here `aidlc-lint.md`, with `id: lint`), or move it up into the sensors folder.
    SkippedSensorFile,
    // Stage definitions.
    /// A stage field has a value of the wrong shape or outside its allowed set.
    /// Some of the messages:
    ///
    /// - `<field> must be string, got <type>`, `<field> must be array, got <type>`, `<field> must be boolean, got <type>`, where `<type>` is `null`, `array`, `object`, `boolean`, `number` or `string`;
    /// - `slug must be kebab-case, got "<value>"` (lower-case letters, digits and hyphens, starting with a letter);
    /// - `phase must be one of initialization | ideation | inception | construction | operation, got "<value>"`, and the same shape for `execution` (`ALWAYS | CONDITIONAL`) and `mode` (`inline | subagent | pipeline | mob | agent-team`);
    /// - `number must be <phase-prefix>.<index>, got "<value>"`;
    /// - `<field> must be a positive integer, got <value>` (`reviewer_max_iterations`);
    /// - `<field>[<i>] must be string, got <type>`, `<field>[<i>] must be non-empty`, `<field>[<i>] must be kebab-case, got "<value>"` for list items;
    /// - `consumes[<i>].artifact missing`, `consumes[<i>].required missing`, `consumes[<i>].required must be boolean, got <type>`, `consumes[<i>].conditional_on must be one of brownfield | greenfield, got "<value>"`;
    /// - `produces_kinds key "<key>" is not in produces`, `produces_kinds.<key> lists unknown kind "<kind>"` (kinds are `service`, `spec`, `ui`, `packaging`, `library`);
    /// - `review_class must be "adversarial" or "advisory"`, `summary_confirmation must be one of required, if-present, got "<value>"`;
    /// - `when has unknown predicate "<key>"; allowed: producer-in-plan`;
    /// - `mode "<mode>" requires a non-empty support_agents` (for `pipeline` and `mob`);
    /// - `<field> requires a reviewer` (for `reviewer_max_iterations` and `review_class` without `reviewer`).
    ///
    /// Example:
    ///
    /// ```yaml
    /// phase: design
    /// mode: mob
    /// support_agents: []
    /// consumes:
    ///   - artifact: intent-statement
    ///     required: maybe
    /// ```
    ///
    /// How to fix it: follow the help line, which names the allowed values and, for a misspelt value, the closest one (`did you mean ...?`).
    /// Lists may be written in block form (`- item` lines) or flow form (`[a, b]`).
    InvalidStageField,
    /// A stage file uses a key that is reserved for a feature not active yet.
    /// The message is `<key> is reserved (<feature>); not active yet`, for `on_failure` (loop driver), `blocks_on` (construction worktrees), `timeout` (sensor binding) and `retry` (loop driver).
    ///
    /// Example:
    ///
    /// ```yaml
    /// retry: 3
    /// ```
    ///
    /// How to fix it: remove the line; it has no effect in this release.
    ReservedStageKey,
    /// A stage file uses `bundle:`, which was renamed.
    /// The message is `bundle: was renamed; write plugin: for ownership`.
    ///
    /// Example:
    ///
    /// ```yaml
    /// bundle: acme
    /// ```
    ///
    /// How to fix it: rename `bundle:` to `plugin:`.
    RenamedStageKey,
    /// A stage file has a key that is not a stage field.
    /// The message is `unknown key: <key>`.
    /// The help suggests the closest known key when there is one; for `rules_in_context`, `sensors_applicable` and `enabled` it explains that those exist only on compiled graph nodes.
    ///
    /// Example:
    ///
    /// ```yaml
    /// reviwer: aidlc-architecture-reviewer-agent
    /// ```
    ///
    /// How to fix it: fix the spelling (here `reviewer`), or remove the key; stage files accept only the documented fields.
    UnknownStageKey,
    /// A stage's `lead_agent`, `support_agents` entry or `reviewer` names no agent file.
    /// Agents are matched by the `name:` field of the files in `<harness>/agents/*.md`; the name `orchestrator` is always accepted.
    /// The message is `<field> "<agent>" has no matching <harness>/agents/*.md`, for example `support_agents[0] "aidlc-qa-agent" has no matching .claude/agents/*.md`.
    ///
    /// Example:
    ///
    /// ```yaml
    /// lead_agent: aidlc-architekt-agent
    /// ```
    ///
    /// How to fix it: use the `name:` of an existing agent file (the help suggests the closest one), or add an agent file with that `name:`.
    UnknownAgent,
    /// A stage file's name (without `.md`) differs from its `slug:`.
    /// The message is `stage filename stem "<stem>" does not match frontmatter slug "<slug>". Rename the file or fix the slug.`
    ///
    /// Example, in `construction/code-gen.md`:
    ///
    /// ```yaml
    /// slug: code-generation
    /// ```
    ///
    /// How to fix it: rename the file to `<slug>.md`, or set `slug:` to the file name.
    StageSlugMismatch,
    /// Two stage files declare the same `slug:`.
    /// The message is `Duplicate stage slug "<slug>" in <path> — already declared in <first path>. Rename one of them.`
    /// The first file (in discovery order: phase folders, then file names, sorted) keeps the slug.
    ///
    /// How to fix it: give every stage a unique slug (and file name).
    DuplicateStageSlug,
    /// A stage file sits in a folder that does not match a phase.
    /// There are two cases:
    ///
    /// - An error when the folder is not a phase at all: `Stage "<slug>" (<path>) is in an unknown phase directory "<folder>". Stage phase directories must be one of: initialization, ideation, inception, construction, operation.`
    /// - A warning when the folder is a phase but not the one the file declares: `stage "<slug>" declares phase "<phase>" but sits in the "<folder>" folder`.
    ///
    /// Example: `.claude/aidlc-common/stages/design/domain-design.md`, or `inception/domain-design.md` with
    ///
    /// ```yaml
    /// phase: construction
    /// ```
    ///
    /// How to fix it: move the file to the folder of its `phase:`, or fix `phase:`.
    UnknownPhaseDirectory,
    /// A warning: a file in the stages folder looks like a stage definition but discovery does not read it, so its stage is not compiled.
    /// Only files named `<slug>.md` in a phase folder (`<stages>/<phase>/<slug>.md`) load.
    /// The message is the path followed by the reason:
    ///
    /// - `<path> is not in a phase folder, so it is not loaded (stages are read from `<stages>/<phase>/<slug>.md` only)` (a file directly in the stages folder);
    /// - `<path> does not end in `.md`, so it is not loaded and its stage is not compiled` (`.markdown`, `.MD`, `.mdown`, `.mkd`);
    /// - `<path> is nested below its phase folder; discovery never reads subfolders of a phase folder`.
    ///
    /// `README` files and hidden files are not reported.
    /// The help names the path that would load the file.
    ///
    /// Example: `.claude/aidlc-common/stages/my-stage.md`, or `.claude/aidlc-common/stages/inception/my-stage.markdown`.
    ///
    /// How to fix it: move or rename the file as the help line says (`.claude/aidlc-common/stages/<phase>/my-stage.md`, `.claude/aidlc-common/stages/inception/my-stage.md`).
    SkippedStageFile,
    /// A stage's `plugin:` breaks the ownership rules.
    /// The messages are:
    ///
    /// - `stage "<slug>" declares plugin "aidlc"; omit plugin for core stages.`
    /// - `stage "<slug>" declares plugin "<name>"; the "aidlc-" prefix is reserved for core (a plugin named aidlc-<x> collides with core runner paths). Rename the plugin.`
    /// - `stage "<slug>" declares plugin "<name>", but plugin-owned stage slugs must start with "<name>-". Rename the slug or fix the plugin field.`
    ///
    /// Example:
    ///
    /// ```yaml
    /// slug: threat-model
    /// plugin: acme
    /// ```
    ///
    /// How to fix it: remove `plugin:` for a core stage; pick a plugin name without the `aidlc-` prefix; and start a plugin stage's slug with the plugin name (here `acme-threat-model`).
    InvalidPluginField,
    /// The `plugins` key of `<harness>/tools/data/harness.json` (the plugin selection, docs/decisions.md D14) is not a list of distinct plugin names, or names a plugin the install does not have.
    /// The reference accepts any non-empty string there; this engine is stricter.
    /// The messages are:
    ///
    /// - `harness.json is not a JSON document this engine reads: <line>:<column>: not valid JSON: <message>` (or a key written twice);
    /// - `harness.json field "plugins" must be a list of plugin names (kebab case; `aidlc` is the core)`;
    /// - `harness.json field "plugins" entry <n> ("<name>") is not a plugin name: …`, `… entry <n> must be a plugin name (a string)`, `harness.json field "plugins" names "<name>" twice (entry <n>)`;
    /// - `harness.json field "plugins" names "<name>", which no stage or scope of this install belongs to (known: aidlc, <plugins>)`.
    ///
    /// The span points at the offending value in `harness.json`.
    ///
    /// How to fix it: write `"plugins": ["aidlc", "<plugin>", …]` with names from `aidlc plugin list`, or remove the key to enable every plugin.
    InvalidPluginSelection,
    /// Only in a plugin's own tree (`aidlc compile` or `aidlc lsp` run in the folder that holds the plugin's manifest, docs/decisions.md D52): composing the plugin into the temporary default framework was refused, as `aidlc plugin add` would refuse it.
    /// The diagnostic sits on the file at fault (the manifest `plugin.json`, a contribution, a stage, agent, scope or sensor file), with a span on the key, list item or line at fault where the refusal names one; the message is the refusal's.
    /// A refusal that names no file at all is printed as `aidlc plugin add` prints it (exit 2); the language server shows it on the plugin's manifest, at its first line, saying that it has no file of its own.
    ///
    /// Example: a manifest whose dependency is not a version requirement.
    ///
    /// ```json
    /// {"name": "acme", "dependencies": ["core", "lib@not-a-range"]}
    /// ```
    ///
    /// How to fix it: do what the help line says (here write `lib@^1.0.0`); the same fix makes `aidlc plugin add` accept the plugin.
    PluginRefused,
    /// Only in the language server, in a plugin's own tree (`aidlc lsp` run in the folder that holds the plugin's manifest, docs/decisions.md D52): composing the plugin gave a warning that `aidlc plugin add` and `aidlc compile` there print as a `warning:` line, such as a sensor file no stage of the plugin imports, a sensor `aidlc.sensors` lists that the plugin lacks, a file under `contributions/` that is not read, or a contribution that leaves a core stage's `consumes` as it was.
    /// The warning sits on the plugin's file it names, on the key or item at fault where it names one (else the file's first line); a warning about the plugin as a whole sits on the manifest's first line.
    /// It does not block the composition.
    ///
    /// Example: `sensors/aidlc-acme-extra.md` exists but no stage of the plugin lists `acme-extra` in `sensors:`.
    ///
    /// How to fix it: do what the warning's help says (here: import the sensor in a stage's `sensors:`, list it in `aidlc.sensors`, or remove the file).
    PluginCompositionWarning,
    /// A warning, on an install with composed plugins: a composed plugin's source changed since it was composed, so the installed copies are stale until `aidlc plugin sync` recomposes them.
    /// `aidlc compile` (and `--check`, on the no-op path too) says it once, on `aidlc.lock.json`: `plugin "<name>" changed at its source <source> since it was composed: this compile read its installed copies, which are stale` (docs/decisions.md D55); a lock file or a source that cannot be read is the same warning saying so (`cannot tell whether the composed plugins are current: …`); a source folder that is not there (a CI checkout without it) is not checked.
    /// In `aidlc lsp` (D53), which never writes into the install, it sits at the first line of each installed file the sync would rewrite (`this installed file is stale: plugin "<name>" changed at its source <source> since it was composed; `aidlc plugin sync` rewrites it`); a file the sync would add or remove is named in one warning at the first line of `aidlc.lock.json`, as is a sync that would be refused now (its refusal's words).
    /// `aidlc compile --watch` recomposes on such a change by itself and never shows this warning.
    ///
    /// How to fix it: run `aidlc plugin sync` (or keep `aidlc compile --watch` running); to keep the installed copy instead, undo the edit in the plugin's source.
    StalePluginCopy,
    /// The selection closure (docs/decisions.md D14): an enabled stage consumes a required artifact whose only producers are stages of plugins the selection disables.
    /// The message is the reference's: `Plugin selection closure failed: enabled stage "<slug>" consumes required artifact "<artifact>", but its only producer(s) are disabled: <producer> (<plugin>), …. Enable plugin(s) <plugins> or disable the consuming stage.`
    /// The span points at the artifact in the consuming stage; the `plugins` key of `harness.json` is a related location.
    /// A `requires_stage` edge to a disabled stage is not an error (the edge is vacuous when the stage never runs); `aidlc doctor` lists such dropped edges.
    ///
    /// How to fix it: add the named plugins to `plugins` in `harness.json`, or disable the consuming stage's plugin.
    DisabledProducers,
    /// An artifact that some stage consumes is produced (in `produces:` or `optional_produces:`) by more than one stage.
    /// The message is `Duplicate producers for consumed artifact "<artifact>" in <path1> (stage "<slug1>"), <path2> (stage "<slug2>") — consumed by stage "<consumer>" in <consumer path>. Rename one produced artifact or update the consumer.`
    /// The span points at the artifact in the consuming stage; the two producers are listed as related files.
    /// An artifact that nobody consumes may have several producers.
    ///
    /// How to fix it: an artifact that another stage consumes must have exactly one producer, so rename one of the produced artifacts, or change what the consumer consumes.
    DuplicateProducer,
    /// A `requires_stage` entry names no stage.
    /// The message is `Unknown requires_stage: "<slug>" on stage "<stage>". Every requires_stage entry must reference a known stage slug.`
    /// An entry naming a stage file that exists but failed to parse is not reported; that file's own diagnostics say why.
    ///
    /// Example:
    ///
    /// ```yaml
    /// requires_stage: [requirement-analysis]
    /// ```
    ///
    /// How to fix it: name an existing stage slug (the help suggests the closest one, here `requirements-analysis`), or remove the entry.
    UnknownRequiresStage,
    /// A stage requires a stage whose number is not lower than its own.
    /// The message is `Compile invariant violated: stage "<slug>" (<number>) requires "<dependency>" (<dependency number>) — dependency must be lower-numbered. Fix: either renumber in stage-graph.json to match the dependency direction, or remove the offending requires_stage edge.`
    /// Numbers already in the existing `stage-graph.json` are kept, so this usually follows a new `requires_stage` edge that points forward.
    ///
    /// How to fix it: remove the `requires_stage` edge, or renumber the stages in `stage-graph.json` so that every dependency has a lower number.
    NumberInvariant,
    /// New stages (those not yet in the existing `stage-graph.json`) of one phase cannot be numbered because their `requires_stage` edges form a cycle.
    /// The message is `Cannot seed stage numbers for phase "<phase>": requires_stage cycle among new stages (stuck: <slugs>). Break the cycle.`
    /// This diagnostic names no file.
    ///
    /// Example: `a.md` has `requires_stage: [b]` and `b.md` has `requires_stage: [a]`.
    ///
    /// How to fix it: remove one `requires_stage` entry so that the stages form an order.
    RequiresStageCycle,
    /// A warning: the stage is the per-unit build stage (`for_each: unit-of-work` and `workspace_requires: true`) but its `mode` is not `subagent`.
    /// The message is `[advisory] stage "<slug>" is the per-unit build stage (for_each: unit-of-work + workspace_requires) but mode is "<mode>", not "subagent" — the autonomous Construction swarm will NOT fire for it; units build serially.`
    ///
    /// Example:
    ///
    /// ```yaml
    /// for_each: unit-of-work
    /// workspace_requires: true
    /// mode: inline
    /// ```
    ///
    /// How to fix it: set `mode: subagent` if the units should build in parallel; otherwise the warning can stay.
    SwarmAdvisory,
    // Resolution.
    /// A stage's `sensors:` list names an id that no loaded manifest declares.
    /// The message is `Stage "<slug>" imports unknown sensor id "<id>". Known ids: <ids>` (or `(none)`), with the label "no manifest declares this id".
    /// A manifest that failed its own checks is not loaded, so importing it gives this diagnostic too.
    ///
    /// Example:
    ///
    /// ```yaml
    /// sensors: [traceabilty]
    /// ```
    ///
    /// How to fix it: fix the id (the help suggests the closest known id, here `traceability`), add a manifest named `aidlc-<id>.md` to the sensors folder, or remove the import.
    UnknownSensorImport,
    /// A stage imports a gate-fired sensor (`fire_on: gate`) that can never fire for it.
    /// Gate dispatch runs a sensor only over the stage's declared outputs (`produces` and `optional_produces`), so a `matches` glob that none of the places those outputs can be written matches means the sensor never runs at that gate (failure mode [N2](failure-modes.md#n2)).
    /// The places follow the runtime's layout, with `<record>` = `aidlc/spaces/<space>/intents/<YYMMDD-label>`: `<record>/<phase>/<slug>/<artifact>.md` for most stages (`traceability` is `traceability.json`); `<record>/construction/<slug>/`, `<record>/construction/<unit>/<slug>/` and `<record>/construction/units/<unit>/<slug>/` for a per-unit stage (`for_each: unit-of-work`); and `aidlc/spaces/<space>/codekb/<repo>/` for `reverse-engineering`.
    /// The compile checks example paths in the default space (`aidlc/spaces/default/intents/260101-intent/…`, unit `unit`, repository `repo`).
    /// A stage that declares no outputs gives this diagnostic for every gate-fired sensor it imports.
    ///
    /// It is an error for a blocking sensor (its gate would wait for a verdict that never comes) and a warning for an advisory one.
    /// The message is `<severity> gate sensor "<id>" can never fire for stage "<slug>": its matches "<glob>" matches none of the stage's declared outputs` (or `: the stage declares no outputs for it to check`); it points at the id in the stage's `sensors:`, with a note pointing at the manifest's `matches`.
    /// Write-fired sensors are not checked: they match whatever the agent writes, so a linter on `**/*.ts` imported by a stage whose outputs are Markdown is fine.
    ///
    /// Example:
    ///
    /// ```yaml
    /// # .claude/sensors/aidlc-doc-shape.md
    /// fire_on: gate
    /// default_severity: blocking
    /// matches: "**/{aidlc-docs,intents}/**"
    /// # .claude/aidlc-common/stages/inception/reverse-engineering.md
    /// sensors: [doc-shape]
    /// ```
    ///
    /// How to fix it: change the manifest's `matches` so that it covers where the stage's outputs are written (the help names one such path; here add `codekb` to the group), declare the stage's outputs in `produces:`, or remove the id from the stage's `sensors:`.
    DeadSensorBinding,
    /// A rule file's frontmatter has a `pairing:` field with a value that is neither `feedforward-only` nor a sensor id shape.
    /// The messages are `pairing must be a non-empty string` and `pairing must be "feedforward-only" or start with "aidlc-" (sensor id shape); got "<value>"`.
    /// Rule files are `org.md`, `team.md`, `project.md` and `phases/<phase>.md` under `aidlc/spaces/default/memory/`.
    ///
    /// Example:
    ///
    /// ```yaml
    /// pairing: linter
    /// ```
    ///
    /// How to fix it: write `pairing: feedforward-only`, or pair with a sensor as `pairing: aidlc-<sensor-id>` (here `aidlc-linter`).
    InvalidRulePairing,
    /// A scope file in `<harness>/scopes/` has an invalid field, or repeats another scope's name.
    /// The messages are:
    ///
    /// - `Scope file <path> declares plugin "<plugin>"; the "aidlc-" prefix is reserved for core (it collides with core runner paths). Rename the plugin.`
    /// - `Scope file <path> has invalid skeleton value "<value>". Expected "on" or "off".`
    /// - `Scope file <path> has invalid review_cap value "<value>". Expected "adversarial", "advisory", or "none".`
    /// - `Duplicate scope name "<name>" in <path>: already declared in <first path>. Rename one of them.`
    ///
    /// Example:
    ///
    /// ```yaml
    /// name: feature
    /// skeleton: yes
    /// ```
    ///
    /// How to fix it: use `skeleton: on` or `skeleton: off`; `review_cap` `adversarial`, `advisory` or `none`; a plugin name without the `aidlc-` prefix; and a unique `name:` per scope file.
    InvalidScopeFile,
    /// The existing `stage-graph.json` is not a JSON array of stage nodes, so stage numbers cannot be pinned from it.
    /// The message is `the existing stage-graph.json is not a JSON array of stage nodes, so stage numbers cannot be pinned from it`.
    /// The diagnostic names the file but no position.
    ///
    /// How to fix it: restore the file from version control, or delete it to have every stage number seeded afresh.
    MalformedStageGraph,
    /// The install keeps the shape of `stage-graph.json` its own reference tools write (D13): 2.5, 2.6 or the newest (`gate`), detected from the existing graph's keys, else from `<harness>/tools/aidlc-version.ts`, else the newest; `--graph-format` overrides it.
    /// Something the input declares cannot be written in that shape.
    ///
    /// - An error when a stage sets a field the format has no place for: `review_artifact` before `gate`, `review_class` or `summary_confirmation` in 2.5.
    ///   The message is `stage "<slug>" sets <key>, which this install's graph format (<format>, <why>) does not carry`, pointing at the value.
    ///   Dropping the field silently would lose what the author asked for.
    /// - A warning when a manifest declares `fire_on: gate` or `default_severity: blocking` and the format is 2.5 or 2.6: those graphs carry neither key, so the reference, and this engine, read every binding as write-fired and advisory.
    ///   The message names the sensor, the declaration and the format; it points at the manifest.
    ///
    /// How to fix it: remove the field or the declaration, or write the newest format with `aidlc compile --graph-format gate` (the install's reference tools then see a graph they did not write, so do this when the install has moved to this engine).
    NotInGraphFormat,
    /// A sensor manifest declares `default_severity: blocking` and fires on writes (`fire_on: write`, or no `fire_on`).
    /// Blocking is enforced at a stage's gate only; a fire after a write is advisory whatever the manifest declares, so the declaration would promise a block that never happens.
    /// A warning: the manifest compiles, and its bindings are written as declared.
    /// The message is `sensor "<id>" declares default_severity: blocking but fires on writes: a write-fired sensor is advisory, only a gate-fired one blocks`; it names the manifest.
    /// In a graph format without `fire_on` (2.5, 2.6) `not-in-graph-format` says so instead.
    ///
    /// How to fix it: add `fire_on: gate` to enforce the sensor at the gate, or declare `default_severity: advisory`.
    WriteFiredBlocking,
    // Discovery.
    /// A warning: a sensor manifest or a stage file the compile read is a link (or lies in a linked folder) that resolves outside the project folder.
    /// A team may share manifests that way on purpose, so the compile reads the file and compiles as usual; it names the file and where the link leads, so that what decides the gate is never read from outside the project in silence.
    /// `aidlc compile` prints it in every format, on the no-op path too; `aidlc doctor` names the same files in its `Linked inputs` row.
    ///
    /// Example: `.claude/sensors/aidlc-shared-check.md -> ../../team-sensors/aidlc-shared-check.md`.
    ///
    /// How to fix it: keep the link if the team shares the file on purpose (and review changes at its target), or replace the link with a copy of the file inside the project.
    LinkedInputOutsideProject,
}

impl Code {
    /// Every code, in the order of the enum (and of the page).
    pub fn all() -> impl Iterator<Item = Code> {
        <Code as strum::IntoEnumIterator>::iter()
    }

    /// The code as users see it: the variant's name in kebab-case (`unknown-agent`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The code's section of `docs/diagnostics.md`: the variant's doc comment, Markdown.
    pub fn documentation(self) -> &'static str {
        EnumMessage::get_documentation(&self).unwrap_or_default()
    }
}

/// A secondary location that explains the primary one ("first declared here").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Related {
    pub file: Utf8PathBuf,
    pub span: Option<Range<usize>>,
    pub message: String,
}

/// One problem, anchored to a project-relative file and (where known) a byte range in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Project-relative path with `/` separators; `None` for project-wide problems.
    pub file: Option<Utf8PathBuf>,
    pub span: Option<Range<usize>>,
    /// Text shown under the primary span.
    pub label: Option<String>,
    pub related: Vec<Related>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: Severity::Error,
            message: message.into(),
            file: None,
            span: None,
            label: None,
            related: Vec::new(),
            help: None,
        }
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(code, message)
        }
    }

    #[must_use]
    pub fn in_file(mut self, file: impl Into<Utf8PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }

    #[must_use]
    pub fn at(mut self, span: Range<usize>) -> Self {
        self.span = Some(span);
        self
    }

    #[must_use]
    pub fn at_opt(mut self, span: Option<Range<usize>>) -> Self {
        self.span = span;
        self
    }

    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    #[must_use]
    pub fn with_related(
        mut self,
        file: impl Into<Utf8PathBuf>,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        self.related.push(Related {
            file: file.into(),
            span,
            message: message.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The best "did you mean" candidate, scored like clap (Jaro > 0.7), ties broken by name.
pub fn closest_match<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro(wanted, candidate), candidate))
        .filter(|(score, _)| *score > 0.7)
        .reduce(|best, next| {
            let tied = (next.0 - best.0).abs() < f64::EPSILON;
            if next.0 > best.0 || (tied && next.1 < best.1) {
                next
            } else {
                best
            }
        })
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_id() {
        let ids = ["required-sections", "upstream-coverage", "traceability"];
        assert_eq!(closest_match("traceabilty", ids), Some("traceability"));
        assert_eq!(closest_match("zzz", ids), None);
    }

    #[test]
    fn every_code_is_spelled_once_and_documented() {
        let mut names: Vec<&str> = Code::all().map(Code::as_str).collect();
        let n_codes = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n_codes);
        for code in Code::all() {
            assert!(
                !code.documentation().trim().is_empty(),
                "{code} has no doc comment"
            );
        }
        assert_eq!(Code::InvalidUtf8.as_str(), "invalid-utf8");
        assert_eq!(
            Code::LinkedInputOutsideProject.to_string(),
            "linked-input-outside-project"
        );
    }
}
