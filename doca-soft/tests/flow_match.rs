//! The DOCA Flow match model through the C API, on a wire port: parser metadata, outer and
//! inner headers (VXLAN, GTP-U, GRE), tunnel fields, VLAN and IPv6, masks, templates with
//! changeable fields, metadata written by one pipe and matched by the next, and refusals
//! (out-of-range enums, fields the runtime cannot see).

mod flow_util;
mod support;

use std::ptr::null_mut;

use doca_soft::capi::doca_flow::*;
use doca_soft::testing::frames::{gre4, gtpu4, icmp4_echo, tcp4, udp4, udp6, vxlan4};
use flow_util::*;

static Q0: [u16; 1] = [0];
static Q1: [u16; 1] = [1];
static Q2: [u16; 1] = [2];
static Q3: [u16; 1] = [3];

/// A frame with `tags` VLAN tags (TCIs 100, 200) inserted after the MACs.
fn tagged(f: &[u8], tags: usize) -> Vec<u8> {
    let mut v = f[..12].to_vec();
    for tci in [100u16, 200].iter().take(tags) {
        v.extend_from_slice(&[0x81, 0x00]);
        v.extend_from_slice(&tci.to_be_bytes());
    }
    v.extend_from_slice(&f[12..]);
    v
}

/// parser_meta (L2/L3/L4 types, fragmentation, checksum validity) in a root CONTROL pipe.
#[test]
fn parser_meta_matches_what_the_parser_found() {
    let _g = serial();
    let rig = Rig::new(&[0, 1, 2, 3], 1);
    let root = rig.control_root();
    // prio 0: fragments -> q3; prio 1: single VLAN -> q2; prio 2: IPv6/UDP -> q1;
    // prio 3: IPv4 with a bad header checksum -> q0 (the rest miss).
    let mut frag = doca_flow_match_v1::default();
    frag.parser_meta.outer_ip_fragmented = 1;
    let mut vlan = doca_flow_match_v1::default();
    vlan.parser_meta.outer_l2_type = DOCA_FLOW_L2_META_SINGLE_VLAN;
    let mut v6udp = doca_flow_match_v1::default();
    v6udp.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV6;
    v6udp.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
    let mut bad_csum = doca_flow_match_v1::default();
    bad_csum.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
    let mut bad_mask = doca_flow_match_v1::default();
    bad_mask.parser_meta.outer_l3_type = u32::MAX;
    bad_mask.parser_meta.outer_ip4_checksum_ok = 0xff;
    for (prio, m, mask, q) in [
        (0, &frag, None, &Q3),
        (1, &vlan, None, &Q2),
        (2, &v6udp, None, &Q1),
        (3, &bad_csum, Some(&bad_mask), &Q0),
    ] {
        let (rc, _) = control_entry(root, prio, m, mask, None, None, &rss(q, 0), null_mut());
        assert_eq!(rc, OK);
    }
    rig.process(0);
    let good = udp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"x");
    let mut frag_f = good.clone();
    frag_f[20] = 0x20; // more fragments (the checksum no longer matches either)
    let mut broken = good.clone();
    broken[24] ^= 0x55; // IPv4 header checksum
    let v6 = udp6([0xfe; 16], [0xfd; 16], 7, 8, b"six");
    rig.send(&[
        good.clone(),
        frag_f.clone(),
        tagged(&good, 1),
        tagged(&good, 2),
        v6.clone(),
        broken.clone(),
    ]);
    assert_eq!(
        rig.got(3),
        vec![frag_f],
        "fragment (prio 0 beats the bad checksum)"
    );
    assert_eq!(rig.got(2), vec![tagged(&good, 1)], "one tag only");
    assert_eq!(rig.got(1), vec![v6]);
    assert_eq!(rig.got(0), vec![broken]);
    assert_eq!(
        rig.rx.counters().dropped_no_match,
        2,
        "the good frame and QinQ"
    );
    rig.finish();
}

/// A template with a constant protocol and changeable addresses and ports (the
/// gpu_packet_processing TCP session pipe), entries added and removed at run time.
#[test]
fn basic_template_with_per_entry_five_tuples() {
    let _g = serial();
    let rig = Rig::new(&[4, 5], 2);
    let mut t = doca_flow_match_v1::default();
    let ip = m::ip4(&mut t.outer);
    ip.next_proto = 6;
    ip.src_ip = u32::MAX;
    ip.dst_ip = u32::MAX;
    let tcp = m::tcp(&mut t.outer);
    tcp.l4_port.src_port = u16::MAX;
    tcp.l4_port.dst_port = u16::MAX;
    let c = pipe_cfg(rig.port, c"sessions", DOCA_FLOW_PIPE_BASIC, true);
    // SAFETY: live config; the match is copied.
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, &t, std::ptr::null()), OK);
        assert_eq!(doca_flow_pipe_cfg_set_monitor_v1(c, &counting(0)), OK);
    }
    static Q4: [u16; 1] = [4];
    let pipe = create(c, Some(&rss(&Q4, 0)), Some(&kind(DOCA_FLOW_FWD_DROP)));
    let session = |sport: u16| {
        let mut e = doca_flow_match_v1::default();
        let ip = m::ip4(&mut e.outer);
        ip.src_ip = u32::from_be_bytes([10, 0, 0, 1]).to_be();
        ip.dst_ip = u32::from_be_bytes([10, 0, 0, 2]).to_be();
        let tcp = m::tcp(&mut e.outer);
        tcp.l4_port.src_port = sport.to_be();
        tcp.l4_port.dst_port = 80u16.to_be();
        tcp.flags = 0; // not in the template: ignored
        e
    };
    // Queue 1, as a second thread of the application would.
    let (rc, a) = basic_entry(1, pipe, Some(&session(40000)), None, None, null_mut());
    assert_eq!(rc, OK);
    let (rc, b) = basic_entry(1, pipe, Some(&session(40001)), None, None, null_mut());
    assert_eq!(rc, OK);
    rig.process(1);
    let f = |sport, dport| tcp4([10, 0, 0, 1], [10, 0, 0, 2], sport, dport, 0x10, b"d");
    let udp_same_ports = udp4([10, 0, 0, 1], [10, 0, 0, 2], 40000, 80, b"u");
    rig.send(&[
        f(40000, 80),
        f(40001, 80),
        f(40002, 80),
        f(40000, 81),
        udp_same_ports,
    ]);
    assert_eq!(rig.got(4).len(), 2);
    assert_eq!((query(a).1, query(b).1), (1, 1));
    assert_eq!(
        rig.rx.counters().dropped_by_flow,
        3,
        "other sessions, and UDP"
    );
    // Removal takes effect at once; the DEL completes on the queue it was issued on.
    assert_eq!(
        doca_flow_pipe_remove_entry(1, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, a),
        OK
    );
    rig.send(&[f(40000, 80)]);
    assert_eq!(rig.got(4).len(), 2, "removed session dropped");
    rig.process(1);
    assert_eq!(query(a).0, NOT_FOUND);
    rig.finish();
}

/// VXLAN, GTP-U and GRE: tunnel fields and inner headers, in one CONTROL pipe.
#[test]
fn tunnels_and_inner_headers() {
    let _g = serial();
    let rig = Rig::new(&[0, 1, 2, 3], 1);
    let root = rig.control_root();
    // VXLAN VNI 0x123456 whose inner TCP goes to port 443 -> q0.
    let mut vx = doca_flow_match_v1::default();
    vx.tun.type_ = DOCA_FLOW_TUN_VXLAN;
    // Writing a union field is safe; tun.type says which view is meant.
    vx.tun.__bindgen_anon_1.__bindgen_anon_1.vxlan_tun_id = (0x12_3456u32 << 8).to_be();
    m::tcp(&mut vx.inner).l4_port.dst_port = 443u16.to_be();
    // GTP-U TEID 7 carrying IPv4 from 192.168.7.7 -> q1.
    let mut gt = doca_flow_match_v1::default();
    gt.tun.type_ = DOCA_FLOW_TUN_GTPU;
    gt.tun.__bindgen_anon_1.__bindgen_anon_3.gtp_teid = 7u32.to_be();
    m::ip4(&mut gt.inner).src_ip = u32::from_be_bytes([192, 168, 7, 7]).to_be();
    // GRE with key 99 -> q2.
    let mut gr = doca_flow_match_v1::default();
    gr.tun.type_ = DOCA_FLOW_TUN_GRE;
    // SAFETY: the gre view.
    unsafe {
        let g = &mut gr.tun.__bindgen_anon_1.__bindgen_anon_2;
        g.__bindgen_anon_1.__bindgen_anon_1.key_present = true;
        g.__bindgen_anon_1.__bindgen_anon_1.gre_key = 99u32.to_be();
    }
    // Inner L4 type by parser metadata: inner ICMP of any tunnel -> q3.
    let mut inner_icmp = doca_flow_match_v1::default();
    inner_icmp.parser_meta.inner_l4_type = DOCA_FLOW_L4_META_ICMP;
    for (prio, mt, q) in [
        (0, &vx, &Q0),
        (0, &gt, &Q1),
        (0, &gr, &Q2),
        (1, &inner_icmp, &Q3),
    ] {
        assert_eq!(
            control_entry(root, prio, mt, None, None, None, &rss(q, 0), null_mut()).0,
            OK
        );
    }
    rig.process(0);
    let in_tcp = |dport| tcp4([192, 168, 7, 7], [192, 168, 7, 8], 1000, dport, 0x10, b"i");
    let in_icmp = icmp4_echo([192, 168, 7, 9], [192, 168, 7, 8], b"ping");
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let vx_hit = vxlan4(a, b, 0x12_3456, &in_tcp(443));
    let vx_port_miss = vxlan4(a, b, 0x12_3456, &in_tcp(80));
    let vx_vni_miss = vxlan4(a, b, 0x12_3457, &in_tcp(443));
    let gt_hit = gtpu4(a, b, 7, &in_tcp(80)[14..]);
    let gt_miss = gtpu4(a, b, 8, &in_tcp(80)[14..]);
    let gr_hit = gre4(a, b, Some(99), 0x0800, &in_tcp(80)[14..]);
    let gr_nokey = gre4(a, b, None, 0x0800, &in_tcp(80)[14..]);
    let icmp_in_vx = vxlan4(a, b, 1, &in_icmp);
    // Outer headers alone never match inner-header entries.
    let plain = in_tcp(443);
    rig.send(&[
        vx_hit.clone(),
        vx_port_miss,
        vx_vni_miss,
        gt_hit.clone(),
        gt_miss,
        gr_hit.clone(),
        gr_nokey,
        icmp_in_vx.clone(),
        plain,
    ]);
    assert_eq!(rig.got(0), vec![vx_hit]);
    assert_eq!(rig.got(1), vec![gt_hit]);
    assert_eq!(rig.got(2), vec![gr_hit]);
    assert_eq!(rig.got(3), vec![icmp_in_vx]);
    assert_eq!(rig.rx.counters().dropped_no_match, 5);
    rig.finish();
}

/// Masks pick bits; VLAN TCIs, MACs and IPv6 addresses match; a field of another header
/// view never matches a frame without that header.
#[test]
fn masks_vlans_macs_and_ipv6() {
    let _g = serial();
    let rig = Rig::new(&[0, 1, 2, 3], 1);
    let root = rig.control_root();
    // 10.0.0.0/24 destinations -> q0 (mask).
    let mut net = doca_flow_match_v1::default();
    m::ip4(&mut net.outer).dst_ip = u32::from_be_bytes([10, 0, 0, 0]).to_be();
    let mut net_mask = doca_flow_match_v1::default();
    m::ip4(&mut net_mask.outer).dst_ip = u32::from_be_bytes([255, 255, 255, 0]).to_be();
    // VLAN 200 in the second tag -> q1.
    let mut v = doca_flow_match_v1::default();
    v.outer.eth_vlan[1].tci = 200u16.to_be();
    // Source MAC 02:00:00:00:00:01 and IPv6 destination fd..fd -> q2.
    let mut six = doca_flow_match_v1::default();
    six.outer.eth.src_mac = [2, 0, 0, 0, 0, 1];
    m::ip6(&mut six.outer).dst_ip = [u32::from_ne_bytes([0xfd; 4]); 4];
    // TCP port 22 (TCP view) -> q3; a UDP frame to port 22 must not match it.
    let mut ssh = doca_flow_match_v1::default();
    m::tcp(&mut ssh.outer).l4_port.dst_port = 22u16.to_be();
    for (p, mt, mask, q) in [
        (0, &v, None, &Q1),
        (1, &net, Some(&net_mask), &Q0),
        (1, &six, None, &Q2),
        (1, &ssh, None, &Q3),
    ] {
        assert_eq!(
            control_entry(root, p, mt, mask, None, None, &rss(q, 0), null_mut()).0,
            OK
        );
    }
    rig.process(0);
    let a = udp4([1, 1, 1, 1], [10, 0, 0, 77], 5, 6, b"");
    let b = udp4([1, 1, 1, 1], [10, 0, 1, 77], 5, 6, b"");
    let qinq = tagged(&b, 2);
    let v6 = udp6([0xfe; 16], [0xfd; 16], 7, 8, b"");
    let v6_other = udp6([0xfe; 16], [0xfc; 16], 7, 8, b"");
    let ssh_tcp = tcp4([1, 1, 1, 1], [2, 2, 2, 2], 5000, 22, 0x02, b"");
    let ssh_udp = udp4([1, 1, 1, 1], [2, 2, 2, 2], 5000, 22, b"");
    rig.send(&[
        a.clone(),
        b,
        qinq.clone(),
        v6.clone(),
        v6_other,
        ssh_tcp.clone(),
        ssh_udp,
    ]);
    assert_eq!(rig.got(0), vec![a]);
    assert_eq!(rig.got(1), vec![qinq]);
    assert_eq!(rig.got(2), vec![v6]);
    assert_eq!(rig.got(3), vec![ssh_tcp]);
    rig.finish();
}

/// Metadata set by a pipe's actions is matched by the next pipe; the port id of the
/// parser metadata is the Flow port's.
#[test]
fn metadata_flows_between_pipes_and_port_id_matches() {
    let _g = serial();
    let rig = Rig::new(&[0, 1], 1);
    // Second pipe: meta.pkt_meta 7 -> q0, 8 -> q1 (CONTROL).
    let second = create(
        pipe_cfg(rig.port, c"by_meta", DOCA_FLOW_PIPE_CONTROL, false),
        None,
        None,
    );
    for (v, q) in [(7u32, &Q0), (8u32, &Q1)] {
        let mut mt = doca_flow_match_v1::default();
        mt.meta.pkt_meta = v.to_be();
        mt.parser_meta.port_id = 0;
        assert_eq!(
            control_entry(second, 0, &mt, None, None, None, &rss(q, 0), null_mut()).0,
            OK
        );
    }
    // Root: UDP port 1000 sets pkt_meta 7, port 2000 sets 8; both go on to the second pipe.
    let root = rig.control_root();
    for (port, v) in [(1000u16, 7u32), (2000, 8)] {
        let mut mt = doca_flow_match_v1::default();
        m::udp(&mut mt.outer).l4_port.dst_port = port.to_be();
        let mut acts = doca_flow_actions_v1::default();
        acts.meta.pkt_meta = v.to_be();
        let (rc, _) = control_entry(
            root,
            0,
            &mt,
            None,
            Some((&acts, None)),
            None,
            &to_pipe(second),
            null_mut(),
        );
        assert_eq!(rc, OK);
    }
    // parser_meta.port_id 5 never matches on port 0.
    let mut other_port = doca_flow_match_v1::default();
    other_port.parser_meta.port_id = 5;
    assert_eq!(
        control_entry(
            root,
            1,
            &other_port,
            None,
            None,
            None,
            &rss(&Q0, 0),
            null_mut()
        )
        .0,
        OK
    );
    rig.process(0);
    let f = |dport| udp4([1, 1, 1, 1], [2, 2, 2, 2], 9, dport, b"m");
    rig.send(&[f(1000), f(2000), f(3000)]);
    assert_eq!(rig.got(0), vec![f(1000)]);
    assert_eq!(rig.got(1), vec![f(2000)]);
    assert_eq!(rig.rx.counters().dropped_no_match, 1);
    rig.finish();
}

/// Out-of-range enums are INVALID_VALUE; fields the runtime cannot see are NOT_SUPPORTED,
/// each refusal with exactly one log line naming what was refused.
#[test]
fn bad_enums_and_unsupported_match_fields() {
    let _g = serial();
    let rig = Rig::new(&[0], 1);
    let c = pipe_cfg(rig.port, c"p", DOCA_FLOW_PIPE_BASIC, false);
    let set = |mt: &doca_flow_match_v1, mask: Option<&doca_flow_match_v1>| {
        // SAFETY: live config; structs valid for the call.
        unsafe {
            doca_flow_pipe_cfg_set_match_v1(c, mt, mask.map_or(std::ptr::null(), |k| k as *const _))
        }
    };
    let mut l3 = doca_flow_match_v1::default();
    l3.outer.l3_type = 77;
    let (rc, log) = logged(|| set(&l3, None));
    assert_eq!(rc, INVALID);
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].contains("outer.l3_type = 77"), "{log:?}");
    let mut bad = Vec::new();
    let mut x = doca_flow_match_v1::default();
    x.outer.l4_type_ext = 9;
    bad.push(x);
    let mut x = doca_flow_match_v1::default();
    x.tun.type_ = DOCA_FLOW_TUN_MAX;
    bad.push(x);
    let mut x = doca_flow_match_v1::default();
    x.parser_meta.outer_l4_type = 5;
    bad.push(x);
    let mut x = doca_flow_match_v1::default();
    x.inner.l3_type = 3;
    bad.push(x);
    for b in &bad {
        assert_eq!(set(b, None), INVALID);
    }
    // Masks are bits, not enum values: all ones is fine there.
    let mut ok = doca_flow_match_v1::default();
    ok.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
    let mut ok_mask = doca_flow_match_v1::default();
    ok_mask.parser_meta.outer_l3_type = u32::MAX;
    assert_eq!(set(&ok, Some(&ok_mask)), OK);
    let mut unsupported: Vec<(doca_flow_match_v1, &str)> = Vec::new();
    let mut x = doca_flow_match_v1::default();
    x.parser_meta.random = 1;
    unsupported.push((x, "parser_meta.random"));
    let mut x = doca_flow_match_v1::default();
    x.parser_meta.meter_color = DOCA_FLOW_METER_COLOR_GREEN as _;
    unsupported.push((x, "parser_meta.meter_color"));
    let mut x = doca_flow_match_v1::default();
    x.tun.type_ = DOCA_FLOW_TUN_MPLS_O_UDP;
    unsupported.push((x, "MPLS"));
    let mut x = doca_flow_match_v1::default();
    x.tun.type_ = DOCA_FLOW_TUN_PSP;
    unsupported.push((x, "PSP"));
    let mut x = doca_flow_match_v1::default();
    x.tun.type_ = DOCA_FLOW_TUN_GENEVE;
    // SAFETY: the geneve view.
    unsafe { x.tun.__bindgen_anon_1.__bindgen_anon_6.geneve_options[0].data = 1 };
    unsupported.push((x, "tun.geneve_options"));
    for (x, what) in &unsupported {
        let (rc, log) = logged(|| set(x, None));
        assert_eq!(rc, NOT_SUPPORTED, "{what}");
        assert_eq!(log.len(), 1, "{what}: {log:?}");
        assert!(
            log[0].contains(what) && log[0].contains("not supported"),
            "{log:?}"
        );
    }
    // SAFETY: the config was created above.
    assert_eq!(unsafe { doca_flow_pipe_cfg_destroy(c) }, OK);
    rig.finish();
}
