//! [`KernelScope`]: kernels that borrow queues and buffers run inside a scope that joins
//! them before it returns, as `std::thread::scope` does for threads. The borrows last the
//! whole scope, so nothing a kernel uses can be dropped or stopped while it may still run,
//! whatever happens to its [`RunningKernel`] guard (dropped, stopped, or leaked with
//! `std::mem::forget`).

use crate::exit_flag::ExitFlag;
use crate::launch::{KernelError, Kernels};
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long [`RunningKernel::stop`], a dropped guard and the end of a scope wait for a
/// kernel after setting its exit flag.
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(30);

/// One launched kernel, shared by its guard and its scope.
struct Launched<'scope> {
    stream: Arc<CudaStream>,
    /// Recorded after the launch: complete once the kernel returned.
    done: CudaEvent,
    exit: &'scope ExitFlag,
    /// The kernel returned (or its context failed): nothing of it runs any more.
    finished: AtomicBool,
    /// A wait for it already ran out (its exit flag was set and ignored).
    waited_out: AtomicBool,
    /// Device scratch memory of the kernel (grid barrier), freed after it returned.
    scratch: Mutex<Option<CudaSlice<u32>>>,
}

impl Launched<'_> {
    /// Whether the kernel returned; a failed context counts as returned (nothing runs on
    /// it), and the error is left for [`join`](Self::join) to report.
    fn poll_done(&self) -> bool {
        if self.finished.load(Ordering::Acquire) {
            return true;
        }
        let done = self.done.try_is_complete().unwrap_or(true);
        if done {
            self.finished.store(true, Ordering::Release);
        }
        done
    }

    /// Sets the exit flag and waits up to `timeout` for the kernel to return.
    fn stop_within(&self, timeout: Duration) -> Result<(), KernelError> {
        self.exit.set();
        let t0 = Instant::now();
        loop {
            match self.done.try_is_complete() {
                Ok(true) => break,
                Ok(false) if t0.elapsed() >= timeout => {
                    self.waited_out.store(true, Ordering::Release);
                    return Err(KernelError::Hung(timeout));
                }
                Ok(false) => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => {
                    self.finished.store(true, Ordering::Release);
                    return Err(KernelError::Cuda {
                        op: "kernel execution",
                        msg: e.to_string(),
                    });
                }
            }
        }
        self.finished.store(true, Ordering::Release);
        self.scratch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // Surfaces an error of the kernel itself (the event only says it ended).
        self.stream.synchronize().map_err(|e| KernelError::Cuda {
            op: "kernel execution",
            msg: e.to_string(),
        })
    }
}

/// A scope in which kernels run: see [`Kernels::scope`]. The sample launchers
/// ([`launch_simple_receive`](Self::launch_simple_receive), ...) are its methods.
pub struct KernelScope<'scope, 'env: 'scope> {
    kernels: &'env Kernels,
    launched: Mutex<Vec<Arc<Launched<'scope>>>>,
    // Invariant in both lifetimes, as std's thread scope: 'scope may not shrink to let a
    // borrow end before the scope joins.
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<'scope, 'env> KernelScope<'scope, 'env> {
    /// The kernels this scope launches from.
    pub fn kernels(&self) -> &'env Kernels {
        self.kernels
    }

    /// Registers a kernel just launched on `stream` (which must be the kernel's own
    /// stream: its end is the end of the stream's work so far) that finishes when `exit`
    /// is set; `scratch` is freed once it returned. Every launcher ends with this.
    pub(crate) fn track(
        &self,
        stream: Arc<CudaStream>,
        exit: &'scope ExitFlag,
        scratch: Option<CudaSlice<u32>>,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let done = stream.record_event(None).map_err(|e| KernelError::Cuda {
            op: "cuEventRecord",
            msg: e.to_string(),
        });
        let done = match done {
            Ok(d) => d,
            Err(e) => {
                // The kernel is launched but cannot be watched: wait for it here (the
                // stream holds only it), so that it does not outlive its borrows.
                exit.set();
                let _ = stream.synchronize();
                return Err(e);
            }
        };
        let k = Arc::new(Launched {
            stream,
            done,
            exit,
            finished: AtomicBool::new(false),
            waited_out: AtomicBool::new(false),
            scratch: Mutex::new(scratch),
        });
        self.launched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(k.clone());
        Ok(RunningKernel { k })
    }

    /// Sets every exit flag and waits for every kernel of the scope. A kernel that ignores
    /// its exit flag cannot be killed, and returning would let what it uses be freed under
    /// it: the process aborts then (the driver reclaims everything).
    fn join_all(&self) {
        let all = std::mem::take(&mut *self.launched.lock().unwrap_or_else(|p| p.into_inner()));
        for k in &all {
            if !k.poll_done() {
                k.exit.set();
            }
        }
        for k in &all {
            if k.poll_done() {
                continue;
            }
            let timeout = if k.waited_out.load(Ordering::Acquire) {
                Duration::from_millis(100)
            } else {
                JOIN_TIMEOUT
            };
            if let Err(KernelError::Hung(_)) = k.stop_within(timeout) {
                eprintln!(
                    "cuda-kernels: a kernel did not return within {JOIN_TIMEOUT:?} after its \
                     exit flag was set; the queues and buffers it uses cannot be released \
                     while it runs, so the process aborts"
                );
                std::process::abort();
            }
        }
    }
}

/// Joins the scope's kernels when the scope's closure returns or unwinds.
struct JoinOnExit<'a, 'scope, 'env>(&'a KernelScope<'scope, 'env>);

impl Drop for JoinOnExit<'_, '_, '_> {
    fn drop(&mut self) {
        self.0.join_all();
    }
}

impl Kernels {
    /// Runs `f` with a [`KernelScope`] to launch kernels in, then sets the exit flag of
    /// every kernel still running and waits for it (also when `f` panics), and returns what
    /// `f` returned.
    ///
    /// What a kernel borrows (queue handles, buffers, flags, counters) stays borrowed until
    /// the scope has joined it, so it cannot be freed while the kernel runs, even if the
    /// [`RunningKernel`] guard is leaked. This does not compile:
    ///
    /// ```compile_fail
    /// use cuda_kernels::{ExecScope, ExitFlag, Kernels, RxCounters};
    /// use doca_gpunetio::EthRxq;
    ///
    /// fn leak_then_free(k: &Kernels, rxq: EthRxq, exit: &ExitFlag, counters: &RxCounters) {
    ///     k.scope(|s| {
    ///         let handle = rxq.gpu_handle().unwrap();
    ///         let running = s
    ///             .launch_simple_receive(handle, ExecScope::Thread, exit, counters)
    ///             .unwrap();
    ///         std::mem::forget(running); // leaking the guard ...
    ///         drop(rxq); // ... does not release the queue: it is borrowed until the scope ends
    ///     });
    /// }
    /// ```
    ///
    /// Stop the queue after the scope instead:
    ///
    /// ```no_run
    /// use cuda_kernels::{ExecScope, ExitFlag, Kernels, RxCounters};
    /// use doca_gpunetio::EthRxq;
    ///
    /// fn run(k: &Kernels, rxq: EthRxq, exit: &ExitFlag, counters: &RxCounters) {
    ///     let handle = rxq.gpu_handle().unwrap();
    ///     k.scope(|s| {
    ///         let running = s
    ///             .launch_simple_receive(handle, ExecScope::Thread, exit, counters)
    ///             .unwrap();
    ///         std::thread::sleep(std::time::Duration::from_secs(1));
    ///         running.stop().unwrap();
    ///     });
    ///     rxq.stop().unwrap();
    /// }
    /// ```
    pub fn scope<'env, F, T>(&'env self, f: F) -> T
    where
        F: for<'scope> FnOnce(&'scope KernelScope<'scope, 'env>) -> T,
    {
        let scope = KernelScope {
            kernels: self,
            launched: Mutex::new(Vec::new()),
            _scope: PhantomData,
            _env: PhantomData,
        };
        let _join = JoinOnExit(&scope);
        f(&scope)
    }
}

/// A kernel running on its own stream, launched in a [`KernelScope`]. Dropping it sets the
/// exit flag and waits for the kernel (up to [`JOIN_TIMEOUT`]); the scope joins it in any
/// case before it returns.
#[must_use = "dropping a RunningKernel stops it"]
pub struct RunningKernel<'scope> {
    k: Arc<Launched<'scope>>,
}

impl RunningKernel<'_> {
    /// Whether the kernel has returned (bounded work done, or it saw the exit flag).
    /// A failed kernel counts as finished; [`stop`](Self::stop) reports its error.
    pub fn is_finished(&self) -> bool {
        self.k.poll_done()
    }

    /// Sets the exit flag and waits up to [`JOIN_TIMEOUT`] for the kernel to return.
    pub fn stop(self) -> Result<(), KernelError> {
        self.stop_within(JOIN_TIMEOUT)
    }

    /// Sets the exit flag and waits up to `timeout` for the kernel to return;
    /// [`KernelError::Hung`] when it does not (the scope's end then aborts the process,
    /// unless the program exits first).
    pub fn stop_within(self, timeout: Duration) -> Result<(), KernelError> {
        self.k.stop_within(timeout)
    }
}

impl Drop for RunningKernel<'_> {
    fn drop(&mut self) {
        if !self.k.finished.load(Ordering::Acquire) && !self.k.waited_out.load(Ordering::Acquire) {
            // A hung kernel cannot be killed; the scope's end deals with it.
            let _ = self.k.stop_within(JOIN_TIMEOUT);
        }
    }
}
