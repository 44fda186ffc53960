//! The default without the bridge: the runtime's warnings are printed on stderr as soon as
//! the program uses DOCA (here: listing devices), with no logging set up at all.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

#[test]
fn sdk_warnings_reach_stderr_by_default() {
    // Stderr into a pipe for the duration of the test (this process is the test's own).
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors.
    assert_eq!(
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) },
        0
    );
    // SAFETY: fresh descriptors, owned here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: duplicating valid descriptors.
    let saved = unsafe { OwnedFd::from_raw_fd(libc::dup(2)) };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::dup2(write.as_raw_fd(), 2) }, 2);

    std::env::set_var("DOCA_SOFT_PCI_MAP", "default-bad-value");
    let _ = doca_common::Device::list();
    std::env::remove_var("DOCA_SOFT_PCI_MAP");

    let mut out = Vec::new();
    let mut file = std::fs::File::from(read);
    let end = Instant::now() + Duration::from_secs(5);
    while !String::from_utf8_lossy(&out).contains("default-bad-value") && Instant::now() < end {
        let mut chunk = [0u8; 4096];
        match file.read(&mut chunk) {
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    // SAFETY: restoring the saved stderr.
    unsafe { libc::dup2(saved.as_raw_fd(), 2) };
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("default-bad-value"), "stderr had: {text:?}");
    assert!(
        text.contains("[DOCA][WARN]"),
        "an SDK warning line: {text:?}"
    );
    assert_eq!(
        doca_common::log::sdk_level(),
        Some(doca_common::log::Level::Warning)
    );
    // Printed once: by the stderr backend, not also by a fallback.
    assert_eq!(text.matches("default-bad-value").count(), 1, "{text:?}");
}
