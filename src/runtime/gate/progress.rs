//! What the audit ledger says about a stage's progress: whether the workflow started it, and
//! whether its approval gate is open. Both gates read it: `gate check` (is a blocking binding's
//! stage reached?) and the gate step (is the gate already open?).
//!
//! Must not: read anything but the main workflow's gate-moving rows (D34), or write anything.

use crate::runtime::audit::ledger::{GateState, LedgerEntry, StageScope};

/// Whether the stage's gate is open: its newest gate-moving row is `STAGE_AWAITING_APPROVAL`.
/// A unit's gate reads only that unit's rows; a stage's gate only rows without a unit.
pub fn gate_is_open(entries: &[LedgerEntry], slug: &str, unit: Option<&str>) -> bool {
    newest_gate_state(entries, slug, |scope| scope.unit.as_deref() == unit)
        == Some(GateState::StageAwaitingApproval)
}

/// Whether the ledger shows the stage started: it has a gate-moving main-workflow row, and the
/// newest one is not `STAGE_SKIPPED` (a stage the scope skipped has nothing to check).
pub fn stage_was_started(entries: &[LedgerEntry], slug: &str) -> bool {
    newest_gate_state(entries, slug, |_| true).is_some_and(|state| state != GateState::StageSkipped)
}

/// The state of the newest gate-moving main-workflow row of `slug` whose scope `keep` accepts.
fn newest_gate_state(
    entries: &[LedgerEntry],
    slug: &str,
    keep: impl Fn(&StageScope) -> bool,
) -> Option<GateState> {
    let mut newest: Option<(&LedgerEntry, GateState)> = None;
    for entry in entries {
        let (Some(state), Some(scope)) = (entry.event.gate_state(), entry.event.stage_scope())
        else {
            continue;
        };
        if !scope.is_main_workflow_of(slug) || !keep(scope) {
            continue;
        }
        if newest.is_none_or(|(newest, _)| entry.is_after(newest)) {
            newest = Some((entry, state));
        }
    }
    newest.map(|(_, state)| state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::audit::ledger::STAGE_AWAITING_APPROVAL;
    use crate::runtime::gate::step::test_support::{block, gate_row, shard};

    #[test]
    fn the_gate_is_open_until_the_stage_moves_on() {
        assert!(!gate_is_open(&shard(&[]), "s", None));
        assert!(gate_is_open(&shard(&[gate_row()]), "s", None));
        let rejected = shard(&[gate_row(), block("GATE_REJECTED", &[("Stage", "s")])]);
        assert!(!gate_is_open(&rejected, "s", None));
        let unit_row = block(
            STAGE_AWAITING_APPROVAL,
            &[("Stage", "s"), ("Unit", "alpha")],
        );
        let rows = shard(&[unit_row]);
        assert!(gate_is_open(&rows, "s", Some("alpha")));
        assert!(!gate_is_open(&rows, "s", None));
    }
}
