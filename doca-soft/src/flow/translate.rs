//! From the C structs (`struct doca_flow_match`, `struct doca_flow_fwd`) to the classifier's
//! [`FieldMatch`] lists and [`Fwd`](crate::packet::classify::Fwd) values.
//!
//! Match semantics (documented in the crate README of the lead):
//! * CONTROL entries: with a mask, every field whose mask is non-zero is compared under that
//!   mask with the entry's match value; without a mask, every non-zero field of the match
//!   is compared exactly.
//! * BASIC pipes: the pipe's match (and optional mask) selects the fields. A field whose
//!   pipe value is all ones (of its width) is changeable: each entry supplies its value.
//!   Any other value is a constant that every entry of the pipe matches.

use super::sys;
use crate::error::{DocaError, DocaResult};
use crate::packet::classify::{Field, FieldMatch};

// The classifier's RSS flags are the header's `DOCA_FLOW_RSS_*` values.
const _: () = {
    use crate::packet::rss::*;
    assert!(RSS_IPV4 == sys::DOCA_FLOW_RSS_IPV4 && RSS_IPV6 == sys::DOCA_FLOW_RSS_IPV6);
    assert!(RSS_UDP == sys::DOCA_FLOW_RSS_UDP && RSS_TCP == sys::DOCA_FLOW_RSS_TCP);
    assert!(
        RSS_IPV4_SRC == sys::DOCA_FLOW_RSS_IPV4_SRC && RSS_IPV4_DST == sys::DOCA_FLOW_RSS_IPV4_DST
    );
    assert!(
        RSS_IPV6_SRC == sys::DOCA_FLOW_RSS_IPV6_SRC && RSS_IPV6_DST == sys::DOCA_FLOW_RSS_IPV6_DST
    );
    assert!(
        RSS_L4_SRC_UDP == sys::DOCA_FLOW_RSS_UDP_SRC
            && RSS_L4_DST_UDP == sys::DOCA_FLOW_RSS_UDP_DST
    );
    assert!(
        RSS_L4_SRC_TCP == sys::DOCA_FLOW_RSS_TCP_SRC
            && RSS_L4_DST_TCP == sys::DOCA_FLOW_RSS_TCP_DST
    );
};

/// Header layout context of a match: which union views (`ip4`/`ip6`, `udp`/`tcp`/...) hold
/// the fields. A mask or entry match is read in the context of its pipe or match, since
/// those often leave `l3_type`/`l4_type_ext` zero.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Layout {
    l3: u32,
    l4: u32,
}

impl Layout {
    /// The layout `m` declares.
    pub(crate) fn of(m: &sys::doca_flow_match_v1) -> Layout {
        Layout {
            l3: m.outer.l3_type,
            l4: m.outer.l4_type_ext,
        }
    }
}

/// `(field, host-order value)` of every field we can match, read from `m` with the union
/// views chosen by `layout`. Always the same fields in the same order for one layout.
pub(crate) fn read_fields(
    m: &sys::doca_flow_match_v1,
    layout: Layout,
) -> DocaResult<Vec<(Field, u64)>> {
    reject_unsupported(m)?;
    let o = &m.outer;
    let mac = |a: [u8; 6]| a.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    let mut v = vec![
        (Field::OuterL2Meta, u64::from(m.parser_meta.outer_l2_type)),
        (
            Field::OuterIpFragmented,
            u64::from(m.parser_meta.outer_ip_fragmented),
        ),
        (Field::OuterL3Meta, u64::from(m.parser_meta.outer_l3_type)),
        (Field::OuterL4Meta, u64::from(m.parser_meta.outer_l4_type)),
        (Field::EthType, u64::from(u16::from_be(o.eth.type_))),
        (Field::SrcMac, mac(o.eth.src_mac)),
        (Field::DstMac, mac(o.eth.dst_mac)),
        (Field::L3Type, u64::from(o.l3_type)),
        (Field::L4TypeExt, u64::from(o.l4_type_ext)),
    ];
    if layout.l3 != sys::DOCA_FLOW_L3_TYPE_IP6 {
        // SAFETY: the union holds plain integers; reading the ip4 view is always defined.
        let ip4 = unsafe { o.__bindgen_anon_1.ip4 };
        v.extend([
            (Field::Ip4Src, u64::from(u32::from_be(ip4.src_ip))),
            (Field::Ip4Dst, u64::from(u32::from_be(ip4.dst_ip))),
            (Field::Ip4Proto, u64::from(ip4.next_proto)),
            (Field::Ip4Ttl, u64::from(ip4.ttl)),
            (Field::Ip4DscpEcn, u64::from(ip4.dscp_ecn)),
            (Field::Ip4VersionIhl, u64::from(ip4.version_ihl)),
            (Field::Ip4TotalLen, u64::from(u16::from_be(ip4.total_len))),
            (Field::Ip4Id, u64::from(u16::from_be(ip4.identification))),
            (
                Field::Ip4FlagsFrag,
                u64::from(u16::from_be(ip4.flags_fragment_offset)),
            ),
        ]);
    } else {
        // SAFETY: as above, for the ip6 view.
        let ip6 = unsafe { o.__bindgen_anon_1.ip6 };
        if ip6.src_ip != [0; 4]
            || ip6.dst_ip != [0; 4]
            || ip6.next_proto != 0
            || ip6.traffic_class != 0
            || ip6.flow_label != 0
            || ip6.payload_len != 0
            || ip6.hop_limit != 0
        {
            sdk_err!("flow", "matching IPv6 header fields is not supported");
            return Err(DocaError::NOT_SUPPORTED);
        }
    }
    // SAFETY: the L4 union holds plain integers; every view is defined.
    let (udp, tcp, tr, icmp) = unsafe {
        (
            o.__bindgen_anon_2.udp,
            o.__bindgen_anon_2.tcp,
            o.__bindgen_anon_2.transport,
            o.__bindgen_anon_2.icmp,
        )
    };
    let l4_unsupported = match layout.l4 {
        sys::DOCA_FLOW_L4_TYPE_EXT_UDP => udp.total_len != 0,
        sys::DOCA_FLOW_L4_TYPE_EXT_TCP => {
            tcp.data_offset != 0 || tcp.seq_num != 0 || tcp.ack_num != 0
        }
        sys::DOCA_FLOW_L4_TYPE_EXT_ICMP | sys::DOCA_FLOW_L4_TYPE_EXT_ICMP6 => icmp.ident != 0,
        _ => false,
    };
    if l4_unsupported {
        sdk_err!(
            "flow",
            "matching UDP length, TCP offset/sequence/ack or ICMP ident is not supported"
        );
        return Err(DocaError::NOT_SUPPORTED);
    }
    let port = |p: u16| u64::from(u16::from_be(p));
    match layout.l4 {
        sys::DOCA_FLOW_L4_TYPE_EXT_UDP => v.extend([
            (Field::UdpSrc, port(udp.l4_port.src_port)),
            (Field::UdpDst, port(udp.l4_port.dst_port)),
        ]),
        sys::DOCA_FLOW_L4_TYPE_EXT_TCP => v.extend([
            (Field::TcpSrc, port(tcp.l4_port.src_port)),
            (Field::TcpDst, port(tcp.l4_port.dst_port)),
            (Field::TcpFlags, u64::from(tcp.flags)),
        ]),
        sys::DOCA_FLOW_L4_TYPE_EXT_ICMP | sys::DOCA_FLOW_L4_TYPE_EXT_ICMP6 => v.extend([
            (Field::IcmpType, u64::from(icmp.type_)),
            (Field::IcmpCode, u64::from(icmp.code)),
        ]),
        _ => v.extend([
            (Field::L4Src, port(tr.src_port)),
            (Field::L4Dst, port(tr.dst_port)),
        ]),
    }
    Ok(v)
}

/// Whether a monitor asks for a (non-shared) counter; meters and shared counters are
/// NOT_SUPPORTED.
pub(crate) fn monitor_counts(m: &sys::doca_flow_monitor_v1) -> DocaResult<bool> {
    if m.meter_type != sys::DOCA_FLOW_RESOURCE_TYPE_NONE {
        sdk_err!("flow", "meters are not supported");
        return Err(DocaError::NOT_SUPPORTED);
    }
    match m.counter_type {
        sys::DOCA_FLOW_RESOURCE_TYPE_NONE => Ok(false),
        sys::DOCA_FLOW_RESOURCE_TYPE_NON_SHARED => Ok(true),
        sys::DOCA_FLOW_RESOURCE_TYPE_SHARED => {
            sdk_err!("flow", "shared counters are not supported");
            Err(DocaError::NOT_SUPPORTED)
        }
        _ => Err(DocaError::INVALID_VALUE),
    }
}

/// Matching on metadata, tunnels, VLANs and inner headers is not emulated: refuse it
/// rather than silently match more than asked.
fn reject_unsupported(m: &sys::doca_flow_match_v1) -> DocaResult<()> {
    let zero_meta = sys::doca_flow_meta_v1::default();
    let meta_set = m.meta.pkt_meta != zero_meta.pkt_meta
        || m.meta.u32_ != zero_meta.u32_
        || m.meta.mark != zero_meta.mark;
    let tun_set = m.tun.type_ != 0;
    let inner_set = m.inner.l3_type != 0
        || m.inner.l4_type_ext != 0
        || m.inner.eth.type_ != 0
        || m.parser_meta.inner_l3_type != 0
        || m.parser_meta.inner_l4_type != 0;
    let vlan_set = m.outer.eth_vlan.iter().any(|t| t.tci != 0) || m.outer.l2_valid_headers != 0;
    let pm = &m.parser_meta;
    let parser_meta_set = pm.port_id != 0
        || pm.ipsec_syndrome != 0
        || pm.random != 0
        || pm.meter_color != 0
        || pm.inner_l2_type != 0
        || pm.inner_ip_fragmented != 0
        || pm.outer_l3_ok != 0
        || pm.outer_ip4_checksum_ok != 0
        || pm.outer_l4_ok != 0
        || pm.inner_l3_ok != 0
        || pm.inner_ip4_checksum_ok != 0
        || pm.inner_l4_ok != 0;
    if meta_set || tun_set || inner_set || vlan_set || parser_meta_set {
        sdk_err!(
            "flow",
            "match on metadata, tunnel, VLAN, inner headers or parser checks is not supported"
        );
        return Err(DocaError::NOT_SUPPORTED);
    }
    Ok(())
}

/// A CONTROL entry's comparisons from its match and optional mask.
pub(crate) fn control_matches(
    m: &sys::doca_flow_match_v1,
    mask: Option<&sys::doca_flow_match_v1>,
) -> DocaResult<Vec<FieldMatch>> {
    let layout = Layout::of(m);
    let values = read_fields(m, layout)?;
    let masks = match mask {
        Some(k) => Some(read_fields(k, layout)?),
        None => None,
    };
    Ok(values
        .iter()
        .enumerate()
        .filter_map(|(i, &(field, value))| {
            let mask = match &masks {
                Some(ms) => ms.get(i).filter(|(f, _)| *f == field).map_or(0, |x| x.1),
                None if value != 0 => field.full_mask(),
                None => 0,
            };
            (mask != 0).then_some(FieldMatch { field, value, mask })
        })
        .collect())
}

/// One field of a BASIC pipe's template.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TemplateField {
    /// The field.
    pub field: Field,
    /// Bits compared.
    pub mask: u64,
    /// `None`: each entry supplies the value; `Some(v)`: constant.
    pub constant: Option<u64>,
}

/// A BASIC pipe's template from its match and optional mask.
pub(crate) fn basic_template(
    m: &sys::doca_flow_match_v1,
    mask: Option<&sys::doca_flow_match_v1>,
) -> DocaResult<Vec<TemplateField>> {
    let layout = Layout::of(m);
    let values = read_fields(m, layout)?;
    let masks = match mask {
        Some(k) => Some(read_fields(k, layout)?),
        None => None,
    };
    let mut out = Vec::new();
    for (i, &(field, value)) in values.iter().enumerate() {
        let full = field.full_mask();
        let mask = match &masks {
            Some(ms) => ms.get(i).filter(|(f, _)| *f == field).map_or(0, |x| x.1),
            None if value != 0 => full,
            None => 0,
        };
        if mask == 0 && value == 0 {
            continue;
        }
        // A mask given with a zero template value still selects the field (per entry).
        let mask = if mask == 0 { full } else { mask };
        // All ones, or zero under an explicit mask: the entry supplies the value.
        let constant = (value != full && value != 0).then_some(value);
        out.push(TemplateField {
            field,
            mask,
            constant,
        });
    }
    Ok(out)
}

/// A BASIC entry's comparisons: the template filled with the entry's values.
pub(crate) fn basic_entry_matches(
    template: &[TemplateField],
    layout: Layout,
    entry: Option<&sys::doca_flow_match_v1>,
) -> DocaResult<Vec<FieldMatch>> {
    let values = match entry {
        Some(m) => read_fields(m, layout)?,
        None => Vec::new(),
    };
    let value_of = |f: Field| values.iter().find(|(x, _)| *x == f).map_or(0, |x| x.1);
    Ok(template
        .iter()
        .map(|t| FieldMatch {
            field: t.field,
            value: t.constant.unwrap_or_else(|| value_of(t.field)),
            mask: t.mask,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp_layout() -> sys::doca_flow_match_v1 {
        let mut m = sys::doca_flow_match_v1::default();
        m.outer.l3_type = sys::DOCA_FLOW_L3_TYPE_IP4;
        m.outer.l4_type_ext = sys::DOCA_FLOW_L4_TYPE_EXT_UDP;
        m
    }

    #[test]
    fn basic_template_constants_and_changeable_fields() {
        let mut m = udp_layout();
        m.parser_meta.outer_l4_type = sys::DOCA_FLOW_L4_META_UDP; // constant
        m.outer.__bindgen_anon_2.udp.l4_port.dst_port = 0xffff; // changeable
        let t = basic_template(&m, None).unwrap();
        let find = |f| t.iter().find(|x| x.field == f).copied().unwrap();
        assert_eq!(find(Field::OuterL4Meta).constant, Some(2));
        assert_eq!(find(Field::UdpDst).constant, None);
        assert_eq!(find(Field::L3Type).constant, Some(1));
        assert!(
            t.iter().all(|x| x.field != Field::UdpSrc),
            "zero fields are not matched"
        );
        // An entry with no L4 type of its own is read in the pipe's layout.
        let mut e = sys::doca_flow_match_v1::default();
        e.outer.__bindgen_anon_2.udp.l4_port.dst_port = 53u16.to_be();
        let ms = basic_entry_matches(&t, Layout::of(&m), Some(&e)).unwrap();
        let dst = ms.iter().find(|x| x.field == Field::UdpDst).unwrap();
        assert_eq!((dst.value, dst.mask), (53, 0xffff));
    }

    #[test]
    fn masks_select_fields_and_bits() {
        let mut m = udp_layout();
        m.outer.__bindgen_anon_1.ip4.dst_ip = u32::to_be(0x0a00_0001);
        let mut mask = sys::doca_flow_match_v1::default();
        mask.outer.__bindgen_anon_1.ip4.dst_ip = u32::to_be(0xffff_ff00);
        let c = control_matches(&m, Some(&mask)).unwrap();
        assert_eq!(
            c,
            vec![FieldMatch {
                field: Field::Ip4Dst,
                value: 0x0a00_0001,
                mask: 0xffff_ff00
            }],
            "only masked fields, with the mask's bits"
        );
        // Without a mask, non-zero fields match exactly.
        let c = control_matches(&m, None).unwrap();
        assert_eq!(c.len(), 3, "l3_type, l4_type_ext, dst_ip: {c:?}");
    }
}
