//! The reference's own hooks, as its installs register them: the file each version's hook is,
//! and the name its heartbeat and drop log carry (`<record>/.aidlc-hooks-health/<name>.last`,
//! `<name>.drops`), which the reference's doctor reads, so the engine's write hook writes
//! them under the same name on the same install (D13).
//!
//! | | 2.5 | 2.6 and newer |
//! |---|---|---|
//! | write hook | `aidlc-sensor-fire.ts` (`sensor-fire`) | `aidlc-run-sensors.ts` (`run-sensors`) |
//! | human-turn hook | `aidlc-mint-presence.ts` | `aidlc-record-human-turn.ts` |
//! | artifact audit hook | `aidlc-audit-logger.ts` | `aidlc-write-audit-log.ts` |
//!
//! The reference's other harnesses run the same core hooks through one adapter per harness
//! (`aidlc-codex-adapter.ts`, `aidlc-kiro-adapter.ts`, the opencode plugin), which turns the
//! harness's payload into Claude Code's and runs the artifact audit hook, then the write hook.

/// One of the reference's hook files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReferenceHook {
    /// The file under `<harness>/hooks/`.
    pub file: &'static str,
    /// The name its health files carry (the file without `aidlc-` and `.ts`).
    pub health_name: &'static str,
}

/// The 2.5 write hook.
pub const SENSOR_FIRE: ReferenceHook = ReferenceHook {
    file: "aidlc-sensor-fire.ts",
    health_name: "sensor-fire",
};

/// The write hook from 2.6 on.
pub const RUN_SENSORS: ReferenceHook = ReferenceHook {
    file: "aidlc-run-sensors.ts",
    health_name: "run-sensors",
};

/// The human-turn hook from 2.6 on.
pub const RECORD_HUMAN_TURN: ReferenceHook = ReferenceHook {
    file: "aidlc-record-human-turn.ts",
    health_name: "record-human-turn",
};

/// The 2.5 human-turn hook.
pub const MINT_PRESENCE: ReferenceHook = ReferenceHook {
    file: "aidlc-mint-presence.ts",
    health_name: "mint-presence",
};

/// The 2.5 artifact audit hook (`ARTIFACT_CREATED`, `ARTIFACT_UPDATED`).
pub const AUDIT_LOGGER: ReferenceHook = ReferenceHook {
    file: "aidlc-audit-logger.ts",
    health_name: "audit-logger",
};

/// The artifact audit hook from 2.6 on.
pub const WRITE_AUDIT_LOG: ReferenceHook = ReferenceHook {
    file: "aidlc-write-audit-log.ts",
    health_name: "write-audit-log",
};

/// Every version's write hook, newest first.
pub const WRITE_HOOKS: [ReferenceHook; 2] = [RUN_SENSORS, SENSOR_FIRE];

/// Every version's artifact audit hook, newest first.
pub const AUDIT_HOOKS: [ReferenceHook; 2] = [WRITE_AUDIT_LOG, AUDIT_LOGGER];

/// The hooks the engine's write and human-turn hooks stand in for.
pub const ALL: [ReferenceHook; 4] = [RUN_SENSORS, SENSOR_FIRE, RECORD_HUMAN_TURN, MINT_PRESENCE];

/// The install's artifact audit hook, `<harness dir>/hooks/<file>` (project-relative), when it
/// has one.
pub fn audit_hook_of(project_dir: &camino::Utf8Path, harness_dir: &str) -> Option<String> {
    AUDIT_HOOKS
        .iter()
        .map(|hook| format!("{harness_dir}/hooks/{}", hook.file))
        .find(|relative| project_dir.join(relative).is_file())
}
