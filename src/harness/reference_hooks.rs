//! The reference's own hooks, as its installs register them: the file each version's hook is,
//! and the name its heartbeat and drop log carry (`<record>/.aidlc-hooks-health/<name>.last`,
//! `<name>.drops`), which the reference's doctor reads, so the engine's write hook writes
//! them under the same name on the same install (D13).
//!
//! | | 2.5 | 2.6 and newer |
//! |---|---|---|
//! | write hook | `aidlc-sensor-fire.ts` (`sensor-fire`) | `aidlc-run-sensors.ts` (`run-sensors`) |
//! | human-turn hook | `aidlc-mint-presence.ts` | `aidlc-record-human-turn.ts` |

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

/// Every version's write hook, newest first.
pub const WRITE_HOOKS: [ReferenceHook; 2] = [RUN_SENSORS, SENSOR_FIRE];

/// Every version's human-turn hook that the engine's replaces.
pub const HUMAN_TURN_HOOKS: [ReferenceHook; 1] = [RECORD_HUMAN_TURN];
