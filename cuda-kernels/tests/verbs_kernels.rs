//! The GPU verbs kernels (`kernels/verbs_*.cu`) over loopback in one process: two QPs
//! (or QP groups) on `lo`, connected to each other through the soft NIC, each kernel run
//! through its `KernelScope` launcher and its effect checked in GPU memory:
//! - write_bw, put_bw (thread, warp), get_bw (thread, warp): every byte of every thread's
//!   slot arrives; no error completion;
//! - put_signal_bw / put_counter_bw (thread, warp): data arrives and the flags count exactly
//!   one add per call over two launches;
//! - write_lat, put_signal_lat, put_counter_lat: client and server kernels play the
//!   ping-pong concurrently; the last round's byte / the flag counts arrive;
//! - twosided_bw (thread, warp, inline): receives land in order (or stay in the CQEs);
//! - bad input: a wrong rkey gives error completions the kernel counts (and returns), a
//!   ping-pong without a peer is stopped through its exit flag, launchers refuse regions
//!   too small or not GPU-accessible.
//!
//! Without a CUDA driver the GPU tests print why they skip; the fatbin and argument checks
//! run everywhere.

use cuda_kernels::{
    ExitFlag, KernelError, Kernels, RemoteBuf, Role, Shape, VerbsErrors, VerbsScope,
};
use doca_gpunetio::verbs::{Context, GpuQp, GpuQpGroup, MemoryRegion, Pd, QpConfig};
use doca_gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType};
use doca_test_support::require_cuda;
use std::time::Duration;

const VERBS_KERNELS: &[&str] = &[
    "doca_rs_verbs_write_bw",
    "doca_rs_verbs_write_lat_client",
    "doca_rs_verbs_write_lat_server",
    "doca_rs_verbs_put_bw_thread",
    "doca_rs_verbs_put_bw_warp",
    "doca_rs_verbs_get_bw_thread",
    "doca_rs_verbs_get_bw_warp",
    "doca_rs_verbs_put_signal_bw_thread",
    "doca_rs_verbs_put_signal_bw_warp",
    "doca_rs_verbs_put_counter_bw_thread",
    "doca_rs_verbs_put_counter_bw_warp",
    "doca_rs_verbs_put_signal_lat_client",
    "doca_rs_verbs_put_signal_lat_server",
    "doca_rs_verbs_put_counter_lat_client",
    "doca_rs_verbs_put_counter_lat_server",
    "doca_rs_verbs_twosided_client_thread",
    "doca_rs_verbs_twosided_client_warp",
    "doca_rs_verbs_twosided_server_thread",
    "doca_rs_verbs_twosided_server_warp",
    "doca_rs_verbs_twosided_server_inline_thread",
    "doca_rs_verbs_twosided_server_inline_warp",
];

/// How long one kernel may take before the test calls it hung.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn fatbin_names_every_verbs_kernel() {
    let text = String::from_utf8_lossy(cuda_kernels::FATBIN);
    for k in VERBS_KERNELS {
        assert!(text.contains(k), "{k} missing from the fatbin");
    }
}

#[test]
fn scopes_rounds_and_remote_offsets() {
    assert_eq!(VerbsScope::from_index(0), Some(VerbsScope::Thread));
    assert_eq!(VerbsScope::from_index(1), Some(VerbsScope::Warp));
    assert_eq!(VerbsScope::from_index(2), None);
    let s = Shape {
        threads: 512,
        iters: 2048,
        size: 64,
        scope: VerbsScope::Thread,
    };
    assert_eq!(s.rounds(), 4);
    assert_eq!(Shape { iters: 100, ..s }.rounds(), 1, "at least one round");
    let r = RemoteBuf {
        addr: 0x1000,
        key: 7,
    };
    assert_eq!(
        r.at(0x20),
        RemoteBuf {
            addr: 0x1020,
            key: 7
        }
    );
}

fn all_access() -> AccessFlags {
    AccessFlags::LOCAL_READ_WRITE
        | AccessFlags::RDMA_READ
        | AccessFlags::RDMA_WRITE
        | AccessFlags::RDMA_ATOMIC
}

/// Two connected QPs (or groups) of one process on `lo`, and the kernels.
struct Loop {
    kernels: Kernels,
    a: Pair,
    b: Pair,
    pd: Pd,
    gpu: Gpu,
}

enum Pair {
    One(GpuQp),
    Group(Box<GpuQpGroup>),
}

impl Pair {
    fn main(&self) -> &GpuQp {
        match self {
            Pair::One(q) => q,
            Pair::Group(g) => &g.main,
        }
    }

    fn companion(&self) -> Option<&GpuQp> {
        match self {
            Pair::One(_) => None,
            Pair::Group(g) => Some(&g.companion),
        }
    }
}

impl Loop {
    fn new(group: bool, recv_inline: bool) -> Option<Loop> {
        if !require_cuda("GPU verbs kernels over loopback") {
            return None;
        }
        let gpu = Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open");
        let kernels = Kernels::load(&gpu).expect("load the kernels");
        let ctx = Context::open(&Device::open("lo").expect("lo")).expect("verbs context");
        let pd = Pd::new(&ctx).expect("PD");
        let cfg = QpConfig {
            recv_inline,
            ..QpConfig::default()
        };
        let make = || {
            if group {
                Pair::Group(Box::new(
                    GpuQpGroup::create(&gpu, &pd, cfg).expect("QP group"),
                ))
            } else {
                Pair::One(GpuQp::create(&gpu, &pd, cfg).expect("QP"))
            }
        };
        let (a, b) = (make(), make());
        let info = |p: &Pair| {
            (
                p.main().info().unwrap(),
                p.companion().map(|c| c.info().unwrap()),
            )
        };
        let (ia, ib) = (info(&a), info(&b));
        a.main().connect(&ib.0).expect("connect A");
        b.main().connect(&ia.0).expect("connect B");
        if let (Some(ca), Some(cb)) = (a.companion(), b.companion()) {
            ca.connect(&ib.1.unwrap()).expect("connect A's companion");
            cb.connect(&ia.1.unwrap()).expect("connect B's companion");
        }
        Some(Loop {
            kernels,
            a,
            b,
            pd,
            gpu,
        })
    }

    /// `len` bytes of GPU memory filled with `fill`, registered.
    fn mem(&self, len: usize, fill: u8) -> Mem {
        let mut buf = GpuBuffer::<u8>::new(&self.gpu, len, MemType::Gpu).unwrap();
        buf.copy_from_host(&vec![fill; len]).unwrap();
        let mr = MemoryRegion::gpu(&self.pd, &buf, all_access()).unwrap();
        Mem { mr, buf }
    }
}

struct Mem {
    mr: MemoryRegion,
    buf: GpuBuffer<u8>,
}

impl Mem {
    fn remote(&self) -> RemoteBuf {
        RemoteBuf {
            addr: self.mr.addr(),
            key: self.mr.key(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.buf.len()];
        self.buf.copy_to_host(&mut v).unwrap();
        v
    }

    fn u64s(&self) -> Vec<u64> {
        self.bytes()
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    }
}

#[track_caller]
fn all_bytes(got: &[u8], want: u8, what: &str) {
    if let Some(i) = got.iter().position(|&b| b != want) {
        panic!("{what}: byte {i} is {} instead of {want}", got[i]);
    }
}

fn shape(scope: VerbsScope, size: u32) -> Shape {
    Shape {
        threads: 64,
        iters: 256,
        size,
        scope,
    }
}

#[test]
fn write_bw_writes_every_thread_slot() {
    let Some(l) = Loop::new(false, false) else {
        return;
    };
    let s = shape(VerbsScope::Thread, 300);
    let (src, dst) = (l.mem(64 * 300, 0x5a), l.mem(64 * 300, 0));
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let qp = l.a.main().handle().unwrap();
    let ms = l.kernels.scope(|sc| {
        sc.verbs_write_bw(qp, s, &src.mr, dst.remote(), &errors, &exit)
            .unwrap()
            .wait_within(LIMIT)
            .unwrap()
    });
    assert!(ms > 0.0, "kernel time {ms}");
    assert_eq!(errors.count(), 0);
    all_bytes(&dst.bytes(), 0x5a, "write_bw destination");
}

fn put_bw(scope: VerbsScope) {
    let Some(l) = Loop::new(false, false) else {
        return;
    };
    let s = shape(scope, 1000);
    let (src, dst) = (l.mem(64 * 1000, 0x33), l.mem(64 * 1000, 0));
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let qp = l.a.main().handle().unwrap();
    l.kernels.scope(|sc| {
        for _ in 0..2 {
            sc.verbs_put_bw(qp, s, &src.mr, dst.remote(), &errors, &exit)
                .unwrap()
                .wait_within(LIMIT)
                .unwrap();
        }
    });
    assert_eq!(errors.count(), 0);
    all_bytes(&dst.bytes(), 0x33, "put_bw destination");
}

#[test]
fn put_bw_thread_scope() {
    put_bw(VerbsScope::Thread);
}

#[test]
fn put_bw_warp_scope() {
    put_bw(VerbsScope::Warp);
}

fn get_bw(scope: VerbsScope) {
    let Some(l) = Loop::new(false, false) else {
        return;
    };
    let s = shape(scope, 512);
    let (local, remote, dump) = (l.mem(64 * 512, 0), l.mem(64 * 512, 0x77), l.mem(64, 0));
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let qp = l.a.main().handle().unwrap();
    l.kernels.scope(|sc| {
        sc.verbs_get_bw(qp, s, &local.mr, remote.remote(), &dump.mr, &errors, &exit)
            .unwrap()
            .wait_within(LIMIT)
            .unwrap()
    });
    assert_eq!(errors.count(), 0);
    all_bytes(&local.bytes(), 0x77, "get_bw local copy");
}

#[test]
fn get_bw_thread_scope() {
    get_bw(VerbsScope::Thread);
}

#[test]
fn get_bw_warp_scope() {
    get_bw(VerbsScope::Warp);
}

fn signal_bw(scope: VerbsScope, counter: bool) {
    let Some(l) = Loop::new(counter, false) else {
        return;
    };
    let s = shape(scope, 128);
    let (src, dst) = (l.mem(64 * 128, 0x21), l.mem(64 * 128, 0));
    let (flags, prev) = (l.mem(64 * 8, 0), l.mem(64 * 8, 0));
    let exit = ExitFlag::new(&l.gpu).unwrap();
    let qp = l.a.main().handle().unwrap();
    let comp = l.a.companion().map(|c| c.handle().unwrap());
    l.kernels.scope(|sc| {
        for n in 0..2 {
            sc.verbs_put_signal_bw(
                qp,
                comp,
                s,
                &src.mr,
                dst.remote(),
                flags.remote(),
                &prev.mr,
                n * s.rounds(),
                &exit,
            )
            .unwrap()
            .wait_within(LIMIT)
            .unwrap();
        }
    });
    all_bytes(&dst.bytes(), 0x21, "put_signal destination");
    let f = flags.u64s();
    let callers: Vec<usize> = match scope {
        VerbsScope::Thread => (0..64).collect(),
        VerbsScope::Warp => vec![0, 32],
    };
    for (i, v) in f.iter().enumerate() {
        let want = if callers.contains(&i) {
            2 * s.rounds()
        } else {
            0
        };
        assert_eq!(*v, want, "flag {i}");
    }
    let p = prev.u64s();
    for &i in &callers {
        assert_eq!(p[i], 2 * s.rounds() - 1, "last fetched value of caller {i}");
    }
}

#[test]
fn put_signal_bw_thread_scope_counts_every_put() {
    signal_bw(VerbsScope::Thread, false);
}

#[test]
fn put_signal_bw_warp_scope_counts_every_warp() {
    signal_bw(VerbsScope::Warp, false);
}

#[test]
fn put_counter_bw_thread_scope_counts_every_put() {
    signal_bw(VerbsScope::Thread, true);
}

#[test]
fn put_counter_bw_warp_scope_counts_every_warp() {
    signal_bw(VerbsScope::Warp, true);
}

#[test]
fn write_lat_ping_pong_between_two_kernels() {
    let Some(l) = Loop::new(false, false) else {
        return;
    };
    let iters = 300;
    let (poll_a, post_a, poll_b, post_b) = (l.mem(64, 0), l.mem(64, 0), l.mem(64, 0), l.mem(64, 0));
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let (qa, qb) = (l.a.main().handle().unwrap(), l.b.main().handle().unwrap());
    l.kernels.scope(|sc| {
        for n in 0..2u32 {
            let start = n * iters;
            let srv = sc
                .verbs_write_lat(
                    qb,
                    Role::Server,
                    iters,
                    64,
                    &poll_b.mr,
                    &post_b.mr,
                    poll_a.remote(),
                    start,
                    &errors,
                    &exit,
                )
                .unwrap();
            let cli = sc
                .verbs_write_lat(
                    qa,
                    Role::Client,
                    iters,
                    64,
                    &poll_a.mr,
                    &post_a.mr,
                    poll_b.remote(),
                    start,
                    &errors,
                    &exit,
                )
                .unwrap();
            cli.wait_within(LIMIT).unwrap();
            srv.wait_within(LIMIT).unwrap();
        }
    });
    assert_eq!(errors.count(), 0);
    let last = (2 * iters) as u8;
    assert_eq!(poll_a.bytes()[0], last, "the server's last answer");
    assert_eq!(poll_b.bytes()[0], last, "the client's last message");
}

fn signal_lat(counter: bool) {
    let Some(l) = Loop::new(counter, false) else {
        return;
    };
    let iters = 200;
    let (data_a, data_b) = (l.mem(256, 1), l.mem(256, 2));
    let (flag_a, flag_b, prev_a, prev_b) = (l.mem(8, 0), l.mem(8, 0), l.mem(8, 0), l.mem(8, 0));
    let exit = ExitFlag::new(&l.gpu).unwrap();
    let (qa, qb) = (l.a.main().handle().unwrap(), l.b.main().handle().unwrap());
    let ca = l.a.companion().map(|c| c.handle().unwrap());
    let cb = l.b.companion().map(|c| c.handle().unwrap());
    l.kernels.scope(|sc| {
        for n in 0..2u64 {
            let start = n * iters as u64;
            let srv = sc
                .verbs_put_signal_lat(
                    qb,
                    cb,
                    Role::Server,
                    iters,
                    256,
                    &data_b.mr,
                    data_a.remote(),
                    flag_a.remote(),
                    &prev_b.mr,
                    &flag_b.mr,
                    start,
                    &exit,
                )
                .unwrap();
            let cli = sc
                .verbs_put_signal_lat(
                    qa,
                    ca,
                    Role::Client,
                    iters,
                    256,
                    &data_a.mr,
                    data_b.remote(),
                    flag_b.remote(),
                    &prev_a.mr,
                    &flag_a.mr,
                    start,
                    &exit,
                )
                .unwrap();
            cli.wait_within(LIMIT).unwrap();
            srv.wait_within(LIMIT).unwrap();
        }
    });
    assert_eq!(flag_a.u64s()[0], 2 * iters as u64, "answers the client got");
    assert_eq!(
        flag_b.u64s()[0],
        2 * iters as u64,
        "messages the server got"
    );
    all_bytes(&data_a.bytes(), 2, "the server's data at the client");
    all_bytes(&data_b.bytes(), 1, "the client's data at the server");
}

#[test]
fn put_signal_lat_ping_pong_between_two_kernels() {
    signal_lat(false);
}

#[test]
fn put_counter_lat_ping_pong_between_two_kernels() {
    signal_lat(true);
}

fn twosided(scope: VerbsScope, inline: bool) {
    let Some(l) = Loop::new(false, inline) else {
        return;
    };
    let size = if inline { 24 } else { 700 };
    let s = shape(scope, size);
    let (src, buf) = (
        l.mem(64 * size as usize, 0x42),
        l.mem(64 * size as usize, 0),
    );
    let (flag_c, flag_s, dump) = (l.mem(8, 0), l.mem(8, 0), l.mem(8, 0));
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let (qa, qb) = (l.a.main().handle().unwrap(), l.b.main().handle().unwrap());
    l.kernels.scope(|sc| {
        for n in 0..2 {
            let start = n * s.rounds();
            let srv = sc
                .verbs_twosided_server(
                    qb,
                    s,
                    inline,
                    &buf.mr,
                    &flag_s.mr,
                    flag_c.remote(),
                    &dump.mr,
                    start,
                    0x42,
                    &errors,
                    &exit,
                )
                .unwrap();
            let cli = sc
                .verbs_twosided_client(qa, s, &src.mr, &flag_c.mr, start, &errors, &exit)
                .unwrap();
            cli.wait_within(LIMIT).unwrap();
            srv.wait_within(LIMIT).unwrap();
        }
    });
    assert_eq!(errors.count(), 0, "error completions or bad inline CQEs");
    assert_eq!(flag_c.u64s()[0], 2 * s.rounds(), "the server's round flags");
    all_bytes(
        &buf.bytes(),
        if inline { 0 } else { 0x42 },
        "receive buffers",
    );
}

#[test]
fn twosided_thread_scope_receives_in_order() {
    twosided(VerbsScope::Thread, false);
}

#[test]
fn twosided_warp_scope_receives_in_order() {
    twosided(VerbsScope::Warp, false);
}

#[test]
fn twosided_inline_receives_stay_in_the_cqes() {
    twosided(VerbsScope::Thread, true);
}

#[test]
fn a_wrong_rkey_is_an_error_completion_not_a_hang() {
    let Some(l) = Loop::new(false, false) else {
        return;
    };
    let s = Shape {
        threads: 64,
        iters: 64,
        size: 64,
        scope: VerbsScope::Thread,
    };
    let (src, dst) = (l.mem(64 * 64, 9), l.mem(64 * 64, 0));
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let qp = l.a.main().handle().unwrap();
    let bad = RemoteBuf {
        addr: dst.mr.addr(),
        key: dst.mr.key() ^ 0x5555,
    };
    l.kernels.scope(|sc| {
        sc.verbs_put_bw(qp, s, &src.mr, bad, &errors, &exit)
            .unwrap()
            .wait_within(LIMIT)
            .unwrap()
    });
    assert!(errors.count() > 0, "no error completion for a wrong rkey");
    all_bytes(&dst.bytes(), 0, "nothing written through a wrong key");
}

#[test]
fn a_ping_pong_without_a_peer_is_stopped_by_its_exit_flag() {
    let Some(l) = Loop::new(false, false) else {
        return;
    };
    let (poll, post, other) = (l.mem(8, 0), l.mem(8, 0), l.mem(8, 0));
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let qp = l.b.main().handle().unwrap();
    l.kernels.scope(|sc| {
        let run = sc
            .verbs_write_lat(
                qp,
                Role::Server,
                10,
                8,
                &poll.mr,
                &post.mr,
                other.remote(),
                0,
                &errors,
                &exit,
            )
            .unwrap();
        match run.wait_within(Duration::from_secs(2)) {
            Err(KernelError::Hung(_)) => {}
            r => panic!("a server without a client must not return by itself: {r:?}"),
        }
    });
    assert!(exit.is_set(), "stopped through its exit flag");
    assert_eq!(post.bytes()[0], 0, "it never answered");
}

#[test]
fn launchers_refuse_bad_regions_and_shapes() {
    let Some(l) = Loop::new(false, false) else {
        return;
    };
    let small = l.mem(64, 0);
    let (errors, exit) = (
        VerbsErrors::new(&l.gpu).unwrap(),
        ExitFlag::new(&l.gpu).unwrap(),
    );
    let qp = l.a.main().handle().unwrap();
    let mut host = vec![0u8; 4096];
    // SAFETY: `host` outlives the region (dropped at the end of the test, after it).
    let host_mr =
        unsafe { MemoryRegion::host(&l.pd, host.as_mut_ptr().cast(), 4096, all_access()) }.unwrap();
    let invalid = |r: Result<cuda_kernels::VerbsRun<'_>, KernelError>, what: &str| match r {
        Err(KernelError::Invalid(m)) => m,
        Err(e) => panic!("{what}: {e}"),
        Ok(_) => panic!("{what}: launched"),
    };
    l.kernels.scope(|sc| {
        let s = shape(VerbsScope::Thread, 1 << 16);
        let m = invalid(
            sc.verbs_put_bw(qp, s, &small.mr, small.remote(), &errors, &exit),
            "64 x 64 KiB from 64 bytes",
        );
        assert!(m.contains("4194304 bytes needed"), "{m}");
        let odd = Shape { threads: 65, ..s };
        invalid(
            sc.verbs_put_bw(qp, odd, &small.mr, small.remote(), &errors, &exit),
            "odd threads over 2 blocks",
        );
        let warp = Shape {
            threads: 80,
            scope: VerbsScope::Warp,
            ..s
        };
        let m = invalid(
            sc.verbs_put_bw(qp, warp, &host_mr, small.remote(), &errors, &exit),
            "40 threads per block in warps",
        );
        assert!(m.contains("whole warps"), "{m}");
        let m = invalid(
            sc.verbs_write_lat(
                qp,
                Role::Client,
                1,
                8,
                &host_mr,
                &small.mr,
                small.remote(),
                0,
                &errors,
                &exit,
            ),
            "host poll buffer",
        );
        assert!(m.contains("GPU memory"), "{m}");
        let inl = Shape { size: 33, ..s };
        invalid(
            sc.verbs_twosided_server(
                qp,
                inl,
                true,
                &host_mr,
                &small.mr,
                small.remote(),
                &small.mr,
                0,
                1,
                &errors,
                &exit,
            ),
            "inline receives of 33 bytes",
        );
    });
    drop(host_mr);
    drop(host);
}
