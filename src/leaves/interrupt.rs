//! Interrupts: SIGINT, SIGTERM and SIGHUP (Ctrl-C, `kill`, a closed terminal) for the commands
//! that run sensors and for `compile --watch`.
//!
//! One handler for the whole process, installed by [`install`] (the `ctrlc` crate with its
//! `termination` feature; it may be installed only once per process, so every command goes
//! through here). The handler does three things, in this order:
//!
//! 1. it sets the flag that [`requested`] reads: the worker supervisor (`worker_process`)
//!    polls it and stops its worker's process group, the in-process sensor wrapper stops
//!    waiting, nothing new is started (`run_worker` and `run_fire` refuse to), and the CLI turns
//!    the command's status into exit 130 (D9);
//! 2. it sends SIGTERM (SIGKILL from the second interrupt on) to every live worker process
//!    group in the registry, so workers stop even before their supervisors next look;
//! 3. it calls the listeners registered with [`on_interrupt`] (`compile --watch` turns the
//!    interrupt into a message for its loop).
//!
//! Invariants:
//!
//! - A worker group is in the registry only while its leader (the worker) is unreaped, or was
//!   reaped a moment ago: `worker_process` leaves the registry right after it reaps the
//!   worker. A group id cannot be reused while any process of the group lives, so a signal sent
//!   from here reaches the worker's own group or, at worst, no process at all.
//! - The handler runs on `ctrlc`'s own thread, not in signal context, so it may lock and
//!   allocate; it never blocks on anything but the registry's and listeners' short locks.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::leaves::process_group::{GroupSignal, signal_group};

/// Set by the first interrupt, never cleared.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// How many interrupts arrived.
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// The result of the one installation, shared by every caller.
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// Process group ids of the workers running now.
static LIVE_WORKER_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

type Listener = Box<dyn Fn() + Send>;

static LISTENERS: Mutex<Vec<Listener>> = Mutex::new(Vec::new());

/// Why the handler could not be installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot handle interrupts (SIGINT, SIGTERM, SIGHUP): {0}")]
pub struct InstallError(String);

/// Install the process-wide handler; calling it again is harmless and gives the first result.
pub fn install() -> Result<(), InstallError> {
    INSTALLED
        .get_or_init(|| ctrlc::set_handler(handle_interrupt).map_err(|error| error.to_string()))
        .clone()
        .map_err(InstallError)
}

/// Whether an interrupt arrived (only ever true after [`install`]).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Call `listener` on every interrupt, on the handler's thread.
pub fn on_interrupt(listener: impl Fn() + Send + 'static) {
    LISTENERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Box::new(listener));
}

fn handle_interrupt() {
    let count = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
    REQUESTED.store(true, Ordering::SeqCst);
    let signal = if count == 1 {
        GroupSignal::Terminate
    } else {
        GroupSignal::Kill
    };
    signal_every_live_worker_group(signal);
    for listener in LISTENERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        listener();
    }
}

/// A worker's process group, in the registry from [`WorkerGroup::enter`] until
/// [`WorkerGroup::leave`] (or drop).
#[derive(Debug)]
pub struct WorkerGroup {
    group_id: u32,
}

impl WorkerGroup {
    /// Put a just-spawned worker's group in the registry. Call it before the worker can be
    /// reaped.
    pub fn enter(group_id: u32) -> Self {
        LIVE_WORKER_GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(group_id);
        Self { group_id }
    }

    /// Take the group out of the registry (its worker was reaped and the group killed).
    pub fn leave(self) {}
}

impl Drop for WorkerGroup {
    fn drop(&mut self) {
        LIVE_WORKER_GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.group_id);
    }
}

/// Send `signal` to every worker group in the registry. The CLI calls it with
/// [`GroupSignal::Kill`] before the process exits, so that no worker outlives `aidlc` even when
/// its supervising thread was abandoned (an in-process sensor past its timeout).
pub fn signal_every_live_worker_group(signal: GroupSignal) {
    let groups = LIVE_WORKER_GROUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    for group_id in groups.iter() {
        signal_group(*group_id, signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_leaves_the_registry_when_it_is_dropped_or_left() {
        let first = WorkerGroup::enter(4_000_001);
        let second = WorkerGroup::enter(4_000_002);
        let live = || {
            LIVE_WORKER_GROUPS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        };
        assert!(live().contains(&4_000_001) && live().contains(&4_000_002));
        first.leave();
        assert!(!live().contains(&4_000_001));
        drop(second);
        assert!(!live().contains(&4_000_002));
    }
}
