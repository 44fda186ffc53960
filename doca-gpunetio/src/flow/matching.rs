//! Typed construction of DOCA Flow's match and forward structs (`doca_flow_match`,
//! `doca_flow_fwd`), so callers never touch their unions.

use super::flags::{RssFlags, TcpFlags};
use super::pipe_handle::Pipe;
use doca_sys as sys;

const ETHER_TYPE_IPV4: u16 = 0x0800;
const PROTO_ICMP: u8 = 1;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

/// What a pipe or entry matches on (`struct doca_flow_match`), built field by field.
///
/// Two styles exist, as in DOCA: *parser metadata* (`meta_*`: what the parser found in the
/// outer headers; used by the samples' RSS pipes) and *header fields* (`ipv4`, `ip_proto`,
/// `tcp_flags`, ports; used by their control-pipe entries). Multi-byte values are given in
/// host order and stored big-endian.
#[derive(Clone, Copy, Default)]
pub struct Match {
    raw: sys::doca_flow_match,
}

impl Match {
    /// Matches everything (all fields zero).
    pub fn new() -> Self {
        Self::default()
    }

    /// Parser metadata: outer L3 is IPv4.
    pub fn meta_ipv4(mut self) -> Self {
        self.raw.parser_meta.outer_l3_type = sys::doca_flow_l3_meta::DOCA_FLOW_L3_META_IPV4;
        self
    }

    /// Parser metadata: outer L4 is UDP.
    pub fn meta_udp(mut self) -> Self {
        self.raw.parser_meta.outer_l4_type = sys::doca_flow_l4_meta::DOCA_FLOW_L4_META_UDP;
        self
    }

    /// Parser metadata: outer L4 is TCP.
    pub fn meta_tcp(mut self) -> Self {
        self.raw.parser_meta.outer_l4_type = sys::doca_flow_l4_meta::DOCA_FLOW_L4_META_TCP;
        self
    }

    /// Parser metadata: outer L4 is ICMP.
    pub fn meta_icmp(mut self) -> Self {
        self.raw.parser_meta.outer_l4_type = sys::doca_flow_l4_meta::DOCA_FLOW_L4_META_ICMP;
        self
    }

    /// Header fields: Ethernet type IPv4 and an IPv4 header.
    pub fn ipv4(mut self) -> Self {
        self.raw.outer.eth.type_ = ETHER_TYPE_IPV4.to_be();
        self.raw.outer.l3_type = sys::doca_flow_l3_type::DOCA_FLOW_L3_TYPE_IP4;
        self
    }

    /// Header fields: IPv4 next protocol `proto` (also selects IPv4). For UDP, TCP and
    /// ICMP the L4 header type is set too.
    pub fn ip_proto(mut self, proto: u8) -> Self {
        self = self.ipv4();
        // Writing a union field is safe; the L3 type above says which member is live.
        self.raw.outer.__bindgen_anon_1.ip4.next_proto = proto;
        let l4 = match proto {
            PROTO_UDP => sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_UDP,
            PROTO_TCP => sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_TCP,
            PROTO_ICMP => sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_ICMP,
            _ => return self,
        };
        self.raw.outer.l4_type_ext = l4;
        self
    }

    /// Header fields: IPv4/UDP.
    pub fn udp(self) -> Self {
        self.ip_proto(PROTO_UDP)
    }

    /// Header fields: IPv4/TCP.
    pub fn tcp(self) -> Self {
        self.ip_proto(PROTO_TCP)
    }

    /// Header fields: IPv4/ICMP.
    pub fn icmp(self) -> Self {
        self.ip_proto(PROTO_ICMP)
    }

    /// Header fields: IPv4/TCP with these TCP flags set (in a mask: the flags to look at).
    pub fn tcp_flags(self, flags: TcpFlags) -> Self {
        let mut m = self.tcp();
        m.raw.outer.__bindgen_anon_2.tcp.flags = flags.bits();
        m
    }

    /// Header fields: IPv4/UDP to destination port `port`.
    pub fn udp_dst_port(self, port: u16) -> Self {
        let mut m = self.udp();
        m.raw.outer.__bindgen_anon_2.udp.l4_port.dst_port = port.to_be();
        m
    }

    /// Header fields: IPv4/TCP to destination port `port`.
    pub fn tcp_dst_port(self, port: u16) -> Self {
        let mut m = self.tcp();
        m.raw.outer.__bindgen_anon_2.tcp.l4_port.dst_port = port.to_be();
        m
    }

    /// Header field only: the Ethernet type (host order). In a mask: the bits compared.
    pub fn eth_type(mut self, ether_type: u16) -> Self {
        self.raw.outer.eth.type_ = ether_type.to_be();
        self
    }

    /// Header layout only: the outer L3 header is IPv4 (`outer.l3_type`), without matching
    /// the Ethernet type or the protocol. Says which union view holds the IPv4 fields.
    pub fn l3_type_ipv4(mut self) -> Self {
        self.raw.outer.l3_type = sys::doca_flow_l3_type::DOCA_FLOW_L3_TYPE_IP4;
        self
    }

    /// Header layout only: the outer L4 header is TCP (`outer.l4_type_ext`). Says which
    /// union view holds the TCP fields.
    pub fn l4_type_tcp(mut self) -> Self {
        self.raw.outer.l4_type_ext = sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_TCP;
        self
    }

    /// Header field only: IPv4 next protocol (`outer.ip4.next_proto`), without the layout
    /// fields that [`ip_proto`](Self::ip_proto) also sets. In a mask: the bits compared.
    pub fn ipv4_next_proto(mut self, proto: u8) -> Self {
        // Writing a union field is safe; the IPv4 view is the one DOCA reads for IPv4.
        self.raw.outer.__bindgen_anon_1.ip4.next_proto = proto;
        self
    }

    /// Header field only: IPv4 source address (host order). In a BASIC pipe's match,
    /// `u32::MAX` makes it a per-entry field.
    pub fn ipv4_src(mut self, addr: u32) -> Self {
        self.raw.outer.__bindgen_anon_1.ip4.src_ip = addr.to_be();
        self
    }

    /// Header field only: IPv4 destination address (host order). In a BASIC pipe's match,
    /// `u32::MAX` makes it a per-entry field.
    pub fn ipv4_dst(mut self, addr: u32) -> Self {
        self.raw.outer.__bindgen_anon_1.ip4.dst_ip = addr.to_be();
        self
    }

    /// Header fields only: TCP source and destination ports (host order), in the TCP view
    /// (pair with [`l4_type_tcp`](Self::l4_type_tcp)). In a BASIC pipe's match, `u16::MAX`
    /// makes a port a per-entry field.
    pub fn tcp_ports(mut self, src: u16, dst: u16) -> Self {
        self.raw.outer.__bindgen_anon_2.tcp.l4_port.src_port = src.to_be();
        self.raw.outer.__bindgen_anon_2.tcp.l4_port.dst_port = dst.to_be();
        self
    }

    /// Header field only: the TCP flags byte (`outer.tcp.flags`), in the TCP view. In a
    /// mask: the flags compared (a control entry with value `F` and mask `F` selects
    /// frames with flag `F` set, whatever the others).
    pub fn tcp_flag_bits(mut self, flags: TcpFlags) -> Self {
        self.raw.outer.__bindgen_anon_2.tcp.flags = flags.bits();
        self
    }

    /// An entry value and mask that select IPv4/TCP frames with TCP flag `flag` set
    /// (whatever the other flags): parser metadata IPv4/TCP under full masks, and
    /// `tcp.flags & flag == flag`.
    pub(crate) fn tcp_flag_set(flag: TcpFlags) -> (Match, Match) {
        let mut value = Match::new().meta_ipv4().meta_tcp();
        value.raw.outer.l4_type_ext = sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_TCP;
        value.raw.outer.__bindgen_anon_2.tcp.flags = flag.bits();
        let mut mask = Match::new();
        mask.raw.parser_meta.outer_l3_type = sys::doca_flow_l3_meta(u32::MAX);
        mask.raw.parser_meta.outer_l4_type = sys::doca_flow_l4_meta(u32::MAX);
        mask.raw.outer.__bindgen_anon_2.tcp.flags = flag.bits();
        (value, mask)
    }

    /// The raw struct.
    pub fn as_raw(&self) -> &sys::doca_flow_match {
        &self.raw
    }
}

impl std::fmt::Debug for Match {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Match")
            .field("outer_l3_meta", &self.raw.parser_meta.outer_l3_type.0)
            .field("outer_l4_meta", &self.raw.parser_meta.outer_l4_type.0)
            .field(
                "eth_type",
                &format_args!("{:#06x}", u16::from_be(self.raw.outer.eth.type_)),
            )
            .field("l3_type", &self.raw.outer.l3_type.0)
            .field("l4_type", &self.raw.outer.l4_type_ext.0)
            .finish_non_exhaustive()
    }
}

/// Where matching frames go (`struct doca_flow_fwd`).
#[derive(Clone, Debug)]
pub enum Forward {
    /// Spread over these RX queue ids (the ids given to `EthRxq::apply_queue_id`) by an RSS
    /// hash of the given fields.
    Rss {
        /// Queue ids; at least one.
        queues: Vec<u16>,
        /// Fields hashed.
        flags: RssFlags,
    },
    /// On to another pipe of the same port.
    Pipe(Pipe),
    /// Discard.
    Drop,
}

impl Forward {
    /// RSS over `queues` hashing `flags`.
    pub fn rss(queues: &[u16], flags: RssFlags) -> Self {
        Forward::Rss {
            queues: queues.to_vec(),
            flags,
        }
    }
}

impl From<&Pipe> for Forward {
    fn from(p: &Pipe) -> Self {
        Forward::Pipe(p.clone())
    }
}

/// A `doca_flow_fwd` plus what its pointers refer to (the queue list), valid while this
/// value lives.
pub(crate) struct RawForward {
    pub(crate) raw: sys::doca_flow_fwd,
    _queues: Option<Box<[u16]>>,
}

impl Forward {
    /// The raw struct; for `Rss`, `queues_array` points into the returned value.
    pub(crate) fn to_raw(&self) -> RawForward {
        let mut raw = sys::doca_flow_fwd::default();
        let mut queues = None;
        match self {
            Forward::Rss { queues: q, flags } => {
                let mut q: Box<[u16]> = q.clone().into_boxed_slice();
                raw.type_ = sys::doca_flow_fwd_type::DOCA_FLOW_FWD_RSS;
                let cfg = sys::doca_flow_resource_rss_cfg {
                    outer_flags: flags.bits(),
                    queues_array: q.as_mut_ptr(),
                    nr_queues: q.len() as i32,
                    ..Default::default()
                };
                // Assigning whole union members is safe; `type_` says which one is live.
                raw.__bindgen_anon_1.__bindgen_anon_1.rss_type =
                    sys::doca_flow_resource_type::DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
                raw.__bindgen_anon_1.__bindgen_anon_1.__bindgen_anon_1.rss = cfg;
                queues = Some(q);
            }
            Forward::Pipe(p) => {
                raw.type_ = sys::doca_flow_fwd_type::DOCA_FLOW_FWD_PIPE;
                raw.__bindgen_anon_1.__bindgen_anon_3.next_pipe = p.as_raw();
            }
            Forward::Drop => raw.type_ = sys::doca_flow_fwd_type::DOCA_FLOW_FWD_DROP,
        }
        RawForward {
            raw,
            _queues: queues,
        }
    }

    /// Checks what DOCA would only reject later with a bare code.
    pub(crate) fn validate(&self, what: &str) -> crate::Result<()> {
        if let Forward::Rss { queues, .. } = self {
            if queues.is_empty() {
                return Err(crate::Error::InvalidArgument(format!(
                    "{what}: RSS forward with no queues"
                )));
            }
            if queues.len() > i32::MAX as usize {
                return Err(crate::Error::InvalidArgument(format!(
                    "{what}: too many RSS queues"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_fields_are_set_big_endian_with_their_types() {
        let m = Match::new().meta_ipv4().meta_udp();
        assert_eq!(
            m.raw.parser_meta.outer_l3_type,
            sys::doca_flow_l3_meta::DOCA_FLOW_L3_META_IPV4
        );
        assert_eq!(
            m.raw.parser_meta.outer_l4_type,
            sys::doca_flow_l4_meta::DOCA_FLOW_L4_META_UDP
        );
        assert_eq!(m.raw.outer.eth.type_, 0, "meta style leaves headers alone");

        let m = Match::new().udp_dst_port(53);
        assert_eq!(m.raw.outer.eth.type_, 0x0800u16.to_be());
        assert_eq!(
            m.raw.outer.l3_type,
            sys::doca_flow_l3_type::DOCA_FLOW_L3_TYPE_IP4
        );
        assert_eq!(
            m.raw.outer.l4_type_ext,
            sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_UDP
        );
        // SAFETY: the l3/l4 types say ip4/udp are the live members.
        unsafe {
            assert_eq!(m.raw.outer.__bindgen_anon_1.ip4.next_proto, 17);
            assert_eq!(
                m.raw.outer.__bindgen_anon_2.udp.l4_port.dst_port,
                53u16.to_be()
            );
        }
        let m = Match::new().tcp_flags(TcpFlags::SYN | TcpFlags::FIN);
        // SAFETY: as above, tcp.
        unsafe {
            assert_eq!(m.raw.outer.__bindgen_anon_1.ip4.next_proto, 6);
            assert_eq!(m.raw.outer.__bindgen_anon_2.tcp.flags, 0b11);
        }
        let m = Match::new().ip_proto(47);
        assert_eq!(
            m.raw.outer.l4_type_ext,
            sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_NONE
        );
    }

    #[test]
    fn field_setters_write_only_their_field() {
        let m = Match::new().eth_type(0xffff).ipv4_next_proto(0xff);
        assert_eq!(m.raw.outer.eth.type_, 0xffff);
        assert_eq!(m.raw.outer.l3_type.0, 0, "no layout change");
        assert_eq!(m.raw.outer.l4_type_ext.0, 0, "no layout change");
        // SAFETY: plain integers in the union; the ip4 view is what was written.
        assert_eq!(unsafe { m.raw.outer.__bindgen_anon_1.ip4.next_proto }, 0xff);

        let m = Match::new()
            .l3_type_ipv4()
            .l4_type_tcp()
            .ipv4_src(0x7f00_0001)
            .ipv4_dst(0x7f00_0002)
            .tcp_ports(40000, 80)
            .tcp_flag_bits(TcpFlags::SYN | TcpFlags::ACK);
        assert_eq!(
            m.raw.outer.l3_type,
            sys::doca_flow_l3_type::DOCA_FLOW_L3_TYPE_IP4
        );
        assert_eq!(
            m.raw.outer.l4_type_ext,
            sys::doca_flow_l4_type_ext::DOCA_FLOW_L4_TYPE_EXT_TCP
        );
        assert_eq!(m.raw.outer.eth.type_, 0, "the Ethernet type is not implied");
        // SAFETY: as above, ip4 and tcp views.
        unsafe {
            let ip4 = m.raw.outer.__bindgen_anon_1.ip4;
            // Stored in network order: the bytes in memory are the dotted quad.
            assert_eq!(ip4.src_ip.to_ne_bytes(), [127, 0, 0, 1]);
            assert_eq!(u32::from_be(ip4.dst_ip), 0x7f00_0002);
            assert_eq!(ip4.next_proto, 0, "the protocol is not implied");
            let tcp = m.raw.outer.__bindgen_anon_2.tcp;
            assert_eq!(u16::from_be(tcp.l4_port.src_port), 40000);
            assert_eq!(tcp.l4_port.dst_port.to_ne_bytes(), [0, 80]);
            assert_eq!(tcp.flags, 0x12);
        }
        // Per-entry template: all-ones fields.
        let t = Match::new()
            .ipv4_src(u32::MAX)
            .tcp_ports(u16::MAX, u16::MAX);
        // SAFETY: as above.
        unsafe {
            assert_eq!(t.raw.outer.__bindgen_anon_1.ip4.src_ip, u32::MAX);
            assert_eq!(t.raw.outer.__bindgen_anon_2.tcp.l4_port.src_port, u16::MAX);
        }
    }

    #[test]
    fn rss_forward_points_at_its_own_queue_list() {
        let f = Forward::rss(&[3, 1, 2], RssFlags::IPV4 | RssFlags::UDP);
        let r = f.to_raw();
        assert_eq!(r.raw.type_, sys::doca_flow_fwd_type::DOCA_FLOW_FWD_RSS);
        // SAFETY: type RSS says the rss member is live.
        let rss = unsafe { r.raw.__bindgen_anon_1.__bindgen_anon_1.__bindgen_anon_1.rss };
        assert_eq!(rss.outer_flags, 0b101);
        assert_eq!(rss.nr_queues, 3);
        // SAFETY: queues_array points at the 3 ids owned by `r`.
        assert_eq!(
            unsafe { std::slice::from_raw_parts(rss.queues_array, 3) },
            &[3, 1, 2]
        );
        assert!(Forward::rss(&[], RssFlags::IPV4).validate("t").is_err());
        assert_eq!(
            Forward::Drop.to_raw().raw.type_,
            sys::doca_flow_fwd_type::DOCA_FLOW_FWD_DROP
        );
    }
}
