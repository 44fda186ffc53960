//! What the DOCA Flow C-API tests share: library init, a Flow port on one side of an
//! in-memory wire with recording queues, pipe and forward builders over the C structs, and
//! a capture of the runtime's own log lines (to check that each refusal says what it
//! refused, once).

#![allow(dead_code)]

use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use doca_soft::capi::doca_dev::Dev;
use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_flow::*;
use doca_soft::testing::Port;

use crate::support::{eventually, unique, RecordingSink};

pub const LIMIT: Duration = Duration::from_secs(10);
pub const OK: u32 = 0;
pub const INVALID: u32 = DocaError::INVALID_VALUE.0;
pub const BAD_STATE: u32 = DocaError::BAD_STATE.0;
pub const NOT_SUPPORTED: u32 = DocaError::NOT_SUPPORTED.0;
pub const NOT_FOUND: u32 = DocaError::NOT_FOUND.0;
pub const ALREADY_EXIST: u32 = DocaError::ALREADY_EXIST.0;

/// DOCA Flow is process-global: the tests of one binary take turns.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A device on side `side` of wire `name`.
pub fn wire_dev(name: &str, side: u8) -> *mut Dev {
    doca_soft::testing::open_wire_dev('f', 0, name, side)
}

/// `doca_flow_init` with `queues` pipe queues and whatever `tweak` sets on the config.
pub fn init_with(queues: u16, tweak: impl FnOnce(*mut FlowCfg)) {
    let mut cfg: *mut FlowCfg = null_mut();
    // SAFETY: valid out-pointers and a live config throughout.
    unsafe {
        assert_eq!(doca_flow_cfg_create(&mut cfg), OK);
        assert_eq!(doca_flow_cfg_set_pipe_queues(cfg, queues), OK);
        assert_eq!(doca_flow_cfg_set_mode_args(cfg, c"vnf,hws".as_ptr()), OK);
        tweak(cfg);
        assert_eq!(doca_flow_init_v1(cfg), OK);
        assert_eq!(doca_flow_cfg_destroy(cfg), OK);
    }
}

/// `doca_flow_init` with `queues` pipe queues.
pub fn init(queues: u16) {
    init_with(queues, |_| {});
}

/// Starts Flow port `id` on `dev`.
pub fn start_port(dev: *mut Dev, id: u16) -> *mut FlowPort {
    let (rc, port) = try_start_port(dev, id);
    assert_eq!(rc, OK);
    port
}

/// Tries to start Flow port `id` on `dev`: `doca_flow_port_start`'s code and the port
/// (the configuration is built and destroyed successfully either way).
pub fn try_start_port(dev: *mut Dev, id: u16) -> (u32, *mut FlowPort) {
    let mut pc: *mut PortCfg = null_mut();
    let mut port: *mut FlowPort = null_mut();
    // SAFETY: valid out-pointers and a live config.
    unsafe {
        assert_eq!(doca_flow_port_cfg_create(&mut pc), OK);
        assert_eq!(doca_flow_port_cfg_set_port_id(pc, id), OK);
        assert_eq!(doca_flow_port_cfg_set_dev(pc, dev), OK);
        let rc = doca_flow_port_start(pc, &mut port);
        assert_eq!(doca_flow_port_cfg_destroy(pc), OK);
        (rc, port)
    }
}

/// A Flow port on side 1 of a fresh wire, with recording queues, fed from side 0.
pub struct Rig {
    pub rx_dev: *mut Dev,
    pub tx_dev: *mut Dev,
    pub port: *mut FlowPort,
    pub tx: Arc<Port>,
    pub rx: Arc<Port>,
    pub sinks: HashMap<u16, Arc<RecordingSink>>,
}

impl Rig {
    /// Initialises Flow (`queues` pipe queues) and starts port 0 with RX queues `ids`.
    pub fn new(ids: &[u16], queues: u16) -> Rig {
        init(queues);
        Rig::started(ids)
    }

    /// The port's root pipe: an empty CONTROL pipe the test adds its entries to.
    pub fn control_root(&self) -> *mut doca_flow_pipe {
        create(
            pipe_cfg(self.port, c"root", DOCA_FLOW_PIPE_CONTROL, true),
            None,
            None,
        )
    }

    /// Starts port 0 (Flow already initialised) with RX queues `ids`.
    pub fn started(ids: &[u16]) -> Rig {
        let name = unique("fl");
        let (tx_dev, rx_dev) = (wire_dev(&name, 0), wire_dev(&name, 1));
        let port = start_port(rx_dev, 0);
        // SAFETY: live device handles.
        let (tx, rx) = unsafe {
            (
                doca_soft::testing::port_of(tx_dev).unwrap(),
                doca_soft::testing::port_of(rx_dev).unwrap(),
            )
        };
        let mut sinks = HashMap::new();
        for &q in ids {
            let s = Arc::new(RecordingSink::new(4096, usize::MAX));
            rx.register_rx_queue(q, s.clone()).unwrap();
            sinks.insert(q, s);
        }
        Rig {
            rx_dev,
            tx_dev,
            port,
            tx,
            rx,
            sinks,
        }
    }

    /// Sends frames into the Flow port and waits until it has received them all.
    pub fn send(&self, frames: &[Vec<u8>]) {
        let before = self.rx.counters().received;
        for f in frames {
            self.tx.send(f).unwrap();
        }
        let want = before + frames.len() as u64;
        assert!(
            eventually(LIMIT, || self.rx.counters().received == want),
            "received {} of {want}",
            self.rx.counters().received
        );
    }

    /// Frames delivered to queue `q` so far.
    pub fn got(&self, q: u16) -> Vec<Vec<u8>> {
        self.sinks[&q].frames()
    }

    /// Processes every completion of queue `q`.
    pub fn process(&self, q: u16) {
        assert_eq!(doca_flow_entries_process(self.port, q, 0, 0), OK);
    }

    /// Stops the port and the library (also when a test fails: see Drop).
    pub fn finish(self) {
        assert_eq!(doca_flow_port_stop(self.port), OK);
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        for q in self.sinks.keys() {
            self.rx.unregister_rx_queue(*q);
        }
        // Stops the port if finish did not (a failed test), so the next test starts clean.
        doca_flow_destroy();
    }
}

/// A pipe configuration on `port`.
pub fn pipe_cfg(port: *mut FlowPort, name: &std::ffi::CStr, kind: u32, root: bool) -> *mut PipeCfg {
    let mut c: *mut PipeCfg = null_mut();
    // SAFETY: valid out-pointer, live handles, NUL-terminated name.
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_create(&mut c, port), OK);
        assert_eq!(doca_flow_pipe_cfg_set_name(c, name.as_ptr()), OK);
        assert_eq!(doca_flow_pipe_cfg_set_type(c, kind), OK);
        assert_eq!(doca_flow_pipe_cfg_set_is_root(c, root), OK);
    }
    c
}

/// Creates the pipe (asserting success) and destroys the configuration.
pub fn create(
    cfg: *mut PipeCfg,
    fwd: Option<&doca_flow_fwd_v1>,
    miss: Option<&doca_flow_fwd_v1>,
) -> *mut doca_flow_pipe {
    let mut p = null_mut();
    // SAFETY: a live config; forwards valid for the call.
    unsafe {
        let rc = doca_flow_pipe_create_v1(
            cfg,
            fwd.map_or(null(), |f| f as *const _),
            miss.map_or(null(), |f| f as *const _),
            &mut p,
        );
        assert_eq!(rc, OK, "doca_flow_pipe_create");
        assert_eq!(doca_flow_pipe_cfg_destroy(cfg), OK);
    }
    p
}

/// The return code of creating the pipe (the configuration is destroyed either way).
pub fn try_create(
    cfg: *mut PipeCfg,
    fwd: Option<&doca_flow_fwd_v1>,
    miss: Option<&doca_flow_fwd_v1>,
) -> u32 {
    let mut p = null_mut();
    // SAFETY: as in create.
    unsafe {
        let rc = doca_flow_pipe_create_v1(
            cfg,
            fwd.map_or(null(), |f| f as *const _),
            miss.map_or(null(), |f| f as *const _),
            &mut p,
        );
        assert_eq!(doca_flow_pipe_cfg_destroy(cfg), OK);
        rc
    }
}

/// RSS over `queues` (static, so the pointer outlives the call) hashing `flags`.
pub fn rss(queues: &'static [u16], flags: u32) -> doca_flow_fwd_v1 {
    let mut f = doca_flow_fwd_v1 {
        type_: DOCA_FLOW_FWD_RSS,
        ..Default::default()
    };
    // SAFETY: writing plain data into the union views RSS uses.
    unsafe {
        let r = &mut f.__bindgen_anon_1.__bindgen_anon_1;
        r.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
        r.__bindgen_anon_1.rss.queues_array = queues.as_ptr() as *mut u16;
        r.__bindgen_anon_1.rss.nr_queues = queues.len() as i32;
        r.__bindgen_anon_1.rss.outer_flags = flags;
    }
    f
}

/// Forward to pipe `p`.
pub fn to_pipe(p: *mut doca_flow_pipe) -> doca_flow_fwd_v1 {
    let mut f = doca_flow_fwd_v1 {
        type_: DOCA_FLOW_FWD_PIPE,
        ..Default::default()
    };
    f.__bindgen_anon_1.__bindgen_anon_3.next_pipe = p;
    f
}

/// Forward to port `id`.
pub fn to_port(id: u16) -> doca_flow_fwd_v1 {
    let mut f = doca_flow_fwd_v1 {
        type_: DOCA_FLOW_FWD_PORT,
        ..Default::default()
    };
    f.__bindgen_anon_1.__bindgen_anon_2.port_id = id;
    f
}

/// A forward with only its type set (DROP, NONE, CHANGEABLE, ...).
pub fn kind(t: u32) -> doca_flow_fwd_v1 {
    doca_flow_fwd_v1 {
        type_: t,
        ..Default::default()
    }
}

/// A monitor with a non-shared counter (and aging, when non-zero).
pub fn counting(aging_sec: u32) -> doca_flow_monitor_v1 {
    doca_flow_monitor_v1 {
        counter_type: DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
        aging_sec,
        ..Default::default()
    }
}

/// Adds a control entry; returns the code and the entry.
#[allow(clippy::too_many_arguments)]
pub fn control_entry(
    pipe: *mut doca_flow_pipe,
    prio: u32,
    m: &doca_flow_match_v1,
    mask: Option<&doca_flow_match_v1>,
    actions: Option<(&doca_flow_actions_v1, Option<&doca_flow_actions_v1>)>,
    monitor: Option<&doca_flow_monitor_v1>,
    fwd: &doca_flow_fwd_v1,
    ctx: *mut c_void,
) -> (u32, *mut doca_flow_pipe_entry) {
    let mut e = null_mut();
    // SAFETY: live pipe; structs valid for the call.
    let rc = unsafe {
        doca_flow_pipe_control_add_entry_v1(
            0,
            pipe,
            m,
            mask.map_or(null(), |k| k as *const _),
            null(),
            actions.map_or(null(), |a| a.0 as *const _),
            actions.and_then(|a| a.1).map_or(null(), |k| k as *const _),
            null(),
            monitor.map_or(null(), |x| x as *const _),
            prio,
            fwd,
            ctx,
            &mut e,
        )
    };
    (rc, e)
}

/// Adds a basic entry on queue `q`; returns the code and the entry.
pub fn basic_entry(
    q: u16,
    pipe: *mut doca_flow_pipe,
    m: Option<&doca_flow_match_v1>,
    actions: Option<&doca_flow_actions_v1>,
    fwd: Option<&doca_flow_fwd_v1>,
    ctx: *mut c_void,
) -> (u32, *mut doca_flow_pipe_entry) {
    let mut e = null_mut();
    // SAFETY: live pipe; structs valid for the call.
    let rc = unsafe {
        doca_flow_pipe_basic_add_entry_v1(
            q,
            pipe,
            m.map_or(null(), |x| x as *const _),
            0,
            actions.map_or(null(), |a| a as *const _),
            null(),
            fwd.map_or(null(), |f| f as *const _),
            DOCA_FLOW_ENTRY_FLAGS_NO_WAIT,
            ctx,
            &mut e,
        )
    };
    (rc, e)
}

/// (code, packets, bytes) of an entry's counter.
pub fn query(e: *mut doca_flow_pipe_entry) -> (u32, u64, u64) {
    let mut q = doca_flow_resource_query_v1::default();
    // SAFETY: a handle the call validates; valid storage.
    let rc = unsafe { doca_flow_resource_query_entry_v1(e, &mut q) };
    // SAFETY: a counter query fills the counter view.
    let c = unsafe { q.__bindgen_anon_1.counter };
    (rc, c.total_pkts, c.total_bytes)
}

/// Setters for the union members of `struct doca_flow_match` (and the header format of
/// actions) that tests use.
pub mod m {
    use doca_soft::capi::doca_flow::*;

    /// IPv4 fields of a header format.
    pub fn ip4(h: &mut doca_flow_header_format_v1) -> &mut doca_flow_header_ip4_v1 {
        h.l3_type = DOCA_FLOW_L3_TYPE_IP4;
        // SAFETY: writing through the ip4 view of a plain-data union.
        unsafe { &mut h.__bindgen_anon_1.ip4 }
    }

    /// IPv6 fields of a header format.
    pub fn ip6(h: &mut doca_flow_header_format_v1) -> &mut doca_flow_header_ip6_v1 {
        h.l3_type = DOCA_FLOW_L3_TYPE_IP6;
        // SAFETY: as above, ip6.
        unsafe { &mut h.__bindgen_anon_1.ip6 }
    }

    /// UDP fields.
    pub fn udp(h: &mut doca_flow_header_format_v1) -> &mut doca_flow_header_udp_v1 {
        h.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP;
        // SAFETY: as above, udp.
        unsafe { &mut h.__bindgen_anon_2.udp }
    }

    /// TCP fields.
    pub fn tcp(h: &mut doca_flow_header_format_v1) -> &mut doca_flow_header_tcp_v1 {
        h.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP;
        // SAFETY: as above, tcp.
        unsafe { &mut h.__bindgen_anon_2.tcp }
    }

    /// ICMP fields.
    pub fn icmp(h: &mut doca_flow_header_format_v1) -> &mut doca_flow_header_icmp_v1 {
        h.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_ICMP;
        // SAFETY: as above, icmp.
        unsafe { &mut h.__bindgen_anon_2.icmp }
    }
}

/// The runtime's log lines, captured through an SDK log backend on a pipe.
pub struct LogCapture {
    read: std::fs::File,
}

/// The process's log capture (backends live as long as the process).
pub fn log_capture() -> &'static Mutex<LogCapture> {
    static CAP: OnceLock<Mutex<LogCapture>> = OnceLock::new();
    CAP.get_or_init(|| {
        let mut fds = [0i32; 2];
        // SAFETY: fds has room for two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: a descriptor this process owns.
        unsafe { libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK) };
        let mut backend = null_mut();
        // SAFETY: the write end stays open for the life of the process.
        let rc = unsafe {
            doca_soft::capi::doca_log::doca_log_backend_create_with_fd_sdk(fds[1], &mut backend)
        };
        assert_eq!(rc, OK);
        // SAFETY: the read end is ours from now on.
        let read = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[0]) };
        Mutex::new(LogCapture { read })
    })
}

impl LogCapture {
    /// The lines logged since the last call.
    pub fn take(&mut self) -> Vec<String> {
        use std::io::Read;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match self.read.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        String::from_utf8_lossy(&buf)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// Runs `f` and returns its result with the log lines it produced.
pub fn logged<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let mut cap = log_capture().lock().unwrap_or_else(|e| e.into_inner());
    cap.take();
    let r = f();
    (r, cap.take())
}
