//! Resources as the verbs samples build them: the GPU, a DOCA Verbs context and PD on the
//! `-d` device, QPs (sq = rq = 2048 WQEs, the `-n`/`-x`/`-r` options), host memory
//! (`calloc` + registration) and GPU memory (`doca_gpu_mem_alloc` + registration).

use super::cli::Args;
use doca::gpunetio::verbs::{
    Context, CpuProxy, GpuQp, GpuQpGroup, MemoryRegion, NicHandler, Pd, QpConfig, QpInfo,
};
use doca::gpunetio::{AccessFlags, Gpu, GpuBuffer, MemType};
use std::alloc::Layout;
use std::ptr::NonNull;

/// The GPU, context and PD of one side.
pub struct Verbs {
    /// Protection domain (memory and QPs).
    pub pd: Pd,
    /// DOCA Verbs context on the NIC.
    pub ctx: Context,
    /// The `-g` GPU.
    pub gpu: Gpu,
}

fn ctx_err(what: &'static str) -> impl FnOnce(doca::gpunetio::Error) -> String {
    move |e| format!("{what}: {e}")
}

impl Verbs {
    /// Opens the `-g` GPU and a context and PD on the `-d` device.
    pub fn open(args: &Args) -> Result<Verbs, String> {
        let gpu = super::gpu::open_gpu(&args.gpu)?;
        let dev = doca::gpunetio::Device::open(&args.device)
            .map_err(|e| format!("open the NIC device {:?}: {e}", args.device))?;
        let ctx = Context::open(&dev).map_err(ctx_err("doca_verbs_bridge_verbs_context_create"))?;
        let pd = Pd::new(&ctx).map_err(ctx_err("doca_verbs_pd_create"))?;
        Ok(Verbs { pd, ctx, gpu })
    }

    /// The QP configuration of the samples with `handler`.
    pub fn qp_config(&self, args: &Args, handler: NicHandler) -> QpConfig {
        QpConfig {
            sq_wqes: 2048,
            rq_wqes: 2048,
            nic_handler: handler,
            send_dbr_mode_ext: args.send_dbr,
            recv_inline: args.inline,
            gid_index: args.gid_index,
        }
    }

    /// One QP.
    pub fn qp(&self, args: &Args, handler: NicHandler) -> Result<GpuQp, String> {
        GpuQp::create(&self.gpu, &self.pd, self.qp_config(args, handler))
            .map_err(ctx_err("create the QP"))
    }

    /// A main QP and its core-direct companion (the counter samples).
    pub fn qp_group(&self, args: &Args, handler: NicHandler) -> Result<GpuQpGroup, String> {
        GpuQpGroup::create(&self.gpu, &self.pd, self.qp_config(args, handler))
            .map_err(ctx_err("create the QP group"))
    }

    /// `len` bytes of GPU memory filled with `fill`, registered with `access`.
    pub fn gpu_mem(&self, len: usize, fill: u8, access: AccessFlags) -> Result<GpuMem, String> {
        let mut buf = GpuBuffer::<u8>::new(&self.gpu, page_len(len), MemType::Gpu)
            .map_err(ctx_err("doca_gpu_mem_alloc"))?;
        buf.copy_from_host(&vec![fill; buf.len()])
            .map_err(ctx_err("fill GPU memory"))?;
        let mr =
            MemoryRegion::gpu(&self.pd, &buf, access).map_err(ctx_err("register GPU memory"))?;
        Ok(GpuMem { mr, buf })
    }

    /// `len` bytes of zeroed host memory filled with `fill`, registered with `access`.
    pub fn host_mem(&self, len: usize, fill: u8, access: AccessFlags) -> Result<HostMem, String> {
        let len = page_len(len);
        let layout = Layout::from_size_align(len, super::PAGE).map_err(|e| e.to_string())?;
        // SAFETY: non-zero size.
        let p = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .ok_or("out of host memory")?;
        // SAFETY: `len` bytes just allocated.
        unsafe { std::ptr::write_bytes(p.as_ptr(), fill, len) };
        // SAFETY: the memory lives as long as the region (freed after it in HostMem's drop).
        let mr = unsafe { MemoryRegion::host(&self.pd, p.as_ptr().cast(), len, access) };
        match mr {
            Ok(mr) => Ok(HostMem {
                mr: Some(mr),
                ptr: p,
                layout,
            }),
            Err(e) => {
                // SAFETY: allocated above with this layout, never registered.
                unsafe { std::alloc::dealloc(p.as_ptr(), layout) };
                Err(format!("register host memory: {e}"))
            }
        }
    }
}

fn page_len(len: usize) -> usize {
    super::page_round(len.max(1))
}

/// Access of the samples' data buffers: local, remote write and read.
pub fn data_access() -> AccessFlags {
    AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_READ
}

/// Data access plus remote atomics (flags, counters).
pub fn atomic_access() -> AccessFlags {
    data_access() | AccessFlags::RDMA_ATOMIC
}

/// Registered GPU memory.
pub struct GpuMem {
    /// The registration (dropped first).
    pub mr: MemoryRegion,
    /// The memory.
    pub buf: GpuBuffer<u8>,
}

impl GpuMem {
    /// A copy of the first `len` bytes.
    pub fn read(&self, len: usize) -> Result<Vec<u8>, String> {
        let mut v = vec![0u8; self.buf.len()];
        self.buf
            .copy_to_host(&mut v)
            .map_err(|e| format!("read GPU memory: {e}"))?;
        v.truncate(len);
        Ok(v)
    }

    /// The 8-byte value at byte `off`.
    pub fn u64_at(&self, off: usize) -> Result<u64, String> {
        let b = self.read(off + 8)?;
        Ok(u64::from_ne_bytes(
            b[off..off + 8].try_into().expect("8 bytes"),
        ))
    }
}

/// Registered host memory (page-aligned, the samples' `calloc`).
pub struct HostMem {
    mr: Option<MemoryRegion>,
    ptr: NonNull<u8>,
    layout: Layout,
}

impl HostMem {
    /// The registration.
    pub fn mr(&self) -> &MemoryRegion {
        self.mr.as_ref().expect("registered until drop")
    }

    /// A copy of the first `len` bytes (read once the peer is done writing).
    pub fn read(&self, len: usize) -> Vec<u8> {
        let len = len.min(self.layout.size());
        (0..len)
            // SAFETY: in bounds of the allocation; volatile because the NIC writes it.
            .map(|i| unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(i)) })
            .collect()
    }

    /// The 8-byte value at byte `off` (8-aligned offsets).
    pub fn u64_at(&self, off: usize) -> u64 {
        assert!(off.is_multiple_of(8) && off + 8 <= self.layout.size());
        // SAFETY: in bounds and aligned (page-aligned base); volatile: the NIC writes it.
        unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(off).cast::<u64>()) }
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        // Deregister before freeing.
        self.mr = None;
        // SAFETY: allocated in Verbs::host_mem with this layout; the region is gone.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// The CPU proxy a QP (or group) started, logged as the samples do; keep it while the
/// kernels run.
pub fn start_proxy<'a>(
    prog: &str,
    started: Result<Option<CpuProxy<'a>>, doca::gpunetio::Error>,
) -> Result<Option<CpuProxy<'a>>, String> {
    let p = started.map_err(|e| e.to_string())?;
    if let Some(p) = &p {
        super::info(
            prog,
            format!("Thread CPU proxy progress is running... {}", p.pthread_id()),
        );
    }
    Ok(p)
}

/// Connects `qp` to the peer's and logs as the samples do.
pub fn connect(prog: &str, qp: &GpuQp, remote: &QpInfo) -> Result<(), String> {
    qp.connect(remote)
        .map_err(|e| format!("connect the QP: {e}"))?;
    super::info(prog, "QP has been successfully connected and ready to use");
    Ok(())
}

/// Connects a group (main to main, companion to companion).
pub fn connect_group(prog: &str, g: &GpuQpGroup, remote: &[QpInfo]) -> Result<(), String> {
    g.connect(&remote[0], &remote[1])
        .map_err(|e| format!("connect the QP group: {e}"))?;
    super::info(prog, "QP has been successfully connected and ready to use");
    Ok(())
}

/// Checks that every byte of `data` is `want`: the samples' "Validation error" line for
/// the first one that is not.
pub fn check_bytes(data: &[u8], buffer: usize, want: u8) -> Result<(), String> {
    match data.iter().position(|&b| b != want) {
        None => Ok(()),
        Some(pos) => Err(format!(
            "Validation error: buffer {buffer} pos {pos} has invalid data {} expected {want}",
            data[pos]
        )),
    }
}
