//! The offsets the runtime reads C structs at (the match key of `packet/key`, the actions
//! offsets of `actions`) are the offsets of the structs our headers declare: checked at
//! compile time against the bindings.

use std::mem::{offset_of, size_of};

use super::actions::{aoff, ACTIONS_BYTES};
use super::sys::{
    doca_flow_actions_v1 as Actions, doca_flow_header_format_v1 as Hf, doca_flow_match_v1 as Match,
    doca_flow_parser_meta_v1 as Pm, doca_flow_tun_v1 as Tun,
};
use crate::packet::key::{off, KEY_BYTES};

const _: () = {
    assert!(size_of::<Match>() == KEY_BYTES);
    assert!(offset_of!(Match, meta) == off::META_PKT);
    assert!(offset_of!(Match, parser_meta) == off::PM);
    assert!(offset_of!(Match, outer) == off::OUTER);
    assert!(offset_of!(Match, tun) == off::TUN);
    assert!(offset_of!(Match, inner) == off::INNER);
    assert!(off::PM + offset_of!(Pm, port_id) == off::PM_PORT_ID);
    assert!(off::PM + offset_of!(Pm, random) == off::PM_RANDOM);
    assert!(off::PM + offset_of!(Pm, ipsec_syndrome) == off::PM_IPSEC_SYNDROME);
    assert!(off::PM + offset_of!(Pm, ipsec_ar_syndrome) == off::PM_IPSEC_AR_SYNDROME);
    assert!(off::PM + offset_of!(Pm, psp_syndrome) == off::PM_PSP_SYNDROME);
    assert!(off::PM + offset_of!(Pm, meter_color) == off::PM_METER_COLOR);
    assert!(off::PM + offset_of!(Pm, outer_l2_type) == off::PM_OUTER_L2);
    assert!(off::PM + offset_of!(Pm, outer_l3_type) == off::PM_OUTER_L3);
    assert!(off::PM + offset_of!(Pm, outer_l4_type) == off::PM_OUTER_L4);
    assert!(off::PM + offset_of!(Pm, inner_l2_type) == off::PM_INNER_L2);
    assert!(off::PM + offset_of!(Pm, inner_l3_type) == off::PM_INNER_L3);
    assert!(off::PM + offset_of!(Pm, inner_l4_type) == off::PM_INNER_L4);
    assert!(off::PM + offset_of!(Pm, outer_ip_fragmented) == off::PM_OUTER_FRAG);
    assert!(off::PM + offset_of!(Pm, inner_ip_fragmented) == off::PM_INNER_FRAG);
    assert!(off::PM + offset_of!(Pm, outer_l3_ok) == off::PM_OUTER_L3_OK);
    assert!(off::PM + offset_of!(Pm, outer_l4_checksum_ok) == off::PM_OUTER_L4_CSUM_OK);
    assert!(off::PM + offset_of!(Pm, inner_l3_ok) == off::PM_INNER_L3_OK);
    assert!(off::PM + offset_of!(Pm, inner_l4_checksum_ok) == off::PM_INNER_L4_CSUM_OK);
    assert!(offset_of!(Hf, eth) == off::hf::ETH_SRC);
    assert!(offset_of!(Hf, l2_valid_headers) == off::hf::L2_VALID);
    assert!(offset_of!(Hf, eth_vlan) == off::hf::VLAN);
    assert!(offset_of!(Hf, l3_type) == off::hf::L3_TYPE);
    assert!(offset_of!(Hf, __bindgen_anon_1) == off::hf::IP);
    assert!(offset_of!(Hf, l4_type_ext) == off::hf::L4_TYPE);
    assert!(offset_of!(Hf, __bindgen_anon_2) == off::hf::L4);
    assert!(size_of::<Hf>() == off::hf::SIZE);
    assert!(offset_of!(Tun, type_) == off::tun::TYPE);
    assert!(offset_of!(Tun, __bindgen_anon_1) == off::tun::U);
    assert!(size_of::<Actions>() == ACTIONS_BYTES);
    assert!(offset_of!(Actions, decap_type) == aoff::DECAP_TYPE);
    assert!(offset_of!(Actions, pop_vlan) == aoff::POP_VLAN);
    assert!(offset_of!(Actions, meta) == aoff::META);
    assert!(offset_of!(Actions, parser_meta) == aoff::PARSER_META);
    assert!(offset_of!(Actions, outer) == aoff::OUTER);
    assert!(offset_of!(Actions, tun) == aoff::TUN);
    assert!(offset_of!(Actions, encap_type) == aoff::ENCAP_TYPE);
    assert!(offset_of!(Actions, has_push) == aoff::HAS_PUSH);
    assert!(offset_of!(Actions, push) == aoff::PUSH);
    assert!(offset_of!(Actions, nat64) == aoff::NAT64);
    assert!(offset_of!(Actions, has_crypto_encap) == aoff::HAS_CRYPTO_ENCAP);
    assert!(offset_of!(Actions, crypto) == aoff::CRYPTO);
};
