//! DOCA Flow: the pipes that steer IPv4 traffic to the queues (facts §6). Creation order
//! UDP, [CPU TCP], GPU TCP, ICMP, ROOT; every BASIC pipe counts per entry and drops what
//! misses its entries.

use crate::log::{self, doca_log};
use doca::gpunetio::flow::{Forward, Match};
use doca::gpunetio::{Entry, FlowPort, Pipe, RssFlags, TcpFlags};

/// First queue id of each kind (the RSS `queues_array` values).
pub const QUEUE_ID_UDP_0: u16 = 0;
/// GPU TCP queues.
pub const QUEUE_ID_TCP_0: u16 = 4;
/// HTTP send queues.
pub const QUEUE_ID_HTTP_0: u16 = 8;
/// CPU TCP queues.
pub const QUEUE_ID_TCP_CPU_0: u16 = 12;
/// The ICMP queue.
pub const QUEUE_ID_ICMP_0: u16 = 16;

/// Root entry priorities: lower wins.
const PRIORITY_UDP: u32 = 0;
const PRIORITY_HIGH: u32 = 1;
const PRIORITY_LOW: u32 = 3;

/// The pipes and the entries that must live as long as they do (held until teardown;
/// some are never read again).
#[allow(dead_code)]
pub struct Pipes {
    /// `GPU_RXQ_UDP_PIPE`.
    pub udp: Pipe,
    /// `CPU_RXQ_TCP_PIPE` (`-s`).
    pub cpu_tcp: Option<Pipe>,
    /// `GPU_RXQ_TCP_PIPE`: with `-s`, one entry per session, added at run time.
    pub gpu_tcp: Pipe,
    /// `GPU_RXQ_ICMP_PIPE`.
    pub icmp: Pipe,
    /// `ROOT_PIPE`.
    pub root: Pipe,
    /// The fixed entries (pipes' own and root's).
    pub entries: Vec<Entry>,
}

fn ids(base: u16, q: u8) -> Vec<u16> {
    (0..u16::from(q)).map(|i| base + i).collect()
}

fn created(name: &str) {
    doca_log!(Dbg, log::FLOW, "Created Pipe {name}");
}

/// Creates every pipe and entry for `q` queues, with the CPU TCP pipe in HTTP-server mode.
pub fn create(port: &FlowPort, q: u8, http_server: bool) -> Result<Pipes, String> {
    let err = |what: &str| {
        let what = what.to_string();
        move |e: doca::gpunetio::Error| format!("{what}: {e}")
    };
    let mut entries = Vec::new();

    let udp = Pipe::basic(port, "GPU_RXQ_UDP_PIPE")
        .match_udp_ipv4()
        .rss_to(&ids(QUEUE_ID_UDP_0, q), RssFlags::IPV4 | RssFlags::UDP)
        .miss_drop()
        .counter()
        .build()
        .map_err(err("GPU_RXQ_UDP_PIPE"))?;
    entries.push(udp.add_entry().map_err(err("GPU_RXQ_UDP_PIPE entry"))?);
    port.entries_process()
        .map_err(err("GPU_RXQ_UDP_PIPE entries"))?;
    created("GPU_RXQ_UDP_PIPE");

    let cpu_tcp = if http_server {
        let p = Pipe::basic(port, "CPU_RXQ_TCP_PIPE")
            .match_tcp_ipv4()
            .rss_to(&ids(QUEUE_ID_TCP_CPU_0, q), RssFlags::IPV4 | RssFlags::TCP)
            .miss_drop()
            .counter()
            .build()
            .map_err(err("CPU_RXQ_TCP_PIPE"))?;
        entries.push(p.add_entry().map_err(err("CPU_RXQ_TCP_PIPE entry"))?);
        port.entries_process()
            .map_err(err("CPU_RXQ_TCP_PIPE entries"))?;
        created("CPU_RXQ_TCP_PIPE");
        Some(p)
    } else {
        None
    };

    // IPv4/TCP; with -s the addresses and ports are per entry (all ones: changeable).
    let mut tcp_match = Match::new().l3_type_ipv4().ipv4_next_proto(6);
    if http_server {
        tcp_match = tcp_match
            .ipv4_src(u32::MAX)
            .ipv4_dst(u32::MAX)
            .l4_type_tcp()
            .tcp_ports(u16::MAX, u16::MAX);
    }
    let gpu_tcp = Pipe::basic(port, "GPU_RXQ_TCP_PIPE")
        .matching(tcp_match)
        .rss_to(&ids(QUEUE_ID_TCP_0, q), RssFlags::IPV4 | RssFlags::TCP)
        .miss_drop()
        .counter()
        .build()
        .map_err(err("GPU_RXQ_TCP_PIPE"))?;
    if !http_server {
        // The catch-all entry: every IPv4/TCP packet to the GPU.
        entries.push(gpu_tcp.add_entry().map_err(err("GPU_RXQ_TCP_PIPE entry"))?);
        port.entries_process()
            .map_err(err("GPU_RXQ_TCP_PIPE entries"))?;
    }
    created("GPU_RXQ_TCP_PIPE");

    let icmp = Pipe::basic(port, "GPU_RXQ_ICMP_PIPE")
        .match_icmp_ipv4()
        .rss_to(&[QUEUE_ID_ICMP_0], RssFlags::IPV4)
        .miss_drop()
        .counter()
        .build()
        .map_err(err("GPU_RXQ_ICMP_PIPE"))?;
    entries.push(icmp.add_entry().map_err(err("GPU_RXQ_ICMP_PIPE entry"))?);
    port.entries_process()
        .map_err(err("GPU_RXQ_ICMP_PIPE entries"))?;
    created("GPU_RXQ_ICMP_PIPE");

    let root = Pipe::control(port, "ROOT_PIPE", true).map_err(err("ROOT_PIPE"))?;
    let by_proto = |proto: u8| {
        Match::new()
            .eth_type(0x0800)
            .l3_type_ipv4()
            .ipv4_next_proto(proto)
    };
    entries.push(
        root.add_control_entry(PRIORITY_UDP, &by_proto(17), None, &udp)
            .map_err(err("ROOT_PIPE UDP entry"))?,
    );
    entries.push(
        root.add_control_entry(PRIORITY_LOW, &by_proto(1), None, &icmp)
            .map_err(err("ROOT_PIPE ICMP entry"))?,
    );
    entries.push(
        root.add_control_entry(PRIORITY_LOW, &by_proto(6), None, &gpu_tcp)
            .map_err(err("ROOT_PIPE TCP entry"))?,
    );
    if let Some(cpu) = &cpu_tcp {
        for flag in [TcpFlags::SYN, TcpFlags::RST, TcpFlags::FIN] {
            let m = by_proto(6).l4_type_tcp().tcp_flag_bits(flag);
            let mask = Match::new()
                .eth_type(0xffff)
                .ipv4_next_proto(0xff)
                .tcp_flag_bits(flag);
            entries.push(
                root.add_control_entry(PRIORITY_HIGH, &m, Some(&mask), Forward::from(cpu))
                    .map_err(err("ROOT_PIPE TCP flag entry"))?,
            );
        }
    }
    port.entries_process().map_err(err("ROOT_PIPE entries"))?;
    created("ROOT_PIPE");
    Ok(Pipes {
        udp,
        cpu_tcp,
        gpu_tcp,
        icmp,
        root,
        entries,
    })
}
