//! The bridge from DOCA's log backends to the `log` facade: a pipe that DOCA's fd backends
//! write, and a thread that turns each line into a `log` record.

use super::line::{self, Line};
use super::{init_locked, state, Level};
use crate::error::{check, Error, Result};
use doca_sys as sys;
use std::io::{BufRead, BufReader};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

/// Pipe capacity asked for (Linux may grant less to unprivileged processes).
const PIPE_BYTES: libc::c_int = 1 << 20;

/// Routes every DOCA log line of this process (the library's own and those of `DOCA_LOG_*`
/// in C code) into the `log` facade, from now on; see the [module docs](super). Installing
/// it twice does nothing. The SDK lines follow [`set_sdk_level`](super::set_sdk_level)
/// (default [`Level::Warning`]), the application lines
/// [`set_global_level`](super::set_global_level).
pub fn install_log_bridge() -> Result<()> {
    let mut st = state();
    if st.bridged {
        return Ok(());
    }
    let (read, write) = pipe()?;
    // DOCA's backends are never destroyed: the write end stays open for the life of the
    // process (even if a backend below fails, so a backend never writes to a closed and
    // reused descriptor number).
    let write = write.into_raw_fd();
    let (mut sdk, mut app) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: `write` is an open descriptor (never closed); the out-pointers are valid.
    unsafe {
        check(
            "doca_log_backend_create_with_fd_sdk",
            sys::doca_log_backend_create_with_fd_sdk(write, &mut sdk),
        )?;
        check(
            "doca_log_backend_create_with_fd",
            sys::doca_log_backend_create_with_fd(write, &mut app),
        )?;
    }
    std::thread::Builder::new()
        .name("doca-log".into())
        .spawn(move || forward(read))
        .map_err(|e| Error::InvalidArgument(format!("cannot start the doca-log thread: {e}")))?;
    st.bridged = true;
    init_locked(&mut st)?;
    // The default's stderr backend would print every line a second time.
    if let Some(b) = st.stderr {
        b.set_sdk_level(Level::Disable)?;
    }
    Ok(())
}

/// A pipe (close-on-exec) whose write end never blocks, as large as Linux allows.
fn pipe() -> Result<(std::fs::File, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::InvalidArgument(format!(
            "pipe for the DOCA log bridge: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on a descriptor we own; failures only leave the defaults.
    unsafe {
        libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES);
        let fl = libc::fcntl(write.as_raw_fd(), libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(write.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
    Ok((std::fs::File::from(read), write))
}

/// The thread: one `log` record per line, until the pipe ends (it never does: the write
/// end lives as long as the process).
fn forward(read: std::fs::File) {
    for bytes in BufReader::new(read).split(b'\n') {
        let Ok(bytes) = bytes else { return };
        let text = String::from_utf8_lossy(&bytes);
        emit(&line::parse(text.trim_end_matches('\r')));
    }
}

/// Hands one parsed line to the `log` logger.
fn emit(l: &Line<'_>) {
    let target = if l.source.is_empty() {
        "doca".to_owned()
    } else {
        format!("doca::{}", l.source)
    };
    let logger = ::log::logger();
    let meta = ::log::Metadata::builder()
        .level(l.level)
        .target(&target)
        .build();
    if !logger.enabled(&meta) {
        return;
    }
    logger.log(
        &::log::Record::builder()
            .metadata(meta)
            .args(format_args!("{}", l.msg))
            .file(Some(l.source).filter(|s| !s.is_empty()))
            .line(l.line)
            .build(),
    );
}
