//! gpu_packet_processing: DOCA GPUNetIO's reference application, ported. DOCA Flow steers
//! IPv4 traffic arriving on one port to GPU receive queues by protocol: UDP to `-q` queues
//! where a CUDA kernel counts DNS (destination port 53) against other UDP; TCP to `-q`
//! queues where a kernel classifies HTTP GET/HEAD/POST, HTTP responses, FIN, SYN, ACK and
//! others; ICMP to one queue where a kernel answers echo requests from the GPU. A CPU
//! statistics thread prints cumulative counts every 5 s. With `-s` (HTTP server) TCP
//! packets with SYN, FIN or RST go to CPU queues instead, where a CPU thread per queue
//! answers them and installs (or removes) a per-session Flow entry that sends the
//! session's later packets to the GPU, and a fourth kernel answers every `GET` from
//! prebuilt response frames in GPU memory.
//!
//! ```sh
//! gpu_packet_processing -g 17:00.0 -n 18:00.0 -q 2 -s     # Ctrl-C to stop
//! DOCA_SOFT_PCI_MAP="18:00.0=lo" gpu_packet_processing -g 0 -n 18:00.0 -q 1 -s
//! ```
//!
//! Flags: `-g/--gpu` (PCI address, or an ordinal with the software runtime), `-n/--nic`
//! (PCI address or interface name), `-q/--queue` (1 to 4), `-s/--httpserver`; `-h`. Extra:
//! `--ready-file PATH` (created once the kernels and threads run). Output: the original's
//! log lines and statistics blocks; at exit one more line, `summary key=value ...` (ICMP
//! replies, HTTP responses, CPU TCP path counters), for scripts.
//!
//! # Where this port differs from the original, on purpose
//!
//! Quirks of DOCA 3.3's application (facts §16) and what this port does:
//!
//! 1. *ICMP checksum length*: the original sums 40 bytes past the ICMP message, so its
//!    replies carry a wrong checksum whenever stale bytes follow the request in the receive
//!    slot. **Fixed**: the checksum covers exactly the ICMP message.
//! 2. *Exit flag never read by the CPU*: **fixed**: when a kernel reports an error (sets
//!    the flag), the main loop shuts the application down.
//! 3. *TCP option scan*: the original scans `4 x` the whole data-offset byte, skips SACK by
//!    its kind value and loops forever on an unknown kind. **Fixed**: the scan stays inside
//!    the TCP header, skips every option by its length byte, and stops on a length below 2
//!    or past the header.
//! 4. *Sessions*: the original ignores a failed Flow entry and a failed table insert, and a
//!    repeated SYN overwrites the table entry and leaks the old Flow entry; its table is
//!    shared by the CPU threads without a lock. **Fixed**: a SYN is refused (counted, no
//!    reply, nothing installed) when the table (4096 sessions) is full or the entry cannot
//!    be installed; a repeated SYN keeps its session and is answered again; the table is
//!    locked. **Reproduced**: keys are direction-sensitive (as received).
//! 5. *Statistics*: **reproduced**: cumulative, TCP counters 32-bit and printed signed, one
//!    batch per queue per pass, the GPU never waits for the CPU to free an item.
//! 6. `FLOW_NB_COUNTERS` = 524228: **reproduced**.
//! 7. Log sources: **reproduced** (the ICMP queue logs as `GPU_PACKET_PROCESSING_UDP`).
//! 8. The catch-all TCP entry is added with flags 0 in the original; here with NO_WAIT
//!    (not observable).
//! 9. A thread that cannot start: the original tears down and exits 0; here the process
//!    fails (a Rust thread spawn failure aborts), status non-zero.
//! 10. *HTTP answers*: **reproduced**: one data frame per GET (no FIN), seq = the request's
//!     ack; a retransmitted GET is answered again.
//! 11. *Parsing*: fixed offsets as the original, but frames that are not Ethernet + 20-byte
//!     IPv4 are counted as "other" (UDP, TCP) or dropped (ICMP, CPU path), never misread.
//!
//! Other differences:
//!
//! * *CPU queues*: the software runtime has GPU-data-path Ethernet queues only (no managed
//!   receive events, no batched CPU send tasks), so the CPU TCP queue pairs are GPU queues
//!   played by a relay kernel: it copies each frame the CPU queue receives to the CPU
//!   thread through a semaphore in CPU-visible memory and sends the replies the thread
//!   posts in another. The thread parses whole frames, keeps the sessions, installs and
//!   removes the Flow entries and builds the replies, as in the original.
//! * A SYN that also carries ACK (a SYN-ACK) is not a connection request: dropped, where
//!   the original opened a session for it and answered.
//! * A session's Flow entry removal is processed at once (the original left it pending
//!   until the next SYN/FIN/RST on that queue).
//! * The HTTP response frames are one GPU buffer per page registered in a memory map and
//!   addressed by (address, key), where the original used `doca_buf_arr`.
//! * UDP and TCP kernels take at most 1024 packets per receive call (the original: no
//!   limit and 4096); the statistics and CPU threads sleep briefly when idle.
//!
//! # On `lo`
//!
//! With the software runtime every Linux interface is a port. On `lo` the Linux kernel
//! also answers ICMP echo and TCP SYNs for its own addresses, and the application receives
//! its own transmitted frames (they are ignored: a SYN-ACK opens nothing, replies match no
//! session, echo replies are printed as an unknown ICMP type). The end-to-end test
//! (`tests/gpu_packet_processing_e2e.rs`) and the `gpp_http` bench therefore run the
//! application in a private network namespace where 127.0.0.2 is routed over `lo` but not
//! local (`lo_net.rs`, next to this file, made without `ip`), so `ping`, `curl` and Python's
//! `http.client` from 127.0.0.1 get their answers from the application only:
//!
//! ```sh
//! gpu_packet_processing -g 0 -n lo -q 1 -s &
//! ping -I 127.0.0.1 127.0.0.2; curl --interface 127.0.0.1 http://127.0.0.2/index.html
//! ```

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod flow_setup;
mod http_pages;
mod log;
mod packets;
mod queues;
mod stats;
mod tcp_cpu;
mod tcp_sessions;

use common::{gpu, signal};
use cuda_kernels::{
    ExitFlag, HttpCounters, IcmpCounters, KernelScope, Kernels, PageFrames, RelayCounters,
    RunningKernel, StatsTcp, StatsUdp, GPP_SEM_ITEMS,
};
use doca::gpunetio::{
    Flow, FlowConfig, FlowPort, ProgressEngine, RxqHandle, SemStatus, Semaphore, SemaphoreHandle,
    TxNotifyEvent, TxqHandle,
};
use log::doca_log;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

const PROG: &str = "gpu_packet_processing";

/// `FLOW_NB_COUNTERS` (the original's value; see the docs, quirk 6).
const FLOW_NB_COUNTERS: u32 = 524228;
/// Main loop sleep between progress-engine calls (`SLEEP_IN_NANOS`).
const SLEEP: Duration = Duration::from_nanos(10_000);

/// An init failure: what to log and the exit status.
struct Failure {
    code: i32,
    msg: String,
}

fn fail(msg: impl Into<String>) -> Failure {
    Failure {
        code: 1,
        msg: msg.into(),
    }
}

fn main() {
    signal::install();
    doca_log!(
        Info,
        log::MAIN,
        "==========================================================="
    );
    doca_log!(
        Info,
        log::MAIN,
        "DOCA version: {}.{}.{}",
        doca::sys::DOCA_VERSION_MAJOR,
        doca::sys::DOCA_VERSION_MINOR,
        doca::sys::DOCA_VERSION_PATCH
    );
    doca_log!(
        Info,
        log::MAIN,
        "==========================================================="
    );
    let args = match cli::parse(std::env::args_os()) {
        cli::Parsed::Run(a) => a,
        cli::Parsed::Exit0(text) => {
            print!("{text}");
            std::process::exit(0);
        }
        cli::Parsed::Fail(text) => {
            eprint!("{text}");
            doca_log!(
                Err,
                log::MAIN,
                "Failed to parse application input: {}",
                text.lines().next().unwrap_or("")
            );
            std::process::exit(1);
        }
    };
    args.general.apply();
    let code = match run(&args) {
        Ok(()) => 0,
        Err(f) => {
            doca_log!(Err, log::MAIN, "{}", f.msg);
            f.code
        }
    };
    std::process::exit(code);
}

/// Handles of a vector of started objects, or the first error.
fn handles<'a, T, H>(
    v: &'a [T],
    f: impl Fn(&'a T) -> doca::gpunetio::Result<H>,
    what: &str,
) -> Result<Vec<H>, Failure> {
    v.iter()
        .map(|x| f(x).map_err(|e| fail(format!("{what}: {e}"))))
        .collect()
}

/// The ICMP send completion handler: one line per echo reply (as the original's PE
/// callback), with the time since the previous one.
fn icmp_notify() -> impl FnMut(TxNotifyEvent) + Send + 'static {
    let mut last: Option<u64> = None;
    move |ev: TxNotifyEvent| {
        let gap = last.map_or(0.0, |l| ev.timestamp_ns.wrapping_sub(l) as f64 / 1e9);
        last = Some(ev.timestamp_ns);
        doca_log!(
            Info,
            log::MAIN,
            "ICMP debug event: Queue 0 packet {} sent at {} time from last ICMP is {gap:.6} sec",
            ev.position,
            ev.timestamp_ns
        );
    }
}

fn run(args: &cli::Args) -> Result<(), Failure> {
    let q = args.queue;
    doca_log!(
        Info,
        log::MAIN,
        "Options enabled:\n\tGPU {}\n\tNIC {}\n\tGPU Rx queues {}\n\tGPU HTTP server enabled {}",
        args.gpu,
        args.nic,
        q,
        if args.http_server { "Yes" } else { "No" }
    );
    if !http_pages::all_fit() {
        return Err(fail(
            "an HTTP response does not fit its 512-byte frame slot",
        ));
    }
    let nic =
        gpu::open_nic(&args.nic).map_err(|e| fail(format!("Matching device not found: {e}")))?;
    let gpu = gpu::open_gpu(&args.gpu).map_err(|e| Failure {
        code: 6,
        msg: format!("Invalid GPU bus id provided {}: {e}", args.gpu),
    })?;
    let flow = Flow::init(FlowConfig {
        pipe_queues: u16::from(q),
        mode_args: "vnf,hws".into(),
        nr_counters: FLOW_NB_COUNTERS,
    })
    .map_err(|e| fail(format!("FAILED: init_doca_flow: {e}")))?;
    let port = FlowPort::start(&flow, &nic, 0)
        .map_err(|e| fail(format!("FAILED: init_doca_flow: {e}")))?;
    let pe =
        ProgressEngine::new().map_err(|e| fail(format!("Function doca_pe_create returned {e}")))?;
    let res = queues::create(&nic, &gpu, &pe, q, args.http_server, icmp_notify())
        .map_err(|e| fail(format!("Function create queues returned {e}")))?;
    let pipes = flow_setup::create(&port, q, args.http_server).map_err(fail)?;
    let kernels = Kernels::load(&gpu).map_err(|e| fail(e.to_string()))?;
    let exit = ExitFlag::new(&gpu).map_err(|e| fail(e.to_string()))?;
    let warm = ExitFlag::new(&gpu).map_err(|e| fail(e.to_string()))?;
    warm.set();
    let icmp_counts = IcmpCounters::new(&gpu).map_err(|e| fail(e.to_string()))?;
    let http_counts = HttpCounters::new(&gpu).map_err(|e| fail(e.to_string()))?;
    let relay_counts = RelayCounters::new(&gpu).map_err(|e| fail(e.to_string()))?;
    let cpu_counts = tcp_cpu::CpuCounters::default();
    let sessions = Mutex::new(tcp_sessions::SessionTable::new(
        tcp_sessions::TCP_SESSION_MAX_ENTRIES,
    ));
    let h = Handles::of(&res)?;

    doca_log!(Info, log::MAIN, "Warm up CUDA kernels");
    // Kernels run in scopes that join them before the queues and buffers they use can go.
    kernels.scope(|ks| -> Result<(), Failure> {
        let warm_up = launch_all(
            ks,
            &res,
            &h,
            &warm,
            &icmp_counts,
            &http_counts,
            &relay_counts,
        )?;
        for k in warm_up {
            gpu::kernel_stopped(PROG, k.stop()).map_err(fail)?;
        }
        Ok(())
    })?;
    doca_log!(Info, log::MAIN, "Launching CUDA kernels");
    let quit = AtomicBool::new(false);
    let outcome = kernels.scope(|ks| -> Result<(), Failure> {
        let running = launch_all(
            ks,
            &res,
            &h,
            &exit,
            &icmp_counts,
            &http_counts,
            &relay_counts,
        )?;
        std::thread::scope(|s| -> Result<(), Failure> {
            let stats = s.spawn(|| stats_thread(&res.udp_sems, &res.tcp_sems, &quit));
            let mut cpu_threads = Vec::new();
            if let (Some(http), Some(gpu_tcp)) =
                (&res.http, &pipes.cpu_tcp.as_ref().map(|_| &pipes.gpu_tcp))
            {
                for (i, cq) in http.cpu.iter().enumerate() {
                    let offload = tcp_cpu::FlowOffload {
                        pipe: (*gpu_tcp).clone(),
                        port: port.clone(),
                        queue: i as u16,
                    };
                    let (sessions, quit, cpu_counts) = (&sessions, &quit, &cpu_counts);
                    cpu_threads.push(s.spawn(move || {
                        tcp_cpu::run(
                            i as u16, &cq.rx, &cq.tx, sessions, offload, quit, cpu_counts,
                        )
                    }));
                }
            }
            if let Some(f) = &args.ready_file {
                let _ = std::fs::write(f, b"ready\n");
            }
            doca_log!(Info, log::MAIN, "Waiting for termination");
            let mut why = None;
            while why.is_none() {
                if signal::stop_requested() {
                    why = Some("signal");
                } else if exit.is_set() || running.iter().any(RunningKernel::is_finished) {
                    why = Some("kernel");
                } else if quit.load(Ordering::Relaxed) {
                    why = Some("thread");
                } else {
                    pe.progress();
                    std::thread::sleep(SLEEP);
                }
            }
            match why {
                Some("signal") => doca_log!(Info, log::MAIN, "Signal received, preparing to exit!"),
                Some("kernel") => doca_log!(
                    Err,
                    log::MAIN,
                    "A CUDA kernel stopped (device error); preparing to exit"
                ),
                _ => doca_log!(Err, log::MAIN, "A CPU thread failed; preparing to exit"),
            }
            quit.store(true, Ordering::Relaxed);
            let mut result = Ok(());
            for k in running {
                if let Err(e) = gpu::kernel_stopped(PROG, k.stop()) {
                    result = Err(fail(e));
                }
            }
            doca_log!(Info, log::MAIN, "GPU work ended");
            match stats.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => result = Err(fail(e)),
                Err(_) => result = Err(fail("the statistics thread panicked")),
            }
            for t in cpu_threads {
                match t.join() {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => result = Err(fail(e)),
                    Err(_) => result = Err(fail("a TCP CPU thread panicked")),
                }
            }
            result
        })
    });
    // Teardown: sessions' entries, pipes, port, then the queues (facts §14), the library.
    let open_sessions = {
        let mut t = sessions.lock().unwrap_or_else(|p| p.into_inner());
        let n = t.len();
        drop(t.drain());
        n
    };
    drop(h);
    drop(pipes);
    drop(port);
    let icmp = icmp_counts.read();
    let summary = format!(
        "summary icmp_replies={} icmp_unknown={} icmp_malformed={} http_responses={} relay_received={} relay_dropped={} relay_sent={} cpu_frames={} cpu_dropped={} cpu_refused={} cpu_replies={} cpu_replies_dropped={} sessions_open={open_sessions}",
        icmp.replies,
        icmp.unknown,
        icmp.malformed,
        http_counts.responses(),
        (0..usize::from(q)).map(|i| relay_counts.read(i).received).sum::<u64>(),
        (0..usize::from(q)).map(|i| relay_counts.read(i).dropped_busy).sum::<u64>(),
        (0..usize::from(q)).map(|i| relay_counts.read(i).sent).sum::<u64>(),
        cpu_counts.frames.load(Ordering::Relaxed),
        cpu_counts.dropped.load(Ordering::Relaxed),
        cpu_counts.refused.load(Ordering::Relaxed),
        cpu_counts.replies.load(Ordering::Relaxed),
        cpu_counts.replies_dropped.load(Ordering::Relaxed),
    );
    teardown(res, q);
    drop(flow);
    outcome?;
    println!("{summary}");
    doca_log!(Info, log::MAIN, "Application finished successfully");
    Ok(())
}

/// The kernels' arguments: GPU handles of every started queue and semaphore.
struct Handles<'a> {
    udp_rx: Vec<RxqHandle<'a>>,
    udp_sem: Vec<SemaphoreHandle<'a>>,
    tcp_rx: Vec<RxqHandle<'a>>,
    tcp_sem: Vec<SemaphoreHandle<'a>>,
    http_sem: Vec<SemaphoreHandle<'a>>,
    http_tx: Vec<TxqHandle<'a>>,
    cpu_rx: Vec<RxqHandle<'a>>,
    cpu_rx_sem: Vec<SemaphoreHandle<'a>>,
    cpu_tx: Vec<TxqHandle<'a>>,
    cpu_tx_sem: Vec<SemaphoreHandle<'a>>,
    icmp_rx: RxqHandle<'a>,
    icmp_tx: TxqHandle<'a>,
}

impl<'a> Handles<'a> {
    fn of(r: &'a queues::Resources) -> Result<Handles<'a>, Failure> {
        let http = r.http.as_ref();
        let cpu: &[queues::CpuQueue] = http.map_or(&[][..], |h| &h.cpu[..]);
        Ok(Handles {
            udp_rx: handles(&r.udp_rxqs, |q| q.gpu_handle(), "UDP queue handle")?,
            udp_sem: handles(&r.udp_sems, |s| s.gpu_handle(), "UDP semaphore handle")?,
            tcp_rx: handles(&r.tcp_rxqs, |q| q.gpu_handle(), "TCP queue handle")?,
            tcp_sem: handles(&r.tcp_sems, |s| s.gpu_handle(), "TCP semaphore handle")?,
            http_sem: match http {
                Some(h) => handles(&h.sems, |s| s.gpu_handle(), "HTTP semaphore handle")?,
                None => Vec::new(),
            },
            http_tx: match http {
                Some(h) => handles(&h.txqs, |q| q.gpu_handle(), "HTTP queue handle")?,
                None => Vec::new(),
            },
            cpu_rx: handles(cpu, |c| c.rxq.gpu_handle(), "CPU TCP queue handle")?,
            cpu_rx_sem: handles(cpu, |c| c.rx.gpu_handle(), "CPU TCP semaphore handle")?,
            cpu_tx: handles(cpu, |c| c.txq.gpu_handle(), "CPU TCP send queue handle")?,
            cpu_tx_sem: handles(cpu, |c| c.tx.gpu_handle(), "CPU TCP semaphore handle")?,
            icmp_rx: r
                .icmp_rxq
                .gpu_handle()
                .map_err(|e| fail(format!("ICMP queue handle: {e}")))?,
            icmp_tx: r
                .icmp_txq
                .gpu_handle()
                .map_err(|e| fail(format!("ICMP send queue handle: {e}")))?,
        })
    }
}

/// Launches the UDP, TCP and ICMP kernels, and with `-s` the HTTP server and the relay.
#[allow(clippy::too_many_arguments)]
fn launch_all<'scope>(
    k: &KernelScope<'scope, '_>,
    r: &'scope queues::Resources,
    h: &Handles<'scope>,
    exit: &'scope ExitFlag,
    icmp: &'scope IcmpCounters,
    http: &'scope HttpCounters,
    relay: &'scope RelayCounters,
) -> Result<Vec<RunningKernel<'scope>>, Failure> {
    let err = |what: &'static str| move |e: cuda_kernels::KernelError| fail(format!("{what}: {e}"));
    let mut v = Vec::new();
    v.push(
        k.launch_gpp_receive_udp(&h.udp_rx, &h.udp_sem, GPP_SEM_ITEMS, exit)
            .map_err(err("kernel_receive_udp"))?,
    );
    let http_sems = r.http.as_ref().map(|_| &h.http_sem[..]);
    v.push(
        k.launch_gpp_receive_tcp(&h.tcp_rx, &h.tcp_sem, http_sems, GPP_SEM_ITEMS, exit)
            .map_err(err("kernel_receive_tcp"))?,
    );
    v.push(
        k.launch_gpp_receive_icmp(h.icmp_rx, h.icmp_tx, exit, icmp)
            .map_err(err("kernel_receive_icmp"))?,
    );
    if let Some(s) = &r.http {
        let page = |i: usize| PageFrames {
            frames: &s.pages[i].frames,
            mkey_be: s.pages[i].mkey_be,
            payload_len: s.pages[i].payload_len,
        };
        v.push(
            k.launch_gpp_http_server(
                &h.http_tx,
                &h.http_sem,
                GPP_SEM_ITEMS,
                [page(0), page(1), page(2)],
                exit,
                http,
            )
            .map_err(err("kernel_http_server"))?,
        );
        v.push(
            k.launch_gpp_tcp_cpu_relay(
                &h.cpu_rx,
                &h.cpu_rx_sem,
                &h.cpu_tx,
                &h.cpu_tx_sem,
                GPP_SEM_ITEMS,
                &s.cpu_tx_frames,
                s.cpu_tx_mkey_be,
                exit,
                relay,
            )
            .map_err(err("kernel_tcp_cpu_relay"))?,
        );
    }
    Ok(v)
}

/// The semaphores as the statistics thread's batch source.
struct SemSource<'a> {
    udp: &'a [Semaphore<StatsUdp>],
    tcp: &'a [Semaphore<StatsTcp>],
    udp_next: Vec<u32>,
    tcp_next: Vec<u32>,
}

fn next_batch<T: doca::gpunetio::GpuPod>(
    sem: &Semaphore<T>,
    next: &mut u32,
    what: &str,
) -> Result<Option<T>, String> {
    let s = sem
        .status(*next)
        .map_err(|e| format!("{what} semaphore error: {e}"))?;
    if s != SemStatus::Ready {
        return Ok(None);
    }
    let b = sem
        .custom_info(*next)
        .map_err(|e| format!("{what} semaphore get address error: {e}"))?;
    sem.set_status(*next, SemStatus::Free)
        .map_err(|e| format!("{what} semaphore {} error: {e}", *next))?;
    *next = (*next + 1) % sem.items();
    Ok(Some(b))
}

impl stats::BatchSource for SemSource<'_> {
    fn next_udp(&mut self, q: usize) -> Result<Option<StatsUdp>, String> {
        next_batch(&self.udp[q], &mut self.udp_next[q], "UDP")
    }

    fn next_tcp(&mut self, q: usize) -> Result<Option<StatsTcp>, String> {
        next_batch(&self.tcp[q], &mut self.tcp_next[q], "TCP")
    }
}

/// The statistics thread (facts §9), until `quit`; a semaphore error stops the app.
fn stats_thread(
    udp: &[Semaphore<StatsUdp>],
    tcp: &[Semaphore<StatsTcp>],
    quit: &AtomicBool,
) -> Result<(), String> {
    doca_log!(
        Info,
        log::MAIN,
        "Thread {} is reporting filter stats",
        log::thread_id()
    );
    let mut src = SemSource {
        udp,
        tcp,
        udp_next: vec![0; udp.len()],
        tcp_next: vec![0; tcp.len()],
    };
    let (s0, n0) = stats::realtime();
    let mut rep = stats::Reporter::new(udp.len(), s0, n0);
    while !quit.load(Ordering::Relaxed) {
        let any = match rep.poll(&mut src) {
            Ok(a) => a,
            Err(e) => {
                quit.store(true, Ordering::Relaxed);
                return Err(e);
            }
        };
        let (s, n) = stats::realtime();
        if let Some(block) = rep.maybe_block(s, n) {
            print!("{block}");
        }
        if !any {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    Ok(())
}

/// Stops and destroys the queues in the original's order, with its log lines.
fn teardown(res: queues::Resources, q: u8) {
    let queues::Resources {
        udp_rxqs,
        udp_sems,
        tcp_rxqs,
        tcp_sems,
        http,
        icmp_rxq,
        icmp_txq,
    } = res;
    doca_log!(Info, log::UDP, "Destroying ICMP queue 0");
    drop((icmp_rxq, icmp_txq));
    for (i, (rxq, sem)) in udp_rxqs.into_iter().zip(udp_sems).enumerate() {
        doca_log!(Info, log::UDP, "Destroying UDP queue {i}");
        drop((sem, rxq));
    }
    let mut http_parts = http.map(|h| {
        (
            h.sems.into_iter(),
            h.txqs.into_iter(),
            h.cpu.into_iter(),
            h.pages,
            h.cpu_tx_frames,
            h.cpu_tx_mmap,
        )
    });
    for (i, (rxq, sem)) in tcp_rxqs.into_iter().zip(tcp_sems).enumerate() {
        doca_log!(Info, log::TCP, "Destroying TCP queue {i}");
        drop((sem, rxq));
        if let Some((sems, txqs, cpu, _, _, _)) = http_parts.as_mut() {
            drop(cpu.next());
            doca_log!(Info, log::TCP, "Destroying HTTP queue {i}");
            drop((sems.next(), txqs.next()));
        }
    }
    let _ = q;
    drop(http_parts);
}
