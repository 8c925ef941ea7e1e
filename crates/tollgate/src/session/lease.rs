//! The lease of the process running a session: a random token, its pid, the boot it runs in
//! and a heartbeat. An owner is dead when its heartbeat is older than the lease time, or, on
//! the same machine and boot, as soon as its pid no longer exists.

use crate::ids::random_hex;
use crate::session::record::{Lease, LeaseRecord};

/// A lease for this process.
pub(crate) fn new_lease() -> Lease {
    Lease {
        token: random_hex(),
        pid: std::process::id(),
        boot: boot_id(),
    }
}

/// Whether the owner behind `lease` is gone, at `now` with leases lasting `lease_ms`.
pub(crate) fn is_dead(lease: &LeaseRecord, now: i64, lease_ms: i64) -> bool {
    if now - lease.heartbeat_at > lease_ms {
        return true;
    }
    match (&lease.boot, boot_id()) {
        (Some(theirs), Some(ours)) if *theirs == ours => !pid_alive(lease.pid),
        _ => false,
    }
}

/// Linux's boot id: pids are only comparable within one boot of one machine.
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|id| id.trim().to_string())
        .filter(|id| !id.is_empty())
}

#[cfg(unix)]
fn pid_alive(pid: u32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    // Signal 0 checks existence only; EPERM means it exists under another user. A zombie (a
    // child not yet reaped by its parent) still counts as alive until its heartbeat runs out.
    match kill(Pid::from_raw(raw), None) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        Err(_) => true,
    }
}

#[cfg(not(unix))]
fn pid_alive(_pid: u32) -> bool {
    true
}
