//! Synthetic AI-DLC projects of any size, shared by the benchmarks and the tests.
//!
//! Not part of the shipped library: the integration tests, each benchmark and the library's
//! own unit tests include this file as a module of their crate (`#[path]`), so it imports
//! nothing from `aidlc` (it only writes files), and its own tests are in
//! `tests/it/synthetic_projects.rs`.
//!
//! [`SyntheticProject`] describes a project of `stages` stage files, `sensors` sensor manifests
//! and three agent files under the `.claude` harness folder, plus the seven rule files of the
//! default space (org, team, project and one per phase); [`SyntheticProject::files`] renders it
//! and [`SyntheticProject::write_to`] puts it on disk for `discover::load_project`.
//!
//! Invariants:
//! - The same `(stages, sensors, seed)` always gives the same bytes: randomness comes from a
//!   self-contained splitmix64 generator seeded per file from the seed and the file's index,
//!   never from the clock, the environment or a hash-ordered collection.
//! - Every generated project compiles with zero diagnostics (errors or warnings): each stage
//!   sits in the folder of its phase, names only agents and sensors that exist, requires only
//!   lower-positioned stages of its own phase (so the edges are acyclic and every dependency
//!   gets a lower number), and produces artifacts whose names are unique to it.
//!
//! Stage `index` lives in phase `index % 4` (ideation, inception, construction, operation) at
//! position `index / 4` within that phase, with slug `<phase>-stage-<position>`; any stage count
//! works, including counts not divisible by four. Sensor `index` has id `s<index>`.

use camino::{Utf8Path, Utf8PathBuf};

/// The seed [`SyntheticProject::new`] uses.
pub const DEFAULT_SEED: u64 = 0x5EED_A1D1_C0DE_2026;

/// Generated projects use the Claude harness folder.
const HARNESS_DIR: &str = ".claude";

/// The four phases stages are spread over, round-robin by stage index.
const STAGE_PHASES: [&str; 4] = ["ideation", "inception", "construction", "operation"];

const LEAD_AGENT: &str = "aidlc-gen-agent";
const SUPPORT_AGENT: &str = "aidlc-gen-support-agent";
const REVIEWER_AGENT: &str = "aidlc-gen-reviewer-agent";

/// How many agent files a project has.
pub const AGENT_COUNT: usize = AGENT_FILES.len();

/// `(name, display_name, description)` of every agent file; every agent a stage names is here.
const AGENT_FILES: [(&str, &str, &str); 3] = [
    (LEAD_AGENT, "Gen Agent", "Leads every synthetic stage"),
    (
        SUPPORT_AGENT,
        "Gen Support Agent",
        "Helps the lead agent on some synthetic stages",
    ),
    (
        REVIEWER_AGENT,
        "Gen Reviewer Agent",
        "Reviews the deliverables of some synthetic stages",
    ),
];

/// The rules folder of the default space, relative to the project.
const RULES_DIR: &str = "aidlc/spaces/default/memory";

/// Scope names a stage may list. The compile accepts any scope name without a scope file.
const SCOPE_NAMES: [&str; 5] = ["feature", "mvp", "enterprise", "bugfix", "poc"];

/// `matches:` globs of the sensor manifests. Each matches where the generated stages write
/// their outputs (a gate-fired binding that can never fire is a diagnostic), and none of them
/// is `**/*.{md,txt}`, which the benches use as the edited value.
const SENSOR_GLOBS: [&str; 3] = [
    "**/*.md",
    "aidlc/spaces/**/*.md",
    "**/{aidlc-docs,intents}/**",
];

const SENSOR_CATEGORIES: [&str; 3] = ["document-shape", "document-provenance", "code-quality"];

/// Filler sentences for the Markdown bodies; chosen per file by the generator.
const PROSE_SENTENCES: [&str; 6] = [
    "It reads the documents the earlier stages wrote and records what it decided.",
    "Open questions go to the questions file and are answered before the gate opens.",
    "Every claim in the deliverable names the upstream document it came from.",
    "The lead agent drafts the deliverable; the person confirms the summary.",
    "Nothing here is final until the sensors bound to the stage report clean.",
    "Keep the deliverable short: a page that is read beats ten that are not.",
];

/// A stage requires stages among the this many positions before it in its phase, so the
/// dependency graph is a long chain with short fan-in rather than a star around stage 0.
const REQUIRES_WINDOW: usize = 8;

/// Salts that keep the random streams of different kinds of file independent.
const STAGE_SALT: u64 = 0x5747_4745;
const SENSOR_SALT: u64 = 0x5345_4E53;
const QUESTIONS_SALT: u64 = 0x5155_4553;

/// A synthetic project: `stages` stage files, `sensors` sensor manifests, and the agent files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SyntheticProject {
    pub stages: usize,
    pub sensors: usize,
    pub seed: u64,
}

impl SyntheticProject {
    /// A project of `stages` stages and `sensors` sensors with the [`DEFAULT_SEED`].
    pub fn new(stages: usize, sensors: usize) -> Self {
        Self {
            stages,
            sensors,
            seed: DEFAULT_SEED,
        }
    }

    /// The same shape with another seed (other requires, sensors, scopes and prose).
    #[must_use]
    pub fn with_seed(self, seed: u64) -> Self {
        Self { seed, ..self }
    }

    /// Every file of the project as `(project-relative path, text)`: sensors, agents, rules,
    /// stages.
    pub fn files(&self) -> Vec<(Utf8PathBuf, String)> {
        let sensors =
            (0..self.sensors).map(|index| (self.sensor_path(index), self.sensor_text(index)));
        let agents = AGENT_FILES
            .iter()
            .map(|&(name, display_name, description)| {
                (
                    agent_path(name),
                    agent_text(name, display_name, description),
                )
            });
        let stages = (0..self.stages).map(|index| (self.stage_path(index), self.stage_text(index)));
        sensors
            .chain(agents)
            .chain(rule_files())
            .chain(stages)
            .collect()
    }

    /// Write every file under `project_dir`, creating the folders it needs.
    pub fn write_to(&self, project_dir: &Utf8Path) -> std::io::Result<()> {
        for (relative, text) in self.files() {
            let path = project_dir.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        Ok(())
    }

    /// Project-relative path of stage `index`, e.g.
    /// `.claude/aidlc-common/stages/inception/inception-stage-2.md` for index 9.
    pub fn stage_path(&self, index: usize) -> Utf8PathBuf {
        let (phase, _) = self.phase_and_position_of_stage(index);
        Utf8PathBuf::from(format!(
            "{HARNESS_DIR}/aidlc-common/stages/{phase}/{}.md",
            self.stage_slug(index)
        ))
    }

    /// Project-relative path of sensor `index`, e.g. `.claude/sensors/aidlc-s3.md`.
    pub fn sensor_path(&self, index: usize) -> Utf8PathBuf {
        Utf8PathBuf::from(format!(
            "{HARNESS_DIR}/sensors/aidlc-{}.md",
            self.sensor_id(index)
        ))
    }

    /// The slug of stage `index`: `<phase>-stage-<position in phase>`.
    pub fn stage_slug(&self, index: usize) -> String {
        let (phase, position) = self.phase_and_position_of_stage(index);
        slug_of(phase, position)
    }

    /// The id of sensor `index`: `s<index>`.
    pub fn sensor_id(&self, index: usize) -> String {
        assert!(
            index < self.sensors,
            "sensor {index} out of range (the project has {})",
            self.sensors
        );
        format!("s{index}")
    }

    /// The sensor ids stage `index` imports, in the order its `sensors:` list gives them.
    pub fn stage_sensor_ids(&self, index: usize) -> Vec<String> {
        self.stage_plan(index)
            .sensors
            .iter()
            .map(|&sensor| self.sensor_id(sensor))
            .collect()
    }

    /// The full text of stage `index`: frontmatter and a short Markdown body.
    pub fn stage_text(&self, index: usize) -> String {
        render_stage(&self.stage_plan(index))
    }

    /// The full text of sensor manifest `index`.
    pub fn sensor_text(&self, index: usize) -> String {
        render_sensor(&self.sensor_plan(index))
    }

    /// Panics when `index` is not a stage of this project.
    fn phase_and_position_of_stage(&self, index: usize) -> (&'static str, usize) {
        assert!(
            index < self.stages,
            "stage {index} out of range (the project has {})",
            self.stages
        );
        (
            STAGE_PHASES[index % STAGE_PHASES.len()],
            index / STAGE_PHASES.len(),
        )
    }

    /// Whether the stage at `position` of `phase` produces a `-questions` artifact as well as
    /// its `-doc`. A pure function of the seed, so consumers can ask without building the plan.
    fn stage_produces_questions(&self, phase_index: usize, position: usize) -> bool {
        let stage_index = position * STAGE_PHASES.len() + phase_index;
        SplitMix64::for_item(self.seed, QUESTIONS_SALT, stage_index).next_u64() & 1 == 1
    }

    /// Decide everything about stage `index`. Invariant: every stage it requires or consumes
    /// from has a lower position in the same phase.
    fn stage_plan(&self, index: usize) -> StagePlan {
        let (phase, position) = self.phase_and_position_of_stage(index);
        let phase_index = index % STAGE_PHASES.len();
        let mut rng = SplitMix64::for_item(self.seed, STAGE_SALT, index);
        let requires = pick_required_positions(&mut rng, position);
        let consumes =
            self.pick_consumed_artifacts(&mut rng, phase, phase_index, position, &requires);
        let sensors = pick_sensor_indices(&mut rng, self.sensors);
        let scopes = pick_scope_names(&mut rng);
        StagePlan {
            phase,
            position,
            produces_questions: self.stage_produces_questions(phase_index, position),
            requires: requires
                .iter()
                .map(|&earlier| slug_of(phase, earlier))
                .collect(),
            consumes,
            sensors,
            scopes,
            conditional: rng.below(3) != 0,
            mode: if rng.below(4) == 0 {
                "subagent"
            } else {
                "inline"
            },
            support_agents: if rng.below(3) == 0 {
                vec![SUPPORT_AGENT]
            } else {
                Vec::new()
            },
            reviewer: (rng.below(4) == 0).then_some(REVIEWER_AGENT),
            summary_confirmation: if rng.below(2) == 0 {
                "if-present"
            } else {
                "required"
            },
            prose: pick_prose_sentences(&mut rng),
        }
    }

    /// The `-doc` of every required stage (required), and sometimes the `-questions` of one
    /// earlier stage that produces it (optional). Artifacts are distinct by construction: docs
    /// come from distinct stages and no `-questions` name equals a `-doc` name.
    fn pick_consumed_artifacts(
        &self,
        rng: &mut SplitMix64,
        phase: &str,
        phase_index: usize,
        position: usize,
        required_positions: &[usize],
    ) -> Vec<(String, bool)> {
        let mut consumes: Vec<(String, bool)> = required_positions
            .iter()
            .map(|&earlier| (format!("{}-doc", slug_of(phase, earlier)), true))
            .collect();
        if position > 0 && rng.below(2) == 0 {
            let earlier = rng.below(position);
            if self.stage_produces_questions(phase_index, earlier) {
                consumes.push((format!("{}-questions", slug_of(phase, earlier)), false));
            }
        }
        consumes
    }

    /// Decide everything about sensor `index`.
    fn sensor_plan(&self, index: usize) -> SensorPlan {
        let id = self.sensor_id(index);
        let mut rng = SplitMix64::for_item(self.seed, SENSOR_SALT, index);
        let drawn_blocking = rng.below(4) == 0;
        let fire_on = if rng.below(4) == 0 { "write" } else { "gate" };
        SensorPlan {
            id,
            // Only a gate-fired sensor blocks; a write-fired one declared blocking is a warning.
            default_severity: if drawn_blocking && fire_on == "gate" {
                "blocking"
            } else {
                "advisory"
            },
            fire_on,
            category: SENSOR_CATEGORIES[rng.below(SENSOR_CATEGORIES.len())],
            glob: SENSOR_GLOBS[rng.below(SENSOR_GLOBS.len())],
            timeout_seconds: 60 * (1 + rng.below(10)),
        }
    }
}

/// What one stage file says, before it is rendered to text.
struct StagePlan {
    phase: &'static str,
    position: usize,
    produces_questions: bool,
    /// Slugs of lower-positioned stages of the same phase.
    requires: Vec<String>,
    /// `(artifact, required)`, each produced by a lower-positioned stage of the same phase.
    consumes: Vec<(String, bool)>,
    /// Distinct indices of sensors that exist.
    sensors: Vec<usize>,
    /// Distinct, non-empty.
    scopes: Vec<&'static str>,
    /// `execution: CONDITIONAL` with a condition, else `execution: ALWAYS`.
    conditional: bool,
    /// `inline` or `subagent`: the modes that need no support agents.
    mode: &'static str,
    /// Agents that have an agent file.
    support_agents: Vec<&'static str>,
    reviewer: Option<&'static str>,
    /// `required` or `if-present`.
    summary_confirmation: &'static str,
    prose: Vec<&'static str>,
}

/// What one sensor manifest says, before it is rendered to text.
struct SensorPlan {
    id: String,
    /// `advisory` or `blocking`.
    default_severity: &'static str,
    /// `write` or `gate`.
    fire_on: &'static str,
    category: &'static str,
    glob: &'static str,
    timeout_seconds: usize,
}

fn slug_of(phase: &str, position: usize) -> String {
    format!("{phase}-stage-{position}")
}

fn agent_path(name: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(format!("{HARNESS_DIR}/agents/{name}.md"))
}

fn agent_text(name: &str, display_name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndisplay_name: {display_name}\ndescription: {description}\nmodel: inherit\n---\n\n# {display_name}\n\n{description}.\n"
    )
}

/// The org, team and project rule files and one rule file per phase, as plain Markdown.
fn rule_files() -> impl Iterator<Item = (Utf8PathBuf, String)> {
    let layers = ["org", "team", "project"].map(|layer| {
        (
            Utf8PathBuf::from(format!("{RULES_DIR}/{layer}.md")),
            format!("# {layer} rules\n\n- Write down every decision and the reason for it.\n"),
        )
    });
    let phases = STAGE_PHASES.map(|phase| {
        (
            Utf8PathBuf::from(format!("{RULES_DIR}/phases/{phase}.md")),
            format!(
                "# {phase} rules\n\n- Keep each {phase} deliverable to what the next stage needs.\n"
            ),
        )
    });
    layers.into_iter().chain(phases)
}

/// Zero to two distinct positions among the `REQUIRES_WINDOW` positions just below `position`,
/// in increasing order. Position 0 requires nothing.
fn pick_required_positions(rng: &mut SplitMix64, position: usize) -> Vec<usize> {
    let window = position.min(REQUIRES_WINDOW);
    if window == 0 {
        return Vec::new();
    }
    let count = match rng.below(10) {
        0 => 0,
        1..=5 => 1,
        _ => 2,
    };
    let mut positions: Vec<usize> = rng
        .distinct_below(count, window)
        .into_iter()
        .map(|offset| position - 1 - offset)
        .collect();
    positions.sort_unstable();
    positions
}

/// One to three distinct sensor indices below `sensor_count` (none when there are no sensors).
fn pick_sensor_indices(rng: &mut SplitMix64, sensor_count: usize) -> Vec<usize> {
    if sensor_count == 0 {
        return Vec::new();
    }
    let count = 1 + rng.below(3);
    rng.distinct_below(count, sensor_count)
}

/// One to three distinct scope names, in `SCOPE_NAMES` order.
fn pick_scope_names(rng: &mut SplitMix64) -> Vec<&'static str> {
    let count = 1 + rng.below(3);
    let mut indices = rng.distinct_below(count, SCOPE_NAMES.len());
    indices.sort_unstable();
    indices
        .into_iter()
        .map(|index| SCOPE_NAMES[index])
        .collect()
}

/// Two to four distinct filler sentences for a stage body.
fn pick_prose_sentences(rng: &mut SplitMix64) -> Vec<&'static str> {
    let count = 2 + rng.below(3);
    rng.distinct_below(count, PROSE_SENTENCES.len())
        .into_iter()
        .map(|index| PROSE_SENTENCES[index])
        .collect()
}

/// A block-form list (`key:` then `  - item` lines), or `key: []` when empty.
fn block_list_lines(key: &str, items: &[String]) -> Vec<String> {
    if items.is_empty() {
        return vec![format!("{key}: []")];
    }
    let mut lines = vec![format!("{key}:")];
    lines.extend(items.iter().map(|item| format!("  - {item}")));
    lines
}

/// `consumes:` as a list of `artifact` / `required` maps, or `consumes: []` when empty.
fn consumes_lines(consumes: &[(String, bool)]) -> Vec<String> {
    if consumes.is_empty() {
        return vec!["consumes: []".to_owned()];
    }
    let mut lines = vec!["consumes:".to_owned()];
    for (artifact, required) in consumes {
        lines.push(format!("  - artifact: {artifact}"));
        lines.push(format!("    required: {required}"));
    }
    lines
}

fn execution_lines(plan: &StagePlan) -> Vec<String> {
    if plan.conditional {
        vec![
            "execution: CONDITIONAL".to_owned(),
            format!("condition: Runs when needed for item {}", plan.position),
        ]
    } else {
        vec![
            "execution: ALWAYS".to_owned(),
            "condition: Always runs".to_owned(),
        ]
    }
}

fn agent_lines(plan: &StagePlan) -> Vec<String> {
    let support: Vec<String> = plan
        .support_agents
        .iter()
        .map(|&agent| agent.to_owned())
        .collect();
    let mut lines = vec![format!("lead_agent: {LEAD_AGENT}")];
    lines.extend(block_list_lines("support_agents", &support));
    lines.push(format!("mode: {}", plan.mode));
    if let Some(reviewer) = plan.reviewer {
        lines.push(format!("reviewer: {reviewer}"));
        lines.push("reviewer_max_iterations: 2".to_owned());
    }
    lines
}

/// `inputs:` names the consumed documents; plain text without `: `, so it stays one scalar.
fn inputs_line(plan: &StagePlan) -> String {
    if plan.consumes.is_empty() {
        return "inputs: The intent statement".to_owned();
    }
    let names: Vec<String> = plan
        .consumes
        .iter()
        .map(|(artifact, _)| format!("{artifact}.md"))
        .collect();
    format!("inputs: Reads {}", names.join(", "))
}

fn stage_frontmatter_lines(plan: &StagePlan) -> Vec<String> {
    let slug = slug_of(plan.phase, plan.position);
    let mut produces = vec![format!("{slug}-doc")];
    if plan.produces_questions {
        produces.push(format!("{slug}-questions"));
    }
    let sensor_ids: Vec<String> = plan
        .sensors
        .iter()
        .map(|index| format!("s{index}"))
        .collect();
    let mut lines = vec![
        "---".to_owned(),
        format!("slug: {slug}"),
        format!("phase: {}", plan.phase),
    ];
    lines.extend(execution_lines(plan));
    lines.extend(agent_lines(plan));
    lines.extend(block_list_lines("produces", &produces));
    lines.extend(consumes_lines(&plan.consumes));
    lines.push(format!("requires_stage: [{}]", plan.requires.join(", ")));
    lines.extend(block_list_lines("sensors", &sensor_ids));
    lines.push(format!("scopes: [{}]", plan.scopes.join(", ")));
    lines.push(format!(
        "summary_confirmation: {}",
        plan.summary_confirmation
    ));
    lines.push(inputs_line(plan));
    lines.push(format!("outputs: Writes {slug}-doc.md"));
    lines.push("---".to_owned());
    lines
}

fn stage_body_lines(plan: &StagePlan) -> Vec<String> {
    let slug = slug_of(plan.phase, plan.position);
    vec![
        String::new(),
        format!("# {}", title_case(&slug)),
        String::new(),
        "## Purpose".to_owned(),
        String::new(),
        format!(
            "Synthetic stage {} of the {} phase. {}",
            plan.position,
            plan.phase,
            plan.prose.join(" ")
        ),
        String::new(),
        "## Steps".to_owned(),
        String::new(),
        "1. Read the upstream documents.".to_owned(),
        format!("2. Write {slug}-doc.md."),
        "3. Ask the person to confirm the summary.".to_owned(),
    ]
}

/// Lines joined by `\n`, with a final newline.
fn text_of_lines(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn render_stage(plan: &StagePlan) -> String {
    let mut lines = stage_frontmatter_lines(plan);
    lines.extend(stage_body_lines(plan));
    text_of_lines(&lines)
}

fn render_sensor(plan: &SensorPlan) -> String {
    let id = &plan.id;
    let lines = [
        "---".to_owned(),
        format!("id: {id}"),
        "kind: deterministic".to_owned(),
        format!("command: aidlc engine sensor-{id}"),
        format!("default_severity: {}", plan.default_severity),
        format!("fire_on: {}", plan.fire_on),
        format!("description: Synthetic sensor {id} checks the shape of stage documents"),
        format!("category: {}", plan.category),
        format!("matches: \"{}\"", plan.glob),
        "input_schema:".to_owned(),
        "  output_path: string".to_owned(),
        "  stage_slug: string".to_owned(),
        format!("timeout_seconds: {}", plan.timeout_seconds),
        "---".to_owned(),
        String::new(),
        format!("# {id} sensor"),
        String::new(),
        "Reads each deliverable of the stage and reports what does not fit.".to_owned(),
    ];
    text_of_lines(&lines)
}

/// splitmix64 (Steele, Lea and Flood): tiny, fast, and good enough to vary generated files.
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream for item `index` of the kind `salt`, independent of every other item's stream.
    pub(crate) fn for_item(seed: u64, salt: u64, index: usize) -> Self {
        let index = u64::try_from(index).expect("an index fits in u64");
        let mut mixer = Self {
            state: seed ^ salt.rotate_left(32) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        };
        Self {
            state: mixer.next_u64(),
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..bound`; `bound` must be positive. (The modulo bias is irrelevant here.)
    fn below(&mut self, bound: usize) -> usize {
        assert!(bound > 0, "below(0) has no value to return");
        let bound = u64::try_from(bound).expect("a usize fits in u64");
        usize::try_from(self.next_u64() % bound).expect("a value below a usize fits in usize")
    }

    /// `min(count, bound)` distinct values in `0..bound`, in the order drawn. Always ends: a
    /// value already taken moves to the next free one.
    pub(crate) fn distinct_below(&mut self, count: usize, bound: usize) -> Vec<usize> {
        let count = count.min(bound);
        let mut picked: Vec<usize> = Vec::with_capacity(count);
        while picked.len() < count {
            let mut candidate = self.below(bound);
            while picked.contains(&candidate) {
                candidate = (candidate + 1) % bound;
            }
            picked.push(candidate);
        }
        picked
    }
}

/// `inception-stage-2` → `Inception Stage 2`: a heading for the generated prose.
fn title_case(slug: &str) -> String {
    slug.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}
