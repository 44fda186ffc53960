//! [`ProgressWaiter`]: how a future that needs a progress engine progressed waits between
//! its polls, without a reactor of any particular async runtime and without spinning.

use super::{wake, ProgressEngine};
use std::task::Waker;
use std::time::{Duration, Instant};

/// First re-poll delay of the fallback (no notification handle).
pub const BACKOFF_MIN: Duration = Duration::from_micros(50);
/// Longest re-poll delay of the fallback: the most a completion waits to be noticed.
pub const BACKOFF_MAX: Duration = Duration::from_millis(1);
/// Most engine calls of one [`ProgressWaiter::progress`].
const MAX_BATCH: usize = 64;

/// Waits for a progress engine from async code: a future calls
/// [`progress`](Self::progress), checks for its result, and when it is missing calls
/// [`park`](Self::park) with its waker and returns `Pending` (or progresses again when
/// `park` says work arrived meanwhile).
///
/// * With a notification handle (a runtime that implements
///   `doca_pe_get_notification_handle`, `doca_pe_request_notification` and
///   `doca_pe_clear_notification`): `park` arms the engine's notification and a
///   process-wide thread wakes the future when the descriptor becomes readable. A waiting
///   future costs nothing.
/// * Without one, or when arming is refused (`DOCA_ERROR_NOT_SUPPORTED`: the software
///   runtime refuses it while a connected context kind has no wake-up descriptor; its UROM
///   service, worker and domain contexts have one): the future is woken after a delay that
///   starts at [`BACKOFF_MIN`] and doubles while nothing completes, up to [`BACKOFF_MAX`].
///   The cost: while a command is outstanding, at most about 1000 polls a second (each a
///   few engine calls) and up to [`BACKOFF_MAX`] of extra latency; activity resets the
///   delay to [`BACKOFF_MIN`].
///
/// The result's own callback should also wake the future (another thread progressing the
/// same engine may complete it).
#[derive(Debug)]
pub struct ProgressWaiter {
    pe: ProgressEngine,
    backoff: Duration,
    /// Whether the engine's notification is armed (cleared before the next progress).
    armed: bool,
    deadline: Option<Instant>,
    /// The wake-up at `deadline`, registered when the future first sleeps on the engine's
    /// descriptor (the backoff re-polls often enough to see the deadline by itself).
    deadline_timer: Option<wake::TimerKey>,
    deadline_set: bool,
}

impl ProgressWaiter {
    /// A waiter for `pe`.
    pub fn new(pe: &ProgressEngine) -> Self {
        ProgressWaiter {
            pe: pe.clone(),
            backoff: BACKOFF_MIN,
            armed: false,
            deadline: None,
            deadline_timer: None,
            deadline_set: false,
        }
    }

    /// A waiter for `pe` whose future is also polled at `deadline`, whatever the engine
    /// does, for futures that give up then (see [`expired`](Self::expired)): the backoff
    /// re-polls see it by themselves, and a future asleep on the engine's descriptor gets a
    /// timer (taken back when the waiter is dropped).
    pub fn with_deadline(pe: &ProgressEngine, deadline: Instant) -> Self {
        let mut w = Self::new(pe);
        w.deadline = Some(deadline);
        w
    }

    /// Whether the deadline passed.
    pub fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// The engine.
    pub fn engine(&self) -> &ProgressEngine {
        &self.pe
    }

    /// Progresses the engine until a call finds nothing (at most 64 calls); true when
    /// something completed.
    pub fn progress(&mut self) -> bool {
        if std::mem::take(&mut self.armed) {
            // A clear that fails leaves the descriptor readable: the next wait returns at
            // once, which costs a poll, not a lost wake-up.
            let _ = self.pe.clear_notification();
        }
        let mut any = false;
        for _ in 0..MAX_BATCH {
            if !self.pe.progress() {
                break;
            }
            any = true;
        }
        if any {
            self.backoff = BACKOFF_MIN;
        }
        any
    }

    /// Arranges for `waker` to be woken when the engine should be progressed again.
    /// `false`: work completed while the notification was being armed; progress and check
    /// again instead of returning `Pending`.
    pub fn park(&mut self, waker: &Waker) -> bool {
        if let Some(fd) = self.pe.notification_handle() {
            if self.pe.request_notification().is_ok() {
                self.armed = true;
                // What completed between the last progress and the arming may not make the
                // descriptor readable: look once more before sleeping.
                if self.pe.progress() {
                    self.backoff = BACKOFF_MIN;
                    return false;
                }
                if wake::wake_on_readable(fd, waker) {
                    if let (Some(d), false) = (self.deadline, self.deadline_set) {
                        self.deadline_timer = wake::wake_at(d, waker);
                        self.deadline_set = true;
                    }
                    return true;
                }
            }
        }
        wake::wake_at(Instant::now() + self.backoff, waker);
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
        true
    }
}

impl Drop for ProgressWaiter {
    fn drop(&mut self) {
        // A future that completed (or was dropped) early takes its deadline back, so the
        // timer thread does not keep one entry per finished command until it expires.
        if let Some(k) = self.deadline_timer.take() {
            wake::cancel(k);
        }
    }
}
