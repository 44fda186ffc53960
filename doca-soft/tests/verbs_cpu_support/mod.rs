//! What the GPU verbs tests without a GPU share: one side of a connection built the way
//! DOCA's verbs samples build it (reference facts §1.3), through the C API (context on
//! `lo`, PD, CQs and QPs with the external data path and the samples' masks, memory
//! registered through an mmap and `doca_rdma_bridge_get_mmap_mkey_from_pd`), exported to
//! host memory so that a CPU thread plays the GPU ([`DevQp`]), and the CPU-proxy thread of
//! the samples for `NIC_HANDLER_CPU_PROXY`.

#![allow(dead_code)]

use doca_soft::capi::doca_dev::*;
use doca_soft::capi::doca_gpunetio::*;
use doca_soft::capi::doca_mmap::*;
use doca_soft::capi::doca_rdma_bridge::*;
use doca_soft::capi::doca_soft_verbs::*;
use doca_soft::capi::doca_verbs::*;
use doca_soft::capi::doca_verbs_bridge::*;
use doca_soft::testing::verbs::{export_qp_host, unexport_qp_host, Addr, DevQp};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use doca_soft::testing::verbs::handler;

/// Generous bound of every wait (the machine is shared and slow).
pub const T: Duration = Duration::from_secs(20);

/// `DOCA_VERBS_QP_ATTR_*` bits the samples use.
pub mod mask {
    pub const ALLOW_REMOTE_WRITE: i32 = 1 << 0;
    pub const ALLOW_REMOTE_READ: i32 = 1 << 1;
    pub const PKEY_INDEX: i32 = 1 << 2;
    pub const MIN_RNR_TIMER: i32 = 1 << 3;
    pub const PORT_NUM: i32 = 1 << 4;
    pub const NEXT_STATE: i32 = 1 << 5;
    pub const CURRENT_STATE: i32 = 1 << 6;
    pub const PATH_MTU: i32 = 1 << 7;
    pub const RQ_PSN: i32 = 1 << 8;
    pub const SQ_PSN: i32 = 1 << 9;
    pub const DEST_QP_NUM: i32 = 1 << 10;
    pub const ACK_TIMEOUT: i32 = 1 << 11;
    pub const RETRY_CNT: i32 = 1 << 12;
    pub const RNR_RETRY: i32 = 1 << 13;
    pub const AH_ATTR: i32 = 1 << 14;
    pub const ATOMIC_MODE: i32 = 1 << 15;
    pub const MAX_QP_RD_ATOMIC: i32 = 1 << 16;
    pub const MAX_DEST_RD_ATOMIC: i32 = 1 << 17;
    /// RST -> INIT of the samples.
    pub const INIT: i32 =
        NEXT_STATE | ALLOW_REMOTE_WRITE | ALLOW_REMOTE_READ | ATOMIC_MODE | PKEY_INDEX | PORT_NUM;
    /// INIT -> RTR of the samples.
    pub const RTR: i32 = NEXT_STATE | RQ_PSN | DEST_QP_NUM | PATH_MTU | AH_ATTR | MIN_RNR_TIMER;
    /// RTR -> RTS of the samples.
    pub const RTS: i32 = NEXT_STATE | SQ_PSN | ACK_TIMEOUT | RETRY_CNT | RNR_RETRY;
}

/// `DOCA_VERBS_QP_STATE_*`.
pub const RST: u32 = 0;
pub const INIT: u32 = 1;
pub const RTR: u32 = 2;
pub const RTS: u32 = 3;
pub const ERR: u32 = 4;

/// Panics with the call's name when a DOCA call fails.
#[track_caller]
pub fn ok(rc: u32, what: &str) {
    assert_eq!(rc, 0, "{what} failed with {rc}");
}

/// The devinfo of `lo` (kept alive by a list that is never destroyed: tests are short).
pub fn lo_info() -> *mut DevInfo {
    let mut list = std::ptr::null_mut();
    let mut n = 0u32;
    // SAFETY: valid out-pointers.
    ok(
        unsafe { doca_devinfo_create_list(&mut list, &mut n) },
        "devinfo list",
    );
    // SAFETY: the list holds n entries.
    let infos = unsafe { std::slice::from_raw_parts(list, n as usize) };
    *infos
        .iter()
        .find(|&&i| {
            let mut eq = 0u8;
            // SAFETY: a live entry, a NUL-terminated name.
            let rc = unsafe { doca_devinfo_is_equal_pci_addr(i, c"lo".as_ptr(), &mut eq) };
            rc == 0 && eq == 1
        })
        .expect("lo is listed")
}

/// A verbs context and PD on `lo`.
pub struct Base {
    pub ctx: *mut VerbsContext,
    pub pd: *mut VerbsPd,
    pub gid: [u8; 16],
}

impl Base {
    pub fn new() -> Base {
        let mut ctx = std::ptr::null_mut();
        let mut pd = std::ptr::null_mut();
        let mut gid = VerbsGid::default();
        // SAFETY: a live devinfo; valid out-pointers.
        unsafe {
            ok(doca_verbs_context_create(lo_info(), 0, &mut ctx), "context");
            ok(doca_verbs_pd_create(ctx, &mut pd), "pd");
            ok(doca_soft_verbs_query_gid(ctx, 0, &mut gid), "gid");
        }
        Base {
            ctx,
            pd,
            gid: gid.raw,
        }
    }

    /// The PD's doca_dev.
    pub fn dev(&self) -> *mut Dev {
        let mut d = std::ptr::null_mut();
        // SAFETY: a live PD.
        ok(
            unsafe { doca_verbs_pd_as_doca_dev(self.pd, &mut d) },
            "pd dev",
        );
        d
    }
}

impl Drop for Base {
    fn drop(&mut self) {
        // SAFETY: created in `new`, everything on them destroyed before (field order of
        // the owners).
        unsafe {
            let _ = doca_verbs_pd_destroy(self.pd);
            let _ = doca_verbs_context_destroy(self.ctx);
        }
    }
}

/// Host memory registered for RDMA (mmap with every right) and its key.
pub struct Mem {
    pub buf: Vec<u64>,
    pub mmap: *mut Mmap,
    pub key: u32,
}

impl Mem {
    pub fn new(base: &Base, len: usize) -> Mem {
        let mut buf = vec![0u64; len.div_ceil(8)];
        let mut m = std::ptr::null_mut();
        let mut key = 0u32;
        // SAFETY: the buffer outlives the mmap (destroyed in Drop first); live PD.
        unsafe {
            ok(doca_mmap_create(&mut m), "mmap");
            ok(
                doca_mmap_set_memrange(m, buf.as_mut_ptr().cast(), len),
                "range",
            );
            ok(doca_mmap_set_permissions(m, 1 | 2 | 4 | 8), "perms");
            ok(doca_mmap_add_dev(m, base.dev()), "add dev");
            ok(doca_mmap_start(m), "start");
            let pd = doca_verbs_bridge_verbs_pd_get_ibv_pd(base.pd);
            ok(
                doca_rdma_bridge_get_mmap_mkey_from_pd(m, pd, &mut key),
                "mkey",
            );
        }
        Mem { buf, mmap: m, key }
    }

    pub fn addr(&self) -> u64 {
        self.buf.as_ptr() as u64
    }

    pub fn at(&self, off: u64) -> Addr {
        Addr {
            addr: self.addr() + off,
            key: self.key,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the vector's bytes.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast(), self.buf.len() * 8) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast(), self.buf.len() * 8) }
    }

    /// Volatile read (memory the NIC writes behind our back).
    pub fn read(&self, off: usize, len: usize) -> Vec<u8> {
        let p = self.buf.as_ptr() as *const u8;
        // SAFETY: in bounds (asserted by the slice length check).
        assert!(off + len <= self.buf.len() * 8);
        (0..len)
            .map(|i| unsafe { std::ptr::read_volatile(p.add(off + i)) })
            .collect()
    }

    pub fn u64_at(&self, off: usize) -> u64 {
        u64::from_ne_bytes(self.read(off, 8).try_into().unwrap())
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // SAFETY: created in `new`.
        unsafe {
            let _ = doca_mmap_stop(self.mmap);
            let _ = doca_mmap_destroy(self.mmap);
        }
    }
}

/// How a QP is made.
#[derive(Clone, Copy, Debug)]
pub struct QpOpts {
    pub sq: u32,
    pub rq: u32,
    pub handler: u32,
    pub cqe_inline: bool,
    pub no_dbr: bool,
    pub core_direct: bool,
}

impl Default for QpOpts {
    fn default() -> Self {
        QpOpts {
            sq: 256,
            rq: 256,
            handler: handler::GPU_SM_DB,
            cqe_inline: false,
            no_dbr: false,
            core_direct: false,
        }
    }
}

/// One exported QP with its CQs (the samples' `doca_gpu_verbs_qp_hl`), CPU-proxy thread
/// included for `CPU_PROXY`.
pub struct Qp {
    pub scq: *mut VerbsCq,
    pub rcq: *mut VerbsCq,
    pub qp: *mut VerbsQp,
    pub export: *mut GpuVerbsQp,
    pub dev: DevQp,
    proxy: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
    pub opts: QpOpts,
}

struct SendPtr(*mut GpuVerbsQp);
// SAFETY: the export lives until the proxy thread is joined (Qp::drop).
unsafe impl Send for SendPtr {}

fn cq(base: &Base, n: u32) -> *mut VerbsCq {
    let mut a = std::ptr::null_mut();
    let mut c = std::ptr::null_mut();
    // SAFETY: valid out-pointers; live context.
    unsafe {
        ok(doca_verbs_cq_attr_create(&mut a), "cq attr");
        ok(doca_verbs_cq_attr_set_external_datapath_en(a, 1), "ext");
        ok(doca_verbs_cq_attr_set_cq_size(a, n), "size");
        ok(doca_verbs_cq_attr_set_cq_overrun(a, 1), "overrun");
        ok(doca_verbs_cq_create(base.ctx, a, &mut c), "cq");
        ok(doca_verbs_cq_attr_destroy(a), "cq attr destroy");
    }
    c
}

impl Qp {
    pub fn new(base: &Base, o: QpOpts) -> Qp {
        let scq = cq(base, o.sq);
        let rcq = cq(base, o.rq.max(1));
        let mut ia = std::ptr::null_mut();
        let mut qp = std::ptr::null_mut();
        // SAFETY: live objects; valid out-pointers.
        unsafe {
            ok(doca_verbs_qp_init_attr_create(&mut ia), "init attr");
            ok(
                doca_verbs_qp_init_attr_set_external_datapath_en(ia, 1),
                "ext",
            );
            if o.cqe_inline {
                ok(doca_verbs_qp_init_attr_set_cqe_inline(ia, 1), "inline");
            }
            ok(doca_verbs_qp_init_attr_set_pd(ia, base.pd), "pd");
            ok(doca_verbs_qp_init_attr_set_sq_wr(ia, o.sq), "sq");
            ok(doca_verbs_qp_init_attr_set_rq_wr(ia, o.rq), "rq");
            ok(doca_verbs_qp_init_attr_set_qp_type(ia, 0), "rc");
            ok(doca_verbs_qp_init_attr_set_send_cq(ia, scq), "scq");
            ok(doca_verbs_qp_init_attr_set_send_max_sges(ia, 1), "sges");
            ok(doca_verbs_qp_init_attr_set_receive_max_sges(ia, 1), "rsges");
            ok(doca_verbs_qp_init_attr_set_receive_cq(ia, rcq), "rcq");
            if o.core_direct {
                ok(doca_verbs_qp_init_attr_set_core_direct_master(ia, 1), "cd");
            }
            if o.no_dbr {
                ok(doca_verbs_qp_init_attr_set_send_dbr_mode(ia, 1), "no dbr");
            }
            ok(doca_verbs_qp_create(base.ctx, ia, &mut qp), "qp");
            ok(doca_verbs_qp_init_attr_destroy(ia), "init attr destroy");
        }
        // SAFETY: live QP and CQs (no umem: the umem address is not checked).
        let export = unsafe { export_qp_host(qp, o.handler, 1, scq, rcq) }.expect("host export");
        let mut d: *mut c_void = std::ptr::null_mut();
        // SAFETY: live export.
        ok(
            unsafe { doca_gpu_verbs_get_qp_dev(export, &mut d) },
            "qp dev",
        );
        // SAFETY: the descriptor of a live host export, which outlives `dev` (Qp drop).
        let dev = unsafe { DevQp::new(d.cast()) };
        let mut enabled = 0u8;
        // SAFETY: live export.
        ok(
            unsafe { doca_gpu_verbs_cpu_proxy_enabled(export, &mut enabled) },
            "proxy?",
        );
        let proxy = (enabled == 1).then(|| {
            let stop = Arc::new(AtomicBool::new(false));
            let s = stop.clone();
            let e = SendPtr(export);
            let t = std::thread::spawn(move || {
                let e = e;
                while !s.load(Ordering::Relaxed) {
                    // SAFETY: the export lives until this thread is joined.
                    unsafe { doca_gpu_verbs_cpu_proxy_progress(e.0) };
                    std::hint::spin_loop();
                }
            });
            (stop, t)
        });
        Qp {
            scq,
            rcq,
            qp,
            export,
            dev,
            proxy,
            opts: o,
        }
    }

    pub fn qpn(&self) -> u32 {
        // SAFETY: live QP.
        unsafe { doca_verbs_qp_get_qpn(self.qp) }
    }

    /// RST -> INIT -> RTR -> RTS towards `gid`/`qpn`, with the samples' attributes and masks
    /// (`extra`: the companion's read-atomic depths).
    pub fn connect(&self, base: &Base, gid: [u8; 16], qpn: u32, extra: bool) {
        modify_to_rts(base, self.qp, gid, qpn, extra).expect("connect");
    }

    /// The QP's state as `doca_verbs_qp_query` reports it.
    pub fn state(&self) -> u32 {
        query_state(self.qp)
    }
}

/// The samples' `connect_verbs_qp` (reference facts §1.3); the first failing call's code.
pub fn modify_to_rts(
    base: &Base,
    qp: *mut VerbsQp,
    gid: [u8; 16],
    qpn: u32,
    extra: bool,
) -> Result<(), u32> {
    let chk = |rc: u32| if rc == 0 { Ok(()) } else { Err(rc) };
    let mut ah = std::ptr::null_mut();
    let mut a = std::ptr::null_mut();
    // SAFETY: live objects; valid out-pointers.
    unsafe {
        chk(doca_verbs_ah_attr_create(base.ctx, &mut ah))?;
        chk(doca_verbs_ah_attr_set_addr_type(ah, 0))?;
        chk(doca_verbs_ah_attr_set_sgid_index(ah, 0))?;
        chk(doca_verbs_ah_attr_set_hop_limit(ah, 255))?;
        chk(doca_verbs_ah_attr_set_gid(ah, VerbsGid { raw: gid }))?;
        chk(doca_verbs_qp_attr_create(&mut a))?;
        chk(doca_verbs_qp_attr_set_path_mtu(a, 2))?;
        chk(doca_verbs_qp_attr_set_rq_psn(a, 0))?;
        chk(doca_verbs_qp_attr_set_sq_psn(a, 0))?;
        chk(doca_verbs_qp_attr_set_port_num(a, 1))?;
        chk(doca_verbs_qp_attr_set_ack_timeout(a, 14))?;
        chk(doca_verbs_qp_attr_set_retry_cnt(a, 7))?;
        chk(doca_verbs_qp_attr_set_rnr_retry(a, 1))?;
        chk(doca_verbs_qp_attr_set_min_rnr_timer(a, 1))?;
        chk(doca_verbs_qp_attr_set_next_state(a, INIT))?;
        chk(doca_verbs_qp_attr_set_allow_remote_write(a, 1))?;
        chk(doca_verbs_qp_attr_set_allow_remote_read(a, 1))?;
        chk(doca_verbs_qp_attr_set_atomic_mode(a, 1))?;
        chk(doca_verbs_qp_attr_set_max_rd_atomic(a, 16))?;
        chk(doca_verbs_qp_attr_set_max_dest_rd_atomic(a, 16))?;
        chk(doca_verbs_qp_attr_set_ah_attr(a, ah))?;
        chk(doca_verbs_qp_attr_set_dest_qp_num(a, qpn))?;
        let r = (|| {
            chk(doca_verbs_qp_modify(qp, a, mask::INIT))?;
            chk(doca_verbs_qp_attr_set_next_state(a, RTR))?;
            let rtr = mask::RTR | if extra { mask::MAX_DEST_RD_ATOMIC } else { 0 };
            chk(doca_verbs_qp_modify(qp, a, rtr))?;
            chk(doca_verbs_qp_attr_set_next_state(a, RTS))?;
            let rts = mask::RTS | if extra { mask::MAX_QP_RD_ATOMIC } else { 0 };
            chk(doca_verbs_qp_modify(qp, a, rts))
        })();
        let _ = doca_verbs_qp_attr_destroy(a);
        let _ = doca_verbs_ah_attr_destroy(ah);
        r
    }
}

/// `doca_verbs_qp_query`'s current state.
pub fn query_state(qp: *mut VerbsQp) -> u32 {
    let mut a = std::ptr::null_mut();
    let mut i = std::ptr::null_mut();
    let mut m = 0;
    // SAFETY: live QP; attribute objects made and destroyed here.
    unsafe {
        ok(doca_verbs_qp_attr_create(&mut a), "attr");
        ok(doca_verbs_qp_init_attr_create(&mut i), "init attr");
        ok(doca_verbs_qp_query(qp, a, i, &mut m), "query");
        assert_ne!(m & mask::CURRENT_STATE, 0);
        let s = doca_soft::testing::verbs::qp_attr_state(a);
        let _ = doca_verbs_qp_attr_destroy(a);
        let _ = doca_verbs_qp_init_attr_destroy(i);
        s
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        if let Some((stop, t)) = self.proxy.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = t.join();
        }
        // SAFETY: objects made in `new`, destroyed once in reverse order.
        unsafe {
            unexport_qp_host(self.export);
            ok(doca_verbs_qp_destroy(self.qp), "qp destroy");
            ok(doca_verbs_cq_destroy(self.scq), "scq destroy");
            ok(doca_verbs_cq_destroy(self.rcq), "rcq destroy");
        }
    }
}

/// Bytes SEED + 7i.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_add((i * 7) as u8)).collect()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}
