//! DOCA Flow actions through the C API: frames rewritten by BASIC pipe actions (constant
//! and per-entry values, an ADD descriptor decrementing the TTL) and by CONTROL entry
//! actions under masks, VLAN push and pop, IPv6 fields; checked byte for byte against
//! frames built here, with checksums recomputed independently. Unsupported actions are
//! NOT_SUPPORTED with one log line each.

mod flow_util;
mod support;

use doca_test_support::frames::{checksum, ones_complement_sum};
use std::ffi::c_char;
use std::ptr::{null, null_mut};

use doca_soft::capi::doca_flow::*;
use doca_soft::testing::frames::{tcp4, udp4, udp6};
use flow_util::*;

static Q0: [u16; 1] = [0];
static Q1: [u16; 1] = [1];

/// Recomputes the IPv4 header checksum and the TCP/UDP checksum of an Ethernet + IPv4
/// frame (a zero UDP checksum stays zero), as the expected result of a rewrite.
fn fix_v4(f: &mut [u8], l2: usize) {
    let ip = l2 + 14;
    f[ip + 10..ip + 12].fill(0);
    let c = checksum(&f[ip..ip + 20]);
    f[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    let proto = f[ip + 9];
    let l4 = ip + 20;
    let at = match proto {
        6 => l4 + 16,
        17 if f[l4 + 6..l4 + 8] != [0, 0] => l4 + 6,
        _ => return,
    };
    f[at..at + 2].fill(0);
    let mut pseudo = f[ip + 12..ip + 20].to_vec();
    pseudo.extend_from_slice(&[0, proto]);
    pseudo.extend_from_slice(&((f.len() - l4) as u16).to_be_bytes());
    let c = !ones_complement_sum(ones_complement_sum(0, &pseudo), &f[l4..]);
    f[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// The same for IPv6 + UDP.
fn fix_v6_udp(f: &mut [u8]) {
    let l4 = 54;
    f[l4 + 6..l4 + 8].fill(0);
    let mut pseudo = f[22..54].to_vec();
    pseudo.extend_from_slice(&((f.len() - l4) as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, 17]);
    let c = !ones_complement_sum(ones_complement_sum(0, &pseudo), &f[l4..]);
    f[l4 + 6..l4 + 8].copy_from_slice(&c.to_be_bytes());
}

/// Valid frames: checksums computed (UDP ones too, which the builders leave zero).
fn checksummed(mut f: Vec<u8>) -> Vec<u8> {
    if f[23] == 17 {
        f[40] = 0xff; // any non-zero value: fix_v4 then computes the real checksum
    }
    fix_v4(&mut f, 0);
    f
}

fn set_actions(
    c: *mut PipeCfg,
    acts: &doca_flow_actions_v1,
    mask: Option<&doca_flow_actions_v1>,
    descs: Option<&doca_flow_action_descs_v1>,
) -> u32 {
    let a = [acts as *const _ as *mut doca_flow_actions_v1];
    let k = [mask.map_or(null_mut(), |k| k as *const _ as *mut doca_flow_actions_v1)];
    let d = [descs.map_or(null_mut(), |d| {
        d as *const _ as *mut doca_flow_action_descs_v1
    })];
    // SAFETY: arrays of one pointer each, valid for the call.
    unsafe { doca_flow_pipe_cfg_set_actions_v1(c, a.as_ptr(), k.as_ptr(), d.as_ptr(), 1) }
}

/// An ADD descriptor on `field` (the value to add is in the actions).
fn add_desc(field: &'static std::ffi::CStr, width: u32) -> doca_flow_action_desc_v1 {
    let mut d = doca_flow_action_desc_v1 {
        type_: DOCA_FLOW_ACTION_ADD,
        ..Default::default()
    };
    d.__bindgen_anon_1.field_op.dst.field_string = field.as_ptr() as *const c_char;
    d.__bindgen_anon_1.field_op.width = width;
    d
}

/// BASIC pipe: MAC constant, destination address per entry, TTL decremented by an ADD
/// descriptor; checksums fixed (a zero UDP checksum stays zero).
#[test]
fn basic_pipe_rewrites_with_entry_values() {
    let _g = serial();
    let rig = Rig::new(&[0], 1);
    let mut t = doca_flow_match_v1::default();
    t.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
    m::udp(&mut t.outer).l4_port.dst_port = u16::MAX;
    let mut acts = doca_flow_actions_v1::default();
    acts.outer.eth.dst_mac = [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff];
    m::ip4(&mut acts.outer).dst_ip = u32::MAX; // per entry
    m::ip4(&mut acts.outer).ttl = 0xff; // + 0xff: minus one
    let mut desc = [add_desc(c"outer.ipv4.ttl", 8)];
    let descs = doca_flow_action_descs_v1 {
        nb_action_desc: 1,
        desc_array: desc.as_mut_ptr(),
    };
    let c = pipe_cfg(rig.port, c"rewrite", DOCA_FLOW_PIPE_BASIC, true);
    // SAFETY: live config; structs copied.
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, &t, null()), OK);
        assert_eq!(doca_flow_pipe_cfg_set_monitor_v1(c, &counting(0)), OK);
    }
    assert_eq!(set_actions(c, &acts, None, Some(&descs)), OK);
    let pipe = create(c, Some(&rss(&Q0, 0)), Some(&kind(DOCA_FLOW_FWD_DROP)));
    for (port, dst) in [(5000u16, [192, 168, 1, 1]), (5001, [192, 168, 1, 2])] {
        let mut e = doca_flow_match_v1::default();
        m::udp(&mut e.outer).l4_port.dst_port = port.to_be();
        let mut ea = doca_flow_actions_v1::default();
        m::ip4(&mut ea.outer).dst_ip = u32::from_be_bytes(dst).to_be();
        assert_eq!(
            basic_entry(0, pipe, Some(&e), Some(&ea), None, null_mut()).0,
            OK
        );
    }
    rig.process(0);
    let with_csum = checksummed(udp4([10, 0, 0, 1], [10, 0, 0, 2], 7, 5000, b"payload!"));
    let zero_csum = udp4([10, 0, 0, 1], [10, 0, 0, 2], 7, 5001, b"payload?");
    rig.send(&[with_csum.clone(), zero_csum.clone()]);
    let got = rig.got(0);
    assert_eq!(got.len(), 2);
    let expect = |orig: &[u8], dst: [u8; 4]| {
        let mut f = orig.to_vec();
        f[..6].copy_from_slice(&[0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]);
        f[30..34].copy_from_slice(&dst);
        f[22] -= 1;
        fix_v4(&mut f, 0);
        f
    };
    assert_eq!(got[0], expect(&with_csum, [192, 168, 1, 1]));
    assert_ne!(&got[0][40..42], &[0, 0], "UDP checksum recomputed");
    assert_eq!(got[1], expect(&zero_csum, [192, 168, 1, 2]));
    assert_eq!(&got[1][40..42], &[0, 0], "no UDP checksum stays none");
    rig.finish();
}

/// CONTROL entries with actions under masks: only the masked bits change (the last byte
/// of the source address), TCP ports and flags rewritten, TCP checksum fixed.
#[test]
fn control_entry_actions_under_masks() {
    let _g = serial();
    let rig = Rig::new(&[0, 1], 1);
    let root = rig.control_root();
    let mut mt = doca_flow_match_v1::default();
    m::tcp(&mut mt.outer).l4_port.dst_port = 80u16.to_be();
    let mut acts = doca_flow_actions_v1::default();
    m::ip4(&mut acts.outer).src_ip = u32::from_be_bytes([9, 9, 9, 9]).to_be();
    let tcp = m::tcp(&mut acts.outer);
    tcp.l4_port.dst_port = 8080u16.to_be();
    tcp.flags = 0x18;
    let mut mask = doca_flow_actions_v1::default();
    m::ip4(&mut mask.outer).src_ip = u32::from_be_bytes([0, 0, 0, 0xff]).to_be();
    let tk = m::tcp(&mut mask.outer);
    tk.l4_port.dst_port = 0xffff;
    tk.flags = 0x08; // only PSH
    let (rc, e) = control_entry(
        root,
        0,
        &mt,
        None,
        Some((&acts, Some(&mask))),
        Some(&counting(0)),
        &rss(&Q1, 0),
        null_mut(),
    );
    assert_eq!(rc, OK);
    rig.process(0);
    let f = checksummed(tcp4(
        [10, 0, 0, 1],
        [10, 0, 0, 2],
        1234,
        80,
        0x10,
        b"GET / HTTP/1.0",
    ));
    rig.send(std::slice::from_ref(&f));
    let mut want = f.clone();
    want[29] = 9; // last byte of the source only
    want[36..38].copy_from_slice(&8080u16.to_be_bytes());
    want[47] = 0x18; // ACK kept, PSH added
    fix_v4(&mut want, 0);
    assert_eq!(rig.got(1), vec![want]);
    assert_eq!(query(e).1, 1);
    rig.finish();
}

/// VLAN push in the root pipe and pop in the next; IPv6 hop limit, traffic class and flow
/// label rewritten with the UDP checksum (mandatory over IPv6) computed.
#[test]
fn vlan_push_pop_and_ipv6_fields() {
    let _g = serial();
    let rig = Rig::new(&[0, 1], 1);
    // Second pipe: pops the tag of frames to port 9, then rewrites nothing -> q0.
    let popper = create(
        pipe_cfg(rig.port, c"pop", DOCA_FLOW_PIPE_CONTROL, false),
        None,
        None,
    );
    let mut mt = doca_flow_match_v1::default();
    mt.outer.eth_vlan[0].tci = 42u16.to_be();
    let pop = doca_flow_actions_v1 {
        pop_vlan: true,
        ..Default::default()
    };
    assert_eq!(
        control_entry(
            popper,
            0,
            &mt,
            None,
            Some((&pop, None)),
            None,
            &rss(&Q0, 0),
            null_mut()
        )
        .0,
        OK
    );
    let root = rig.control_root();
    // UDP to 9: push VLAN 42 and go on to the popper.
    let mut u9 = doca_flow_match_v1::default();
    m::udp(&mut u9.outer).l4_port.dst_port = 9u16.to_be();
    let mut push = doca_flow_actions_v1 {
        has_push: true,
        ..Default::default()
    };
    push.push.type_ = DOCA_FLOW_PUSH_ACTION_VLAN;
    push.push.__bindgen_anon_1.vlan.eth_type = 0x8100u16.to_be();
    push.push.__bindgen_anon_1.vlan.vlan_hdr.tci = 42u16.to_be();
    assert_eq!(
        control_entry(
            root,
            0,
            &u9,
            None,
            Some((&push, None)),
            None,
            &to_pipe(popper),
            null_mut()
        )
        .0,
        OK
    );
    // IPv6: hop limit 7, traffic class 0xa5, flow label 0x12345 -> q1.
    let mut v6 = doca_flow_match_v1::default();
    v6.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV6;
    let mut a6 = doca_flow_actions_v1::default();
    let ip6 = m::ip6(&mut a6.outer);
    ip6.hop_limit = 7;
    ip6.traffic_class = 0xa5;
    ip6.flow_label = 0x12345u32.to_be();
    assert_eq!(
        control_entry(
            root,
            1,
            &v6,
            None,
            Some((&a6, None)),
            None,
            &rss(&Q1, 0),
            null_mut()
        )
        .0,
        OK
    );
    rig.process(0);
    let plain = checksummed(udp4([1, 2, 3, 4], [5, 6, 7, 8], 1, 9, b"tag me"));
    // With a valid UDP checksum, which none of these rewrites (outside the pseudo-header)
    // touch.
    let mut six = udp6([0xfe; 16], [0xfd; 16], 1, 2, b"six");
    fix_v6_udp(&mut six);
    rig.send(&[plain.clone(), six.clone()]);
    assert_eq!(
        rig.got(0),
        vec![plain],
        "pushed then popped: the original frame"
    );
    let mut want = six.clone();
    want[14] = 0x6a; // version 6, traffic class high nibble a
    want[15] = 0x51; // traffic class low nibble 5, flow label 0x1....
    want[16..18].copy_from_slice(&[0x23, 0x45]);
    want[21] = 7;
    assert_eq!(rig.got(1), vec![want]);
    rig.finish();
}

/// Decap, encap, tunnel rewrites, NAT64, crypto, COPY descriptors, copying parser
/// metadata and rewriting lengths are NOT_SUPPORTED, one log line each; entry actions on a
/// pipe without actions are INVALID_VALUE.
#[test]
fn unsupported_actions_are_refused() {
    let _g = serial();
    let rig = Rig::new(&[0], 1);
    let c = pipe_cfg(rig.port, c"p", DOCA_FLOW_PIPE_BASIC, false);
    let mut cases: Vec<(doca_flow_actions_v1, &str)> = Vec::new();
    let base = doca_flow_actions_v1::default();
    let mut x = base;
    x.decap_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
    cases.push((x, "decap"));
    let mut x = base;
    x.encap_type = DOCA_FLOW_RESOURCE_TYPE_SHARED;
    cases.push((x, "encap"));
    let mut x = base;
    x.tun.type_ = DOCA_FLOW_TUN_VXLAN;
    cases.push((x, "tunnel header"));
    let mut x = base;
    x.nat64.original_l3_type = DOCA_FLOW_L3_TYPE_IP4;
    cases.push((x, "NAT64"));
    let mut x = base;
    x.crypto.action_type = DOCA_FLOW_CRYPTO_ACTION_ENCRYPT;
    cases.push((x, "crypto"));
    let mut x = base;
    x.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
    cases.push((x, "parser metadata"));
    let mut x = base;
    m::ip4(&mut x.outer).total_len = 100u16.to_be();
    cases.push((x, "outer.ip4.total_len"));
    for (a, what) in &cases {
        let (rc, log) = logged(|| set_actions(c, a, None, None));
        assert_eq!(rc, NOT_SUPPORTED, "{what}");
        assert_eq!(log.len(), 1, "{what}: {log:?}");
        assert!(
            log[0].contains(what) && log[0].contains("not supported"),
            "{log:?}"
        );
    }
    let mut copy = add_desc(c"outer.ipv4.ttl", 8);
    copy.type_ = DOCA_FLOW_ACTION_COPY;
    let descs = doca_flow_action_descs_v1 {
        nb_action_desc: 1,
        desc_array: &mut copy,
    };
    let mut ttl = base;
    m::ip4(&mut ttl.outer).ttl = 1;
    let (rc, log) = logged(|| set_actions(c, &ttl, None, Some(&descs)));
    assert_eq!((rc, log.len()), (NOT_SUPPORTED, 1), "{log:?}");
    assert!(log[0].contains("COPY"));
    // Bad arguments.
    // SAFETY: NULL arrays are rejected before use.
    assert_eq!(
        unsafe { doca_flow_pipe_cfg_set_actions_v1(c, null(), null(), null(), 1) },
        INVALID
    );
    assert_eq!(set_actions(c, &ttl, None, None), OK);
    // SAFETY: the config was created above.
    assert_eq!(unsafe { doca_flow_pipe_cfg_destroy(c) }, OK);
    // Entry actions need pipe actions; action_idx must exist.
    let plain = create(
        pipe_cfg(rig.port, c"plain", DOCA_FLOW_PIPE_BASIC, false),
        Some(&kind(DOCA_FLOW_FWD_DROP)),
        None,
    );
    assert_eq!(
        basic_entry(0, plain, None, Some(&ttl), None, null_mut()).0,
        INVALID
    );
    let c = pipe_cfg(rig.port, c"acts", DOCA_FLOW_PIPE_BASIC, false);
    assert_eq!(set_actions(c, &ttl, None, None), OK);
    let acts = create(c, Some(&kind(DOCA_FLOW_FWD_DROP)), None);
    let mut e = null_mut();
    // SAFETY: live pipe; action_idx 3 is beyond its one action.
    let rc = unsafe {
        doca_flow_pipe_basic_add_entry_v1(
            0,
            acts,
            null(),
            3,
            null(),
            null(),
            null(),
            0,
            null_mut(),
            &mut e,
        )
    };
    assert_eq!(rc, INVALID);
    rig.finish();
}
