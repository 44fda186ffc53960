//! The fields of `struct doca_flow_match` (and the `outer` part of `struct
//! doca_flow_actions`): where each one is, how many bytes, which header it needs, whether the
//! runtime can match it and rewrite it, and the enum range of enum fields.
//!
//! The unions of the struct (`ip4`/`ip6`, the L4 headers, the tunnel kinds) are resolved
//! by [`Views`], chosen from the struct's selector fields (`l3_type`, `l4_type_ext`,
//! `tun.type`, `vxlan_type`, `gre_type`) or, where those are zero, from the other fields set.

use crate::packet::actions::Hdr;
use crate::packet::key::{off, props};

/// How the runtime treats a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Matched against the frame.
    Match,
    /// Says which union member is meant; never compared.
    Selector,
    /// Not emulated: using it is NOT_SUPPORTED.
    Unsupported,
}

/// How an action writes a field into the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Set {
    /// Not settable (NOT_SUPPORTED).
    No,
    /// Bytes of a header, at an offset.
    Bytes(Hdr, u8),
    /// IPv6 traffic class (8 bits inside the first header word).
    Ip6Tc,
    /// IPv6 flow label (20 bits inside the first header word).
    Ip6Flow,
    /// A metadata word (in the match key, not the frame).
    Meta,
}

/// One field.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldDef {
    /// Dotted name, as a C program writes it.
    pub name: &'static str,
    /// Offset in the struct (match layout; actions add their own base).
    pub off: usize,
    /// Bytes.
    pub len: usize,
    /// [`props`] bits a frame must have for the field to be there.
    pub need: u32,
    /// How it is treated in matches.
    pub kind: Kind,
    /// How actions write it.
    pub set: Set,
    /// Largest valid value of an enum field (native u32), or `None`.
    pub enum_max: Option<u32>,
}

const fn f(name: &'static str, off: usize, len: usize, need: u32) -> FieldDef {
    FieldDef {
        name,
        off,
        len,
        need,
        kind: Kind::Match,
        set: Set::No,
        enum_max: None,
    }
}

impl FieldDef {
    const fn set(mut self, s: Set) -> FieldDef {
        self.set = s;
        self
    }
    const fn kind(mut self, k: Kind) -> FieldDef {
        self.kind = k;
        self
    }
    const fn enum_max(mut self, m: u32) -> FieldDef {
        self.enum_max = Some(m);
        self
    }
}

/// Which member of a layer's `ip4`/`ip6` union is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum L3View {
    Ip4,
    Ip6,
}

/// Which member of a layer's L4 union is meant (`doca_flow_l4_type_ext` order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum L4View {
    Tcp,
    Udp,
    Icmp,
    Icmp6,
    Transport,
    Roce,
}

/// Which member of the tunnel union is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TunView {
    None,
    /// VXLAN with its `vxlan_type` (standard, GPE, GBP).
    Vxlan(u32),
    /// GRE with its `gre_type` (standard, NVGRE).
    Gre(u32),
    Gtpu,
    Esp,
    MplsOUdp,
    Geneve,
    Psp,
    IpInIp,
}

/// The union members a match (or actions) struct means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Views {
    pub outer: (L3View, L4View),
    pub inner: (L3View, L4View),
    pub tun: TunView,
}

/// `doca_flow_l3_type` / `doca_flow_l4_type_ext` / `doca_flow_tun_type` maxima.
pub(crate) const L3_TYPE_MAX: u32 = 2;
pub(crate) const L4_TYPE_MAX: u32 = 6;
pub(crate) const TUN_TYPE_MAX: u32 = 8;

/// The fields of a `doca_flow_header_format` at `base` (match layout) for `layer` (a
/// [`props`] shift), in the given views; `prefix` is "outer" or "inner".
fn header_format(
    out: &mut Vec<FieldDef>,
    base: usize,
    layer: u32,
    inner: bool,
    (l3, l4): (L3View, L4View),
) {
    use off::hf;
    let b = |x| props::bit(layer, x);
    let n = |outer_name: &'static str, inner_name: &'static str| {
        if inner {
            inner_name
        } else {
            outer_name
        }
    };
    let eth = if inner { b(props::ETH) } else { 0 };
    out.extend([
        f(
            n("outer.eth.src_mac", "inner.eth.src_mac"),
            base + hf::ETH_SRC,
            6,
            b(props::ETH),
        )
        .set(Set::Bytes(Hdr::Eth, 6)),
        f(
            n("outer.eth.dst_mac", "inner.eth.dst_mac"),
            base + hf::ETH_DST,
            6,
            b(props::ETH),
        )
        .set(Set::Bytes(Hdr::Eth, 0)),
        f(
            n("outer.eth.type", "inner.eth.type"),
            base + hf::ETH_TYPE,
            2,
            eth,
        )
        .set(Set::Bytes(Hdr::EthType, 0)),
        f(
            n("outer.l2_valid_headers", "inner.l2_valid_headers"),
            base + hf::L2_VALID,
            2,
            eth,
        ),
        f(
            n("outer.eth_vlan[0].tci", "inner.eth_vlan[0].tci"),
            base + hf::VLAN,
            2,
            b(props::VLAN0),
        )
        .set(Set::Bytes(Hdr::Vlan(0), 0)),
        f(
            n("outer.eth_vlan[1].tci", "inner.eth_vlan[1].tci"),
            base + hf::VLAN + 2,
            2,
            b(props::VLAN1),
        )
        .set(Set::Bytes(Hdr::Vlan(1), 0)),
        f(
            n("outer.l3_type", "inner.l3_type"),
            base + hf::L3_TYPE,
            4,
            0,
        )
        .kind(Kind::Selector)
        .enum_max(L3_TYPE_MAX),
        f(
            n("outer.l4_type_ext", "inner.l4_type_ext"),
            base + hf::L4_TYPE,
            4,
            0,
        )
        .kind(Kind::Selector)
        .enum_max(L4_TYPE_MAX),
    ]);
    let ip = base + hf::IP;
    match l3 {
        L3View::Ip4 => {
            let v4 = b(props::IP4);
            out.extend([
                f(n("outer.ip4.src_ip", "inner.ip4.src_ip"), ip, 4, v4)
                    .set(Set::Bytes(Hdr::L3, 12)),
                f(n("outer.ip4.dst_ip", "inner.ip4.dst_ip"), ip + 4, 4, v4)
                    .set(Set::Bytes(Hdr::L3, 16)),
                f(
                    n("outer.ip4.version_ihl", "inner.ip4.version_ihl"),
                    ip + 8,
                    1,
                    v4,
                ),
                f(n("outer.ip4.dscp_ecn", "inner.ip4.dscp_ecn"), ip + 9, 1, v4)
                    .set(Set::Bytes(Hdr::L3, 1)),
                f(
                    n("outer.ip4.total_len", "inner.ip4.total_len"),
                    ip + 10,
                    2,
                    v4,
                ),
                f(
                    n("outer.ip4.identification", "inner.ip4.identification"),
                    ip + 12,
                    2,
                    v4,
                )
                .set(Set::Bytes(Hdr::L3, 4)),
                f(
                    n(
                        "outer.ip4.flags_fragment_offset",
                        "inner.ip4.flags_fragment_offset",
                    ),
                    ip + 14,
                    2,
                    v4,
                )
                .set(Set::Bytes(Hdr::L3, 6)),
                f(
                    n("outer.ip4.next_proto", "inner.ip4.next_proto"),
                    ip + 16,
                    1,
                    v4,
                )
                .set(Set::Bytes(Hdr::L3, 9)),
                f(n("outer.ip4.ttl", "inner.ip4.ttl"), ip + 17, 1, v4).set(Set::Bytes(Hdr::L3, 8)),
            ]);
        }
        L3View::Ip6 => {
            let v6 = b(props::IP6);
            out.extend([
                f(n("outer.ip6.src_ip", "inner.ip6.src_ip"), ip, 16, v6)
                    .set(Set::Bytes(Hdr::L3, 8)),
                f(n("outer.ip6.dst_ip", "inner.ip6.dst_ip"), ip + 16, 16, v6)
                    .set(Set::Bytes(Hdr::L3, 24)),
                f(
                    n("outer.ip6.traffic_class", "inner.ip6.traffic_class"),
                    ip + 32,
                    1,
                    v6,
                )
                .set(Set::Ip6Tc),
                f(
                    n("outer.ip6.flow_label", "inner.ip6.flow_label"),
                    ip + 36,
                    4,
                    v6,
                )
                .set(Set::Ip6Flow),
                f(
                    n("outer.ip6.payload_len", "inner.ip6.payload_len"),
                    ip + 40,
                    2,
                    v6,
                ),
                f(
                    n("outer.ip6.next_proto", "inner.ip6.next_proto"),
                    ip + 42,
                    1,
                    v6,
                )
                .set(Set::Bytes(Hdr::L3, 6)),
                f(
                    n("outer.ip6.hop_limit", "inner.ip6.hop_limit"),
                    ip + 43,
                    1,
                    v6,
                )
                .set(Set::Bytes(Hdr::L3, 7)),
            ]);
        }
    }
    let l4o = base + hf::L4;
    let ports = |out: &mut Vec<FieldDef>, need, src, dst| {
        out.extend([
            f(src, l4o, 2, need).set(Set::Bytes(Hdr::L4, 0)),
            f(dst, l4o + 2, 2, need).set(Set::Bytes(Hdr::L4, 2)),
        ]);
    };
    match l4 {
        L4View::Tcp => {
            let t = b(props::TCP);
            ports(
                out,
                t,
                n("outer.tcp.l4_port.src_port", "inner.tcp.l4_port.src_port"),
                n("outer.tcp.l4_port.dst_port", "inner.tcp.l4_port.dst_port"),
            );
            out.extend([
                f(
                    n("outer.tcp.data_offset", "inner.tcp.data_offset"),
                    l4o + 4,
                    1,
                    t,
                ),
                f(n("outer.tcp.flags", "inner.tcp.flags"), l4o + 5, 1, t)
                    .set(Set::Bytes(Hdr::L4, 13)),
                f(n("outer.tcp.seq_num", "inner.tcp.seq_num"), l4o + 8, 4, t)
                    .set(Set::Bytes(Hdr::L4, 4)),
                f(n("outer.tcp.ack_num", "inner.tcp.ack_num"), l4o + 12, 4, t)
                    .set(Set::Bytes(Hdr::L4, 8)),
            ]);
        }
        L4View::Udp => ports(
            out,
            b(props::UDP),
            n("outer.udp.l4_port.src_port", "inner.udp.l4_port.src_port"),
            n("outer.udp.l4_port.dst_port", "inner.udp.l4_port.dst_port"),
        ),
        L4View::Transport => ports(
            out,
            b(props::PORTS),
            n("outer.transport.src_port", "inner.transport.src_port"),
            n("outer.transport.dst_port", "inner.transport.dst_port"),
        ),
        L4View::Icmp | L4View::Icmp6 => {
            let i = b(if l4 == L4View::Icmp {
                props::ICMP
            } else {
                props::ICMP6
            });
            out.extend([
                f(n("outer.icmp.type", "inner.icmp.type"), l4o, 1, i).set(Set::Bytes(Hdr::L4, 0)),
                f(n("outer.icmp.code", "inner.icmp.code"), l4o + 1, 1, i)
                    .set(Set::Bytes(Hdr::L4, 1)),
                f(n("outer.icmp.ident", "inner.icmp.ident"), l4o + 2, 2, i)
                    .set(Set::Bytes(Hdr::L4, 4)),
            ]);
        }
        L4View::Roce => {
            let r = b(props::ROCE);
            ports(
                out,
                r,
                n(
                    "outer.roce_v2.udp.l4_port.src_port",
                    "inner.roce_v2.udp.l4_port.src_port",
                ),
                n(
                    "outer.roce_v2.udp.l4_port.dst_port",
                    "inner.roce_v2.udp.l4_port.dst_port",
                ),
            );
            out.extend([
                f(
                    n("outer.roce_v2.bth.opcode", "inner.roce_v2.bth.opcode"),
                    l4o + 4,
                    1,
                    r,
                ),
                f(
                    n("outer.roce_v2.bth.sempt", "inner.roce_v2.bth.sempt"),
                    l4o + 5,
                    1,
                    r,
                ),
                f(
                    n("outer.roce_v2.bth.pkey", "inner.roce_v2.bth.pkey"),
                    l4o + 6,
                    2,
                    r,
                ),
                f(
                    n("outer.roce_v2.bth.flags0", "inner.roce_v2.bth.flags0"),
                    l4o + 8,
                    1,
                    r,
                ),
                f(
                    n("outer.roce_v2.bth.dest_qp", "inner.roce_v2.bth.dest_qp"),
                    l4o + 9,
                    3,
                    r,
                ),
                f(
                    n("outer.roce_v2.bth.flags1", "inner.roce_v2.bth.flags1"),
                    l4o + 12,
                    1,
                    r,
                ),
                f(
                    n("outer.roce_v2.bth.psn", "inner.roce_v2.bth.psn"),
                    l4o + 13,
                    3,
                    r,
                ),
            ]);
        }
    }
}

/// The fields of `struct doca_flow_tun` at `off::TUN`.
fn tunnel(out: &mut Vec<FieldDef>, view: TunView) {
    let t = off::TUN;
    let u = t + off::tun::U;
    out.push(
        f("tun.type", t, 4, 0)
            .kind(Kind::Selector)
            .enum_max(TUN_TYPE_MAX),
    );
    let tun = props::tun;
    match view {
        TunView::None | TunView::IpInIp => {}
        TunView::Vxlan(sub) => {
            out.push(
                f("tun.vxlan_type", u, 4, 0)
                    .kind(Kind::Selector)
                    .enum_max(2),
            );
            let need = tun(if sub == 1 {
                props::TUN_VXLAN_GPE
            } else {
                props::TUN_VXLAN
            });
            match sub {
                1 => out.extend([
                    f("tun.vxlan_gpe_flags", u + 4, 1, need),
                    f("tun.vxlan_gpe_next_protocol", u + 5, 1, need),
                ]),
                2 => out.push(f("tun.vxlan_gbp_group_policy_id", u + 4, 2, need)),
                _ => {}
            }
            out.extend([
                f("tun.vxlan_tun_id", u + 8, 4, need),
                f("tun.vxlan_tun_rsvd1", u + 12, 1, need),
            ]);
        }
        TunView::Gre(sub) => {
            out.push(f("tun.gre_type", u, 4, 0).kind(Kind::Selector).enum_max(1));
            let need = tun(props::TUN_GRE);
            out.push(f("tun.protocol", u + 4, 2, need));
            if sub == 1 {
                out.extend([
                    f("tun.nvgre_vs_id", u + 8, 4, need).kind(Kind::Unsupported),
                    f("tun.nvgre_flow_id", u + 12, 1, need).kind(Kind::Unsupported),
                ]);
            } else {
                out.extend([
                    f("tun.key_present", u + 8, 1, need),
                    f("tun.gre_key", u + 12, 4, need),
                ]);
            }
        }
        TunView::Gtpu => {
            let need = tun(props::TUN_GTPU);
            out.extend([
                f("tun.gtp_teid", u, 4, need),
                f("tun.gtp_next_ext_hdr_type", u + 4, 1, need),
                f("tun.gtp_ext_psc_qfi", u + 5, 1, need),
            ]);
        }
        TunView::Esp => {
            let need = tun(props::TUN_ESP);
            out.extend([
                f("tun.esp_spi", u, 4, need),
                f("tun.esp_sn", u + 4, 4, need),
            ]);
        }
        TunView::MplsOUdp => {
            out.push(f("tun.mpls", u, 20, 0).kind(Kind::Unsupported));
        }
        TunView::Geneve => {
            let need = tun(props::TUN_GENEVE);
            out.extend([
                f("tun.geneve.ver_opt_len", u, 1, need),
                f("tun.geneve.o_c", u + 1, 1, need),
                f("tun.geneve.next_proto", u + 2, 2, need),
                f("tun.geneve.vni", u + 4, 4, need),
                f("tun.geneve_options", u + 8, 252, need).kind(Kind::Unsupported),
            ]);
        }
        TunView::Psp => out.push(f("tun.psp", u, 24, 0).kind(Kind::Unsupported)),
    }
}

/// The props bit a tunnel type requires when a match names it.
pub(crate) fn tun_need(view: TunView) -> u32 {
    match view {
        TunView::None => 0,
        TunView::Vxlan(1) => props::tun(props::TUN_VXLAN_GPE),
        TunView::Vxlan(_) => props::tun(props::TUN_VXLAN),
        TunView::Gre(_) => props::tun(props::TUN_GRE),
        TunView::Gtpu => props::tun(props::TUN_GTPU),
        TunView::Esp => props::tun(props::TUN_ESP),
        TunView::Geneve => props::tun(props::TUN_GENEVE),
        TunView::IpInIp => props::tun(props::TUN_IPIP),
        // Not parsed: the match is refused before this matters.
        TunView::MplsOUdp | TunView::Psp => 0,
    }
}

/// Every field of `struct doca_flow_match` in `views`.
pub(crate) fn match_fields(views: &Views) -> Vec<FieldDef> {
    let mut v = Vec::with_capacity(96);
    v.push(f("meta.pkt_meta", off::META_PKT, 4, 0).set(Set::Meta));
    const META_NAMES: [&str; 10] = [
        "meta.u32[0]",
        "meta.u32[1]",
        "meta.u32[2]",
        "meta.u32[3]",
        "meta.u32[4]",
        "meta.u32[5]",
        "meta.u32[6]",
        "meta.u32[7]",
        "meta.u32[8]",
        "meta.u32[9]",
    ];
    for (i, name) in META_NAMES.iter().enumerate() {
        v.push(f(name, off::META_U32 + 4 * i, 4, 0).set(Set::Meta));
    }
    v.extend([
        f("parser_meta.port_id", off::PM_PORT_ID, 2, 0),
        f("parser_meta.random", off::PM_RANDOM, 2, 0).kind(Kind::Unsupported),
        f("parser_meta.ipsec_syndrome", off::PM_IPSEC_SYNDROME, 1, 0).kind(Kind::Unsupported),
        f(
            "parser_meta.ipsec_ar_syndrome",
            off::PM_IPSEC_AR_SYNDROME,
            1,
            0,
        )
        .kind(Kind::Unsupported),
        f("parser_meta.psp_syndrome", off::PM_PSP_SYNDROME, 1, 0).kind(Kind::Unsupported),
        f("parser_meta.meter_color", off::PM_METER_COLOR, 1, 0).kind(Kind::Unsupported),
        f("parser_meta.outer_l2_type", off::PM_OUTER_L2, 4, 0).enum_max(3),
        f("parser_meta.outer_l3_type", off::PM_OUTER_L3, 4, 0).enum_max(2),
        f("parser_meta.outer_l4_type", off::PM_OUTER_L4, 4, 0).enum_max(4),
        f("parser_meta.inner_l2_type", off::PM_INNER_L2, 4, 0).enum_max(3),
        f("parser_meta.inner_l3_type", off::PM_INNER_L3, 4, 0).enum_max(2),
        f("parser_meta.inner_l4_type", off::PM_INNER_L4, 4, 0).enum_max(4),
    ]);
    const FLAG_NAMES: [&str; 10] = [
        "parser_meta.outer_ip_fragmented",
        "parser_meta.inner_ip_fragmented",
        "parser_meta.outer_l3_ok",
        "parser_meta.outer_ip4_checksum_ok",
        "parser_meta.outer_l4_ok",
        "parser_meta.outer_l4_checksum_ok",
        "parser_meta.inner_l3_ok",
        "parser_meta.inner_ip4_checksum_ok",
        "parser_meta.inner_l4_ok",
        "parser_meta.inner_l4_checksum_ok",
    ];
    for (i, name) in FLAG_NAMES.iter().enumerate() {
        v.push(f(name, off::PM_OUTER_FRAG + i, 1, 0));
    }
    header_format(&mut v, off::OUTER, props::OUTER, false, views.outer);
    tunnel(&mut v, views.tun);
    header_format(&mut v, off::INNER, props::INNER, true, views.inner);
    v
}

/// The fields of a `doca_flow_header_format` (outer headers of actions), offsets relative
/// to the header format.
pub(crate) fn header_fields(view: (L3View, L4View)) -> Vec<FieldDef> {
    let mut v = Vec::with_capacity(32);
    header_format(&mut v, 0, props::OUTER, false, view);
    v
}

/// Reads a native-endian u32 at `at`.
pub(crate) fn ne32(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn any(b: &[u8], from: usize, to: usize) -> bool {
    b[from..to].iter().any(|&x| x != 0)
}

/// The L3 and L4 views of the header format at `base` in `bytes`: the selectors, else the
/// parser metadata types `pm_l3`/`pm_l4` (native u32 values), else the fields set.
pub(crate) fn layer_views(bytes: &[u8], base: usize, pm: Option<(u32, u32)>) -> (L3View, L4View) {
    use off::hf;
    let l3 = match ne32(bytes, base + hf::L3_TYPE) {
        2 => L3View::Ip6,
        1 => L3View::Ip4,
        _ => match pm.map(|p| p.0) {
            Some(2) => L3View::Ip6,
            Some(1) => L3View::Ip4,
            // IPv6-only bytes set (beyond the IPv4 header's 20).
            _ if any(bytes, base + hf::IP + 20, base + hf::L4_TYPE) => L3View::Ip6,
            _ => L3View::Ip4,
        },
    };
    let next_proto = match l3 {
        L3View::Ip4 => bytes[base + hf::IP + 16],
        L3View::Ip6 => bytes[base + hf::IP + 42],
    };
    let l4 = match ne32(bytes, base + hf::L4_TYPE) {
        1 => L4View::Tcp,
        2 => L4View::Udp,
        3 => L4View::Icmp,
        4 => L4View::Icmp6,
        5 => L4View::Transport,
        6 => L4View::Roce,
        _ => match (pm.map(|p| p.1), next_proto) {
            (Some(1), _) | (_, 6) => L4View::Tcp,
            (Some(2), _) | (_, 17) => L4View::Udp,
            (Some(3), _) | (_, 1) if l3 == L3View::Ip6 => L4View::Icmp6,
            (Some(3), _) | (_, 1) => L4View::Icmp,
            (_, 58) => L4View::Icmp6,
            // TCP-only bytes set (beyond the ports).
            _ if any(bytes, base + hf::L4 + 4, base + hf::SIZE) => L4View::Tcp,
            _ => L4View::Transport,
        },
    };
    (l3, l4)
}

/// The tunnel view of a match's `tun` (`doca_flow_tun_type` order).
pub(crate) fn tun_view(bytes: &[u8]) -> TunView {
    let t = off::TUN;
    let u = t + off::tun::U;
    match ne32(bytes, t) {
        1 => TunView::Vxlan(ne32(bytes, u)),
        2 => TunView::Gtpu,
        3 => TunView::Gre(ne32(bytes, u)),
        4 => TunView::Esp,
        5 => TunView::MplsOUdp,
        6 => TunView::Geneve,
        7 => TunView::Psp,
        8 => TunView::IpInIp,
        _ => TunView::None,
    }
}

/// The views of a whole match struct.
pub(crate) fn match_views(bytes: &[u8]) -> Views {
    let pm_outer = (ne32(bytes, off::PM_OUTER_L3), ne32(bytes, off::PM_OUTER_L4));
    let pm_inner = (ne32(bytes, off::PM_INNER_L3), ne32(bytes, off::PM_INNER_L4));
    Views {
        outer: layer_views(bytes, off::OUTER, Some(pm_outer)),
        inner: layer_views(bytes, off::INNER, Some(pm_inner)),
        tun: tun_view(bytes),
    }
}
