//! Runs a bench in a network namespace of its own: its `lo` carries only the bench's
//! traffic (other processes on the machine cannot disturb the figures), and it may accept
//! frames injected on `lo` through AF_PACKET (the soft NIC's TX path), which the kernel
//! treats as martian 127.0.0.1 traffic unless `route_localnet` and `accept_local` are set.
//! Those settings exist only inside this namespace; nothing of the host changes.

use std::io;

/// Moves the calling thread (call it first thing in `main`, before any other thread exists)
/// into a new network namespace with `lo` up and frames injected on `lo` accepted.
pub fn isolate() -> io::Result<()> {
    // SAFETY: plain unshare(2); affects only this thread and the threads it creates later.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("unshare(CLONE_NEWNET): {}", io::Error::last_os_error()),
        ));
    }
    doca_test_support::netns::link_up("lo")?;
    for dev in ["all", "lo"] {
        for knob in ["route_localnet", "accept_local"] {
            std::fs::write(format!("/proc/sys/net/ipv4/conf/{dev}/{knob}"), "1")
                .map_err(|e| io::Error::new(e.kind(), format!("{dev}/{knob}: {e}")))?;
        }
    }
    Ok(())
}

/// Isolates the bench, or says (on stderr) why it runs in the host's namespace. Returns
/// whether it is isolated.
pub fn isolate_or_warn() -> bool {
    match isolate() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("running in the host network namespace: {e}");
            false
        }
    }
}
