//! Signals to a whole process group: the one place the engine sends one. A sensor worker runs
//! as the leader of its own group (`worker_process` spawns it so), so a signal to the group
//! reaches the worker and every child it started.
//!
//! Both the worker supervisor (`worker_process`: timeouts, the final SIGKILL after a reap)
//! and the interrupt handler (`interrupt`: Ctrl-C, SIGTERM, SIGHUP) call [`signal_group`];
//! neither knows how a signal is sent, and this module knows nothing of either.
//!
//! Invariant: only a worker's group can be signalled. Group ids 0 and 1 are refused before
//! anything is sent: `kill(0, …)` would reach our own group and `kill(-1, …)` every process we
//! may signal; a worker's group is never either.

/// Which signal to send to a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupSignal {
    /// SIGTERM: stop, with the grace to clean up.
    Terminate,
    /// SIGKILL: stop now.
    Kill,
}

/// Send `signal` to the process group `group_id`; a group that no longer exists (ESRCH) is not
/// an error, and neither is any other refusal: there is nothing more to do about it.
///
/// The worker's pid (and so the group id) cannot be reused while the worker is unreaped or any
/// process of its group lives. The one remaining window, signalling an empty group after the
/// worker was reaped, would need the pid counter to wrap around within milliseconds.
#[cfg(unix)]
pub fn signal_group(group_id: u32, signal: GroupSignal) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let signal = match signal {
        GroupSignal::Terminate => Signal::TERM,
        GroupSignal::Kill => Signal::KILL,
    };
    let Some(group) = i32::try_from(group_id)
        .ok()
        .filter(|raw| *raw > 1)
        .and_then(Pid::from_raw)
    else {
        return;
    };
    let _ = kill_process_group(group, signal);
}

/// No process groups off Unix: a worker is stopped through its `Child` only.
#[cfg(not(unix))]
pub fn signal_group(_group_id: u32, _signal: GroupSignal) {}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::*;

    /// A shell leading its own group: SIGKILL to the group ends it. (That its background
    /// children die too is proved end to end by `worker_process`'s tests.)
    #[test]
    fn a_kill_reaches_the_group_leader() {
        use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
        let mut leader = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sh runs");
        signal_group(leader.id(), GroupSignal::Kill);
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = leader.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "the group did not die");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.signal(), Some(9));
    }
}
