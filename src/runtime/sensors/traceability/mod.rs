//! The native `traceability` worker (D40): does a stage's `traceability.json` cover
//! every upstream element, point each covered element at a real downstream target, and leave no
//! orphan behind? docs/decisions.md D40 says what the reference checks. Each step is stated
//! where it is applied: the table's shape (`table`), the statuses (`check_status`), the
//! upstream ids (`upstream`, failing closed on any it cannot resolve), the targets (`targets`)
//! and the verdict's keys (`findings`). Only a missing, unknown or unreadable `--output-path` is
//! a usage error; everything else is a verdict. No input makes this worker panic, so the
//! reference's last-resort `traceability sensor failed safely: <e>` verdict has no counterpart
//! here.
//!
//! Where this differs from the reference, on purpose:
//!
//! - Flags and paths are read as `worker_args` reads every worker's, which says how that
//!   differs from the reference.
//! - The unit is also read from the `construction/units/<unit>/<stage>/traceability.json`
//!   layout of the newest reference line; its upstream files are then read under
//!   `construction/units/<unit>/`.
//! - The Bolt DAG (`unit-of-work-dependency.md`) is read for its unit names only: the first
//!   ```` ```yaml ```` block declaring `units:`, its `- name:` entries, each a valid unit name,
//!   none twice. Broken dependency lists and cycles are left to `required-sections`, which
//!   checks that file; the reference also judged them here. Units keep the block's order, and
//!   the compiled graph's cached DAG is not consulted.
//! - A code target that leaves the project through a symlink is reported as escaping (failure
//!   mode E3); the reference checked the path text only. A target whose first folder merely
//!   starts with `..` (`..data/x`) is a path inside the project; the reference reported it as
//!   escaping.
//! - JSON that `serde_json` rejects but JavaScript accepts (lone UTF-16 surrogate escapes,
//!   nesting deeper than 128) is reported as invalid JSON.
//! - Read errors quote the operating system's message, not Node's.

mod findings;
mod ids;
mod record;
mod table;
mod targets;
mod units;
mod upstream;

use std::collections::BTreeSet;

use camino::Utf8Path;
use serde_json::Value;

use self::findings::{Findings, FiredTable, single_finding_verdict};
use self::record::active_record;
use self::table::{Entry, Table, parse_table};
use self::targets::check_targets;
use self::upstream::resolve_upstream;
use crate::runtime::sensors::descriptor::{GateUnit, PathFlag, STAGE_FLAG, ShippedSensor};
use crate::runtime::sensors::text::read_text_lossy;
use crate::runtime::sensors::worker_args::{
    FlagGrammar, WorkerArgs, existing_output_path, verdict_or_usage_error,
};

/// The statuses a coverage or reverse row may carry.
const VALID_STATUSES: [&str; 5] = ["OK", "GAP", "ORPHAN", "Deferred", "N/A"];

/// The statuses that must name a target.
const STATUSES_NEEDING_A_TARGET: [&str; 3] = ["OK", "Deferred", "N/A"];

/// The `traceability` sensor: one `traceability.json` per fire.
pub const SENSOR: ShippedSensor = ShippedSensor {
    id: "traceability",
    check: |args, context| verdict_or_usage_error(check(args, &context.project_dir)),
    extra_flags: &[],
    default_path_flag: PathFlag::OutputPath,
    gate_unit: GateUnit::Deliverable,
};

fn check(args: &[String], project_dir: &Utf8Path) -> Result<Value, String> {
    let flags = WorkerArgs::parse(args, &SENSOR, FlagGrammar::Lenient)?;
    let (output_path_as_given, output_path) = existing_output_path(&flags, project_dir)?;
    let body = read_text_lossy(&output_path)
        .map_err(|error| format!("failed to read --output-path {output_path_as_given}: {error}"))?;
    let table = match parse_table(&body) {
        Ok(table) => table,
        Err(reason) => return Ok(single_finding_verdict(&reason, &output_path)),
    };
    if table.coverage.is_empty() {
        return Ok(single_finding_verdict(
            "no coverage entries found in traceability.json",
            &output_path,
        ));
    }
    let stage = flags
        .value(STAGE_FLAG)
        .map(str::to_owned)
        .or_else(|| table.stage.clone())
        .unwrap_or_default();
    let fired = FiredTable {
        table: &table,
        stage: &stage,
        project_dir,
        output_path: &output_path,
        output_path_as_given: &output_path_as_given.replace('\\', "/"),
    };
    Ok(findings_of(&fired).into_verdict(&output_path, &body))
}

fn findings_of(fired: &FiredTable<'_>) -> Findings {
    let mut findings = Findings::default();
    check_statuses(fired.table, &mut findings);
    check_declared_ids(fired.table, &mut findings);
    let record = active_record(fired.project_dir);
    let upstream = resolve_upstream(fired, record.as_ref());
    let declared: BTreeSet<&str> = fired
        .table
        .upstream_ids
        .iter()
        .map(String::as_str)
        .collect();
    findings.missing_from_upstream_ids = upstream
        .ids
        .iter()
        .filter(|id| !declared.contains(id.as_str()))
        .cloned()
        .collect();
    if upstream.ids.is_empty() && upstream.reasons.is_empty() {
        findings.reasons.push(format!(
            "upstream ID set is empty for stage \"{}\"",
            fired.stage
        ));
    }
    findings.reasons.extend(upstream.reasons.iter().cloned());
    findings.gaps.extend(upstream.extra_gaps.iter().cloned());
    check_targets(fired, record.as_ref(), &upstream, &mut findings);
    findings
}

/// Statuses of every row, coverage first: unknown ones, gaps, orphans and missing targets.
fn check_statuses(table: &Table, findings: &mut Findings) {
    let fields = [("coverage", &table.coverage), ("reverse", &table.reverse)];
    for (field, entries) in fields {
        for entry in entries {
            check_status(field, entry, findings);
        }
    }
}

fn check_status(field: &str, entry: &Entry, findings: &mut Findings) {
    let (id, status) = (&entry.id, entry.status.as_str());
    if !VALID_STATUSES.contains(&status) {
        findings
            .invalid_entries
            .push(format!("{field}:{id}: unknown status \"{status}\""));
        return;
    }
    match status {
        "GAP" => findings.gaps.push(id.clone()),
        "ORPHAN" => findings.orphans.push(id.clone()),
        _ => {}
    }
    if STATUSES_NEEDING_A_TARGET.contains(&status) && entry.trimmed_target().is_empty() {
        findings.invalid_entries.push(format!(
            "{field}:{id}: status {status} requires a non-empty target"
        ));
    }
}

/// Upstream ids without a coverage row, and coverage rows that no upstream id declares.
fn check_declared_ids(table: &Table, findings: &mut Findings) {
    let covered: BTreeSet<&str> = table.coverage.iter().map(|e| e.id.as_str()).collect();
    let declared: BTreeSet<&str> = table.upstream_ids.iter().map(String::as_str).collect();
    findings.missing_from_table = table
        .upstream_ids
        .iter()
        .filter(|id| !covered.contains(id.as_str()))
        .cloned()
        .collect();
    for entry in &table.coverage {
        if !declared.contains(entry.id.as_str()) {
            findings.invalid_entries.push(format!(
                "coverage:{}: id is absent from upstream_ids",
                entry.id
            ));
        }
    }
}

#[cfg(test)]
mod tests {

    use camino::Utf8PathBuf;

    use super::findings::unique_sorted;
    use super::ids::{IdPattern, extract_ids};
    use super::units::{first_unit_alias, markdown_cells, token_present};
    use super::upstream::{story_of_acceptance_criterion, unit_of_output_path};
    use super::*;
    use crate::runtime::sensors::test_support::{SensorProject, reference_part};

    const RECORD: &str = "aidlc/spaces/default/intents/demo-0001";

    const REQUIREMENTS: &str = "## Functional\n- FR1 login\n- FR2 logout\n## NFR\n- NFR1 fast\n";

    const STORIES: &str = "\
## US1.1 Log in\n- AC1.1.1 valid password\n- AC1.1.2 bad password\n\
## US1.2 Log out\n- AC1.2.1 session ends\n\
## US2.1 Report\n- AC2.1.1 export\n";

    const DAG: &str = "## Units\n```yaml\nunits:\n  - name: auth\n    depends_on: []\n  - name: reports\n    depends_on: [auth]\n```\n";

    const UNIT_OF_WORK: &str = "| Id | Unit |\n|----|------|\n| U1 | auth |\n| U2 | `reports` |\n";

    const STORY_MAP: &str =
        "| Story | Unit |\n|---|---|\n| US1.1 | auth |\n| US1.2 | U1 |\n| US2.1 | reports |\n";

    const RULES: &str = "## Rules\n- BR1.1 lock after 3 tries\n- BR1.2 expire sessions\n";

    /// The shared fixture, with the intent record `RECORD`, fired with the dispatcher's argv
    /// for `traceability`.
    struct Project(SensorProject);

    impl std::ops::Deref for Project {
        type Target = SensorProject;

        fn deref(&self) -> &SensorProject {
            &self.0
        }
    }

    impl Project {
        /// A project whose one intent record is the active one.
        fn new() -> Self {
            let project = Self(SensorProject::new(&SENSOR));
            project.write(&format!("{RECORD}/aidlc-state.md"), "# State\n");
            project
        }

        fn without_record() -> Self {
            Self(SensorProject::new(&SENSOR))
        }

        /// Write `<RECORD>/<relative>`.
        fn record_file(&self, relative: &str, text: &str) -> Utf8PathBuf {
            self.write(&format!("{RECORD}/{relative}"), text)
        }

        /// The inception files every construction example uses.
        fn with_inception(&self) -> &Self {
            self.record_file(
                "inception/requirements-analysis/requirements.md",
                REQUIREMENTS,
            );
            self.record_file("inception/user-stories/stories.md", STORIES);
            self.record_file("inception/units-generation/unit-of-work-dependency.md", DAG);
            self.record_file("inception/units-generation/unit-of-work.md", UNIT_OF_WORK);
            self.record_file(
                "inception/units-generation/unit-of-work-story-map.md",
                STORY_MAP,
            );
            self
        }

        /// Write `table` at `<RECORD>/<relative>` and fire on it with `--stage`.
        fn fire(&self, relative: &str, stage: &str, table: &Value) -> Value {
            let path = self.record_file(relative, &table.to_string());
            self.verdict(&["--stage", stage, "--output-path", path.as_str()])
        }
    }

    fn entry(id: &str, status: &str, target: &str) -> Value {
        serde_json::json!({ "id": id, "status": status, "target": target })
    }

    fn table(upstream_ids: &[&str], coverage: &[Value], reverse: &[Value]) -> Value {
        serde_json::json!({
            "upstream_ids": upstream_ids,
            "coverage": coverage,
            "reverse": reverse,
        })
    }

    fn keys(verdict: &Value) -> Vec<&str> {
        verdict
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    fn list<'verdict>(verdict: &'verdict Value, key: &str) -> Vec<&'verdict str> {
        verdict[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item.as_str().unwrap())
            .collect()
    }

    const FUNCTIONAL_DESIGN_TABLE: &str = "construction/auth/functional-design/traceability.json";

    fn functional_design_project() -> Project {
        let project = Project::new();
        project.with_inception();
        project.record_file("construction/auth/functional-design/rules.md", RULES);
        project
    }

    // --- complete matrices ---------------------------------------------------------------------

    #[test]
    fn a_complete_functional_design_matrix_passes() {
        let project = functional_design_project();
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(
                &["AC1.1.1", "AC1.1.2", "AC1.2.1"],
                &[
                    entry("AC1.1.1", "OK", "BR1.1"),
                    entry("AC1.1.2", "OK", "BR1.1, BR1.2"),
                    entry("AC1.2.1", "Deferred", "later bolt"),
                ],
                &[],
            ),
        );
        assert_eq!(
            verdict.to_string(),
            r#"{"pass":true,"gaps":[],"orphans":[],"missing_from_table":[],"missing_from_upstream_ids":[],"invalid_entries":[],"invalid_targets":[],"findings_count":0}"#
        );
    }

    #[test]
    fn a_complete_user_stories_matrix_passes() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2", "NFR1"],
                &[
                    entry("FR1", "OK", "US1.1"),
                    entry("FR2", "OK", "US1.2 and US2.1"),
                    entry("NFR1", "N/A", "covered at nfr-requirements"),
                ],
                &[],
            ),
        );
        assert_eq!(verdict["pass"], true, "{verdict}");
        assert_eq!(verdict["findings_count"], 0);
    }

    #[test]
    fn the_stage_comes_from_the_file_when_no_flag_names_it() {
        let project = Project::new();
        project.with_inception();
        let mut data = table(&["NFR1"], &[entry("NFR1", "OK", "perf doc")], &[]);
        data["stage"] = Value::from("nfr-requirements");
        data["unit"] = Value::from("auth");
        let path = project.record_file(
            "construction/auth/nfr-requirements/traceability.json",
            &data.to_string(),
        );
        let verdict = project.verdict(&["--output-path", path.as_str()]);
        assert_eq!(verdict["pass"], true, "{verdict}");
    }

    // --- missing upstream coverage -------------------------------------------------------------

    #[test]
    fn missing_upstream_coverage_fails() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2"],
                &[entry("FR1", "OK", "US1.1"), entry("FR2", "GAP", "")],
                &[],
            ),
        );
        assert_eq!(
            reference_part(verdict.clone()).to_string(),
            r#"{"pass":false,"gaps":["FR2"],"orphans":[],"missing_from_table":[],"missing_from_upstream_ids":["NFR1"],"invalid_entries":[],"invalid_targets":[],"findings_count":2}"#
        );
        let rules: Vec<&str> = verdict["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["rule"].as_str().unwrap())
            .collect();
        assert_eq!(rules, ["gap", "missing-from-upstream-ids"]);
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(&["FR1", "FR2", "NFR1"], &[entry("FR1", "OK", "US1.1")], &[]),
        );
        assert_eq!(list(&verdict, "missing_from_table"), ["FR2", "NFR1"]);
        assert_eq!(verdict["findings_count"], 2);
    }

    #[test]
    fn entry_problems_are_invalid_entries() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2", "NFR1"],
                &[
                    entry("FR1", "OK", "US1.1"),
                    entry("FR2", "Done", "US1.2"),
                    entry("NFR1", "N/A", "  "),
                    entry("FR9", "Deferred", "later"),
                ],
                &[entry("X1", "ORPHAN", "")],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_entries"),
            [
                "coverage:FR2: unknown status \"Done\"",
                "coverage:FR9: id is absent from upstream_ids",
                "coverage:NFR1: status N/A requires a non-empty target",
            ]
        );
        assert_eq!(list(&verdict, "orphans"), ["X1"]);
        assert_eq!(verdict["findings_count"], 4);
    }

    #[test]
    fn an_unresolvable_upstream_fails_closed() {
        let project = Project::new();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(&["FR1"], &[entry("FR1", "GAP", "")], &[]),
        );
        let requirements = project
            .root()
            .join(RECORD)
            .join("inception/requirements-analysis/requirements.md");
        let stories = project
            .root()
            .join(RECORD)
            .join("inception/user-stories/stories.md");
        assert_eq!(verdict["findings_count"], 3);
        assert_eq!(
            verdict["reason"],
            format!(
                "required upstream artifact is missing: {requirements}; required upstream artifact is missing: {stories}"
            )
        );
        let verdict = project.fire(
            "inception/other/traceability.json",
            "workspace-detection",
            &table(&["X"], &[entry("X", "GAP", "")], &[]),
        );
        assert!(
            verdict["reason"]
                .as_str()
                .unwrap()
                .starts_with("cannot derive the construction unit from output path: "),
            "{verdict}"
        );
        let verdict = project.fire(
            "construction/auth/review/traceability.json",
            "review",
            &table(&["X"], &[entry("X", "GAP", "")], &[]),
        );
        assert_eq!(
            verdict["reason"],
            "stage \"review\" has no traceability upstream resolver"
        );
    }

    #[test]
    fn without_an_intent_record_nothing_passes() {
        let project = Project::without_record();
        let path = project.write(
            "traceability.json",
            &table(&["FR1"], &[entry("FR1", "OK", "US1.1")], &[]).to_string(),
        );
        let verdict = project.verdict(&["--stage", "user-stories", "--output-path", path.as_str()]);
        assert_eq!(verdict["pass"], false);
        assert_eq!(
            verdict["reason"],
            "cannot resolve the active intent record directory"
        );
        assert_eq!(verdict["findings_count"], 1);
    }

    #[test]
    fn an_undeclared_or_broken_unit_dag_fails_closed() {
        let project = functional_design_project();
        let verdict = project.fire(
            "construction/billing/functional-design/traceability.json",
            "functional-design",
            &table(&["AC1.1.1"], &[entry("AC1.1.1", "OK", "BR1.1")], &[]),
        );
        assert!(
            verdict["reason"]
                .as_str()
                .unwrap()
                .contains("unit \"billing\" is not declared in unit-of-work-dependency.md"),
            "{verdict}"
        );
        project.record_file(
            "inception/units-generation/unit-of-work-dependency.md",
            "## Units\nno block\n",
        );
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&["AC1.1.1"], &[entry("AC1.1.1", "OK", "BR1.1")], &[]),
        );
        assert!(
            verdict["reason"].as_str().unwrap().contains(
                "unit-of-work-dependency.md is absent: no fenced ```yaml units: block found"
            ),
            "{verdict}"
        );
    }

    // --- dangling downstream targets -----------------------------------------------------------

    #[test]
    fn a_dangling_story_target_fails() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(
                &["FR1", "FR2", "NFR1"],
                &[
                    entry("FR1", "OK", "US9.9"),
                    entry("FR2", "OK", "the login story"),
                    entry("NFR1", "Deferred", "later"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            [
                "FR1: target US9.9 is absent from stories.md",
                "FR2: target must name at least one USx.y ID",
            ]
        );
        assert_eq!(verdict["pass"], false);
        assert_eq!(verdict["findings_count"], 2);
    }

    #[test]
    fn a_dangling_rule_target_fails() {
        let project = functional_design_project();
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(
                &["AC1.1.1", "AC1.1.2", "AC1.2.1"],
                &[
                    entry("AC1.1.1", "OK", "BR1.1"),
                    entry("AC1.1.2", "OK", "BR1.2, BR7.7"),
                    entry("AC1.2.1", "OK", "none"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            [
                "AC1.1.2: target BR7.7 is absent from rules.md",
                "AC1.2.1: target must name at least one BRx.y ID",
            ]
        );
    }

    #[test]
    fn unit_targets_must_be_declared_and_mapped() {
        let project = Project::new();
        project.with_inception();
        let verdict = project.fire(
            "inception/units-generation/traceability.json",
            "units-generation",
            &table(
                &["US1.1", "US1.2", "US2.1"],
                &[
                    entry("US1.1", "OK", "auth"),
                    entry("US1.2", "OK", "u1"),
                    entry("US2.1", "OK", "auth"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            ["US2.1: target \"auth\" is not mapped in unit-of-work-story-map.md"]
        );
        let verdict = project.fire(
            "inception/units-generation/traceability.json",
            "units-generation",
            &table(
                &["US1.1", "US1.2", "US2.1"],
                &[
                    entry("US1.1", "OK", "billing"),
                    entry("US1.2", "OK", "U1"),
                    entry("US2.1", "OK", "U2"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            ["US1.1: target \"billing\" is not a declared unit"]
        );
    }

    #[test]
    fn unmapped_stories_become_gaps() {
        let project = Project::new();
        project.with_inception();
        project.record_file(
            "inception/units-generation/unit-of-work-story-map.md",
            "| Story | Unit |\n|---|---|\n| US1.1, US1.2 | auth |\n",
        );
        let verdict = project.fire(
            "inception/units-generation/traceability.json",
            "units-generation",
            &table(
                &["US1.1", "US1.2", "US2.1"],
                &[
                    entry("US1.1", "OK", "auth"),
                    entry("US1.2", "OK", "auth"),
                    entry("US2.1", "Deferred", "phase 2"),
                ],
                &[],
            ),
        );
        assert_eq!(list(&verdict, "gaps"), ["US2.1"]);
        assert_eq!(verdict["findings_count"], 1);
    }

    #[test]
    fn code_targets_must_be_files_inside_the_project() {
        let project = Project::new();
        project.with_inception();
        project.write("src/auth/login.rs", "fn login() {}\n");
        project.record_file("construction/auth/functional-design/rules.md", RULES);
        let verdict = project.fire(
            "construction/auth/code-generation/traceability.json",
            "code-generation",
            &table(
                &["AC1.1.1", "AC1.1.2", "AC1.2.1", "BR1.1", "BR1.2"],
                &[
                    entry("AC1.1.1", "OK", "src/auth/login.rs"),
                    entry("AC1.1.2", "OK", "src\\auth\\login.rs"),
                    entry("AC1.2.1", "OK", "src/auth/logout.rs"),
                    entry("BR1.1", "OK", "../outside.rs"),
                    entry("BR1.2", "OK", "/etc/passwd"),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            [
                "AC1.2.1: target file does not exist: src/auth/logout.rs",
                "BR1.1: target escapes the project directory",
                "BR1.2: target must be a workspace-relative file path",
            ]
        );
        assert_eq!(verdict["findings_count"], 3);
    }

    #[cfg(unix)]
    #[test]
    fn a_code_target_that_leaves_through_a_symlink_escapes_e3() {
        let project = Project::new();
        project.with_inception();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), project.root().join("linked")).unwrap();
        let verdict = project.fire(
            "construction/auth/code-generation/traceability.json",
            "code-generation",
            &table(
                &["AC1.1.1", "AC1.1.2"],
                &[
                    entry("AC1.1.1", "OK", "linked/secret.rs"),
                    entry("AC1.1.2", "GAP", ""),
                ],
                &[],
            ),
        );
        assert_eq!(
            list(&verdict, "invalid_targets"),
            ["AC1.1.1: target escapes the project directory"]
        );
    }

    // --- orphans -------------------------------------------------------------------------------

    #[test]
    fn a_rule_no_row_targets_is_a_derived_orphan() {
        let project = functional_design_project();
        let coverage = [
            entry("AC1.1.1", "OK", "BR1.1"),
            entry("AC1.1.2", "OK", "BR1.1"),
            entry("AC1.2.1", "OK", "BR1.1"),
        ];
        let ids = ["AC1.1.1", "AC1.1.2", "AC1.2.1"];
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&ids, &coverage, &[]),
        );
        assert_eq!(list(&verdict, "orphans"), ["BR1.2"]);
        assert_eq!(verdict["pass"], false);
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&ids, &coverage, &[entry("BR1.2", "N/A", "platform rule")]),
        );
        assert_eq!(verdict["pass"], true, "{verdict}");
        let verdict = project.fire(
            FUNCTIONAL_DESIGN_TABLE,
            "functional-design",
            &table(&ids, &coverage, &[entry("BR1.2", "ORPHAN", "")]),
        );
        assert_eq!(list(&verdict, "orphans"), ["BR1.2"]);
    }

    #[test]
    fn nfr_design_reads_the_units_nfr_requirements() {
        let project = Project::new();
        project.with_inception();
        project.record_file(
            "construction/auth/nfr-requirements/performance-requirements.md",
            "NFR1.1 p95 under 200 ms; NFR1.2 cold start\n",
        );
        let verdict = project.fire(
            "construction/auth/nfr-design/traceability.json",
            "nfr-design",
            &table(&["NFR1.1"], &[entry("NFR1.1", "OK", "cache layer")], &[]),
        );
        assert_eq!(list(&verdict, "missing_from_upstream_ids"), ["NFR1.2"]);
        let verdict = project.fire(
            "construction/reports/infrastructure-design/traceability.json",
            "infrastructure-design",
            &table(&["NFR1.1"], &[entry("NFR1.1", "OK", "x")], &[]),
        );
        let folder = project
            .root()
            .join(RECORD)
            .join("construction/reports/nfr-design");
        assert_eq!(
            verdict["reason"],
            format!("required upstream NFR design artifacts are missing under {folder}")
        );
    }

    // --- malformed tables ----------------------------------------------------------------------

    fn single_finding(reason: &str) -> String {
        format!(
            r#"{{"pass":false,"gaps":[],"orphans":[],"missing_from_table":[],"missing_from_upstream_ids":[],"invalid_entries":[],"invalid_targets":[],"findings_count":1,"reason":"{reason}"}}"#
        )
    }

    /// A gap, an orphan and an invalid row are found at the line of their row.
    #[test]
    fn findings_point_at_the_line_of_their_row() {
        let project = Project::new();
        let body = "{\n  \"upstream_ids\": [\"FR1\", \"FR2\"],\n  \"coverage\": [\n    {\"id\": \"FR1\", \"status\": \"GAP\"},\n    {\"id\": \"FR2\", \"status\": \"MAYBE\", \"target\": \"x\"}\n  ]\n}\n";
        let path = project.record_file("inception/user-stories/traceability.json", body);
        let verdict = project.verdict(&["--stage", "user-stories", "--output-path", path.as_str()]);
        let located: Vec<(&str, Option<u64>)> = verdict["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| (item["rule"].as_str().unwrap(), item["line"].as_u64()))
            .collect();
        assert!(located.contains(&("gap", Some(4))), "{located:?}");
        assert!(located.contains(&("invalid-entry", Some(5))), "{located:?}");
    }

    #[test]
    fn malformed_json_is_one_finding_not_an_error() {
        let project = Project::new();
        for body in ["{\"upstream_ids\": [", "", "not json", "\u{feff}{}"] {
            let path = project.record_file("inception/user-stories/traceability.json", body);
            let verdict = project.verdict(&["--output-path", path.as_str()]);
            assert_eq!(verdict["diagnostics"][0]["rule"], "invalid-table");
            assert_eq!(
                reference_part(verdict).to_string(),
                single_finding("invalid JSON in traceability file"),
                "{body:?}"
            );
        }
    }

    #[test]
    fn each_shape_failure_names_its_reason() {
        let project = Project::new();
        let cases = [
            ("[]", "traceability.json must contain a JSON object"),
            ("null", "traceability.json must contain a JSON object"),
            ("{}", "upstream_ids must be an array of non-empty strings"),
            (
                r#"{"upstream_ids":["a"," "],"coverage":[]}"#,
                "upstream_ids must be an array of non-empty strings",
            ),
            (
                r#"{"upstream_ids":[],"coverage":{}}"#,
                "coverage must be an array",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[],"reverse":null}"#,
                "reverse must be an array when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[1]}"#,
                "coverage[0] must be an object",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[{"id":"a","status":"OK"}],"reverse":[{"id":"","status":"OK"}]}"#,
                "reverse[0].id must be a non-empty string",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[{"id":"a","status":7}]}"#,
                "coverage[0].status must be a non-empty string",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[{"id":"a","status":"OK","target":null}]}"#,
                "coverage[0].target must be a string when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[],"stage":3}"#,
                "stage must be a string when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[],"unit":false}"#,
                "unit must be a string when present",
            ),
            (
                r#"{"upstream_ids":[],"coverage":[]}"#,
                "no coverage entries found in traceability.json",
            ),
        ];
        for (body, reason) in cases {
            let path = project.record_file("inception/user-stories/traceability.json", body);
            let verdict = project.verdict(&["--output-path", path.as_str()]);
            assert_eq!(
                reference_part(verdict).to_string(),
                single_finding(reason),
                "{body}"
            );
        }
    }

    #[test]
    fn the_output_keys_keep_the_reference_order() {
        let project = Project::new();
        let verdict = project.fire(
            "inception/user-stories/traceability.json",
            "user-stories",
            &table(&["FR1"], &[entry("FR1", "GAP", "")], &[]),
        );
        assert_eq!(
            keys(&verdict),
            [
                "pass",
                "gaps",
                "orphans",
                "missing_from_table",
                "missing_from_upstream_ids",
                "invalid_entries",
                "invalid_targets",
                "findings_count",
                "reason",
                "diagnostics",
            ]
        );
    }

    // --- paths ---------------------------------------------------------------------------------

    #[test]
    fn windows_style_paths_work() {
        let project = functional_design_project();
        let data = table(
            &["AC1.1.1", "AC1.1.2", "AC1.2.1"],
            &[
                entry("AC1.1.1", "OK", "BR1.1"),
                entry("AC1.1.2", "OK", "BR1.2"),
                entry("AC1.2.1", "OK", "BR1.1"),
            ],
            &[],
        );
        project.record_file(FUNCTIONAL_DESIGN_TABLE, &data.to_string());
        let relative = format!("{RECORD}/.\\{FUNCTIONAL_DESIGN_TABLE}").replace('/', "\\");
        let verdict =
            project.verdict(&["--stage", "functional-design", "--output-path", &relative]);
        assert_eq!(verdict["pass"], true, "{verdict}");
        let code = project.fire(
            "construction/auth/code-generation/traceability.json",
            "code-generation",
            &table(
                &["AC1.1.1"],
                &[entry("AC1.1.1", "OK", "C:\\src\\login.rs")],
                &[],
            ),
        );
        assert_eq!(
            list(&code, "invalid_targets"),
            ["AC1.1.1: target must be a workspace-relative file path"]
        );
    }

    #[test]
    fn the_unit_comes_from_either_construction_layout() {
        assert_eq!(
            unit_of_output_path(Utf8Path::new(
                "/r/construction/auth/nfr-design/traceability.json"
            )),
            Some(("auth".to_owned(), false))
        );
        assert_eq!(
            unit_of_output_path(Utf8Path::new(
                "/r/construction/units/auth/nfr-design/traceability.json"
            )),
            Some(("auth".to_owned(), true))
        );
        for path in [
            "construction/auth/nfr-design/traceability.json",
            "/r/construction/code-generation/traceability.json",
            "/r/construction/auth/nfr-design/other.json",
            "traceability.json",
        ] {
            assert_eq!(unit_of_output_path(Utf8Path::new(path)), None, "{path}");
        }
    }

    // --- flags and errors ----------------------------------------------------------------------

    #[test]
    fn a_missing_output_path_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--stage", "user-stories"]),
            "--output-path is required"
        );
    }

    #[test]
    fn an_output_path_that_does_not_exist_is_a_usage_error() {
        let project = Project::new();
        assert_eq!(
            project.usage_error(&["--output-path", "no\\traceability.json"]),
            "--output-path not found: no\\traceability.json"
        );
    }

    #[test]
    fn an_unreadable_output_path_is_a_usage_error() {
        let project = Project::new();
        let folder = project.root().join("traceability.json");
        std::fs::create_dir_all(&folder).unwrap();
        let message = project.usage_error(&["--output-path", folder.as_str()]);
        assert!(
            message.starts_with(&format!("failed to read --output-path {folder}: ")),
            "{message}"
        );
    }

    #[test]
    fn a_flag_without_a_value_is_a_usage_error_f9() {
        let project = Project::new();
        let path = project.write("traceability.json", "{}");
        assert_eq!(
            project.usage_error(&["--output-path", path.as_str(), "--stage"]),
            "--stage expects a value, got end of arguments."
        );
        assert_eq!(
            project.usage_error(&["--output-path", "--stage", "user-stories"]),
            "--output-path expects a value, got another flag: \"--stage\"."
        );
    }

    // --- element ids ---------------------------------------------------------------------------

    fn ids(text: &str, patterns: &[IdPattern]) -> Vec<String> {
        extract_ids(text, patterns).into_iter().collect()
    }

    #[test]
    fn ids_follow_the_reference_patterns() {
        assert_eq!(
            ids(
                "FR1, FR2.3, FR4.5.6, FR7x, xFR8, FR9.1a, NFR1",
                &[IdPattern::Fr]
            ),
            ["FR1", "FR2.3", "FR4.5", "FR9"]
        );
        assert_eq!(
            ids("NFR1 NFR2.1 NFR3. NFR4_ éNFR5é", &[IdPattern::Nfr]),
            ["NFR1", "NFR3", "NFR5"]
        );
        assert_eq!(
            ids("NFR2.1 NFR2 NFR2.1.4", &[IdPattern::NfrDetail]),
            ["NFR2.1"]
        );
        assert_eq!(
            ids("AC1.2.3 AC1.2 AC1.2.3.4 ac1.2.3", &[IdPattern::Ac]),
            ["AC1.2.3"]
        );
        assert_eq!(ids("[US1.2](x) US3", &[IdPattern::Us]), ["US1.2"]);
        assert_eq!(story_of_acceptance_criterion("AC10.2.3").unwrap(), "US10.2");
    }

    #[test]
    fn table_cells_and_tokens_follow_the_reference() {
        assert_eq!(markdown_cells("| a | `b` | c"), ["a", "`b`"]);
        assert!(markdown_cells("|---|:--:|").is_empty());
        assert!(markdown_cells("text | a |").is_empty());
        assert!(token_present("auth, reports", "AUTH"));
        assert!(token_present("x/auth", "auth"));
        assert!(!token_present("auth-v2", "auth"));
        assert_eq!(first_unit_alias("see u12 and U3").unwrap(), "U12");
        assert_eq!(first_unit_alias("U1x"), None);
    }

    #[test]
    fn lists_are_sorted_by_utf16_code_units() {
        assert_eq!(
            unique_sorted(vec![
                "\u{ff5e}".to_owned(),
                "\u{1f600}".to_owned(),
                "b".to_owned(),
                "B".to_owned(),
                "b".to_owned(),
            ]),
            ["B", "b", "\u{1f600}", "\u{ff5e}"]
        );
    }
}
