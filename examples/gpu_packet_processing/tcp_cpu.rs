//! The CPU TCP threads (`-s`): thread `i` takes the frames that CPU queue `i` received
//! (SYN, FIN, RST), runs the session logic of [`crate::tcp_sessions`] on them, installs or
//! removes the sessions' Flow entries through pipe queue `i`, and posts the replies.

use crate::log::{self, doca_log};
use crate::tcp_sessions::{handle_frame, Level, Offload, Outcome, SessionKey, SessionTable};
use cuda_kernels::CpuFrame;
use doca::gpunetio::flow::Match;
use doca::gpunetio::{Entry, FlowPort, Pipe, SemStatus, Semaphore};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a reply waits for a free send item before it is dropped.
const REPLY_WAIT: Duration = Duration::from_millis(100);
/// Empty polls before the thread starts sleeping between polls.
const SPIN_POLLS: u32 = 1000;
/// Sleep between polls when idle.
const IDLE_SLEEP: Duration = Duration::from_micros(20);

/// Installs session entries in `GPU_RXQ_TCP_PIPE` through one pipe queue.
pub struct FlowOffload {
    /// `GPU_RXQ_TCP_PIPE`.
    pub pipe: Pipe,
    /// Its port.
    pub port: FlowPort,
    /// This thread's pipe queue.
    pub queue: u16,
}

impl Offload for FlowOffload {
    type Entry = Entry;

    fn enable(&mut self, key: &SessionKey) -> Result<Entry, String> {
        // The session's packets without flags of interest (tcp.flags 0: not in the
        // pipe's template), both addresses and ports as the SYN carried them.
        let m = Match::new()
            .l3_type_ipv4()
            .l4_type_tcp()
            .ipv4_src(key.src_ip)
            .ipv4_dst(key.dst_ip)
            .tcp_ports(key.src_port, key.dst_port);
        let e = self
            .pipe
            .add_basic_entry_on(self.queue, &m)
            .map_err(|e| e.to_string())?;
        self.port
            .entries_process_on(self.queue)
            .map_err(|e| e.to_string())?;
        Ok(e)
    }

    fn disable(&mut self, entry: Entry) -> Result<(), String> {
        entry.remove_on(self.queue).map_err(|e| e.to_string())?;
        // Processed now, so the removal takes effect at once (the original processed
        // before removing, leaving it pending until the next SYN/FIN/RST on the queue).
        self.port
            .entries_process_on(self.queue)
            .map_err(|e| e.to_string())
    }
}

/// What the CPU TCP threads counted (all queues).
#[derive(Default)]
pub struct CpuCounters {
    /// Frames handled.
    pub frames: AtomicU64,
    /// Frames that were not usable IPv4/TCP or had unexpected flags.
    pub dropped: AtomicU64,
    /// SYNs refused (table full or Flow entry failure).
    pub refused: AtomicU64,
    /// Replies posted.
    pub replies: AtomicU64,
    /// Replies dropped (no free send item in time).
    pub replies_dropped: AtomicU64,
}

fn lvl(l: Level) -> log::Level {
    match l {
        Level::Error => log::Level::Err,
        Level::Warn => log::Level::Warn,
        Level::Info => log::Level::Info,
    }
}

fn poll_ready(sem: &Semaphore<CpuFrame>, idx: u32) -> Result<bool, String> {
    sem.status(idx)
        .map(|s| s == SemStatus::Ready)
        .map_err(|e| format!("TCP CPU semaphore {idx}: {e}"))
}

/// Thread `queue`'s loop, until `quit`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    queue: u16,
    rx: &Semaphore<CpuFrame>,
    tx: &Semaphore<CpuFrame>,
    table: &Mutex<SessionTable<Entry>>,
    mut offload: FlowOffload,
    quit: &AtomicBool,
    counters: &CpuCounters,
) -> Result<(), String> {
    doca_log!(
        Info,
        log::TCP_CPU,
        "Thread {} is performing TCP SYN/FIN processing on queue {queue}",
        log::thread_id()
    );
    let items = rx.items();
    let (mut rx_next, mut tx_next) = (0u32, 0u32);
    let mut idle = 0u32;
    while !quit.load(Ordering::Relaxed) {
        if !poll_ready(rx, rx_next)? {
            idle = idle.saturating_add(1);
            if idle > SPIN_POLLS {
                std::thread::sleep(IDLE_SLEEP);
            }
            continue;
        }
        idle = 0;
        let frame = rx.custom_info(rx_next).map_err(|e| e.to_string())?;
        rx.set_status(rx_next, SemStatus::Free)
            .map_err(|e| e.to_string())?;
        rx_next = (rx_next + 1) % items;
        counters.frames.fetch_add(1, Ordering::Relaxed);
        let tsval = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as u32);
        let outcome = {
            let mut t = table.lock().unwrap_or_else(|p| p.into_inner());
            handle_frame(frame.data(), &mut t, &mut offload, tsval, &mut |l, m| {
                log::log(lvl(l), log::TCP_CPU, &m)
            })
        };
        match &outcome {
            Outcome::Malformed(_) | Outcome::Unexpected(_) => {
                counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::TableFull(_) | Outcome::OffloadFailed(..) => {
                counters.refused.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        if let Some(reply) = outcome.reply() {
            if post(tx, tx_next, reply, quit)? {
                tx_next = (tx_next + 1) % items;
                counters.replies.fetch_add(1, Ordering::Relaxed);
            } else {
                counters.replies_dropped.fetch_add(1, Ordering::Relaxed);
                doca_log!(
                    Warn,
                    log::TCP_CPU,
                    "Failed to allocate DOCA tx packets for CPU RSS on queue {queue} (err=no free send item)"
                );
            }
        }
    }
    Ok(())
}

/// Posts `reply` in send item `idx` once the relay freed it; false when it stayed busy.
fn post(
    tx: &Semaphore<CpuFrame>,
    idx: u32,
    reply: &[u8],
    quit: &AtomicBool,
) -> Result<bool, String> {
    let t0 = Instant::now();
    loop {
        let s = tx.status(idx).map_err(|e| e.to_string())?;
        if s == SemStatus::Free || s == SemStatus::Done {
            break;
        }
        if t0.elapsed() >= REPLY_WAIT || quit.load(Ordering::Relaxed) {
            return Ok(false);
        }
        std::thread::sleep(IDLE_SLEEP);
    }
    tx.set_custom_info(idx, CpuFrame::from_bytes(reply))
        .map_err(|e| e.to_string())?;
    tx.set_status(idx, SemStatus::Ready)
        .map_err(|e| e.to_string())?;
    Ok(true)
}
