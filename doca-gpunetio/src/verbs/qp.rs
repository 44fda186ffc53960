//! GPU verbs queue pairs: a DOCA Verbs QP with its CQs in GPU-memory umems, exported to
//! the GPU (`doca_gpu_verbs_export_qp`), connected with the samples' attribute sequence,
//! and its device handle for kernels. What DOCA's samples build in `verbs_high_level.c`
//! and `verbs_common.c` (reference facts §1.3), as types.

use super::context::{Gid, LinkLayer, Pd};
use crate::gpu::{Gpu, GpuBuffer, MemType};
use doca_common::error::{check, Error, Result};
use doca_common::DocaError;
use doca_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Who rings a QP's doorbell (`enum doca_gpu_dev_verbs_nic_handler`; the samples' `-n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NicHandler {
    /// The library chooses (the software runtime: the GPU rings a doorbell it polls).
    #[default]
    Auto,
    /// The GPU writes the producer index; a CPU thread forwards it
    /// ([`GpuQp::start_cpu_proxy`]).
    CpuProxy,
    /// The GPU writes the doorbell record and rings the doorbell register.
    GpuSmDb,
    /// BlueFlame: the GPU pushes whole WQEs through the UAR.
    GpuSmBf,
    /// The GPU rings the doorbell register only (QPs without a send DBR).
    GpuSmNoDbr,
}

impl NicHandler {
    /// From the samples' `-n` value (0 AUTO, 1 CPU proxy, 2 GPU doorbell, 3 BlueFlame,
    /// 4 no DBR); `None` beyond.
    pub fn from_index(v: u32) -> Option<NicHandler> {
        Some(match v {
            0 => NicHandler::Auto,
            1 => NicHandler::CpuProxy,
            2 => NicHandler::GpuSmDb,
            3 => NicHandler::GpuSmBf,
            4 => NicHandler::GpuSmNoDbr,
            _ => return None,
        })
    }

    /// The raw value.
    pub fn raw(self) -> sys::doca_gpu_dev_verbs_nic_handler {
        sys::doca_gpu_dev_verbs_nic_handler(match self {
            NicHandler::Auto => 0,
            NicHandler::CpuProxy => 1,
            NicHandler::GpuSmDb => 2,
            NicHandler::GpuSmBf => 3,
            NicHandler::GpuSmNoDbr => 4,
        })
    }
}

/// How [`GpuQp::create`] builds a QP (the samples' `doca_gpu_verbs_qp_init_attr_hl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpConfig {
    /// Send queue size in WQEs (rounded up to a power of two).
    pub sq_wqes: u16,
    /// Receive queue size in WQEs (rounded up to a power of two; 0: no receive queue).
    pub rq_wqes: u16,
    /// Who rings the doorbell.
    pub nic_handler: NicHandler,
    /// Run without a send doorbell record when the device allows it (the samples' `-r`;
    /// silently off otherwise, as there).
    pub send_dbr_mode_ext: bool,
    /// Deliver receives of at most 32 bytes inside the CQE (the samples' `-x`); the device
    /// must support it.
    pub recv_inline: bool,
    /// GID index of the address handle (`-gid`).
    pub gid_index: u8,
}

impl Default for QpConfig {
    fn default() -> Self {
        QpConfig {
            sq_wqes: 2048,
            rq_wqes: 2048,
            nic_handler: NicHandler::Auto,
            send_dbr_mode_ext: false,
            recv_inline: false,
            gid_index: 0,
        }
    }
}

/// What a peer needs to connect to a QP (what the samples exchange out of band).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpInfo {
    /// The QP number.
    pub qpn: u32,
    /// The port GID.
    pub gid: Gid,
    /// The port LID (InfiniBand).
    pub lid: u32,
}

/// Page size of the umem sizes (the samples' SYSTEM_PAGE_SIZE).
const PAGE: usize = 4096;
/// `DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | RDMA_READ | RDMA_WRITE | RDMA_ATOMIC`.
const UMEM_ACCESS: u32 = 15;

fn round_up(v: usize, to: usize) -> usize {
    v.div_ceil(to) * to
}

/// Host memory for a CPU-proxy doorbell-record umem (the samples `calloc` it).
struct HostPage(NonNull<u8>);

impl HostPage {
    fn new() -> Result<HostPage> {
        let layout = std::alloc::Layout::from_size_align(PAGE, PAGE).expect("layout");
        // SAFETY: non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        NonNull::new(p)
            .map(HostPage)
            .ok_or_else(|| Error::InvalidArgument("out of host memory".into()))
    }
}

impl Drop for HostPage {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe {
            std::alloc::dealloc(
                self.0.as_ptr(),
                std::alloc::Layout::from_size_align_unchecked(PAGE, PAGE),
            )
        };
    }
}

/// A `doca_umem` over memory it keeps.
struct Umem {
    raw: *mut sys::doca_umem,
    _gpu_mem: Option<GpuBuffer<u8>>,
    _host: Option<HostPage>,
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: made by doca_umem(_gpu)_create, destroyed once before its memory.
        let rc = unsafe { sys::doca_umem_destroy(self.raw) };
        if let Err(e) = check("doca_umem_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

fn gpu_umem(gpu: &Gpu, dev: *mut sys::doca_dev, bytes: usize, init: Option<&[u8]>) -> Result<Umem> {
    let mut mem = GpuBuffer::<u8>::with_alignment(gpu, bytes, PAGE, MemType::Gpu)?;
    if let Some(b) = init {
        mem.copy_from_host(b)?;
    }
    let mut raw = std::ptr::null_mut();
    // SAFETY: live GPU, device and allocation; a valid out-pointer.
    check("doca_umem_gpu_create", unsafe {
        sys::doca_umem_gpu_create(
            gpu.as_raw(),
            dev,
            mem.device_ptr() as *mut c_void,
            bytes,
            UMEM_ACCESS,
            &mut raw,
        )
    })?;
    Ok(Umem {
        raw,
        _gpu_mem: Some(mem),
        _host: None,
    })
}

fn host_umem(dev: *mut sys::doca_dev) -> Result<Umem> {
    let page = HostPage::new()?;
    let mut raw = std::ptr::null_mut();
    // SAFETY: a live device; the page lives as long as the umem.
    check("doca_umem_create", unsafe {
        sys::doca_umem_create(dev, page.0.as_ptr().cast(), PAGE, UMEM_ACCESS, &mut raw)
    })?;
    Ok(Umem {
        raw,
        _gpu_mem: None,
        _host: Some(page),
    })
}

struct Uar(*mut sys::doca_uar);

// SAFETY: a UAR handle is only passed to DOCA calls (attribute setters, destroy once in
// Drop); DOCA's UAR objects have no thread affinity.
unsafe impl Send for Uar {}
// SAFETY: as above; shared use only reads the handle.
unsafe impl Sync for Uar {}

impl Uar {
    /// The samples' choice: BlueFlame for GPU_SM_BF, else non-cached dedicated, falling
    /// back to non-cached, then BlueFlame.
    fn new(dev: *mut sys::doca_dev, handler: NicHandler) -> Result<Uar> {
        use sys::doca_uar_allocation_type as T;
        let order: &[T] = if handler == NicHandler::GpuSmBf {
            &[T::DOCA_UAR_ALLOCATION_TYPE_BLUEFLAME]
        } else {
            &[
                T::DOCA_UAR_ALLOCATION_TYPE_NONCACHE_DEDICATED,
                T::DOCA_UAR_ALLOCATION_TYPE_NONCACHE,
                T::DOCA_UAR_ALLOCATION_TYPE_BLUEFLAME,
            ]
        };
        let mut last = sys::doca_error_t::DOCA_SUCCESS;
        for t in order {
            let mut u = std::ptr::null_mut();
            // SAFETY: a live device; a valid out-pointer.
            last = unsafe { sys::doca_uar_create(dev, *t, &mut u) };
            if last == sys::doca_error_t::DOCA_SUCCESS {
                return Ok(Uar(u));
            }
        }
        check("doca_uar_create", last).map(|_| unreachable!())
    }
}

impl Drop for Uar {
    fn drop(&mut self) {
        // SAFETY: made by doca_uar_create, destroyed once after its queues.
        let rc = unsafe { sys::doca_uar_destroy(self.0) };
        if let Err(e) = check("doca_uar_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A CQ with its GPU umem.
struct Cq {
    raw: *mut sys::doca_verbs_cq,
    _umem: Umem,
}

impl Cq {
    fn new(pd: &Pd, gpu: &Gpu, dev: *mut sys::doca_dev, n: u32, uar: Option<&Uar>) -> Result<Cq> {
        let bytes = round_up(n as usize * 64 + 8, PAGE);
        // Every CQE invalid with owner 1 (op_own 0xF1), as the samples initialise it.
        let mut init = vec![0u8; bytes];
        for c in init.chunks_exact_mut(64).take(n as usize) {
            c[63] = 0xf1;
        }
        let umem = gpu_umem(gpu, dev, bytes, Some(&init))?;
        let mut a = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("doca_verbs_cq_attr_create", unsafe {
            sys::doca_verbs_cq_attr_create(&mut a)
        })?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `a` is live until destroyed below; live context, umem and UAR.
        let r = unsafe {
            (|| {
                check(
                    "doca_verbs_cq_attr_set_external_datapath_en",
                    sys::doca_verbs_cq_attr_set_external_datapath_en(a, 1),
                )?;
                check(
                    "doca_verbs_cq_attr_set_external_umem",
                    sys::doca_verbs_cq_attr_set_external_umem(a, umem.raw, 0),
                )?;
                check(
                    "doca_verbs_cq_attr_set_cq_size",
                    sys::doca_verbs_cq_attr_set_cq_size(a, n),
                )?;
                check(
                    "doca_verbs_cq_attr_set_cq_overrun",
                    sys::doca_verbs_cq_attr_set_cq_overrun(a, 1),
                )?;
                if let Some(u) = uar {
                    check(
                        "doca_verbs_cq_attr_set_external_uar",
                        sys::doca_verbs_cq_attr_set_external_uar(a, u.0),
                    )?;
                }
                check(
                    "doca_verbs_cq_create",
                    sys::doca_verbs_cq_create(pd.context().as_raw(), a, &mut raw),
                )
            })()
        };
        // SAFETY: made above, destroyed once.
        unsafe { sys::doca_verbs_cq_attr_destroy(a) };
        r?;
        Ok(Cq { raw, _umem: umem })
    }
}

impl Drop for Cq {
    fn drop(&mut self) {
        // SAFETY: made by doca_verbs_cq_create; its QP is gone.
        let rc = unsafe { sys::doca_verbs_cq_destroy(self.raw) };
        if let Err(e) = check("doca_verbs_cq_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// The parts of one QP, dropped in this order: export, QP, its umems, CQs, UAR.
struct QpParts {
    export: *mut sys::doca_gpu_verbs_qp,
    qp: *mut sys::doca_verbs_qp,
    _wq: Umem,
    _dbr: Umem,
    cq_sq: Cq,
    _cq_rq: Option<Cq>,
    _uar: Option<Arc<Uar>>,
    gpu: Gpu,
}

impl Drop for QpParts {
    fn drop(&mut self) {
        // SAFETY: exported once, unexported once, before the QP is destroyed.
        let rc = unsafe { sys::doca_gpu_verbs_unexport_qp(self.gpu.as_raw(), self.export) };
        if let Err(e) = check("doca_gpu_verbs_unexport_qp", rc) {
            doca_common::record_drop_error(e);
        }
        // SAFETY: made by doca_verbs_qp_create, destroyed once after its export.
        let rc = unsafe { sys::doca_verbs_qp_destroy(self.qp) };
        if let Err(e) = check("doca_verbs_qp_destroy", rc) {
            doca_common::record_drop_error(e);
        }
    }
}

/// A DOCA Verbs RC QP for GPU code: CQs and work queues in GPU-memory umems, exported to
/// the GPU. Create it, exchange [`GpuQp::info`] with the peer, [`connect`](GpuQp::connect),
/// then take its [`QpHandle`] for kernels. Owns everything it made (drop: unexport,
/// destroy, free). `Send + Sync`.
pub struct GpuQp {
    parts: QpParts,
    pd: Pd,
    cfg: QpConfig,
    core_direct: bool,
    connected: AtomicBool,
}

// SAFETY: the raw handles are used by one call at a time on the host (connect is guarded by
// `connected`); the CPU proxy only calls the thread-safe progress function.
unsafe impl Send for GpuQp {}
// SAFETY: as above.
unsafe impl Sync for GpuQp {}

impl GpuQp {
    /// Creates a QP the way DOCA's samples do (`doca_gpu_verbs_create_qp_hl`): CQs of the
    /// queue sizes, a UAR, a QP with GPU umems, exported for `gpu` while still in RST.
    pub fn create(gpu: &Gpu, pd: &Pd, cfg: QpConfig) -> Result<GpuQp> {
        Self::build(gpu, pd, cfg, None, false)
    }

    fn build(
        gpu: &Gpu,
        pd: &Pd,
        cfg: QpConfig,
        shared_uar: Option<&Arc<Uar>>,
        core_direct: bool,
    ) -> Result<GpuQp> {
        if cfg.sq_wqes == 0 {
            return Err(Error::InvalidArgument("a QP needs a send queue".into()));
        }
        let sq = (cfg.sq_wqes as u32).next_power_of_two();
        let rq = if cfg.rq_wqes == 0 {
            0
        } else {
            (cfg.rq_wqes as u32).next_power_of_two()
        };
        let dev = pd.doca_dev()?;
        let attr = pd.context().device_attr()?;
        if cfg.recv_inline && !attr.cqe_inline {
            return Err(Error::doca(
                "doca_verbs_device_attr_get_is_cqe_inline_supported",
                DocaError::NOT_SUPPORTED,
            ));
        }
        let no_dbr = cfg.send_dbr_mode_ext && attr.send_dbr_mode_no_dbr;
        let uar = match shared_uar {
            Some(u) => u.clone(),
            None => Arc::new(Uar::new(dev, cfg.nic_handler)?),
        };
        let cq_sq = Cq::new(pd, gpu, dev, sq, shared_uar.map(|u| &**u))?;
        let cq_rq = if rq > 0 {
            Some(Cq::new(pd, gpu, dev, rq, shared_uar.map(|u| &**u))?)
        } else {
            None
        };
        let wq = gpu_umem(
            gpu,
            dev,
            round_up(rq as usize * 16 + sq as usize * 64, PAGE),
            None,
        )?;
        let dbr = if cfg.nic_handler == NicHandler::CpuProxy {
            host_umem(dev)?
        } else {
            gpu_umem(gpu, dev, PAGE, None)?
        };
        let mut ia = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("doca_verbs_qp_init_attr_create", unsafe {
            sys::doca_verbs_qp_init_attr_create(&mut ia)
        })?;
        let mut qp = std::ptr::null_mut();
        // SAFETY: `ia` is live until destroyed below; every object it names is live.
        let r = unsafe {
            (|| {
                check(
                    "doca_verbs_qp_init_attr_set_external_datapath_en",
                    sys::doca_verbs_qp_init_attr_set_external_datapath_en(ia, 1),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_external_uar",
                    sys::doca_verbs_qp_init_attr_set_external_uar(ia, uar.0),
                )?;
                if cfg.recv_inline {
                    check(
                        "doca_verbs_qp_init_attr_set_cqe_inline",
                        sys::doca_verbs_qp_init_attr_set_cqe_inline(
                            ia,
                            sys::doca_verbs_qp_scatter_to_cqe::DOCA_VERBS_QP_SCATTER_TO_CQE_32B,
                        ),
                    )?;
                }
                check(
                    "doca_verbs_qp_init_attr_set_external_umem",
                    sys::doca_verbs_qp_init_attr_set_external_umem(ia, wq.raw, 0),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_external_dbr_umem",
                    sys::doca_verbs_qp_init_attr_set_external_dbr_umem(ia, dbr.raw, 0),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_pd",
                    sys::doca_verbs_qp_init_attr_set_pd(ia, pd.as_raw()),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_sq_wr",
                    sys::doca_verbs_qp_init_attr_set_sq_wr(ia, sq),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_rq_wr",
                    sys::doca_verbs_qp_init_attr_set_rq_wr(ia, rq),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_qp_type",
                    sys::doca_verbs_qp_init_attr_set_qp_type(ia, sys::DOCA_VERBS_QP_TYPE_RC),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_send_cq",
                    sys::doca_verbs_qp_init_attr_set_send_cq(ia, cq_sq.raw),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_send_max_sges",
                    sys::doca_verbs_qp_init_attr_set_send_max_sges(ia, 1),
                )?;
                check(
                    "doca_verbs_qp_init_attr_set_receive_max_sges",
                    sys::doca_verbs_qp_init_attr_set_receive_max_sges(ia, 1),
                )?;
                if let Some(c) = &cq_rq {
                    check(
                        "doca_verbs_qp_init_attr_set_receive_cq",
                        sys::doca_verbs_qp_init_attr_set_receive_cq(ia, c.raw),
                    )?;
                }
                if core_direct {
                    check(
                        "doca_verbs_qp_init_attr_set_core_direct_master",
                        sys::doca_verbs_qp_init_attr_set_core_direct_master(ia, 1),
                    )?;
                }
                if no_dbr {
                    check(
                        "doca_verbs_qp_init_attr_set_send_dbr_mode",
                        sys::doca_verbs_qp_init_attr_set_send_dbr_mode(ia, sys::doca_verbs_qp_send_dbr_mode::DOCA_VERBS_QP_SEND_DBR_MODE_NO_DBR_EXT),
                    )?;
                }
                check(
                    "doca_verbs_qp_create",
                    sys::doca_verbs_qp_create(pd.context().as_raw(), ia, &mut qp),
                )
            })()
        };
        // SAFETY: made above, destroyed once.
        unsafe { sys::doca_verbs_qp_init_attr_destroy(ia) };
        r?;
        let wq_ptr = wq._gpu_mem.as_ref().map_or(0, |m| m.device_ptr());
        let mut export = std::ptr::null_mut();
        // SAFETY: live GPU, device, QP and CQs; a valid out-pointer.
        let rc = unsafe {
            sys::doca_gpu_verbs_export_qp(
                gpu.as_raw(),
                dev,
                qp,
                cfg.nic_handler.raw(),
                wq_ptr as *mut c_void,
                cq_sq.raw,
                cq_rq.as_ref().map_or(std::ptr::null_mut(), |c| c.raw),
                &mut export,
            )
        };
        if let Err(e) = check("doca_gpu_verbs_export_qp", rc) {
            // SAFETY: made above and not exported.
            unsafe { sys::doca_verbs_qp_destroy(qp) };
            return Err(e);
        }
        Ok(GpuQp {
            parts: QpParts {
                export,
                qp,
                _wq: wq,
                _dbr: dbr,
                cq_sq,
                _cq_rq: cq_rq,
                _uar: Some(uar),
                gpu: gpu.clone(),
            },
            pd: pd.clone(),
            cfg,
            core_direct,
            connected: AtomicBool::new(false),
        })
    }

    /// The QP number.
    pub fn qpn(&self) -> u32 {
        // SAFETY: a live QP.
        unsafe { sys::doca_verbs_qp_get_qpn(self.parts.qp) }
    }

    /// The send CQ's number.
    pub fn send_cqn(&self) -> u32 {
        // SAFETY: a live CQ.
        unsafe { sys::doca_verbs_cq_get_cqn(self.parts.cq_sq.raw) }
    }

    /// What the peer needs: QP number, GID (at the configured index) and LID.
    pub fn info(&self) -> Result<QpInfo> {
        let ctx = self.pd.context();
        let port = ctx.port()?;
        Ok(QpInfo {
            qpn: self.qpn(),
            gid: ctx.gid(self.cfg.gid_index as u32)?,
            lid: port.lid as u32,
        })
    }

    /// Connects to the peer's QP (RST -> INIT -> RTR -> RTS with DOCA's samples'
    /// attributes: MTU 1 KiB, PSNs 0, port 1, ack timeout 14, retry 7, RNR retry 1, RNR
    /// timer 1, remote read/write, IB-spec atomics, the device's read-atomic depths; IPv4
    /// address handle with hop limit 255, or LID on InfiniBand). A second call is
    /// `BAD_STATE`.
    pub fn connect(&self, remote: &QpInfo) -> Result<()> {
        if self.connected.swap(true, Ordering::AcqRel) {
            return Err(Error::doca("GpuQp::connect", DocaError::BAD_STATE));
        }
        let r = self.modify_to_rts(remote);
        if r.is_err() {
            self.connected.store(false, Ordering::Release);
        }
        r
    }

    fn modify_to_rts(&self, remote: &QpInfo) -> Result<()> {
        use sys::doca_verbs_qp_state as S;
        let ctx = self.pd.context();
        let port = ctx.port().unwrap_or(super::context::PortInfo {
            lid: 0,
            link_layer: LinkLayer::Ethernet,
        });
        let dev_attr = ctx.device_attr()?;
        let mut ah = std::ptr::null_mut();
        let mut a = std::ptr::null_mut();
        // SAFETY: valid out-pointers; a live context.
        unsafe {
            check(
                "doca_verbs_ah_attr_create",
                sys::doca_verbs_ah_attr_create(ctx.as_raw(), &mut ah),
            )?;
            if let Err(e) = check(
                "doca_verbs_qp_attr_create",
                sys::doca_verbs_qp_attr_create(&mut a),
            ) {
                sys::doca_verbs_ah_attr_destroy(ah);
                return Err(e);
            }
        }
        // SAFETY: `ah` and `a` live until destroyed below; the QP is live.
        let r = unsafe {
            (|| {
                let ib = port.link_layer == LinkLayer::InfiniBand;
                let at = if ib {
                    sys::doca_verbs_addr_type::DOCA_VERBS_ADDR_TYPE_IB_NO_GRH
                } else {
                    sys::doca_verbs_addr_type::DOCA_VERBS_ADDR_TYPE_IPv4
                };
                check(
                    "doca_verbs_ah_attr_set_addr_type",
                    sys::doca_verbs_ah_attr_set_addr_type(ah, at),
                )?;
                check(
                    "doca_verbs_ah_attr_set_sgid_index",
                    sys::doca_verbs_ah_attr_set_sgid_index(ah, self.cfg.gid_index),
                )?;
                if !ib {
                    check(
                        "doca_verbs_ah_attr_set_hop_limit",
                        sys::doca_verbs_ah_attr_set_hop_limit(ah, 255),
                    )?;
                }
                check(
                    "doca_verbs_ah_attr_set_gid",
                    sys::doca_verbs_ah_attr_set_gid(ah, sys::doca_verbs_gid { raw: remote.gid.0 }),
                )?;
                if ib {
                    check(
                        "doca_verbs_ah_attr_set_dlid",
                        sys::doca_verbs_ah_attr_set_dlid(ah, remote.lid),
                    )?;
                }
                check(
                    "doca_verbs_qp_attr_set_path_mtu",
                    sys::doca_verbs_qp_attr_set_path_mtu(
                        a,
                        sys::doca_mtu_size::DOCA_MTU_SIZE_1K_BYTES,
                    ),
                )?;
                check(
                    "doca_verbs_qp_attr_set_rq_psn",
                    sys::doca_verbs_qp_attr_set_rq_psn(a, 0),
                )?;
                check(
                    "doca_verbs_qp_attr_set_sq_psn",
                    sys::doca_verbs_qp_attr_set_sq_psn(a, 0),
                )?;
                check(
                    "doca_verbs_qp_attr_set_port_num",
                    sys::doca_verbs_qp_attr_set_port_num(a, 1),
                )?;
                check(
                    "doca_verbs_qp_attr_set_ack_timeout",
                    sys::doca_verbs_qp_attr_set_ack_timeout(a, 14),
                )?;
                check(
                    "doca_verbs_qp_attr_set_retry_cnt",
                    sys::doca_verbs_qp_attr_set_retry_cnt(a, 7),
                )?;
                check(
                    "doca_verbs_qp_attr_set_rnr_retry",
                    sys::doca_verbs_qp_attr_set_rnr_retry(a, 1),
                )?;
                check(
                    "doca_verbs_qp_attr_set_min_rnr_timer",
                    sys::doca_verbs_qp_attr_set_min_rnr_timer(a, 1),
                )?;
                check(
                    "doca_verbs_qp_attr_set_next_state",
                    sys::doca_verbs_qp_attr_set_next_state(a, S::DOCA_VERBS_QP_STATE_INIT),
                )?;
                check(
                    "doca_verbs_qp_attr_set_allow_remote_write",
                    sys::doca_verbs_qp_attr_set_allow_remote_write(a, 1),
                )?;
                check(
                    "doca_verbs_qp_attr_set_allow_remote_read",
                    sys::doca_verbs_qp_attr_set_allow_remote_read(a, 1),
                )?;
                check(
                    "doca_verbs_qp_attr_set_atomic_mode",
                    sys::doca_verbs_qp_attr_set_atomic_mode(
                        a,
                        sys::doca_verbs_qp_atomic_mode::DOCA_VERBS_QP_ATOMIC_MODE_IB_SPEC,
                    ),
                )?;
                check(
                    "doca_verbs_qp_attr_set_max_rd_atomic",
                    sys::doca_verbs_qp_attr_set_max_rd_atomic(a, dev_attr.max_qp_rd_atom),
                )?;
                check(
                    "doca_verbs_qp_attr_set_max_dest_rd_atomic",
                    sys::doca_verbs_qp_attr_set_max_dest_rd_atomic(a, dev_attr.max_qp_init_rd_atom),
                )?;
                check(
                    "doca_verbs_qp_attr_set_ah_attr",
                    sys::doca_verbs_qp_attr_set_ah_attr(a, ah),
                )?;
                check(
                    "doca_verbs_qp_attr_set_dest_qp_num",
                    sys::doca_verbs_qp_attr_set_dest_qp_num(a, remote.qpn),
                )?;
                let m = |b: u32| b as i32;
                let init = m(sys::DOCA_VERBS_QP_ATTR_NEXT_STATE
                    | sys::DOCA_VERBS_QP_ATTR_ALLOW_REMOTE_WRITE
                    | sys::DOCA_VERBS_QP_ATTR_ALLOW_REMOTE_READ
                    | sys::DOCA_VERBS_QP_ATTR_ATOMIC_MODE
                    | sys::DOCA_VERBS_QP_ATTR_PKEY_INDEX
                    | sys::DOCA_VERBS_QP_ATTR_PORT_NUM);
                check(
                    "doca_verbs_qp_modify (RST -> INIT)",
                    sys::doca_verbs_qp_modify(self.parts.qp, a, init),
                )?;
                let mut rtr = sys::DOCA_VERBS_QP_ATTR_NEXT_STATE
                    | sys::DOCA_VERBS_QP_ATTR_RQ_PSN
                    | sys::DOCA_VERBS_QP_ATTR_DEST_QP_NUM
                    | sys::DOCA_VERBS_QP_ATTR_PATH_MTU
                    | sys::DOCA_VERBS_QP_ATTR_AH_ATTR
                    | sys::DOCA_VERBS_QP_ATTR_MIN_RNR_TIMER;
                let mut rts = sys::DOCA_VERBS_QP_ATTR_NEXT_STATE
                    | sys::DOCA_VERBS_QP_ATTR_SQ_PSN
                    | sys::DOCA_VERBS_QP_ATTR_ACK_TIMEOUT
                    | sys::DOCA_VERBS_QP_ATTR_RETRY_CNT
                    | sys::DOCA_VERBS_QP_ATTR_RNR_RETRY;
                if self.core_direct {
                    rtr |= sys::DOCA_VERBS_QP_ATTR_MAX_DEST_RD_ATOMIC;
                    rts |= sys::DOCA_VERBS_QP_ATTR_MAX_QP_RD_ATOMIC;
                }
                check(
                    "doca_verbs_qp_attr_set_next_state",
                    sys::doca_verbs_qp_attr_set_next_state(a, S::DOCA_VERBS_QP_STATE_RTR),
                )?;
                check(
                    "doca_verbs_qp_modify (INIT -> RTR)",
                    sys::doca_verbs_qp_modify(self.parts.qp, a, m(rtr)),
                )?;
                check(
                    "doca_verbs_qp_attr_set_next_state",
                    sys::doca_verbs_qp_attr_set_next_state(a, S::DOCA_VERBS_QP_STATE_RTS),
                )?;
                check(
                    "doca_verbs_qp_modify (RTR -> RTS)",
                    sys::doca_verbs_qp_modify(self.parts.qp, a, m(rts)),
                )
            })()
        };
        // SAFETY: made above, destroyed once.
        unsafe {
            sys::doca_verbs_qp_attr_destroy(a);
            sys::doca_verbs_ah_attr_destroy(ah);
        }
        r
    }

    /// Whether [`connect`](GpuQp::connect) succeeded.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    /// The device handle for kernels (`doca_gpu_verbs_get_qp_dev`); `BAD_STATE` before the
    /// QP is connected (kernels must not post to a QP that is not ready to send).
    pub fn handle(&self) -> Result<QpHandle<'_>> {
        if !self.is_connected() {
            return Err(Error::doca(
                "GpuQp::handle (connect first)",
                DocaError::BAD_STATE,
            ));
        }
        let mut d = std::ptr::null_mut();
        // SAFETY: a live export; a valid out-pointer.
        check("doca_gpu_verbs_get_qp_dev", unsafe {
            sys::doca_gpu_verbs_get_qp_dev(self.parts.export, &mut d)
        })?;
        let raw = NonNull::new(d)
            .ok_or_else(|| Error::doca("doca_gpu_verbs_get_qp_dev", DocaError::UNEXPECTED))?;
        Ok(QpHandle::new(raw))
    }

    /// Whether a CPU proxy rings this QP's doorbell (`doca_gpu_verbs_cpu_proxy_enabled`).
    pub fn cpu_proxy_enabled(&self) -> Result<bool> {
        let mut on = 0u8;
        // SAFETY: a live export; a valid out-pointer.
        check("doca_gpu_verbs_cpu_proxy_enabled", unsafe {
            sys::doca_gpu_verbs_cpu_proxy_enabled(self.parts.export, &mut on)
        })?;
        Ok(on != 0)
    }

    /// Starts the samples' proxy thread (`doca_gpu_verbs_cpu_proxy_progress` in a loop) when
    /// the QP uses the CPU proxy; `None` otherwise. The thread stops when the guard drops.
    pub fn start_cpu_proxy(&self) -> Result<Option<CpuProxy<'_>>> {
        CpuProxy::start(&[self])
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &QpConfig {
        &self.cfg
    }

    /// The raw QP. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::doca_verbs_qp {
        self.parts.qp
    }

    /// The raw export (`struct doca_gpu_verbs_qp *`). Valid while `self` lives.
    pub fn as_raw_export(&self) -> *mut sys::doca_gpu_verbs_qp {
        self.parts.export
    }
}

impl std::fmt::Debug for GpuQp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuQp")
            .field("qpn", &self.qpn())
            .field("config", &self.cfg)
            .field("connected", &self.is_connected())
            .finish()
    }
}

/// A main QP and a core-direct companion sharing one UAR (the counter samples'
/// `doca_gpu_verbs_qp_group_hl`): the companion's WAIT holds its counter update until the
/// main QP's write completed.
pub struct GpuQpGroup {
    /// The QP data travels on.
    pub main: GpuQp,
    /// The core-direct QP that updates counters.
    pub companion: GpuQp,
}

impl GpuQpGroup {
    /// Creates both QPs; BlueFlame is refused (`INVALID_VALUE`), as the samples refuse it.
    pub fn create(gpu: &Gpu, pd: &Pd, cfg: QpConfig) -> Result<GpuQpGroup> {
        if cfg.nic_handler == NicHandler::GpuSmBf {
            return Err(Error::doca(
                "GpuQpGroup::create (BlueFlame)",
                DocaError::INVALID_VALUE,
            ));
        }
        let dev = pd.doca_dev()?;
        let uar = Arc::new(Uar::new(dev, NicHandler::Auto)?);
        let main = GpuQp::build(gpu, pd, cfg, Some(&uar), false)?;
        let companion = GpuQp::build(gpu, pd, cfg, Some(&uar), true)?;
        Ok(GpuQpGroup { main, companion })
    }

    /// Connects the main QP to the peer's main QP and the companion to its companion.
    pub fn connect(&self, remote_main: &QpInfo, remote_companion: &QpInfo) -> Result<()> {
        self.main.connect(remote_main)?;
        self.companion.connect(remote_companion)
    }

    /// The proxy thread for both QPs (see [`GpuQp::start_cpu_proxy`]).
    pub fn start_cpu_proxy(&self) -> Result<Option<CpuProxy<'_>>> {
        CpuProxy::start(&[&self.main, &self.companion])
    }
}

impl std::fmt::Debug for GpuQpGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuQpGroup")
            .field("main", &self.main)
            .field("companion", &self.companion)
            .finish()
    }
}

struct ExportPtr(*mut sys::doca_gpu_verbs_qp);
// SAFETY: the export outlives the proxy thread (CpuProxy borrows its QPs and joins on drop);
// doca_gpu_verbs_cpu_proxy_progress may be called from any thread.
unsafe impl Send for ExportPtr {}

/// The CPU-proxy thread of QPs exported with [`NicHandler::CpuProxy`]: calls
/// `doca_gpu_verbs_cpu_proxy_progress` on each in a tight loop, as DOCA's samples do.
/// Stopped and joined on drop.
pub struct CpuProxy<'a> {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    _qps: std::marker::PhantomData<&'a GpuQp>,
}

impl<'a> CpuProxy<'a> {
    fn start(qps: &[&'a GpuQp]) -> Result<Option<CpuProxy<'a>>> {
        let mut exports = Vec::new();
        for q in qps {
            if q.cpu_proxy_enabled()? {
                exports.push(ExportPtr(q.parts.export));
            }
        }
        if exports.is_empty() {
            return Ok(None);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("doca-verbs-cpu-proxy".into())
            .spawn(move || {
                let exports = exports;
                while !s.load(Ordering::Relaxed) {
                    for e in &exports {
                        // SAFETY: the export lives until this thread is joined.
                        unsafe { sys::doca_gpu_verbs_cpu_proxy_progress(e.0) };
                    }
                    std::hint::spin_loop();
                }
            })
            .map_err(|e| Error::InvalidArgument(format!("spawn the CPU proxy thread: {e}")))?;
        Ok(Some(CpuProxy {
            stop,
            thread: Some(thread),
            _qps: std::marker::PhantomData,
        }))
    }
}

impl std::fmt::Debug for CpuProxy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuProxy")
            .field("pthread_id", &self.pthread_id())
            .finish()
    }
}

impl CpuProxy<'_> {
    /// The proxy thread's pthread id (what DOCA's samples print when it starts).
    pub fn pthread_id(&self) -> u64 {
        use std::os::unix::thread::JoinHandleExt;
        self.thread.as_ref().map_or(0, |t| t.as_pthread_t())
    }
}

impl Drop for CpuProxy<'_> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Device handle of a connected [`GpuQp`] (`struct doca_gpu_dev_verbs_qp *`), the first
/// argument of the `doca_gpu_dev_verbs_*` device functions; a kernel argument (cudarc
/// `DeviceRepr`). `Copy`, `Send`, `Sync`: an address in device memory the host never
/// dereferences, borrowed from its QP.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct QpHandle<'a> {
    raw: NonNull<sys::doca_gpu_dev_verbs_qp>,
    _owner: std::marker::PhantomData<&'a GpuQp>,
}

impl QpHandle<'_> {
    fn new(raw: NonNull<sys::doca_gpu_dev_verbs_qp>) -> Self {
        QpHandle {
            raw,
            _owner: std::marker::PhantomData,
        }
    }

    /// The raw device pointer (what a kernel receives).
    pub fn as_raw(&self) -> *mut sys::doca_gpu_dev_verbs_qp {
        self.raw.as_ptr()
    }
}

// SAFETY: a plain device address; the host never dereferences it.
unsafe impl Send for QpHandle<'_> {}
// SAFETY: as above.
unsafe impl Sync for QpHandle<'_> {}
// SAFETY: `#[repr(transparent)]` over a pointer: the kernel parameter is a
// `struct doca_gpu_dev_verbs_qp *`, one pointer-sized value, exactly these bytes.
unsafe impl cudarc::driver::DeviceRepr for QpHandle<'_> {}

impl std::fmt::Debug for QpHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QpHandle({:p})", self.raw.as_ptr())
    }
}
