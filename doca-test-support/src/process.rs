//! Stopping child processes, bounded, and describing how one ended.

use std::process::{Child, ExitStatus, Output};
use std::time::{Duration, Instant};

/// Stops `child`: SIGTERM, up to `grace` for it to exit, then SIGKILL; always reaps it.
/// Returns its exit status (None if it could not be reaped). A child that exited already
/// is only reaped.
pub fn terminate(child: &mut Child, grace: Duration) -> Option<ExitStatus> {
    if let Ok(Some(s)) = child.try_wait() {
        return Some(s);
    }
    // SAFETY: signalling our own child, which is not reaped yet, so the pid is still ours.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    child.wait().ok()
}

/// A finished process for an assertion message: its exit code, stdout and stderr.
pub fn describe(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Command;

    #[test]
    fn a_child_that_honours_sigterm_ends_by_it() {
        let mut c = Command::new("sleep").arg("30").spawn().unwrap();
        let s = terminate(&mut c, Duration::from_secs(10)).unwrap();
        assert_eq!(s.signal(), Some(libc::SIGTERM));
    }

    #[test]
    fn a_child_ignoring_sigterm_is_killed_after_the_grace() {
        let mut c = Command::new("sh")
            .args(["-c", "trap '' TERM; echo up; exec sleep 30"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the trap to be in place before signalling.
        let mut out = c.stdout.take().unwrap();
        let mut b = [0u8; 3];
        std::io::Read::read_exact(&mut out, &mut b).unwrap();
        let t = Instant::now();
        let s = terminate(&mut c, Duration::from_millis(100)).unwrap();
        assert_eq!(s.signal(), Some(libc::SIGKILL));
        assert!(t.elapsed() >= Duration::from_millis(100));
    }

    #[test]
    fn an_exited_child_is_only_reaped() {
        let mut c = Command::new("sh")
            .args(["-c", "exit 3"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // End of its stdout: it is exiting, its status fixed (a signal can no longer change it).
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut c.stdout.take().unwrap(), &mut rest).unwrap();
        let s = terminate(&mut c, Duration::from_secs(1)).unwrap();
        assert_eq!(s.code(), Some(3));
    }
}
