//! Skipping a test that cannot run on this machine, with one line saying why.
//!
//! Every skip prints `skipped: <test>: <reason>` to stderr (the test is the name libtest
//! gives the running thread) and the test returns: it passes without asserting anything, so
//! the line is what tells a reader that it did not run. The GPU runner
//! (`scripts/gpu-test run`) shows these lines.

use std::io::Write as _;
use std::sync::OnceLock;

/// The running test's name: libtest names each test's thread after it. Outside a libtest
/// thread, the executable's name.
pub fn current_test() -> String {
    match std::thread::current().name() {
        Some(n) if n != "main" => n.to_string(),
        _ => std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "test".to_string()),
    }
}

/// The line [`skip`] prints (without the newline).
pub fn skip_line(test: &str, reason: &str) -> String {
    format!("skipped: {test}: {reason}")
}

/// Prints `skipped: <current test>: <reason>` to stderr. The caller returns next (or use
/// [`crate::skip_if!`], which does both).
pub fn skip(reason: &str) {
    // One write call, so lines of tests running in parallel do not interleave.
    let line = skip_line(&current_test(), reason) + "\n";
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Whether a CUDA driver can be loaded on this machine (cached; never panics). Check this
/// before any cudarc call: without a driver cudarc panics instead of returning an error.
pub fn cuda_driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // The names cudarc and doca-soft load the driver by.
        ["libcuda.so.1", "libcuda.so"].iter().any(|name| {
            let c = std::ffi::CString::new(*name).expect("no NUL in the name");
            // SAFETY: dlopen of a library by name; the handle is kept (never closed), as
            // the loaders that use the driver afterwards keep theirs.
            !unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) }.is_null()
        })
    })
}

/// What the GPU tests need and how to get it, the tail of every "no CUDA driver" reason.
pub const GET_A_GPU: &str =
    "run on a machine with an NVIDIA GPU and driver (scripts/gpu-test builds the GPU tests here and runs them there)";

/// The reason a GPU test skips without a driver: what is missing (the driver, and `what`,
/// the part of the test that needs it) and how to get it ([`GET_A_GPU`]).
pub fn no_cuda_reason(what: &str) -> String {
    let what = if what.is_empty() {
        String::new()
    } else {
        format!(" for {what}")
    };
    format!("no CUDA driver (libcuda.so.1 not loadable){what}; {GET_A_GPU}")
}

/// The reason a test skips when a driver loads but no GPU answers (`what`: the failing
/// step, e.g. `cuInit: ...`).
pub fn no_gpu_reason(what: &str) -> String {
    format!("a CUDA driver but no usable GPU ({what}); {GET_A_GPU}")
}

/// True when a CUDA driver is present; otherwise prints the skip line (with `what`, the
/// part of the test that needs the GPU, in parentheses) and returns false.
///
/// ```
/// fn gpu_test() {
///     if !doca_test_support::require_cuda("kernels on a GPU") {
///         return; // printed "skipped: <test>: no CUDA driver (libcuda.so.1 not loadable) for kernels on a GPU; run on ..."
///     }
///     // ... GPU work ...
/// }
/// # gpu_test();
/// ```
pub fn require_cuda(what: &str) -> bool {
    let present = cuda_driver_present();
    if !present {
        skip(&no_cuda_reason(what));
    }
    present
}

/// Whether this process may open AF_PACKET sockets (root or CAP_NET_RAW).
pub fn raw_sockets_allowed() -> bool {
    // SAFETY: plain socket(2)/close(2) calls on a descriptor we own.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    if fd < 0 {
        return false;
    }
    // SAFETY: `fd` is ours.
    unsafe { libc::close(fd) };
    true
}

/// The reason a test skips without AF_PACKET sockets: what is missing and how to get it.
pub const NO_RAW_SOCKETS: &str =
    "AF_PACKET sockets not allowed (needs root or CAP_NET_RAW); run as root, e.g. sudo -E cargo test";

/// True when AF_PACKET sockets can be opened; otherwise prints the skip line and returns
/// false.
pub fn require_raw_sockets() -> bool {
    let ok = raw_sockets_allowed();
    if !ok {
        skip(NO_RAW_SOCKETS);
    }
    ok
}

/// How to get the C and C++ compilers the header and C-program tests run.
pub const GET_A_C_COMPILER: &str =
    "install gcc and g++ (Debian/Ubuntu: apt-get install build-essential)";

/// Whether `<program> --version` runs (the program is on PATH and starts).
pub fn have_tool(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok()
}

/// True when `tool` runs; otherwise prints the skip line `no <tool> on PATH; <how>` (`how`:
/// how to get it, e.g. [`GET_A_C_COMPILER`]) and returns false.
pub fn require_tool(tool: &str, how: &str) -> bool {
    let ok = have_tool(tool);
    if !ok {
        skip(&format!("no {tool} on PATH; {how}"));
    }
    ok
}

/// nvcc (doca-build's search), or None after printing the skip line with the reason
/// (which names `scripts/setup`).
pub fn require_nvcc() -> Option<doca_build::Nvcc> {
    match doca_build::Nvcc::find() {
        Ok(n) => Some(n),
        Err(e) => {
            skip(&no_nvcc_reason(&e));
            None
        }
    }
}

/// The reason a test skips without nvcc: doca-build's search error, which lists where it
/// looked and how to install nvcc (`NVCC`, PATH, `scripts/setup`).
pub fn no_nvcc_reason(e: &doca_build::Error) -> String {
    format!("no nvcc: {e}").replace('\n', " ")
}

/// Prints `skipped: <test>: <reason>` and returns from the enclosing function when
/// `condition` holds.
///
/// ```
/// fn needs_a_tool() {
///     let missing = std::process::Command::new("no-such-tool").output().is_err();
///     doca_test_support::skip_if!(missing, "no-such-tool is not installed");
///     unreachable!("no-such-tool does not exist");
/// }
/// # needs_a_tool();
/// ```
#[macro_export]
macro_rules! skip_if {
    ($condition:expr, $($reason:tt)+) => {
        if $condition {
            $crate::skip(&format!($($reason)+));
            return;
        }
    };
}

/// Returns from the enclosing function, after printing `skipped: <test>: no CUDA driver
/// (libcuda.so.1 not loadable) for <what>; run on ...`, when no CUDA driver is present.
///
/// ```
/// fn gpu_test() {
///     doca_test_support::require_cuda!("semaphores need doca_gpu_create");
///     // ... GPU work: only reached with a driver ...
/// }
/// # gpu_test();
/// ```
#[macro_export]
macro_rules! require_cuda {
    ($what:expr) => {
        if !$crate::require_cuda($what) {
            return;
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_test_and_the_reason() {
        assert_eq!(skip_line("t::a", "why"), "skipped: t::a: why");
        let r = no_cuda_reason("GPU queues");
        assert!(
            r.starts_with("no CUDA driver (libcuda.so.1 not loadable) for GPU queues; "),
            "{r}"
        );
        assert!(r.ends_with(GET_A_GPU), "{r}");
        assert!(no_cuda_reason("").starts_with("no CUDA driver (libcuda.so.1 not loadable); "));
        assert!(no_gpu_reason("cuInit: 100").contains("scripts/gpu-test"));
    }

    #[test]
    fn the_current_test_is_the_thread_libtest_names() {
        assert_eq!(
            current_test(),
            "skip::tests::the_current_test_is_the_thread_libtest_names"
        );
        let other = std::thread::Builder::new()
            .name("main".into())
            .spawn(current_test)
            .unwrap()
            .join()
            .unwrap();
        assert!(other.starts_with("doca_test_support"), "{other}");
    }

    #[test]
    fn the_driver_check_is_stable() {
        assert_eq!(cuda_driver_present(), cuda_driver_present());
    }
}
