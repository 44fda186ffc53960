//! `doca_pe`: the progress engine. Contexts connect to it before they start; each
//! `doca_pe_progress` call lets every connected context make progress once and reports
//! whether anything completed.

use super::notify::{Notifier, Wakeup};
use super::{Ctx, STATE_IDLE};
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use once_cell::sync::OnceCell;
use std::collections::HashSet;
use std::os::fd::RawFd;
use std::sync::Mutex;

struct CtxPtr(*const Ctx);
// SAFETY: contexts are Sync (their state is behind a mutex) and outlive their connection:
// a context disconnects itself before it is destroyed.
unsafe impl Send for CtxPtr {}

/// The C `struct doca_pe`.
pub struct Pe {
    ctxs: Mutex<Vec<CtxPtr>>,
    /// Made by the first notification call.
    notifier: OnceCell<Notifier>,
}

impl Pe {
    /// An engine with no contexts.
    pub(crate) fn new() -> Pe {
        Pe {
            ctxs: Mutex::new(Vec::new()),
            notifier: OnceCell::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<CtxPtr>> {
        lock(&self.ctxs)
    }

    /// IN_USE while contexts are connected (`doca_pe_destroy` refuses then).
    pub(crate) fn ensure_unused(&self) -> DocaResult<()> {
        if self.lock().is_empty() {
            Ok(())
        } else {
            Err(DocaError::IN_USE)
        }
    }

    /// Connects an IDLE context that is connected nowhere else.
    pub(crate) fn connect(&self, ctx: &Ctx) -> DocaResult<()> {
        if ctx.state() != STATE_IDLE {
            return Err(DocaError::BAD_STATE);
        }
        if !ctx.pe().is_null() {
            return Err(DocaError::ALREADY_EXIST);
        }
        self.lock().push(CtxPtr(ctx));
        ctx.set_pe(self as *const Pe as *mut Pe);
        Ok(())
    }

    fn notifier(&self) -> DocaResult<&Notifier> {
        self.notifier.get_or_try_init(Notifier::new)
    }

    /// `doca_pe_get_notification_handle`: the engine's epoll descriptor (made once).
    pub(crate) fn notification_handle(&self) -> DocaResult<RawFd> {
        Ok(self.notifier()?.handle())
    }

    /// `doca_pe_request_notification`: arms every connected context's wake-up; the handle
    /// becomes readable when one has work (at once when one has work already).
    /// NOT_SUPPORTED when a connected context cannot tell (logged once per kind).
    pub(crate) fn request_notification(&self) -> DocaResult<()> {
        let n = self.notifier()?;
        let ctxs: Vec<*const Ctx> = self.lock().iter().map(|c| c.0).collect();
        let mut ready = false;
        for c in ctxs {
            // SAFETY: connected contexts stay alive until they disconnect (see progress).
            let ctx = unsafe { &*c };
            match ctx.ops().arm_wakeup(ctx) {
                Wakeup::Quiet => {}
                Wakeup::Ready => ready = true,
                Wakeup::Fd(fd) => n.watch(fd)?,
                Wakeup::Unknown => {
                    log_unsupported_once(ctx.ops().kind());
                    return Err(DocaError::NOT_SUPPORTED);
                }
            }
        }
        if ready {
            n.signal();
        }
        Ok(())
    }

    /// `doca_pe_clear_notification(pe, handle)`: INVALID_VALUE for another handle.
    pub(crate) fn clear_notification(&self, handle: RawFd) -> DocaResult<()> {
        match self.notifier.get() {
            Some(n) if n.handle() == handle => {
                n.clear();
                Ok(())
            }
            _ => Err(DocaError::INVALID_VALUE),
        }
    }

    /// Stops watching a context's wake-up descriptor (the context is going away).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn unwatch(&self, fd: RawFd) {
        if let Some(n) = self.notifier.get() {
            n.unwatch(fd);
        }
    }

    /// Progresses every connected context once; returns what they completed.
    pub(crate) fn progress(&self) -> u32 {
        // A snapshot, so contexts may connect/disconnect from inside callbacks; on the stack
        // for the usual few contexts (a progress call with nothing to do allocates nothing).
        const INLINE: usize = 8;
        let mut inline = [std::ptr::null::<Ctx>(); INLINE];
        let heap: Vec<*const Ctx>;
        let snapshot: &[*const Ctx] = {
            let g = self.lock();
            if g.len() <= INLINE {
                for (slot, c) in inline.iter_mut().zip(g.iter()) {
                    *slot = c.0;
                }
                &inline[..g.len()]
            } else {
                heap = g.iter().map(|c| c.0).collect();
                &heap
            }
        };
        let mut done = 0u32;
        for &c in snapshot {
            // SAFETY: connected contexts stay alive until they disconnect (on destroy),
            // which applications do not do concurrently with progress of the same PE.
            let ctx = unsafe { &*c };
            done = done.saturating_add(ctx.ops().progress(ctx));
        }
        done
    }
}

/// One log line per context kind whose contexts cannot notify.
fn log_unsupported_once(kind: &'static str) {
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    if lock(&SEEN).get_or_insert_with(HashSet::new).insert(kind) {
        sdk_warn!(
            "pe",
            "doca_pe_request_notification: {kind} contexts cannot notify the progress engine \
             in this runtime; progress it by polling (DOCA_ERROR_NOT_SUPPORTED)"
        );
    }
}

impl Ctx {
    /// Disconnects from the PE (context kinds call this when they are destroyed).
    pub(crate) fn detach_from_pe(&self) {
        let pe = self.pe();
        if pe.is_null() {
            return;
        }
        // SAFETY: a PE cannot be destroyed while contexts are connected to it.
        let pe = unsafe { &*pe };
        pe.lock().retain(|c| !std::ptr::eq(c.0, self));
        self.set_pe(std::ptr::null_mut());
    }

    pub(crate) fn undo_submitted(&self) {
        self.note_completed_without_callback();
    }
}

impl Default for Pe {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::doca_ctx::*;
    use crate::capi::doca_pe::*;
    use crate::ctx::*;
    use crate::types::DocaData;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    /// A context kind that starts asynchronously and completes one task per progress call.
    #[derive(Default)]
    struct Fake {
        pending: Mutex<Vec<usize>>,
        progressed: AtomicU32,
    }
    impl CtxOps for Fake {
        fn kind(&self) -> &'static str {
            "fake"
        }
        fn needs_pe(&self) -> bool {
            true
        }
        fn start(&self, _: &Ctx) -> DocaResult<Transition> {
            Ok(Transition::Pending)
        }
        fn stop(&self, _: &Ctx) -> DocaResult<Transition> {
            Ok(Transition::Pending)
        }
        fn progress(&self, ctx: &Ctx) -> u32 {
            self.progressed.fetch_add(1, Ordering::Relaxed);
            match ctx.state() {
                STATE_STARTING => {
                    ctx.set_state(STATE_RUNNING);
                    1
                }
                STATE_STOPPING if ctx.inflight() == 0 => {
                    ctx.set_state(STATE_IDLE);
                    1
                }
                _ => match self.pending.lock().unwrap().pop() {
                    Some(t) => {
                        ctx.complete_task(t as *mut Task, Ok(()));
                        1
                    }
                    None => 0,
                },
            }
        }
        fn submit(&self, _: &Ctx, task: *mut Task) -> DocaResult<()> {
            self.pending.lock().unwrap().push(task as usize);
            Ok(())
        }
    }

    static CHANGES: AtomicU32 = AtomicU32::new(0);
    unsafe extern "C" fn on_change(_: DocaData, _: *mut Ctx, prev: u32, next: u32) {
        assert_ne!(prev, next);
        CHANGES.fetch_add(1, Ordering::SeqCst);
    }
    unsafe extern "C" fn on_done(task: *mut Task, ud: DocaData, _: DocaData) {
        // SAFETY: the test stored a pointer to an AtomicU32 in the task's user data.
        unsafe { (*(ud.ptr as *const AtomicU32)).fetch_add(1, Ordering::SeqCst) };
        // SAFETY: completion hands ownership back; free it as applications do.
        unsafe { doca_task_free(task) };
    }
    unsafe fn free_boxed(t: *mut Task) {
        // SAFETY: allocated with Box::into_raw below.
        drop(unsafe { Box::from_raw(t) });
    }

    #[test]
    fn async_start_task_and_stop_follow_doca_semantics() {
        let fake = Arc::new(Fake::default());
        let ctx = Ctx::new(fake.clone());
        let c = &*ctx as *const Ctx as *mut Ctx;
        let mut pe = std::ptr::null_mut();
        // SAFETY: valid pointers throughout; objects outlive their use.
        unsafe {
            assert_eq!(doca_ctx_set_state_changed_cb(c, Some(on_change)), 0);
            // Needs a PE before start.
            assert_eq!(doca_ctx_start(c), DocaError::BAD_STATE.0);
            assert_eq!(doca_pe_create(&mut pe), 0);
            assert_eq!(doca_pe_connect_ctx(pe, c), 0);
            assert_eq!(doca_pe_connect_ctx(pe, c), DocaError::ALREADY_EXIST.0);
            assert_eq!(doca_ctx_start(c), DocaError::IN_PROGRESS.0);
            assert_eq!(ctx.state(), STATE_STARTING);
            // Setters after start are refused.
            assert_eq!(
                doca_ctx_set_state_changed_cb(c, None),
                DocaError::BAD_STATE.0
            );
            assert_eq!(doca_pe_progress(pe), 1);
            assert_eq!(ctx.state(), STATE_RUNNING);
            assert_eq!(doca_pe_progress(pe), 0, "no spurious progress");

            let done = AtomicU32::new(0);
            let task = Box::into_raw(Box::new(Task::new(c, free_boxed)));
            (*task).set_cb(Some(on_done));
            doca_task_set_user_data(
                task,
                DocaData {
                    ptr: &done as *const _ as *mut _,
                },
            );
            assert_eq!(doca_task_submit(task), 0);
            assert_eq!(ctx.inflight(), 1);
            assert_eq!(doca_pe_progress(pe), 1);
            assert_eq!(done.load(Ordering::SeqCst), 1);
            assert_eq!(ctx.inflight(), 0);

            assert_eq!(doca_pe_destroy(pe), DocaError::IN_USE.0);
            assert_eq!(doca_ctx_stop(c), DocaError::IN_PROGRESS.0);
            assert_eq!(doca_pe_progress(pe), 1);
            assert_eq!(ctx.state(), STATE_IDLE);
            assert_eq!(doca_ctx_stop(c), DocaError::BAD_STATE.0);
            assert_eq!(CHANGES.load(Ordering::SeqCst), 4);
            ctx.detach_from_pe();
            assert_eq!(doca_pe_destroy(pe), 0);
            assert_eq!(doca_pe_progress(std::ptr::null_mut()), 0);
            assert_eq!(
                doca_ctx_start(std::ptr::null_mut()),
                DocaError::INVALID_VALUE.0
            );
        }
    }
}
