//! Match fields: what a CONTROL or BASIC entry compares, as masked words of the [`Key`].

use super::{off, props, PatternBuilder};

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
/// A header or metadata field that legacy [`FieldMatch`]es name (the classifier's test
/// surface; `flow/` compiles the C structs straight into `Pattern`s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// `parser_meta.outer_l3_type` (`doca_flow_l3_meta`: IPV4=1, IPV6=2).
    OuterL3Meta,
    /// `parser_meta.outer_l4_type` (`doca_flow_l4_meta`: TCP=1, UDP=2, ICMP=3, ESP=4).
    OuterL4Meta,
    /// `outer.eth.type` (host order).
    EthType,
    /// `outer.eth.src_mac` (48 bits, first byte most significant).
    SrcMac,
    /// `outer.eth.dst_mac`.
    DstMac,
    /// The outer L3 type (IP4=1, IP6=2), as the parser found it.
    L3Type,
    /// `outer.ip4.src_ip` (host order).
    Ip4Src,
    /// `outer.ip4.dst_ip`.
    Ip4Dst,
    /// `outer.ip4.next_proto`.
    Ip4Proto,
    /// `outer.ip4.ttl`.
    Ip4Ttl,
    /// `outer.ip4.dscp_ecn`.
    Ip4DscpEcn,
    /// The outer L4 type (TCP=1, UDP=2, ICMP=3, ICMP6=4), as the parser found it.
    L4TypeExt,
    /// `outer.udp.l4_port.src_port`.
    UdpSrc,
    /// `outer.udp.l4_port.dst_port`.
    UdpDst,
    /// `outer.tcp.l4_port.src_port`.
    TcpSrc,
    /// `outer.tcp.l4_port.dst_port`.
    TcpDst,
    /// `outer.tcp.flags`.
    TcpFlags,
    /// VLAN tags of the outer header: 0, 1 or 2.
    OuterL2Meta,
    /// `parser_meta.outer_ip_fragmented` (0/1).
    OuterIpFragmented,
    /// `outer.ip4.version_ihl`.
    Ip4VersionIhl,
    /// `outer.ip4.total_len`.
    Ip4TotalLen,
    /// `outer.ip4.identification`.
    Ip4Id,
    /// `outer.ip4.flags_fragment_offset`.
    Ip4FlagsFrag,
    /// `outer.icmp.type`.
    IcmpType,
    /// `outer.icmp.code`.
    IcmpCode,
    /// `outer.transport.src_port` (UDP or TCP).
    L4Src,
    /// `outer.transport.dst_port` (UDP or TCP).
    L4Dst,
}

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
/// How a field's bytes sit in the key: big-endian header bytes or a native u32 enum.
#[derive(Clone, Copy)]
enum Enc {
    Be,
    Ne32,
}

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
impl Field {
    /// (offset in the key, bytes, encoding, props needed).
    fn place(self) -> (usize, usize, Enc, u32) {
        use off::hf;
        let o = off::OUTER;
        let b = |x| props::bit(props::OUTER, x);
        match self {
            Field::OuterL3Meta | Field::L3Type => (off::PM_OUTER_L3, 4, Enc::Ne32, 0),
            Field::OuterL4Meta => (off::PM_OUTER_L4, 4, Enc::Ne32, 0),
            Field::OuterL2Meta => (off::PM_OUTER_L2, 4, Enc::Ne32, 0),
            Field::OuterIpFragmented => (off::PM_OUTER_FRAG, 1, Enc::Be, 0),
            Field::EthType => (o + hf::ETH_TYPE, 2, Enc::Be, 0),
            Field::SrcMac => (o + hf::ETH_SRC, 6, Enc::Be, b(props::ETH)),
            Field::DstMac => (o + hf::ETH_DST, 6, Enc::Be, b(props::ETH)),
            Field::Ip4Src => (o + hf::IP, 4, Enc::Be, b(props::IP4)),
            Field::Ip4Dst => (o + hf::IP + 4, 4, Enc::Be, b(props::IP4)),
            Field::Ip4VersionIhl => (o + hf::IP + 8, 1, Enc::Be, b(props::IP4)),
            Field::Ip4DscpEcn => (o + hf::IP + 9, 1, Enc::Be, b(props::IP4)),
            Field::Ip4TotalLen => (o + hf::IP + 10, 2, Enc::Be, b(props::IP4)),
            Field::Ip4Id => (o + hf::IP + 12, 2, Enc::Be, b(props::IP4)),
            Field::Ip4FlagsFrag => (o + hf::IP + 14, 2, Enc::Be, b(props::IP4)),
            Field::Ip4Proto => (o + hf::IP + 16, 1, Enc::Be, b(props::IP4)),
            Field::Ip4Ttl => (o + hf::IP + 17, 1, Enc::Be, b(props::IP4)),
            Field::UdpSrc => (o + hf::L4, 2, Enc::Be, b(props::UDP)),
            Field::UdpDst => (o + hf::L4 + 2, 2, Enc::Be, b(props::UDP)),
            Field::TcpSrc => (o + hf::L4, 2, Enc::Be, b(props::TCP)),
            Field::TcpDst => (o + hf::L4 + 2, 2, Enc::Be, b(props::TCP)),
            Field::TcpFlags => (o + hf::L4 + 5, 1, Enc::Be, b(props::TCP)),
            Field::IcmpType => (o + hf::L4, 1, Enc::Be, b(props::ICMP)),
            Field::IcmpCode => (o + hf::L4 + 1, 1, Enc::Be, b(props::ICMP)),
            Field::L4Src => (o + hf::L4, 2, Enc::Be, b(props::PORTS)),
            Field::L4Dst => (o + hf::L4 + 2, 2, Enc::Be, b(props::PORTS)),
            // Compiled to props (see FieldMatch::add_to), never to bytes.
            Field::L4TypeExt => (0, 0, Enc::Be, 0),
        }
    }

    /// All-ones value of the field's width (a template value meaning "changeable").
    pub fn full_mask(self) -> u64 {
        match self.place() {
            (_, _, Enc::Ne32, _) => u64::from(u32::MAX),
            (_, 0, _, _) => u64::from(u32::MAX),
            (_, n, _, _) => (1u64 << (8 * n)) - 1,
        }
    }
}

/// One masked comparison: `packet_value & mask == value & mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldMatch {
    /// Which field.
    pub field: Field,
    /// Expected value.
    pub value: u64,
    /// Bits compared.
    pub mask: u64,
}

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
/// `doca_flow_l2_meta` values for 0, 1 and 2 VLAN tags.
const L2_META_OF_COUNT: [u64; 3] = [0, 2, 1];

#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
impl FieldMatch {
    /// Adds this comparison to a byte-level pattern under construction.
    pub(super) fn add_to(&self, b: &mut PatternBuilder) {
        if self.mask == 0 {
            return;
        }
        if self.field == Field::L4TypeExt {
            let x = match self.value & self.mask {
                1 => props::TCP,
                2 => props::UDP,
                3 => props::ICMP,
                4 => props::ICMP6,
                _ => return,
            };
            b.need |= props::bit(props::OUTER, x);
            return;
        }
        let (at, len, enc, need) = self.field.place();
        let value = if self.field == Field::OuterL2Meta {
            L2_META_OF_COUNT
                .get(self.value as usize)
                .copied()
                .unwrap_or(3)
        } else {
            self.value
        };
        b.need |= need;
        match enc {
            Enc::Ne32 => {
                b.bytes(
                    at,
                    &(self.mask as u32).to_ne_bytes(),
                    &(value as u32).to_ne_bytes(),
                );
            }
            Enc::Be => {
                let m = self.mask.to_be_bytes();
                let v = value.to_be_bytes();
                b.bytes(at, &m[8 - len..], &v[8 - len..]);
            }
        }
    }
}
