//! The gpu_packet_processing kernels (`kernels/gpp_*.cu`): the records they exchange with
//! the host through semaphores, the counters they publish, and typed launchers.
//!
//! Every launcher (a [`KernelScope`] method: the scope joins the kernel before what it
//! borrows can go) takes the queues' and semaphores' GPU handles (one per queue, 1 to
//! [`GPP_MAX_QUEUES`]) and an [`ExitFlag`], and returns a [`RunningKernel`] that stops and
//! joins the kernel when stopped or dropped. The record layouts are asserted on both sides
//! (`gpp_common.cuh` and the `const` checks below).

use crate::counters::CounterBlock;
use crate::exit_flag::ExitFlag;
use crate::launch::KernelError;
use crate::launch::{grid, launch_err};
use crate::scope::{KernelScope, RunningKernel};
use cudarc::driver::PushKernelArg;
use doca_gpunetio::{Gpu, GpuBuffer, GpuPod, RxqHandle, SemaphoreHandle, TxqHandle};

/// Most queues per protocol (`MAX_QUEUES`): the kernels take exactly four handles.
pub const GPP_MAX_QUEUES: usize = 4;
/// Items per semaphore (`SEMAPHORES_PER_QUEUE`).
pub const GPP_SEM_ITEMS: u32 = 1024;
/// Threads per block of the UDP and TCP receive kernels (`CUDA_THREADS`).
pub const GPP_CUDA_THREADS: u32 = 512;
/// Prebuilt response frames per HTTP page (`TX_BUF_NUM`).
pub const GPP_TX_BUF_NUM: usize = 1024;
/// Size of one prebuilt response frame slot (`TX_BUF_MAX_SZ`).
pub const GPP_TX_BUF_MAX_SZ: usize = 512;
/// Ethernet + IPv4 + TCP header bytes in front of an HTTP response payload.
pub const GPP_TCP_HDRS: usize = 54;
/// Bytes of a frame carried between a CPU TCP thread and the relay kernel.
pub const GPP_CPU_FRAME_BYTES: usize = 128;
/// Send slots of [`GPP_CPU_FRAME_BYTES`] per CPU queue in the relay's frame buffer.
pub const GPP_CPU_TX_SLOTS: usize = 1024;

/// UDP counts of one receive batch (`struct stats_udp`, 48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsUdp {
    /// DNS packets (UDP destination port 53).
    pub dns: u64,
    /// Their bytes (IP total length + 14).
    pub dns_bytes: u64,
    /// Other UDP packets.
    pub others: u64,
    /// Their bytes.
    pub others_bytes: u64,
    /// Packets in the batch.
    pub total: u64,
    /// Bytes in the batch.
    pub total_bytes: u64,
}

/// TCP counts of one receive batch (`struct stats_tcp`, 36 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsTcp {
    /// Payloads starting `HTTP/1.1`.
    pub http: u32,
    /// `HEAD /` requests.
    pub http_head: u32,
    /// `GET /` requests.
    pub http_get: u32,
    /// `POST /` requests.
    pub http_post: u32,
    /// Other packets with SYN set.
    pub tcp_syn: u32,
    /// Other packets with FIN set.
    pub tcp_fin: u32,
    /// Other packets with ACK set.
    pub tcp_ack: u32,
    /// Everything else (malformed frames included).
    pub others: u32,
    /// Packets in the batch.
    pub total: u32,
}

/// One GET handed from the TCP kernel to the HTTP kernel (`struct info_http`, 40 bytes;
/// packet fields are raw network-order bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InfoHttp {
    /// The request's source MAC.
    pub eth_src_addr_bytes: [u8; 6],
    /// The request's destination MAC.
    pub eth_dst_addr_bytes: [u8; 6],
    /// Source IPv4 address (network order in memory).
    pub ip_src_addr: u32,
    /// Destination IPv4 address.
    pub ip_dst_addr: u32,
    /// IPv4 total length.
    pub ip_total_length: u16,
    /// TCP source port.
    pub tcp_src_port: u16,
    /// TCP destination port.
    pub tcp_dst_port: u16,
    /// The TCP data-offset byte.
    pub tcp_dt_off: u8,
    /// Explicit padding (C's implicit byte).
    pub pad: u8,
    /// The request's sequence number.
    pub tcp_sent_seq: u32,
    /// The request's acknowledgement number.
    pub tcp_recv_ack: u32,
    /// [`HttpPage`] as a number.
    pub page: u32,
}

/// The page a GET asks for (`enum http_page_get`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum HttpPage {
    /// `GET /index.*`.
    Index = 0,
    /// `GET /contacts.*`.
    Contacts = 1,
    /// Anything else.
    NotFound = 2,
}

/// A frame between the relay kernel and a CPU TCP thread: `len` bytes on the wire, the
/// first `copied` (at most [`GPP_CPU_FRAME_BYTES`]) in `bytes`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuFrame {
    /// Frame length on the wire.
    pub len: u32,
    /// Bytes of it in `bytes`.
    pub copied: u32,
    /// The frame's first bytes.
    pub bytes: [u8; GPP_CPU_FRAME_BYTES],
}

impl Default for CpuFrame {
    fn default() -> Self {
        CpuFrame {
            len: 0,
            copied: 0,
            bytes: [0; GPP_CPU_FRAME_BYTES],
        }
    }
}

impl CpuFrame {
    /// A frame of `frame` (truncated to [`GPP_CPU_FRAME_BYTES`]).
    pub fn from_bytes(frame: &[u8]) -> CpuFrame {
        let mut f = CpuFrame::default();
        let n = frame.len().min(GPP_CPU_FRAME_BYTES);
        f.bytes[..n].copy_from_slice(&frame[..n]);
        f.len = frame.len() as u32;
        f.copied = n as u32;
        f
    }

    /// The bytes carried (at most `copied`, never past the array).
    pub fn data(&self) -> &[u8] {
        &self.bytes[..(self.copied as usize).min(GPP_CPU_FRAME_BYTES)]
    }
}

// Layouts of gpp_common.cuh.
const _: () = assert!(std::mem::size_of::<StatsUdp>() == 48);
const _: () = assert!(std::mem::size_of::<StatsTcp>() == 36);
const _: () = assert!(std::mem::size_of::<InfoHttp>() == 40);
const _: () = assert!(std::mem::offset_of!(InfoHttp, ip_src_addr) == 12);
const _: () = assert!(std::mem::offset_of!(InfoHttp, ip_total_length) == 20);
const _: () = assert!(std::mem::offset_of!(InfoHttp, tcp_dt_off) == 26);
const _: () = assert!(std::mem::offset_of!(InfoHttp, tcp_sent_seq) == 28);
const _: () = assert!(std::mem::offset_of!(InfoHttp, tcp_recv_ack) == 32);
const _: () = assert!(std::mem::offset_of!(InfoHttp, page) == 36);
const _: () = assert!(std::mem::size_of::<CpuFrame>() == 8 + GPP_CPU_FRAME_BYTES);

// SAFETY: plain repr(C) integers and byte arrays without implicit padding (sizes asserted
// above): every bit pattern is a valid value.
unsafe impl GpuPod for StatsUdp {}
// SAFETY: as above.
unsafe impl GpuPod for StatsTcp {}
// SAFETY: as above (the C padding byte is the explicit `pad`).
unsafe impl GpuPod for InfoHttp {}
// SAFETY: as above.
unsafe impl GpuPod for CpuFrame {}

/// What the ICMP kernel counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IcmpCounts {
    /// Echo replies sent.
    pub replies: u64,
    /// ICMP messages of other types (printed, not answered).
    pub unknown: u64,
    /// Frames too short or inconsistent to be ICMP (dropped).
    pub malformed: u64,
    /// Receive errors (the kernel stops after one).
    pub errors: u64,
}

/// Counters of the ICMP kernel.
pub struct IcmpCounters(CounterBlock);

impl IcmpCounters {
    /// Zeroed counters on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, KernelError> {
        CounterBlock::new(gpu, 4).map(IcmpCounters)
    }

    /// A snapshot.
    pub fn read(&self) -> IcmpCounts {
        IcmpCounts {
            replies: self.0.get(0),
            unknown: self.0.get(1),
            malformed: self.0.get(2),
            errors: self.0.get(3),
        }
    }
}

/// What the relay kernel counted for one CPU queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayCounts {
    /// Frames received on the CPU receive queue.
    pub received: u64,
    /// Frames dropped because the CPU thread had not freed the next item.
    pub dropped_busy: u64,
    /// Reply frames sent.
    pub sent: u64,
    /// Receive errors (the kernel stops after one).
    pub errors: u64,
}

/// Counters of the relay kernel, per queue.
pub struct RelayCounters(CounterBlock);

impl RelayCounters {
    /// Zeroed counters on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, KernelError> {
        CounterBlock::new(gpu, 4 * GPP_MAX_QUEUES).map(RelayCounters)
    }

    /// A snapshot of queue `q`'s counters.
    pub fn read(&self, q: usize) -> RelayCounts {
        let b = 4 * q.min(GPP_MAX_QUEUES - 1);
        RelayCounts {
            received: self.0.get(b),
            dropped_busy: self.0.get(b + 1),
            sent: self.0.get(b + 2),
            errors: self.0.get(b + 3),
        }
    }
}

/// Responses the HTTP kernel sent (one counter per thread, summed).
pub struct HttpCounters(CounterBlock);

impl HttpCounters {
    /// Zeroed counters on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self, KernelError> {
        CounterBlock::new(gpu, 32 * GPP_MAX_QUEUES).map(HttpCounters)
    }

    /// Responses sent so far.
    pub fn responses(&self) -> u64 {
        (0..32 * GPP_MAX_QUEUES).map(|i| self.0.get(i)).sum()
    }
}

/// The prebuilt response frames of one HTTP page: [`GPP_TX_BUF_NUM`] slots of
/// [`GPP_TX_BUF_MAX_SZ`] bytes in GPU memory registered for the send queues' device
/// (`mkey_be`: its memory key, big-endian), each frame `GPP_TCP_HDRS + payload_len` bytes.
#[derive(Clone, Copy)]
pub struct PageFrames<'a> {
    /// The slots.
    pub frames: &'a GpuBuffer<u8>,
    /// Memory key of `frames`, big-endian.
    pub mkey_be: u32,
    /// HTTP response bytes after the headers.
    pub payload_len: u32,
}

fn check_queues(what: &str, n: usize, others: &[usize]) -> Result<u32, KernelError> {
    if n == 0 || n > GPP_MAX_QUEUES {
        return Err(KernelError::Invalid(format!(
            "{what}: {n} queues; 1 to {GPP_MAX_QUEUES} are supported"
        )));
    }
    if others.iter().any(|&o| o != n) {
        return Err(KernelError::Invalid(format!(
            "{what}: every queue needs its semaphore (got {n} queues and {others:?})"
        )));
    }
    Ok(n as u32)
}

/// Four pointer arguments: the handles' raw values, 0 beyond `n`.
fn four(ptrs: impl Iterator<Item = u64>) -> [u64; GPP_MAX_QUEUES] {
    let mut a = [0u64; GPP_MAX_QUEUES];
    for (slot, p) in a.iter_mut().zip(ptrs) {
        *slot = p;
    }
    a
}

fn rxq_ptrs(h: &[RxqHandle<'_>]) -> [u64; GPP_MAX_QUEUES] {
    four(h.iter().map(|h| h.as_raw() as u64))
}

fn txq_ptrs(h: &[TxqHandle<'_>]) -> [u64; GPP_MAX_QUEUES] {
    four(h.iter().map(|h| h.as_raw() as u64))
}

fn sem_ptrs(h: &[SemaphoreHandle<'_>]) -> [u64; GPP_MAX_QUEUES] {
    four(h.iter().map(|h| h.as_raw() as u64))
}

impl<'scope> KernelScope<'scope, '_> {
    /// Starts the UDP kernel (`q` blocks of [`GPP_CUDA_THREADS`]): block `b` receives on
    /// `rxqs[b]` and posts [`StatsUdp`] batches to `sems[b]` (CPU_GPU, `sem_items` items).
    pub fn launch_gpp_receive_udp(
        &self,
        rxqs: &[RxqHandle<'scope>],
        sems: &[SemaphoreHandle<'scope>],
        sem_items: u32,
        exit: &'scope ExitFlag,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let q = check_queues("kernel_receive_udp", rxqs.len(), &[sems.len()])?;
        let name = "doca_rs_gpp_receive_udp";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let (r, s, flag) = (rxq_ptrs(rxqs), sem_ptrs(sems), exit.device_ptr());
        let mut b = stream.launch_builder(&f);
        b.arg(&r[0]).arg(&r[1]).arg(&r[2]).arg(&r[3]);
        b.arg(&s[0]).arg(&s[1]).arg(&s[2]).arg(&s[3]);
        b.arg(&sem_items).arg(&flag);
        let cfg = grid(q, GPP_CUDA_THREADS);
        // SAFETY: arguments match (4 rxq *, 4 semaphore *, u32, u32 *); the handles and
        // the flag are borrowed for 'scope and the scope joins the kernel.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }

    /// Starts the TCP kernel (`q` blocks of [`GPP_CUDA_THREADS`]): block `b` receives on
    /// `rxqs[b]`, posts [`StatsTcp`] batches to `stats[b]`, and with `http` (HTTP-server
    /// mode) hands each GET to `http[b]` as an [`InfoHttp`] (GPU memory).
    pub fn launch_gpp_receive_tcp(
        &self,
        rxqs: &[RxqHandle<'scope>],
        stats: &[SemaphoreHandle<'scope>],
        http: Option<&[SemaphoreHandle<'scope>]>,
        sem_items: u32,
        exit: &'scope ExitFlag,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let mut others = vec![stats.len()];
        others.extend(http.map(<[_]>::len));
        let q = check_queues("kernel_receive_tcp", rxqs.len(), &others)?;
        let name = "doca_rs_gpp_receive_tcp";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let (r, s, h) = (
            rxq_ptrs(rxqs),
            sem_ptrs(stats),
            http.map_or([0; GPP_MAX_QUEUES], sem_ptrs),
        );
        let (server, flag) = (u32::from(http.is_some()), exit.device_ptr());
        let mut b = stream.launch_builder(&f);
        b.arg(&r[0]).arg(&r[1]).arg(&r[2]).arg(&r[3]);
        b.arg(&s[0]).arg(&s[1]).arg(&s[2]).arg(&s[3]);
        b.arg(&h[0]).arg(&h[1]).arg(&h[2]).arg(&h[3]);
        b.arg(&sem_items).arg(&server).arg(&flag);
        let cfg = grid(q, GPP_CUDA_THREADS);
        // SAFETY: arguments match (4 rxq *, 8 semaphore *, u32, u32, u32 *); everything
        // is borrowed for 'scope and the scope joins the kernel.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }

    /// Starts the ICMP kernel (one warp): echo requests on `rxq` are answered in place
    /// through `txq` (which needs L3 checksum offload), with NOTIFY completions.
    pub fn launch_gpp_receive_icmp(
        &self,
        rxq: RxqHandle<'scope>,
        txq: TxqHandle<'scope>,
        exit: &'scope ExitFlag,
        counters: &'scope IcmpCounters,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let name = "doca_rs_gpp_receive_icmp";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let (flag, c) = (exit.device_ptr(), counters.0.device_ptr());
        let mut b = stream.launch_builder(&f);
        b.arg(&rxq).arg(&txq).arg(&flag).arg(&c);
        let cfg = grid(1, 32);
        // SAFETY: arguments match (rxq *, txq *, u32 *, counters *); borrowed for 'scope.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }

    /// Starts the HTTP server kernel (one block, a warp per queue): warp `w` answers the
    /// GETs posted in `sems[w]` from the prebuilt `pages` (index, contacts, not found)
    /// through `txqs[w]`.
    pub fn launch_gpp_http_server(
        &self,
        txqs: &[TxqHandle<'scope>],
        sems: &[SemaphoreHandle<'scope>],
        sem_items: u32,
        pages: [PageFrames<'scope>; 3],
        exit: &'scope ExitFlag,
        counters: &'scope HttpCounters,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let q = check_queues("kernel_http_server", txqs.len(), &[sems.len()])?;
        for p in &pages {
            if p.frames.len() < GPP_TX_BUF_NUM * GPP_TX_BUF_MAX_SZ
                || GPP_TCP_HDRS + p.payload_len as usize > GPP_TX_BUF_MAX_SZ
            {
                return Err(KernelError::Invalid(format!(
                    "kernel_http_server: a page buffer needs {GPP_TX_BUF_NUM} x {GPP_TX_BUF_MAX_SZ} bytes (has {}) and frames of at most {GPP_TX_BUF_MAX_SZ} bytes (payload {})",
                    p.frames.len(),
                    p.payload_len
                )));
            }
        }
        let name = "doca_rs_gpp_http_server";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let (t, s) = (txq_ptrs(txqs), sem_ptrs(sems));
        let bufs = pages.map(|p| p.frames.device_ptr());
        let (flag, c) = (exit.device_ptr(), counters.0.device_ptr());
        let mut b = stream.launch_builder(&f);
        b.arg(&t[0]).arg(&t[1]).arg(&t[2]).arg(&t[3]);
        b.arg(&s[0]).arg(&s[1]).arg(&s[2]).arg(&s[3]);
        b.arg(&sem_items);
        for (i, p) in pages.iter().enumerate() {
            b.arg(&bufs[i]).arg(&p.mkey_be).arg(&p.payload_len);
        }
        b.arg(&flag).arg(&c);
        let cfg = grid(1, 32 * q);
        // SAFETY: arguments match (4 txq *, 4 semaphore *, u32, 3 x (u8 *, u32, u32),
        // u32 *, u64 *); the page buffers were checked to hold every slot; everything is
        // borrowed for 'scope and the scope joins the kernel.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }

    /// Starts the relay kernel that plays the CPU TCP queues (`q` blocks of one warp):
    /// frames received on `rxqs[b]` are posted to `rx_sems[b]` as [`CpuFrame`]s, and
    /// frames the CPU posts to `tx_sems[b]` are sent through `txqs[b]` from slot range `b`
    /// of `tx_frames` ([`GPP_CPU_TX_SLOTS`] x [`GPP_CPU_FRAME_BYTES`] per queue, GPU
    /// memory registered for the device, `mkey_be` its big-endian key).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_gpp_tcp_cpu_relay(
        &self,
        rxqs: &[RxqHandle<'scope>],
        rx_sems: &[SemaphoreHandle<'scope>],
        txqs: &[TxqHandle<'scope>],
        tx_sems: &[SemaphoreHandle<'scope>],
        sem_items: u32,
        tx_frames: &'scope GpuBuffer<u8>,
        mkey_be: u32,
        exit: &'scope ExitFlag,
        counters: &'scope RelayCounters,
    ) -> Result<RunningKernel<'scope>, KernelError> {
        let q = check_queues(
            "kernel_tcp_cpu_relay",
            rxqs.len(),
            &[rx_sems.len(), txqs.len(), tx_sems.len()],
        )?;
        let need = q as usize * GPP_CPU_TX_SLOTS * GPP_CPU_FRAME_BYTES;
        if tx_frames.len() < need {
            return Err(KernelError::Invalid(format!(
                "kernel_tcp_cpu_relay: the frame buffer has {} bytes, {need} needed",
                tx_frames.len()
            )));
        }
        let name = "doca_rs_gpp_tcp_cpu_relay";
        let f = self.kernels().function(name)?;
        let stream = self.kernels().sample_stream()?;
        let (r, rs, t, ts) = (
            rxq_ptrs(rxqs),
            sem_ptrs(rx_sems),
            txq_ptrs(txqs),
            sem_ptrs(tx_sems),
        );
        let (buf, flag, c) = (
            tx_frames.device_ptr(),
            exit.device_ptr(),
            counters.0.device_ptr(),
        );
        let mut b = stream.launch_builder(&f);
        for a in [&r, &rs, &t, &ts] {
            b.arg(&a[0]).arg(&a[1]).arg(&a[2]).arg(&a[3]);
        }
        b.arg(&sem_items).arg(&buf).arg(&mkey_be).arg(&flag).arg(&c);
        let cfg = grid(q, 32);
        // SAFETY: arguments match (4 rxq *, 4 sem *, 4 txq *, 4 sem *, u32, u8 *, u32,
        // u32 *, counters *); the frame buffer holds every queue's slots (checked);
        // everything is borrowed for 'scope and the scope joins the kernel.
        unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
        self.track(stream, exit, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_counts_are_checked() {
        assert!(check_queues("t", 0, &[]).is_err());
        assert!(check_queues("t", 5, &[5]).is_err());
        assert!(check_queues("t", 2, &[1]).is_err());
        assert_eq!(check_queues("t", 4, &[4, 4]).unwrap(), 4);
    }

    #[test]
    fn four_pads_with_null() {
        assert_eq!(four([7u64, 9].into_iter()), [7, 9, 0, 0]);
        assert_eq!(four([1u64, 2, 3, 4, 5].into_iter()), [1, 2, 3, 4]);
    }

    #[test]
    fn cpu_frames_truncate_and_keep_the_length() {
        let big = vec![0xabu8; 300];
        let f = CpuFrame::from_bytes(&big);
        assert_eq!(f.len, 300);
        assert_eq!(f.copied as usize, GPP_CPU_FRAME_BYTES);
        assert_eq!(f.data().len(), GPP_CPU_FRAME_BYTES);
        let f = CpuFrame::from_bytes(&[1, 2, 3]);
        assert_eq!((f.len, f.copied, f.data()), (3, 3, &[1u8, 2, 3][..]));
        // A corrupt `copied` never reads past the array.
        let f = CpuFrame {
            copied: u32::MAX,
            ..Default::default()
        };
        assert_eq!(f.data().len(), GPP_CPU_FRAME_BYTES);
    }
}
