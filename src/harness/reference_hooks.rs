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
    /// The file under `<harness>/hooks/`: `aidlc-<health name>.ts`.
    pub file: &'static str,
}

impl ReferenceHook {
    const fn named(file: &'static str) -> Self {
        Self { file }
    }

    /// The name its health files carry: the file without `aidlc-` and `.ts`.
    pub fn health_name(self) -> &'static str {
        let name = self.file.strip_prefix("aidlc-").unwrap_or(self.file);
        name.strip_suffix(".ts").unwrap_or(name)
    }
}

/// The 2.5 write hook.
pub const SENSOR_FIRE: ReferenceHook = ReferenceHook::named("aidlc-sensor-fire.ts");

/// The write hook from 2.6 on.
pub const RUN_SENSORS: ReferenceHook = ReferenceHook::named("aidlc-run-sensors.ts");

/// The human-turn hook from 2.6 on.
pub const RECORD_HUMAN_TURN: ReferenceHook = ReferenceHook::named("aidlc-record-human-turn.ts");

/// The 2.5 human-turn hook.
pub const MINT_PRESENCE: ReferenceHook = ReferenceHook::named("aidlc-mint-presence.ts");

/// The 2.5 artifact audit hook (`ARTIFACT_CREATED`, `ARTIFACT_UPDATED`).
pub const AUDIT_LOGGER: ReferenceHook = ReferenceHook::named("aidlc-audit-logger.ts");

/// The artifact audit hook from 2.6 on.
pub const WRITE_AUDIT_LOG: ReferenceHook = ReferenceHook::named("aidlc-write-audit-log.ts");

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hook_s_health_files_carry_its_file_name_without_prefix_and_extension() {
        let names: Vec<&str> = [ALL.as_slice(), &AUDIT_HOOKS]
            .concat()
            .into_iter()
            .map(ReferenceHook::health_name)
            .collect();
        assert_eq!(
            names,
            [
                "run-sensors",
                "sensor-fire",
                "record-human-turn",
                "mint-presence",
                "write-audit-log",
                "audit-logger"
            ]
        );
    }
}
