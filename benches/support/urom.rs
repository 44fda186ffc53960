//! UROM pieces of the benches: find (or build) the daemon and the worker plugins, run a
//! daemon on loopback with a chosen `UCX_TLS`, start a service and workers against it, time
//! graph loopback commands, and run the sandbox ping-pong between two workers of one domain
//! whose "ranks" are threads of this process.
//!
//! Where the binaries come from, first match wins:
//! 1. `DOCA_UROM_DAEMON_BIN` (the daemon) and `UROM_PLUGIN_PATH` (a directory holding
//!    `worker_graph.so` and `worker_sandbox.so`);
//! 2. next to the bench binary (`doca_urom_daemon`, `libworker_graph.so`,
//!    `libworker_sandbox.so` in its directory or the one above: `scripts/bench build` packs);
//! 3. `target/bench-urom/release` of the source tree, built there with a nested cargo call
//!    (a target directory of its own: see doca-test-support's `cargo_build` for why) when
//!    missing.
//!
//! The daemon runs through doca-test-support's launcher ([`Daemon`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use doca_soft::testing::urom::worker_ucx_transports;
use doca_test_support::urom::{Daemon, UromBinaries};
use doca_urom::domain::Oob;
use doca_urom::graph::Graph;
use doca_urom::ThreadOob;
use doca_urom::{Device, DocaError, Domain, Service, Worker};
use worker_sandbox::host::Sandbox;

/// The plugins the benches load.
const PLUGINS: [&str; 2] = ["worker_graph", "worker_sandbox"];

/// The daemon binary and where its plugins come from.
pub enum UromBins {
    /// `DOCA_UROM_DAEMON_BIN` and a `UROM_PLUGIN_PATH` folder holding `<name>.so`.
    Given {
        /// `doca_urom_daemon`.
        daemon: PathBuf,
        /// Folder with `worker_graph.so` and `worker_sandbox.so`.
        plugin_dir: PathBuf,
    },
    /// A cargo output folder (`doca_urom_daemon`, `lib<name>.so`): the daemon launcher copies
    /// the plugins under the names the daemon's scan expects.
    Built(UromBinaries),
}

fn nested_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-urom")
}

impl UromBins {
    /// Finds the binaries (see the module doc), building them as the last resort.
    pub fn find() -> Result<UromBins, String> {
        if let (Some(d), Some(p)) = (
            std::env::var_os("DOCA_UROM_DAEMON_BIN"),
            std::env::var_os("UROM_PLUGIN_PATH"),
        ) {
            let plugin_dir = PathBuf::from(p);
            if !PLUGINS
                .iter()
                .all(|n| plugin_dir.join(format!("{n}.so")).is_file())
            {
                return Err(format!(
                    "UROM_PLUGIN_PATH={} lacks worker_graph.so/worker_sandbox.so",
                    plugin_dir.display()
                ));
            }
            return Ok(UromBins::Given {
                daemon: d.into(),
                plugin_dir,
            });
        }
        if let Some(b) = UromBinaries::next_to_current_exe(&PLUGINS) {
            return Ok(UromBins::Built(b));
        }
        let built = UromBinaries::in_dir(nested_dir().join("release"));
        if built.has(&PLUGINS) {
            return Ok(UromBins::Built(built));
        }
        UromBinaries::build(&nested_dir(), true, &[]).map(UromBins::Built)
    }

    /// A launcher of the daemon with its plugins.
    fn daemon(&self) -> doca_test_support::urom::DaemonBuilder {
        match self {
            UromBins::Given { daemon, plugin_dir } => {
                Daemon::builder(daemon).plugin_dir(plugin_dir)
            }
            UromBins::Built(b) => PLUGINS
                .iter()
                .fold(Daemon::builder(b.daemon()), |d, p| d.plugin(b.plugin(p), p)),
        }
    }
}

/// The UROM set-up of one transport: daemon, service, plugins.
pub struct Urom {
    /// The service (host side).
    pub service: Arc<Service>,
    /// The graph plugin.
    pub graph: Graph,
    /// The sandbox plugin.
    pub sandbox: Sandbox,
    /// The `UCX_TLS` value every process of this set-up runs with.
    pub tls: String,
    _daemon: Daemon,
}

impl Urom {
    /// Starts a daemon over `bins` with `UCX_TLS=tls` and a service against it (this
    /// process's UCX_TLS is set too: the host side reads it when the service starts).
    /// Hosts meet the daemon and workers over TCP connections of doca-soft's own, not UCX's,
    /// so `shm` alone works: the host-worker endpoints are made from worker addresses.
    pub fn start(bins: &UromBins, tls: &str, max_workers: u32) -> Result<Urom, String> {
        let daemon = bins
            .daemon()
            .env("UCX_TLS", tls)
            .env("UCX_WARN_UNUSED_ENV_VARS", "n")
            .start()?;
        let dev = Device::open("lo").map_err(|e| format!("device lo: {e}"))?;
        let pci = dev.info().pci_addr().to_owned();
        let service_file = daemon.service_file(&pci, "lo");
        // Single-threaded here: the benches start services before spawning threads.
        std::env::set_var("DOCA_UROM_SERVICE_FILE", &service_file);
        std::env::set_var("UCX_TLS", tls);
        let service = Service::builder(&dev)
            .max_workers(max_workers)
            .start()
            .map_err(|e| format!("service start: {e}"))?;
        let graph = Graph::find(&service).map_err(|e| e.to_string())?;
        let sandbox = Sandbox::find(&service).map_err(|e| e.to_string())?;
        Ok(Urom {
            service,
            graph,
            sandbox,
            tls: tls.to_string(),
            _daemon: daemon,
        })
    }

    /// Starts worker `id` with the given plugins (`UCX_TLS` passed to it as well) and the
    /// worker process's default idle policy.
    pub fn worker(&self, id: u64, plugins: u64) -> Result<Arc<Worker>, String> {
        self.worker_spin(id, plugins, None)
    }

    /// [`Urom::worker`] with `DOCA_SOFT_UROM_SPIN_US=spin_us` for the worker process when
    /// given (0: it sleeps on its event descriptors as soon as it is idle).
    pub fn worker_spin(
        &self,
        id: u64,
        plugins: u64,
        spin_us: Option<u64>,
    ) -> Result<Arc<Worker>, String> {
        let mut env = vec![
            format!("UCX_TLS={}", self.tls),
            "UCX_LOG_LEVEL=error".to_string(),
        ];
        if let Some(us) = spin_us {
            env.push(format!("DOCA_SOFT_UROM_SPIN_US={us}"));
        }
        Worker::builder(&self.service)
            .id(id)
            .max_inflight_tasks(16)
            .env(env)
            .plugins(plugins)
            .start()
            .map_err(|e| format!("worker {id} start: {e}"))
    }
}

/// The transports of worker `w`'s host-worker UCX endpoint as UCX names them
/// (`sysv/memory`, `tcp/lo`, ...), or why they are not known.
pub fn endpoint_transports(w: &Worker) -> String {
    // SAFETY: with the software runtime a `doca_urom_worker` is doca-soft's `UromWorker`;
    // `w` keeps it alive for the call.
    match unsafe { worker_ucx_transports(w.as_raw().cast()) } {
        Ok(Some(t)) => t
            .iter()
            .map(|t| format!("{}/{}", t.name, t.device))
            .collect::<Vec<_>>()
            .join(","),
        Ok(None) => "none (the worker connection stayed on TCP)".into(),
        Err(e) => format!("unknown ({e:?})"),
    }
}

/// One graph loopback command in callback form, progressing the worker's PE without
/// sleeping until the notification arrives (the blocking `Graph::loopback` sleeps 100 us
/// whenever a progress call finds nothing, which would measure the sleep).
pub fn loopback_spin(graph: &Graph, w: &Worker, data: u64) -> Result<u64, String> {
    let slot: Arc<Mutex<Option<Result<u64, DocaError>>>> = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    graph
        .loopback_with(w, data, move |r| {
            *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(r)
        })
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        w.progress();
        if let Some(r) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return r.map_err(|e| format!("loopback: {e}"));
        }
        if Instant::now() > deadline {
            return Err("loopback timed out".into());
        }
    }
}

/// Sorted latencies (microseconds) with median and p99.
pub struct Latencies(pub Vec<f64>);

impl Latencies {
    /// From samples, sorting them.
    pub fn new(mut v: Vec<f64>) -> Latencies {
        v.sort_by(f64::total_cmp);
        Latencies(v)
    }
    /// The `q` quantile (0..=1), nearest rank.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.0.is_empty() {
            return f64::NAN;
        }
        let i = ((self.0.len() as f64 * q).ceil() as usize).clamp(1, self.0.len()) - 1;
        self.0[i]
    }
    /// Median.
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }
    /// 99th percentile.
    pub fn p99(&self) -> f64 {
        self.quantile(0.99)
    }
}

/// Times `iters` calls of `f` after `warmup` untimed ones (microseconds each).
pub fn time_each(
    warmup: usize,
    iters: usize,
    mut f: impl FnMut(u64) -> Result<(), String>,
) -> Result<Latencies, String> {
    for i in 0..warmup {
        f(i as u64)?;
    }
    let mut v = Vec::with_capacity(iters);
    for i in 0..iters {
        let t = Instant::now();
        f((warmup + i) as u64)?;
        v.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(Latencies::new(v))
}

const PING: u64 = 0x1234;
const PONG: u64 = 0x5678;
const MASK: u64 = 0xffff;

type Slot = Arc<Mutex<Option<Result<worker_sandbox::host::Received, DocaError>>>>;

/// Posts a receive and returns the slot its result lands in.
fn post_recv(sb: &Sandbox, w: &Worker, tag: u64, len: usize) -> Result<Slot, String> {
    let slot: Slot = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    sb.tag_recv_with(w, tag, len as u64, tag, MASK, move |r| {
        *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(r)
    })
    .map_err(|e| e.to_string())?;
    Ok(slot)
}

/// Progresses `w` without sleeping until `slot` is filled; checks the payload.
fn wait_recv(w: &Worker, slot: &Slot, want: &[u8]) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if !w.progress() {
            // Two ranks and two worker processes may outnumber the CPUs: let a worker
            // that has the answer run (returns at once when nothing else waits).
            std::thread::yield_now();
        }
        if let Some(r) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let r = r.map_err(|e| format!("receive: {e}"))?;
            return (r.ucs_status == 0 && r.data == want)
                .then_some(())
                .ok_or_else(|| format!("bad message: {r:?}"));
        }
        if Instant::now() > deadline {
            return Err("receive timed out".into());
        }
    }
}

/// Sends and progresses without sleeping until the worker reports local completion.
fn send_spin(sb: &Sandbox, w: &Worker, dest: u64, msg: &[u8], tag: u64) -> Result<(), String> {
    let done: Arc<Mutex<Option<Result<i32, DocaError>>>> = Arc::new(Mutex::new(None));
    let d2 = done.clone();
    sb.tag_send_with(w, tag, dest, msg, tag, move |r| {
        *d2.lock().unwrap_or_else(|p| p.into_inner()) = Some(r.map(|s| s.ucs_status))
    })
    .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if !w.progress() {
            // Two ranks and two worker processes may outnumber the CPUs: let a worker
            // that has the answer run (returns at once when nothing else waits).
            std::thread::yield_now();
        }
        if let Some(r) = done.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return match r {
                Ok(0) => Ok(()),
                Ok(s) => Err(format!("send status {s}")),
                Err(e) => Err(format!("send: {e}")),
            };
        }
        if Instant::now() > deadline {
            return Err("send timed out".into());
        }
    }
}

/// Sandbox ping-pong between two workers (ids `first_id` and `first_id + 1`, domain ranks
/// 0 and 1; `spin_us` as in [`Urom::worker_spin`]) of one domain, each driven by a thread
/// of this process: rank 1 posts the PONG receive, sends PING to rank 0 and waits for PONG
/// (the timed round trip); rank 0 waits for PING and answers PONG. Returns rank 1's
/// round trips (microseconds) after `warmup` untimed ones.
pub fn sandbox_ping_pong(
    u: &Urom,
    first_id: u64,
    spin_us: Option<u64>,
    warmup: usize,
    iters: usize,
    msg_len: usize,
) -> Result<Latencies, String> {
    let workers = [
        u.worker_spin(first_id, u.sandbox.plugin.id, spin_us)?,
        u.worker_spin(first_id + 1, u.sandbox.plugin.id, spin_us)?,
    ];
    let oobs = ThreadOob::group(2);
    let msg: Vec<u8> = (0..msg_len).map(|i| i as u8).collect();
    let total = warmup + iters;
    let results: Vec<Result<Option<Latencies>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = oobs
            .into_iter()
            .zip(workers.iter())
            .enumerate()
            .map(|(rank, (oob, w))| {
                let sb = &u.sandbox;
                let msg = &msg;
                s.spawn(move || -> Result<Option<Latencies>, String> {
                    let oob: Arc<dyn Oob> = Arc::new(oob);
                    let _domain =
                        Domain::start(w.pe(), &[(rank as u64, w.clone())], oob, Vec::new())
                            .map_err(|e| format!("domain start (rank {rank}): {e}"))?;
                    if rank == 0 {
                        for _ in 0..total {
                            let slot = post_recv(sb, w, PING, msg.len())?;
                            wait_recv(w, &slot, msg)?;
                            send_spin(sb, w, 1, msg, PONG)?;
                        }
                        Ok(None)
                    } else {
                        let mut rt = Vec::with_capacity(iters);
                        for i in 0..total {
                            let t = Instant::now();
                            let slot = post_recv(sb, w, PONG, msg.len())?;
                            send_spin(sb, w, 0, msg, PING)?;
                            wait_recv(w, &slot, msg)?;
                            if i >= warmup {
                                rt.push(t.elapsed().as_secs_f64() * 1e6);
                            }
                        }
                        Ok(Some(Latencies::new(rt)))
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("rank panicked".into())))
            .collect()
    });
    let mut out = None;
    for r in results {
        if let Some(l) = r? {
            out = Some(l);
        }
    }
    out.ok_or_else(|| "rank 1 measured nothing".into())
}
