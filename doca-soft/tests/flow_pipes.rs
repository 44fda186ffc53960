//! DOCA Flow pipes and forwards through the C API: HASH pipes (HASH and IDENTITY maps,
//! `doca_flow_pipe_calc_hash` agreeing with the slot a frame takes), forwards to RSS (inner
//! headers, symmetric hash), to another port, to the kernel, CHANGEABLE per-entry forwards,
//! miss counters, shared counters and shared RSS (SYSTEM and PORT modes), the default
//! miss, miss updates, pipe dumps, and the pipe graph refusing loops.

mod flow_util;
mod support;

use std::ptr::{null, null_mut};

use doca_soft::capi::doca_flow::*;
use doca_soft::testing::frames::{tcp4, udp4, vxlan4};
use flow_util::*;
use support::{eventually, RecordingSink};

static Q0: [u16; 1] = [0];
static Q1: [u16; 1] = [1];
static Q2: [u16; 1] = [2];
static Q0123: [u16; 4] = [0, 1, 2, 3];

fn set_match(
    c: *mut PipeCfg,
    mt: Option<&doca_flow_match_v1>,
    mask: Option<&doca_flow_match_v1>,
) -> u32 {
    // SAFETY: live config; structs valid for the call.
    unsafe {
        doca_flow_pipe_cfg_set_match_v1(
            c,
            mt.map_or(null(), |x| x as *const _),
            mask.map_or(null(), |x| x as *const _),
        )
    }
}

fn hash_entry(
    pipe: *mut doca_flow_pipe,
    index: u32,
    fwd: &doca_flow_fwd_v1,
) -> (u32, *mut doca_flow_pipe_entry) {
    let mut e = null_mut();
    // SAFETY: live pipe; forward valid for the call.
    let rc = unsafe {
        doca_flow_pipe_hash_add_entry_v1(
            0,
            pipe,
            index,
            0,
            null(),
            &counting(0),
            fwd,
            0,
            null_mut(),
            &mut e,
        )
    };
    (rc, e)
}

/// A HASH pipe over the UDP source port: the slot a frame takes is calc_hash % entries;
/// with IDENTITY it is the port itself modulo the entries.
#[test]
fn hash_pipes_pick_the_slot_calc_hash_names() {
    let _g = serial();
    let rig = Rig::new(&[0, 1, 2, 3], 1);
    let mut mask = doca_flow_match_v1::default();
    m::udp(&mut mask.outer).l4_port.src_port = u16::MAX;
    let mk = |name: &std::ffi::CStr, algo: Option<u32>| {
        let c = pipe_cfg(rig.port, name, DOCA_FLOW_PIPE_HASH, false);
        assert_eq!(set_match(c, None, Some(&mask)), OK);
        // SAFETY: live config.
        unsafe {
            assert_eq!(doca_flow_pipe_cfg_set_nr_entries(c, 4), OK);
            if let Some(a) = algo {
                assert_eq!(doca_flow_pipe_cfg_set_hash_map_algorithm(c, a), OK);
            }
        }
        let p = create(c, None, Some(&kind(DOCA_FLOW_FWD_DROP)));
        for i in 0..4u32 {
            static QS: [[u16; 1]; 4] = [[0], [1], [2], [3]];
            assert_eq!(hash_entry(p, i, &rss(&QS[i as usize], 0)).0, OK);
        }
        p
    };
    let hashed = mk(c"hashed", None);
    let ident = mk(c"ident", Some(DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_IDENTITY));
    assert_eq!(
        hash_entry(hashed, 2, &kind(DOCA_FLOW_FWD_DROP)).0,
        ALREADY_EXIST,
        "slot taken"
    );
    assert_eq!(
        hash_entry(hashed, 4, &kind(DOCA_FLOW_FWD_DROP)).0,
        INVALID,
        "beyond the entries"
    );
    let root = rig.control_root();
    let mut to_hashed = doca_flow_match_v1::default();
    m::udp(&mut to_hashed.outer).l4_port.dst_port = 1u16.to_be();
    let mut to_ident = doca_flow_match_v1::default();
    m::udp(&mut to_ident.outer).l4_port.dst_port = 2u16.to_be();
    let mut hp = kind(DOCA_FLOW_FWD_HASH_PIPE);
    hp.__bindgen_anon_1.hash_pipe.pipe = hashed;
    assert_eq!(
        control_entry(root, 0, &to_hashed, None, None, None, &hp, null_mut()).0,
        OK
    );
    assert_eq!(
        control_entry(
            root,
            0,
            &to_ident,
            None,
            None,
            None,
            &to_pipe(ident),
            null_mut()
        )
        .0,
        OK
    );
    rig.process(0);
    let mut expect = [0usize; 4];
    let mut frames = Vec::new();
    for sport in 1000..1032u16 {
        let mut mt = doca_flow_match_v1::default();
        m::udp(&mut mt.outer).l4_port.src_port = sport.to_be();
        let mut h = 0u32;
        // SAFETY: live pipe; valid structs.
        assert_eq!(
            unsafe { doca_flow_pipe_calc_hash_v1(hashed, &mt, &mut h) },
            OK
        );
        expect[(h % 4) as usize] += 1;
        expect[usize::from(sport % 4)] += 1;
        frames.push(udp4([1, 1, 1, 1], [2, 2, 2, 2], sport, 1, b"h"));
        frames.push(udp4([1, 1, 1, 1], [2, 2, 2, 2], sport, 2, b"i"));
    }
    rig.send(&frames);
    let got: Vec<usize> = (0..4).map(|q| rig.got(q).len()).collect();
    assert_eq!(got, expect.to_vec());
    assert!(
        expect.iter().all(|&n| n > 8),
        "the hash spreads: {expect:?}"
    );
    rig.finish();
}

/// Forward kinds: a port forward sends the frame out of the other port, a kernel target
/// delivers nothing, CHANGEABLE takes each entry's forward (and requires one); the miss
/// counter counts; the miss forward can be changed.
#[test]
fn forward_kinds_and_miss_handling() {
    let _g = serial();
    let rig = Rig::new(&[0, 1], 1);
    // A second Flow port (id 7) on another wire: frames forwarded there leave on its wire.
    let name = support::unique("fo");
    let (out_dev, peer_dev) = (wire_dev(&name, 0), wire_dev(&name, 1));
    let out_port = start_port(out_dev, 7);
    // SAFETY: a live device.
    let peer = unsafe { doca_soft::testing::port_of(peer_dev) }.unwrap();
    let seen = std::sync::Arc::new(RecordingSink::new(4096, usize::MAX));
    peer.register_rx_queue(0, seen.clone()).unwrap();
    peer.set_default_queue(Some(0));
    let mut target = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { doca_flow_get_target(DOCA_FLOW_TARGET_KERNEL, &mut target) },
        OK
    );
    let mut kernel = kind(DOCA_FLOW_FWD_TARGET);
    kernel.__bindgen_anon_1.__bindgen_anon_4.target = target;

    let mut t = doca_flow_match_v1::default();
    m::udp(&mut t.outer).l4_port.dst_port = u16::MAX;
    let c = pipe_cfg(rig.port, c"per_entry", DOCA_FLOW_PIPE_BASIC, true);
    assert_eq!(set_match(c, Some(&t), None), OK);
    // SAFETY: live config.
    unsafe { assert_eq!(doca_flow_pipe_cfg_set_miss_counter(c, true), OK) };
    let pipe = create(
        c,
        Some(&kind(DOCA_FLOW_FWD_CHANGEABLE)),
        Some(&kind(DOCA_FLOW_FWD_DROP)),
    );
    let entry = |port: u16, fwd: Option<&doca_flow_fwd_v1>| {
        let mut e = doca_flow_match_v1::default();
        m::udp(&mut e.outer).l4_port.dst_port = port.to_be();
        basic_entry(0, pipe, Some(&e), None, fwd, null_mut()).0
    };
    assert_eq!(entry(1, Some(&to_port(7))), OK);
    assert_eq!(entry(2, Some(&kernel)), OK);
    assert_eq!(entry(3, Some(&rss(&Q1, 0))), OK);
    assert_eq!(
        entry(4, None),
        INVALID,
        "CHANGEABLE pipe: the entry must give a forward"
    );
    assert_eq!(entry(4, Some(&kind(DOCA_FLOW_FWD_CHANGEABLE))), INVALID);
    rig.process(0);
    let f = |dport| udp4([1, 1, 1, 1], [2, 2, 2, 2], 9, dport, b"fwd");
    rig.send(&[f(1), f(2), f(3), f(4), f(5)]);
    assert_eq!(seen.wait_for(1, LIMIT), vec![f(1)], "left through port 7");
    assert_eq!(rig.got(1), vec![f(3)]);
    let c = rig.rx.counters();
    assert_eq!(
        (c.dropped_no_match, c.dropped_by_flow),
        (1, 2),
        "kernel; two misses"
    );
    let mut q = doca_flow_resource_query_v1::default();
    // SAFETY: live pipe; valid storage.
    assert_eq!(
        unsafe { doca_flow_resource_query_pipe_miss_v1(pipe, &mut q) },
        OK
    );
    // SAFETY: a counter query fills the counter view.
    assert_eq!(unsafe { q.__bindgen_anon_1.counter.total_pkts }, 2);
    // Misses now go to queue 0.
    // SAFETY: live pipe; valid forward.
    assert_eq!(
        unsafe { doca_flow_pipe_update_miss_v1(pipe, &rss(&Q0, 0)) },
        OK
    );
    rig.send(&[f(6)]);
    assert_eq!(rig.got(0), vec![f(6)]);
    // The pipe describes itself.
    let mut buf = vec![0u8; 1024];
    // SAFETY: a memory FILE over buf, closed below.
    unsafe {
        let file = libc::fmemopen(buf.as_mut_ptr().cast(), buf.len(), c"w".as_ptr());
        assert!(!file.is_null());
        doca_flow_pipe_dump(pipe, file);
        libc::fclose(file);
    }
    let text = String::from_utf8_lossy(&buf);
    assert!(
        text.contains("per_entry") && text.contains("changeable") && text.contains("3 entries"),
        "{text}"
    );
    peer.unregister_rx_queue(0);
    assert_eq!(doca_flow_port_stop(out_port), OK);
    rig.finish();
}

/// RSS over inner headers and symmetric hashing: the two directions of a flow share a
/// queue; tunnelled flows differing only inside spread.
#[test]
fn rss_inner_and_symmetric() {
    let _g = serial();
    let rig = Rig::new(&[0, 1, 2, 3], 1);
    let root = rig.control_root();
    let mut sym = rss(&Q0123, DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_TCP);
    sym.__bindgen_anon_1
        .__bindgen_anon_1
        .__bindgen_anon_1
        .rss
        .rss_hash_func = DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ;
    let mut tcp = doca_flow_match_v1::default();
    tcp.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_TCP;
    assert_eq!(
        control_entry(root, 0, &tcp, None, None, None, &sym, null_mut()).0,
        OK
    );
    let mut inner = rss(&Q0123, 0);
    inner
        .__bindgen_anon_1
        .__bindgen_anon_1
        .__bindgen_anon_1
        .rss
        .inner_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP;
    let mut vx = doca_flow_match_v1::default();
    vx.tun.type_ = DOCA_FLOW_TUN_VXLAN;
    assert_eq!(
        control_entry(root, 1, &vx, None, None, None, &inner, null_mut()).0,
        OK
    );
    rig.process(0);
    let mut frames = Vec::new();
    for i in 0..32u16 {
        frames.push(tcp4(
            [10, 0, 0, 1],
            [10, 0, 1, i as u8],
            2000 + i,
            80,
            0x10,
            b"",
        ));
        frames.push(tcp4(
            [10, 0, 1, i as u8],
            [10, 0, 0, 1],
            80,
            2000 + i,
            0x10,
            b"",
        ));
    }
    rig.send(&frames);
    for q in 0..4 {
        let got = rig.got(q);
        for pair in frames.chunks(2) {
            assert_eq!(
                got.contains(&pair[0]),
                got.contains(&pair[1]),
                "both directions together"
            );
        }
    }
    let tunnels: Vec<Vec<u8>> = (0..64u16)
        .map(|i| {
            vxlan4(
                [1, 1, 1, 1],
                [2, 2, 2, 2],
                5,
                &udp4([192, 168, 0, 1], [192, 168, 0, 2], 1000 + i, 53, b""),
            )
        })
        .collect();
    let before: Vec<usize> = (0..4).map(|q| rig.got(q).len()).collect();
    rig.send(&tunnels);
    let spread: Vec<usize> = (0..4)
        .map(|q| rig.got(q).len() - before[q as usize])
        .collect();
    assert!(
        spread.iter().all(|&n| n > 0),
        "same outer headers, spread by inner ports: {spread:?}"
    );
    rig.finish();
}

/// Shared counters (SYSTEM mode: configured ids, bound, queried) and shared RSS; PORT mode
/// hands out per-port ids.
#[test]
fn shared_counters_and_rss() {
    let _g = serial();
    init_with(1, |cfg| unsafe {
        // SAFETY: a live config.
        assert_eq!(
            doca_flow_cfg_set_nr_shared_resource(cfg, 4, DOCA_FLOW_SHARED_RESOURCE_COUNTER),
            OK
        );
        assert_eq!(
            doca_flow_cfg_set_nr_shared_resource(cfg, 2, DOCA_FLOW_SHARED_RESOURCE_RSS),
            OK
        );
        assert_eq!(doca_flow_cfg_set_nr_counters(cfg, 2), OK);
    });
    let rig = Rig::started(&[0, 1, 2]);
    let mut rss_cfg = doca_flow_shared_resource_cfg_v1::default();
    // SAFETY: writing the rss view of the union.
    unsafe {
        let r = &mut rss_cfg.__bindgen_anon_1.rss_cfg;
        r.queues_array = Q2.as_ptr() as *mut u16;
        r.nr_queues = 1;
        assert_eq!(
            doca_flow_shared_resource_set_cfg_v1(DOCA_FLOW_SHARED_RESOURCE_RSS, 1, &mut rss_cfg),
            OK
        );
        assert_eq!(
            doca_flow_shared_resource_set_cfg_v1(DOCA_FLOW_SHARED_RESOURCE_COUNTER, 3, null_mut()),
            OK
        );
        assert_eq!(
            doca_flow_shared_resource_set_cfg_v1(DOCA_FLOW_SHARED_RESOURCE_COUNTER, 4, null_mut()),
            INVALID
        );
        let (rc, log) = logged(|| {
            doca_flow_shared_resource_set_cfg_v1(DOCA_FLOW_SHARED_RESOURCE_METER, 0, &mut rss_cfg)
        });
        assert_eq!((rc, log.len()), (NOT_SUPPORTED, 1), "{log:?}");
        let mut ids = [3u32];
        assert_eq!(
            doca_flow_shared_resources_bind(
                DOCA_FLOW_SHARED_RESOURCE_COUNTER,
                ids.as_mut_ptr(),
                1,
                rig.port.cast()
            ),
            OK
        );
    }
    let root = rig.control_root();
    let shared_mon = |id: u32| {
        let mut mon = doca_flow_monitor_v1 {
            counter_type: DOCA_FLOW_RESOURCE_TYPE_SHARED,
            ..Default::default()
        };
        mon.__bindgen_anon_2.shared_counter.shared_counter_id = id;
        mon
    };
    let mut shared_rss = rss(&Q0, 0);
    shared_rss.__bindgen_anon_1.__bindgen_anon_1.rss_type = DOCA_FLOW_RESOURCE_TYPE_SHARED;
    shared_rss
        .__bindgen_anon_1
        .__bindgen_anon_1
        .__bindgen_anon_1
        .shared_rss_id = 1;
    // Two entries count into shared counter 3; one uses shared RSS 1 (queue 2).
    for (port, fwd) in [(1u16, rss(&Q0, 0)), (2, shared_rss)] {
        let mut mt = doca_flow_match_v1::default();
        m::udp(&mut mt.outer).l4_port.dst_port = port.to_be();
        assert_eq!(
            control_entry(
                root,
                0,
                &mt,
                None,
                None,
                Some(&shared_mon(3)),
                &fwd,
                null_mut()
            )
            .0,
            OK
        );
    }
    // Two own counters fit nr_counters 2; a third does not.
    let mut mt = doca_flow_match_v1::default();
    m::udp(&mut mt.outer).l4_port.dst_port = 3u16.to_be();
    assert_eq!(
        control_entry(
            root,
            1,
            &mt,
            None,
            None,
            Some(&counting(0)),
            &rss(&Q1, 0),
            null_mut()
        )
        .0,
        OK
    );
    assert_eq!(
        control_entry(
            root,
            1,
            &mt,
            None,
            None,
            Some(&counting(0)),
            &rss(&Q1, 0),
            null_mut()
        )
        .0,
        OK
    );
    let (rc, _) = control_entry(
        root,
        1,
        &mt,
        None,
        None,
        Some(&counting(0)),
        &rss(&Q1, 0),
        null_mut(),
    );
    assert_eq!(rc, doca_soft::capi::doca_error::DocaError::FULL.0);
    assert_eq!(
        control_entry(
            root,
            1,
            &mt,
            None,
            None,
            Some(&shared_mon(9)),
            &rss(&Q1, 0),
            null_mut()
        )
        .0,
        INVALID
    );
    rig.process(0);
    let f = |dport| udp4([1, 1, 1, 1], [2, 2, 2, 2], 9, dport, b"shared");
    rig.send(&[f(1), f(2), f(2)]);
    assert_eq!((rig.got(0).len(), rig.got(2).len()), (1, 2));
    let mut ids = [3u32, 0];
    let mut out = [doca_flow_resource_query_v1::default(); 2];
    // SAFETY: two ids, two results.
    unsafe {
        assert_eq!(
            doca_flow_shared_resources_query_v1(
                DOCA_FLOW_SHARED_RESOURCE_COUNTER,
                ids.as_mut_ptr(),
                out.as_mut_ptr(),
                2
            ),
            OK
        );
        assert_eq!(out[0].__bindgen_anon_1.counter.total_pkts, 3);
        assert_eq!(
            out[0].__bindgen_anon_1.counter.total_bytes,
            3 * f(1).len() as u64
        );
        assert_eq!(out[1].__bindgen_anon_1.counter.total_pkts, 0);
        // PORT-mode calls in SYSTEM mode are refused.
        let mut id = 0u32;
        assert_eq!(
            doca_flow_port_shared_resource_get(
                rig.port,
                DOCA_FLOW_SHARED_RESOURCE_COUNTER,
                &mut id
            ),
            BAD_STATE
        );
    }
    rig.finish();

    // PORT mode: ids per port, handed out until the pool is empty.
    init_with(1, |cfg| unsafe {
        // SAFETY: a live config.
        assert_eq!(
            doca_flow_cfg_set_resource_mode(cfg, DOCA_FLOW_RESOURCE_MODE_PORT),
            OK
        );
    });
    let name = support::unique("pm");
    let dev = wire_dev(&name, 0);
    let mut pc: *mut PortCfg = null_mut();
    let mut port: *mut FlowPort = null_mut();
    // SAFETY: valid handles and out-pointers throughout.
    unsafe {
        assert_eq!(doca_flow_port_cfg_create(&mut pc), OK);
        assert_eq!(doca_flow_port_cfg_set_dev(pc, dev), OK);
        assert_eq!(
            doca_flow_port_cfg_set_nr_resources(pc, DOCA_FLOW_RESOURCE_COUNTER, 2),
            OK
        );
        assert_eq!(doca_flow_port_cfg_set_nr_resources(pc, 7, 2), INVALID);
        assert_eq!(doca_flow_port_start(pc, &mut port), OK);
        assert_eq!(doca_flow_port_cfg_destroy(pc), OK);
        let mut a = 9u32;
        let mut b = 9u32;
        let mut c = 9u32;
        assert_eq!(
            doca_flow_port_shared_resource_get(port, DOCA_FLOW_SHARED_RESOURCE_COUNTER, &mut a),
            OK
        );
        assert_eq!(
            doca_flow_port_shared_resource_get(port, DOCA_FLOW_SHARED_RESOURCE_COUNTER, &mut b),
            OK
        );
        assert_eq!((a, b), (0, 1));
        assert_eq!(
            doca_flow_port_shared_resource_get(port, DOCA_FLOW_SHARED_RESOURCE_COUNTER, &mut c),
            doca_soft::capi::doca_error::DocaError::EMPTY.0
        );
        assert_eq!(
            doca_flow_port_shared_resource_set_cfg_v1(
                port,
                DOCA_FLOW_SHARED_RESOURCE_COUNTER,
                a,
                null_mut()
            ),
            OK
        );
        assert_eq!(
            doca_flow_port_shared_resource_put(port, DOCA_FLOW_SHARED_RESOURCE_COUNTER, b),
            OK
        );
        assert_eq!(
            doca_flow_port_shared_resource_get(port, DOCA_FLOW_SHARED_RESOURCE_COUNTER, &mut c),
            OK
        );
        assert_eq!(c, 1, "a returned id is handed out again");
        let mut ids = [a];
        let mut out = [doca_flow_resource_query_v1::default()];
        assert_eq!(
            doca_flow_port_shared_resources_query_v1(
                port,
                DOCA_FLOW_SHARED_RESOURCE_COUNTER,
                ids.as_mut_ptr(),
                out.as_mut_ptr(),
                1
            ),
            OK
        );
        assert_eq!(
            doca_flow_shared_resources_query_v1(
                DOCA_FLOW_SHARED_RESOURCE_COUNTER,
                ids.as_mut_ptr(),
                out.as_mut_ptr(),
                1
            ),
            BAD_STATE
        );
        assert_eq!(doca_flow_port_stop(port), OK);
    }
    doca_flow_destroy();
}

/// The default miss (KERNEL, DROP, counted), and pipe forwards that would close a loop are
/// refused wherever a forward is set.
#[test]
fn default_miss_and_loops() {
    let _g = serial();
    let rig = Rig::new(&[0], 1);
    // root (CONTROL) -> b (BASIC); b's miss -> root would close the loop.
    let b = create(
        pipe_cfg(rig.port, c"b", DOCA_FLOW_PIPE_BASIC, false),
        Some(&rss(&Q0, 0)),
        None,
    );
    let root = rig.control_root();
    let mut tcp = doca_flow_match_v1::default();
    tcp.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_TCP;
    assert_eq!(
        control_entry(root, 0, &tcp, None, None, None, &to_pipe(b), null_mut()).0,
        OK
    );
    let (rc, log) = logged(|| unsafe {
        // SAFETY: live pipe; valid forward.
        doca_flow_pipe_update_miss_v1(b, &to_pipe(root))
    });
    assert_eq!(rc, INVALID, "root -> b -> root");
    assert!(log.iter().any(|l| l.contains("loop")), "{log:?}");
    // A pipe forwarding to itself, by entry.
    assert_eq!(
        control_entry(root, 1, &tcp, None, None, None, &to_pipe(root), null_mut()).0,
        INVALID
    );
    // c -> root at creation, then root -> c would loop.
    let c = create(
        pipe_cfg(rig.port, c"c", DOCA_FLOW_PIPE_BASIC, false),
        Some(&to_pipe(root)),
        None,
    );
    let mut udp = doca_flow_match_v1::default();
    udp.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
    assert_eq!(
        control_entry(root, 2, &udp, None, None, None, &to_pipe(c), null_mut()).0,
        INVALID
    );
    // Once b is destroyed its forwards are gone from the graph too.
    doca_flow_pipe_destroy(b);
    rig.process(0);
    // Default miss: KERNEL (no-match) by default, then DROP, counted.
    rig.send(&[udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"")]);
    assert_eq!(rig.rx.counters().dropped_no_match, 1);
    let mut q = doca_flow_resource_query_v1::default();
    // SAFETY: live port; valid storage.
    unsafe {
        assert_eq!(
            doca_flow_port_query_default_miss_v1(rig.port, &mut q),
            BAD_STATE,
            "not counted"
        );
        assert_eq!(
            doca_flow_port_update_default_miss(rig.port, DOCA_FLOW_PORT_DEFAULT_MISS_DROP, true),
            OK
        );
        let (rc, log) = logged(|| {
            doca_flow_port_update_default_miss(rig.port, DOCA_FLOW_PORT_DEFAULT_MISS_RSS, true)
        });
        assert_eq!((rc, log.len()), (NOT_SUPPORTED, 1));
        assert_eq!(
            doca_flow_port_update_default_miss(rig.port, 9, true),
            INVALID
        );
    }
    rig.send(&[udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, b"")]);
    assert!(eventually(LIMIT, || rig.rx.counters().dropped_by_flow == 1));
    // SAFETY: as above.
    unsafe {
        assert_eq!(doca_flow_port_query_default_miss_v1(rig.port, &mut q), OK);
        assert_eq!(
            q.__bindgen_anon_1.counter.total_pkts, 2,
            "both misses counted"
        );
    }
    rig.finish();
}
