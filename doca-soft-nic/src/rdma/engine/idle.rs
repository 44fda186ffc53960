//! When the proxy thread sleeps, and how long.

use super::Engine;
use std::time::{Duration, Instant};

/// Idle behaviour.
pub(super) struct Tuning {
    pub(super) spin: Duration,
    pub(super) sleep_max: Duration,
    pub(super) connect: Duration,
}

impl Tuning {
    pub(super) fn from_env() -> Tuning {
        let us = |name: &str, default: u64, max: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map_or(default, |v| v.min(max))
        };
        Tuning {
            spin: Duration::from_micros(us("DOCA_SOFT_NIC_SPIN_US", 50, 1_000_000)),
            sleep_max: Duration::from_micros(us("DOCA_SOFT_NIC_SLEEP_US", 100, 10_000).max(1)),
            connect: Duration::from_millis(us("DOCA_SOFT_NIC_CONNECT_MS", 20_000, 600_000).max(1)),
        }
    }
}

impl Engine {
    pub(super) fn idle(&mut self, busy: bool) {
        if busy {
            self.last_busy = Instant::now();
            self.sleep = Duration::ZERO;
            return;
        }
        if self.last_busy.elapsed() < self.tuning.spin {
            std::hint::spin_loop();
            return;
        }
        let timeout =
            if self.qps.is_empty() && self.rq_zombies.is_empty() && self.qp_zombies.is_empty() {
                None
            } else {
                self.sleep =
                    (self.sleep * 2).clamp(Duration::from_micros(5), self.tuning.sleep_max);
                Some(self.sleep)
            };
        if !self.net.worker.arm() {
            return;
        }
        let mut fds = [
            libc::pollfd {
                fd: self.net.shared.wake_fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.net.worker.event_fd().unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let n = if fds[1].fd < 0 { 1 } else { 2 };
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `n` valid pollfds; a valid or null timeout; no signal mask.
        unsafe { libc::ppoll(fds.as_mut_ptr(), n as libc::nfds_t, tsp, std::ptr::null()) };
        if fds[0].revents & libc::POLLIN != 0 {
            let mut v = 0u64;
            // SAFETY: our non-blocking eventfd; 8 bytes into a u64.
            unsafe {
                libc::read(
                    self.net.shared.wake_fd,
                    &mut v as *mut u64 as *mut libc::c_void,
                    8,
                )
            };
        }
    }
}
