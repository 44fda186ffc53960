//! Every queue, semaphore and buffer of the application (facts §5), created in the
//! original's order and torn down by their owners' drops.

use crate::flow_setup::{
    QUEUE_ID_HTTP_0, QUEUE_ID_ICMP_0, QUEUE_ID_TCP_0, QUEUE_ID_TCP_CPU_0, QUEUE_ID_UDP_0,
};
use crate::http_pages;
use crate::log::{self, doca_log};
use crate::packets;
use cuda_kernels::{
    CpuFrame, InfoHttp, StatsTcp, StatsUdp, GPP_CPU_FRAME_BYTES, GPP_CPU_TX_SLOTS, GPP_SEM_ITEMS,
    GPP_TX_BUF_MAX_SZ, GPP_TX_BUF_NUM,
};
use doca::gpunetio::{
    AccessFlags, Device, EthRxq, EthTxq, Gpu, GpuBuffer, MemType, Mmap, ProgressEngine, RxqType,
    Semaphore, TxErrorEvent, TxNotifyEvent, GPU_PAGE_SIZE,
};

/// UDP and TCP receive rings: packets and slot size (`MAX_PKT_NUM`, `MAX_PKT_SIZE`).
pub const MAX_PKT_NUM: u32 = 65536;
/// Largest UDP/TCP frame.
pub const MAX_PKT_SIZE: u32 = 8192;
/// ICMP ring (`MAX_PKT_NUM_ICMP`, `MAX_PKT_SIZE_ICMP`).
pub const MAX_PKT_NUM_ICMP: u32 = 16384;
/// Largest ICMP frame.
pub const MAX_PKT_SIZE_ICMP: u32 = 512;
/// GPU send queue size (`MAX_SQ_DESCR_NUM`).
pub const MAX_SQ_DESCR_NUM: u32 = 4096;
/// CPU TCP queue depth (`TCP_CPU_RSS_QUEUE_DEPTH`).
pub const TCP_CPU_RSS_QUEUE_DEPTH: u32 = 2048;

/// One HTTP page's prebuilt response frames.
pub struct PageBuffer {
    /// 1024 slots of 512 bytes in GPU memory.
    pub frames: GpuBuffer<u8>,
    /// Their registration (kept alive while the send queues use the frames).
    #[allow(dead_code)]
    pub mmap: Mmap,
    /// Memory key, big-endian.
    pub mkey_be: u32,
    /// HTTP response bytes per frame.
    pub payload_len: u32,
}

/// The CPU TCP queue pair `i` (`-s`), played by the relay kernel.
pub struct CpuQueue {
    /// Receives SYN/FIN/RST (queue id 12 + i).
    pub rxq: EthRxq,
    /// Sends the replies (queue id 12 + i).
    pub txq: EthTxq,
    /// Frames from the relay to the CPU thread.
    pub rx: Semaphore<CpuFrame>,
    /// Replies from the CPU thread to the relay.
    pub tx: Semaphore<CpuFrame>,
}

/// HTTP-server mode resources (`-s`).
pub struct HttpServer {
    /// GET hand-off from the TCP kernel (GPU memory).
    pub sems: Vec<Semaphore<InfoHttp>>,
    /// Response send queues (ids 8 + i).
    pub txqs: Vec<EthTxq>,
    /// Index, contacts and not-found responses.
    pub pages: Vec<PageBuffer>,
    /// CPU TCP queue pairs.
    pub cpu: Vec<CpuQueue>,
    /// Frame slots the relay sends replies from.
    pub cpu_tx_frames: GpuBuffer<u8>,
    /// Their registration (kept alive while the relay sends from them).
    pub cpu_tx_mmap: Mmap,
    /// Its memory key, big-endian.
    pub cpu_tx_mkey_be: u32,
}

/// Everything the kernels and threads use.
pub struct Resources {
    /// UDP receive queues (ids 0..q).
    pub udp_rxqs: Vec<EthRxq>,
    /// UDP statistics semaphores.
    pub udp_sems: Vec<Semaphore<StatsUdp>>,
    /// GPU TCP receive queues (ids 4..4+q).
    pub tcp_rxqs: Vec<EthRxq>,
    /// TCP statistics semaphores.
    pub tcp_sems: Vec<Semaphore<StatsTcp>>,
    /// `-s` only.
    pub http: Option<HttpServer>,
    /// ICMP receive queue (id 16).
    pub icmp_rxq: EthRxq,
    /// ICMP send queue (id 16).
    pub icmp_txq: EthTxq,
}

fn e<T>(what: &str) -> impl FnOnce(T) -> String + '_
where
    T: std::fmt::Display,
{
    move |err| format!("{what}: {err}")
}

fn gpu_rxq(nic: &Device, gpu: &Gpu, pkts: u32, size: u32, id: u16) -> Result<EthRxq, String> {
    let q = EthRxq::builder(nic)
        .max_burst_size(pkts)
        .max_packet_size(size)
        .kind(RxqType::Cyclic)
        .gpu_packet_buffer(gpu)
        .start()
        .map_err(e("doca_eth_rxq_create"))?;
    let (mmap, _, len) = q.packet_buffer();
    if let Ok((addr, _)) = mmap.range() {
        doca_log!(
            Info,
            log::MAIN,
            "Mapping receive queue buffer ({addr:p} size {len}B)"
        );
    }
    q.apply_queue_id(id)
        .map_err(e("doca_eth_rxq_apply_queue_id"))?;
    Ok(q)
}

fn stats_sem<T: doca::gpunetio::GpuPod>(
    gpu: &Gpu,
    memory: MemType,
) -> Result<Semaphore<T>, String> {
    Semaphore::<T>::with_info(gpu)
        .memory(memory)
        .items(GPP_SEM_ITEMS)
        .custom_info_memory(memory)
        .start()
        .map_err(e("doca_gpu_semaphore_start"))
}

/// A send queue whose errors stop the application (`Error in send queue ...`).
fn gpu_txq(
    nic: &Device,
    gpu: &Gpu,
    pe: &ProgressEngine,
    size: u32,
    l4: bool,
    id: u16,
    notify: impl FnMut(TxNotifyEvent) + Send + 'static,
) -> Result<EthTxq, String> {
    // The event user data is the queue index within its kind (ids are 4-aligned bases).
    let user = u64::from(id % 4);
    let q = EthTxq::builder(nic)
        .max_burst_size(size)
        .l3_checksum_offload(true)
        .l4_checksum_offload(l4)
        .datapath_gpu(gpu)
        .events(
            pe,
            move |ev: TxErrorEvent| {
                doca_log!(
                    Info,
                    log::MAIN,
                    "Error in send queue {user}, packet {}. Gracefully killing the app",
                    ev.position
                );
                crate::common::signal::request_stop();
            },
            notify,
        )
        .start()
        .map_err(e("doca_eth_txq_create"))?;
    q.apply_queue_id(id)
        .map_err(e("doca_eth_txq_apply_queue_id"))?;
    Ok(q)
}

/// GPU memory for `bytes`, registered for `nic`; (buffer, map, big-endian key).
fn tx_memory(gpu: &Gpu, nic: &Device, bytes: usize) -> Result<(GpuBuffer<u8>, Mmap, u32), String> {
    let len = bytes.div_ceil(GPU_PAGE_SIZE) * GPU_PAGE_SIZE;
    let buf = GpuBuffer::<u8>::with_alignment(gpu, len, GPU_PAGE_SIZE, MemType::Gpu)
        .map_err(e("doca_gpu_mem_alloc"))?;
    let mmap = Mmap::from_gpu_buffer(&buf, &[nic], AccessFlags::LOCAL_READ_WRITE)
        .map_err(e("doca_mmap_start"))?;
    let mkey = mmap.mkey(nic).map_err(e("doca_mmap_get_mkey"))?;
    Ok((buf, mmap, mkey.to_be()))
}

fn page_buffer(
    gpu: &Gpu,
    nic: &Device,
    page: cuda_kernels::HttpPage,
) -> Result<PageBuffer, String> {
    let payload = http_pages::response(page);
    let frame = packets::http_response_frame(&payload);
    let (mut frames, mmap, mkey_be) = tx_memory(gpu, nic, GPP_TX_BUF_NUM * GPP_TX_BUF_MAX_SZ)?;
    let mut host = vec![0u8; frames.len()];
    for slot in host
        .chunks_exact_mut(GPP_TX_BUF_MAX_SZ)
        .take(GPP_TX_BUF_NUM)
    {
        slot[..frame.len()].copy_from_slice(&frame);
    }
    frames
        .copy_from_host(&host)
        .map_err(e("copying the HTTP responses to the GPU"))?;
    if let Ok((addr, len)) = mmap.range() {
        doca_log!(
            Info,
            log::TXBUF,
            "Mapping send queue buffer ({addr:p} size {len}B)"
        );
    }
    Ok(PageBuffer {
        frames,
        mmap,
        mkey_be,
        payload_len: payload.len() as u32,
    })
}

/// Creates every queue for `q` queues per protocol on `nic`, data path on `gpu`; send
/// queue events go to `pe`. `icmp_notify` gets the ICMP send completions.
pub fn create(
    nic: &Device,
    gpu: &Gpu,
    pe: &ProgressEngine,
    q: u8,
    http_server: bool,
    icmp_notify: impl FnMut(TxNotifyEvent) + Send + 'static,
) -> Result<Resources, String> {
    let q16 = u16::from(q);
    let mut udp_rxqs = Vec::new();
    let mut udp_sems = Vec::new();
    for i in 0..q16 {
        doca_log!(Info, log::UDP, "Creating UDP Eth Rxq {i}");
        udp_rxqs.push(gpu_rxq(
            nic,
            gpu,
            MAX_PKT_NUM,
            MAX_PKT_SIZE,
            QUEUE_ID_UDP_0 + i,
        )?);
        udp_sems.push(stats_sem::<StatsUdp>(gpu, MemType::CpuGpu)?);
    }
    let mut tcp_rxqs = Vec::new();
    let mut tcp_sems = Vec::new();
    let mut http_sems = Vec::new();
    let mut http_txqs = Vec::new();
    for i in 0..q16 {
        doca_log!(Info, log::TCP, "Creating TCP Eth Rxq {i}");
        tcp_rxqs.push(gpu_rxq(
            nic,
            gpu,
            MAX_PKT_NUM,
            MAX_PKT_SIZE,
            QUEUE_ID_TCP_0 + i,
        )?);
        tcp_sems.push(stats_sem::<StatsTcp>(gpu, MemType::CpuGpu)?);
        if http_server {
            http_sems.push(stats_sem::<InfoHttp>(gpu, MemType::Gpu)?);
            http_txqs.push(gpu_txq(
                nic,
                gpu,
                pe,
                MAX_SQ_DESCR_NUM,
                true,
                QUEUE_ID_HTTP_0 + i,
                |_| {},
            )?);
        }
    }
    let http = if http_server {
        let pages = http_pages::PAGES
            .iter()
            .map(|p| page_buffer(gpu, nic, *p))
            .collect::<Result<Vec<_>, _>>()?;
        let mut cpu = Vec::new();
        for i in 0..q16 {
            let txq = gpu_txq(
                nic,
                gpu,
                pe,
                TCP_CPU_RSS_QUEUE_DEPTH,
                true,
                QUEUE_ID_TCP_CPU_0 + i,
                |_| {},
            )?;
            let rxq = gpu_rxq(
                nic,
                gpu,
                TCP_CPU_RSS_QUEUE_DEPTH,
                MAX_PKT_SIZE,
                QUEUE_ID_TCP_CPU_0 + i,
            )?;
            cpu.push(CpuQueue {
                rxq,
                txq,
                rx: stats_sem::<CpuFrame>(gpu, MemType::CpuGpu)?,
                tx: stats_sem::<CpuFrame>(gpu, MemType::CpuGpu)?,
            });
        }
        let (cpu_tx_frames, cpu_tx_mmap, cpu_tx_mkey_be) = tx_memory(
            gpu,
            nic,
            usize::from(q) * GPP_CPU_TX_SLOTS * GPP_CPU_FRAME_BYTES,
        )?;
        Some(HttpServer {
            sems: http_sems,
            txqs: http_txqs,
            pages,
            cpu,
            cpu_tx_frames,
            cpu_tx_mmap,
            cpu_tx_mkey_be,
        })
    } else {
        None
    };
    doca_log!(Info, log::UDP, "Creating ICMP Eth Rxq 0");
    let icmp_rxq = gpu_rxq(
        nic,
        gpu,
        MAX_PKT_NUM_ICMP,
        MAX_PKT_SIZE_ICMP,
        QUEUE_ID_ICMP_0,
    )?;
    let icmp_txq = gpu_txq(
        nic,
        gpu,
        pe,
        MAX_SQ_DESCR_NUM,
        false,
        QUEUE_ID_ICMP_0,
        icmp_notify,
    )?;
    Ok(Resources {
        udp_rxqs,
        udp_sems,
        tcp_rxqs,
        tcp_sems,
        http,
        icmp_rxq,
        icmp_txq,
    })
}
