//! The DOCA Flow C API end to end on in-memory wire ports: the gpunetio_simple_receive
//! pipeline, BASIC templates with per-entry values, RSS, entry removal, counters, and every
//! state and argument error.

mod flow_util;
mod support;

use std::ptr::{null, null_mut};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_flow::{FlowCfg, FlowPort, PipeCfg, PortCfg, *};
use doca_soft::testing::frames::{icmp4_echo, tcp4, udp4};
use support::{eventually, unique, RecordingSink};

const LIMIT: Duration = Duration::from_secs(10);
const OK: u32 = 0;
const INVALID: u32 = DocaError::INVALID_VALUE.0;
const BAD_STATE: u32 = DocaError::BAD_STATE.0;
const NOT_SUPPORTED: u32 = DocaError::NOT_SUPPORTED.0;
const NOT_FOUND: u32 = DocaError::NOT_FOUND.0;
const ALREADY_EXIST: u32 = DocaError::ALREADY_EXIST.0;

/// DOCA Flow is process-global: tests take turns.
static SERIAL: Mutex<()> = Mutex::new(());

fn init(queues: u16) {
    flow_util::init_with(queues, |cfg| {
        // SAFETY: a live configuration.
        assert_eq!(unsafe { doca_flow_cfg_set_nr_counters(cfg, 524228) }, OK);
    });
}

fn pipe_cfg(port: *mut FlowPort, kind: u32, root: bool) -> *mut PipeCfg {
    flow_util::pipe_cfg(port, c"p", kind, root)
}

use flow_util::{
    kind as kind_fwd, query, rss as rss_fwd, start_port, to_pipe as pipe_fwd, wire_dev,
};

fn counting() -> doca_flow_monitor_v1 {
    flow_util::counting(0)
}

fn create(
    cfg: *mut PipeCfg,
    fwd: *const doca_flow_fwd_v1,
    miss: *const doca_flow_fwd_v1,
) -> *mut doca_flow_pipe {
    let mut p = null_mut();
    unsafe {
        assert_eq!(doca_flow_pipe_create_v1(cfg, fwd, miss, &mut p), OK);
        assert_eq!(doca_flow_pipe_cfg_destroy(cfg), OK);
    }
    p
}

fn control_entry(
    pipe: *mut doca_flow_pipe,
    m: &doca_flow_match_v1,
    mask: *const doca_flow_match_v1,
    prio: u32,
    fwd: &doca_flow_fwd_v1,
) -> *mut doca_flow_pipe_entry {
    let mut e = null_mut();
    let rc = unsafe {
        doca_flow_pipe_control_add_entry_v1(
            0,
            pipe,
            m,
            mask,
            null(),
            null(),
            null(),
            null(),
            null(),
            prio,
            fwd,
            null_mut(),
            &mut e,
        )
    };
    assert_eq!(rc, OK);
    e
}

fn basic_entry(
    pipe: *mut doca_flow_pipe,
    m: *const doca_flow_match_v1,
    fwd: *const doca_flow_fwd_v1,
) -> *mut doca_flow_pipe_entry {
    let mut e = null_mut();
    let rc = unsafe {
        doca_flow_pipe_basic_add_entry_v1(
            0,
            pipe,
            m,
            0,
            null(),
            null(),
            fwd,
            DOCA_FLOW_ENTRY_FLAGS_NO_WAIT,
            null_mut(),
            &mut e,
        )
    };
    assert_eq!(rc, OK);
    e
}

/// The gpunetio_simple_receive control plane: UDP pipe (parser_meta IPv4/UDP -> RSS queue
/// 0, miss drop, counter) under a root CONTROL pipe (eth IPv4, l3 IP4, proto UDP -> pipe).
#[test]
fn simple_receive_pipeline_delivers_udp_only_and_counts() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let name = unique("fw");
    let (tx_dev, rx_dev) = (wire_dev(&name, 0), wire_dev(&name, 1));
    init(1);
    let port = start_port(rx_dev, 0);
    let soft = unsafe { doca_soft::testing::port_of(rx_dev) }.unwrap();
    let sink = Arc::new(RecordingSink::new(2048, usize::MAX));
    soft.register_rx_queue(0, sink.clone()).unwrap();

    let mut m = doca_flow_match_v1::default();
    m.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
    m.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
    let c = pipe_cfg(port, DOCA_FLOW_PIPE_BASIC, false);
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, &m, null()), OK);
        assert_eq!(doca_flow_pipe_cfg_set_monitor_v1(c, &counting()), OK);
    }
    static Q0: [u16; 1] = [0];
    let udp = create(
        c,
        &rss_fwd(&Q0, DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP),
        &kind_fwd(DOCA_FLOW_FWD_DROP),
    );
    let zero = doca_flow_match_v1::default();
    let udp_entry = basic_entry(udp, &zero, null());

    let root = create(pipe_cfg(port, DOCA_FLOW_PIPE_CONTROL, true), null(), null());
    let mut rm = doca_flow_match_v1::default();
    rm.outer.eth.type_ = 0x0800u16.to_be();
    rm.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
    rm.outer.__bindgen_anon_1.ip4.next_proto = 17;
    let root_entry = control_entry(root, &rm, null(), 0, &pipe_fwd(udp));
    assert_eq!(doca_flow_entries_process(port, 0, 0, 0), OK);

    let tx = unsafe { doca_soft::testing::port_of(tx_dev) }.unwrap();
    let mut udp_bytes = 0u64;
    for i in 0..10u8 {
        let f = udp4(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            5000,
            6000 + u16::from(i),
            &[i; 30],
        );
        udp_bytes += f.len() as u64;
        tx.send(&f).unwrap();
    }
    for _ in 0..3 {
        tx.send(&tcp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 80, 2, b""))
            .unwrap();
    }
    for _ in 0..2 {
        tx.send(&icmp4_echo([10, 0, 0, 1], [10, 0, 0, 2], b"ping"))
            .unwrap();
    }
    let got = sink.wait_for(10, LIMIT);
    assert!(eventually(LIMIT, || soft.counters().received == 15));
    assert_eq!(got.len(), 10);
    assert!(got.iter().all(|f| f[23] == 17), "only UDP delivered");
    let pc = soft.counters();
    assert_eq!((pc.delivered, pc.dropped_no_match), (10, 5));
    assert_eq!(query(udp_entry), (OK, 10, udp_bytes));
    let mut cc = doca_soft::capi::doca_soft_port::PortCountersSnapshot::default();
    assert_eq!(
        unsafe { doca_soft::capi::doca_soft_port::doca_soft_port_get_counters(rx_dev, &mut cc) },
        OK
    );
    assert_eq!(cc, soft.counters());
    assert_eq!(
        unsafe { doca_soft::capi::doca_soft_port::doca_soft_port_get_counters(null(), &mut cc) },
        INVALID
    );
    assert_eq!(
        unsafe { doca_soft::capi::doca_soft_port::doca_soft_port_get_counters(rx_dev, null_mut()) },
        INVALID
    );
    assert_eq!(
        query(root_entry).0,
        NOT_SUPPORTED,
        "root entry has no counter"
    );

    // Removing the root entry stops delivery; frames become no-match.
    assert_eq!(doca_flow_pipe_remove_entry(0, 0, root_entry), OK);
    tx.send(&udp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"late"))
        .unwrap();
    assert!(eventually(LIMIT, || soft.counters().dropped_no_match == 6));
    assert_eq!(sink.frames().len(), 10);

    soft.unregister_rx_queue(0);
    doca_flow_pipe_destroy(root);
    doca_flow_pipe_destroy(udp);
    assert!(
        soft.dispatcher_running(),
        "the started Flow port keeps the dispatcher"
    );
    assert_eq!(doca_flow_port_stop(port), OK);
    assert!(!soft.dispatcher_running(), "last user gone");
    assert_eq!(
        unsafe { doca_soft::testing::dev_users(rx_dev) },
        0,
        "flow port released the device"
    );
    doca_flow_destroy();
}

/// BASIC template with a changeable UDP destination port; RSS over four queues.
#[test]
fn basic_template_entries_and_rss_over_four_queues() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let name = unique("fw");
    let (tx_dev, rx_dev) = (wire_dev(&name, 0), wire_dev(&name, 1));
    init(1);
    let port = start_port(rx_dev, 3);
    let soft = unsafe { doca_soft::testing::port_of(rx_dev) }.unwrap();
    let sinks: Vec<Arc<RecordingSink>> = (0..6)
        .map(|_| Arc::new(RecordingSink::new(2048, usize::MAX)))
        .collect();
    for (q, s) in sinks.iter().enumerate() {
        soft.register_rx_queue(q as u16, s.clone()).unwrap();
    }
    let mut m = doca_flow_match_v1::default();
    m.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
    m.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP;
    m.outer.__bindgen_anon_2.udp.l4_port.dst_port = 0xffff;
    let c = pipe_cfg(port, DOCA_FLOW_PIPE_BASIC, true);
    unsafe {
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, &m, null()), OK);
        assert_eq!(doca_flow_pipe_cfg_set_monitor_v1(c, &counting()), OK);
    }
    let pipe = create(c, null(), null());
    static FOUR: [u16; 4] = [0, 1, 2, 3];
    static FIVE: [u16; 1] = [5];
    let rss4 = rss_fwd(&FOUR, DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP);
    let to5 = rss_fwd(&FIVE, 0);
    let mut e53 = doca_flow_match_v1::default();
    e53.outer.__bindgen_anon_2.udp.l4_port.dst_port = 53u16.to_be();
    let mut e80 = e53;
    e80.outer.__bindgen_anon_2.udp.l4_port.dst_port = 80u16.to_be();
    let dns = basic_entry(pipe, &e53, &rss4);
    let web = basic_entry(pipe, &e80, &to5);
    assert_eq!(doca_flow_entries_process(port, 0, 0, 0), OK);

    let tx = unsafe { doca_soft::testing::port_of(tx_dev) }.unwrap();
    for flow in 0..200u16 {
        tx.send(&udp4(
            [10, 9, (flow >> 8) as u8, flow as u8],
            [10, 0, 0, 2],
            1024 + flow,
            53,
            b"q",
        ))
        .unwrap();
    }
    for _ in 0..7 {
        tx.send(&udp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 80, b"w"))
            .unwrap();
    }
    tx.send(&udp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 81, b"miss"))
        .unwrap();
    assert!(eventually(LIMIT, || soft.counters().received == 208));
    let per: Vec<usize> = sinks.iter().map(|s| s.frames().len()).collect();
    assert!(per[..4].iter().all(|&n| n > 0), "RSS spread {per:?}");
    assert_eq!(per[..4].iter().sum::<usize>(), 200);
    assert_eq!((per[4], per[5]), (0, 7));
    assert_eq!(query(dns).1, 200);
    assert_eq!(query(web).1, 7);
    assert_eq!(soft.counters().dropped_no_match, 1);
    for q in 0..6 {
        soft.unregister_rx_queue(q);
    }
    assert_eq!(doca_flow_port_stop(port), OK);
    // Entries of a stopped port's pipes are gone.
    assert_eq!(query(dns).0, NOT_FOUND);
    doca_flow_destroy();
}

#[test]
fn state_and_argument_errors() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let name = unique("fe");
    let dev = wire_dev(&name, 0);
    unsafe {
        // Builders.
        assert_eq!(doca_flow_cfg_create(null_mut()), INVALID);
        assert_eq!(doca_flow_cfg_set_pipe_queues(null_mut(), 1), INVALID);
        assert_eq!(
            doca_flow_cfg_set_mode_args(null_mut(), c"vnf".as_ptr()),
            INVALID
        );
        assert_eq!(doca_flow_cfg_set_nr_counters(null_mut(), 1), INVALID);
        assert_eq!(doca_flow_cfg_destroy(null_mut()), INVALID);
        assert_eq!(doca_flow_init_v1(null_mut()), INVALID);
        let mut cfg: *mut FlowCfg = null_mut();
        assert_eq!(doca_flow_cfg_create(&mut cfg), OK);
        assert_eq!(doca_flow_cfg_set_pipe_queues(cfg, 0), INVALID);
        assert_eq!(doca_flow_cfg_set_mode_args(cfg, null()), INVALID);
        assert_eq!(doca_flow_cfg_destroy(cfg), OK);

        // Port before init.
        let mut pc: *mut PortCfg = null_mut();
        let mut port: *mut FlowPort = null_mut();
        assert_eq!(doca_flow_port_cfg_create(null_mut()), INVALID);
        assert_eq!(doca_flow_port_cfg_create(&mut pc), OK);
        assert_eq!(doca_flow_port_cfg_set_dev(pc, null_mut()), INVALID);
        assert_eq!(doca_flow_port_cfg_set_dev(null_mut(), dev), INVALID);
        assert_eq!(doca_flow_port_cfg_set_port_id(null_mut(), 0), INVALID);
        assert_eq!(doca_flow_port_cfg_set_devargs(pc, null()), INVALID);
        assert_eq!(
            doca_flow_port_cfg_set_devargs(pc, c"dv_flow_en=2".as_ptr()),
            OK
        );
        assert_eq!(
            doca_flow_port_start(pc, &mut port),
            BAD_STATE,
            "before init"
        );

        init(1);
        assert_eq!(doca_flow_init_v1(cfg_for_reinit()), BAD_STATE, "init twice");
        assert_eq!(doca_flow_port_start(pc, &mut port), INVALID, "no device");
        assert_eq!(doca_flow_port_start(null(), &mut port), INVALID);
        assert_eq!(doca_flow_port_cfg_set_dev(pc, dev), OK);
        assert_eq!(doca_flow_port_start(pc, null_mut()), INVALID);
        assert_eq!(doca_flow_port_start(pc, &mut port), OK);
        let mut again: *mut FlowPort = null_mut();
        assert_eq!(
            doca_flow_port_start(pc, &mut again),
            ALREADY_EXIST,
            "same port id"
        );
        assert_eq!(doca_flow_port_cfg_destroy(pc), OK);

        // Pipe configuration.
        let mut c: *mut PipeCfg = null_mut();
        assert_eq!(doca_flow_pipe_cfg_create(&mut c, null_mut()), INVALID);
        assert_eq!(doca_flow_pipe_cfg_create(null_mut(), port), INVALID);
        assert_eq!(doca_flow_pipe_cfg_create(&mut c, port), OK);
        assert_eq!(doca_flow_pipe_cfg_set_type(c, 99), INVALID);
        assert_eq!(doca_flow_pipe_cfg_set_domain(c, 9), INVALID);
        assert_eq!(doca_flow_pipe_cfg_set_name(c, null()), INVALID);
        assert_eq!(doca_flow_pipe_cfg_set_match_v1(c, null(), null()), INVALID);
        assert_eq!(doca_flow_pipe_cfg_set_monitor_v1(c, null()), INVALID);
        let shared = doca_flow_monitor_v1 {
            counter_type: DOCA_FLOW_RESOURCE_TYPE_SHARED,
            ..Default::default()
        };
        assert_eq!(
            doca_flow_pipe_cfg_set_monitor_v1(c, &shared),
            OK,
            "shared counters"
        );
        let meter = doca_flow_monitor_v1 {
            meter_type: DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
            ..Default::default()
        };
        assert_eq!(doca_flow_pipe_cfg_set_monitor_v1(c, &meter), NOT_SUPPORTED);
        let mut tun = doca_flow_match_v1::default();
        tun.tun.type_ = DOCA_FLOW_TUN_MPLS_O_UDP;
        assert_eq!(
            doca_flow_pipe_cfg_set_match_v1(c, &tun, null()),
            NOT_SUPPORTED
        );
        assert_eq!(
            doca_flow_pipe_cfg_set_actions_v1(c, null(), null(), null(), 1),
            INVALID
        );
        assert_eq!(
            doca_flow_pipe_cfg_set_miss_counter(null_mut(), true),
            INVALID
        );
        assert_eq!(doca_flow_pipe_cfg_set_nr_entries(null_mut(), 1), INVALID);
        assert_eq!(doca_flow_pipe_cfg_set_is_root(null_mut(), true), INVALID);

        // Pipe creation.
        let mut p = null_mut();
        assert_eq!(
            doca_flow_pipe_create_v1(null(), null(), null(), &mut p),
            INVALID
        );
        assert_eq!(
            doca_flow_pipe_create_v1(c, null(), null(), null_mut()),
            INVALID
        );
        assert_eq!(doca_flow_pipe_cfg_set_type(c, DOCA_FLOW_PIPE_LPM), OK);
        assert_eq!(
            doca_flow_pipe_create_v1(c, null(), null(), &mut p),
            NOT_SUPPORTED
        );
        assert_eq!(doca_flow_pipe_cfg_set_type(c, DOCA_FLOW_PIPE_CONTROL), OK);
        let drop_fwd = kind_fwd(DOCA_FLOW_FWD_DROP);
        assert_eq!(
            doca_flow_pipe_create_v1(c, &drop_fwd, null(), &mut p),
            INVALID,
            "control + fwd"
        );
        assert_eq!(doca_flow_pipe_cfg_set_type(c, DOCA_FLOW_PIPE_BASIC), OK);
        static NONE: [u16; 0] = [];
        assert_eq!(
            doca_flow_pipe_create_v1(c, &rss_fwd(&NONE, 0), null(), &mut p),
            INVALID,
            "no queues"
        );
        assert_eq!(
            doca_flow_pipe_create_v1(
                c,
                &kind_fwd(DOCA_FLOW_FWD_ORDERED_LIST_PIPE),
                null(),
                &mut p
            ),
            NOT_SUPPORTED
        );
        assert_eq!(
            doca_flow_pipe_create_v1(c, &kind_fwd(55), null(), &mut p),
            INVALID
        );
        assert_eq!(
            doca_flow_pipe_create_v1(c, &pipe_fwd(null_mut()), null(), &mut p),
            INVALID
        );
        assert_eq!(
            doca_flow_pipe_cfg_set_domain(c, DOCA_FLOW_PIPE_DOMAIN_EGRESS),
            OK
        );
        assert_eq!(
            doca_flow_pipe_create_v1(c, &drop_fwd, null(), &mut p),
            NOT_SUPPORTED
        );
        assert_eq!(doca_flow_pipe_cfg_destroy(c), OK);
        assert_eq!(doca_flow_pipe_cfg_destroy(null_mut()), INVALID);

        let basic = create(
            pipe_cfg(port, DOCA_FLOW_PIPE_BASIC, false),
            &drop_fwd,
            null(),
        );
        let ctl = create(pipe_cfg(port, DOCA_FLOW_PIPE_CONTROL, true), null(), null());
        let c2 = pipe_cfg(port, DOCA_FLOW_PIPE_CONTROL, true);
        assert_eq!(
            doca_flow_pipe_create_v1(c2, null(), null(), &mut p),
            ALREADY_EXIST,
            "second root"
        );
        assert_eq!(doca_flow_pipe_cfg_destroy(c2), OK);

        // Entries.
        let m = doca_flow_match_v1::default();
        let mut e = null_mut();
        let basic_add = |q: u16, pipe, flags, e: &mut *mut doca_flow_pipe_entry| {
            doca_flow_pipe_basic_add_entry_v1(
                q,
                pipe,
                &m,
                0,
                null(),
                null(),
                null(),
                flags,
                null_mut(),
                e,
            )
        };
        assert_eq!(basic_add(0, null_mut(), 0, &mut e), INVALID);
        assert_eq!(
            basic_add(0, ctl, 0, &mut e),
            INVALID,
            "basic entry on a control pipe"
        );
        assert_eq!(
            basic_add(1, basic, 0, &mut e),
            INVALID,
            "pipe queue out of range"
        );
        assert_eq!(basic_add(0, basic, 4, &mut e), INVALID, "unknown flag");
        let ctl_add = |pipe,
                       cond: *const doca_flow_match_condition_v1,
                       fwd: *const doca_flow_fwd_v1,
                       e: &mut *mut doca_flow_pipe_entry| {
            doca_flow_pipe_control_add_entry_v1(
                0,
                pipe,
                &m,
                null(),
                cond,
                null(),
                null(),
                null(),
                null(),
                0,
                fwd,
                null_mut(),
                e,
            )
        };
        assert_eq!(
            ctl_add(basic, null(), &drop_fwd, &mut e),
            INVALID,
            "control entry on a basic pipe"
        );
        assert_eq!(
            ctl_add(ctl, null(), null(), &mut e),
            INVALID,
            "control entry without fwd"
        );
        assert_eq!(
            ctl_add(ctl, null(), &kind_fwd(DOCA_FLOW_FWD_NONE), &mut e),
            INVALID
        );
        let cond = doca_flow_match_condition_v1::default();
        assert_eq!(ctl_add(ctl, &cond, &drop_fwd, &mut e), NOT_SUPPORTED);
        assert_eq!(ctl_add(ctl, null(), &drop_fwd, &mut e), OK);
        assert_eq!(query(e).0, NOT_SUPPORTED, "no counter");
        assert_eq!(doca_flow_resource_query_entry_v1(e, null_mut()), INVALID);
        assert_eq!(
            doca_flow_resource_query_pipe_miss_v1(basic, &mut Default::default()),
            NOT_SUPPORTED
        );
        assert_eq!(doca_flow_pipe_remove_entry(0, 0, null_mut()), INVALID);
        assert_eq!(doca_flow_pipe_remove_entry(0, 0, e), OK);
        assert_eq!(
            doca_flow_pipe_remove_entry(0, 0, e),
            NOT_FOUND,
            "removed twice"
        );
        assert_eq!(query(e).0, NOT_FOUND);
        assert_eq!(doca_flow_entries_process(null_mut(), 0, 0, 0), INVALID);
        assert_eq!(doca_flow_entries_process(port, 1, 0, 0), INVALID);

        // A stopped port.
        assert_eq!(doca_flow_port_stop(null_mut()), INVALID);
        assert_eq!(doca_flow_port_stop(port), OK);
        assert_eq!(doca_flow_port_stop(port), BAD_STATE, "stopped twice");
        assert_eq!(
            doca_flow_pipe_cfg_create(&mut c, port),
            BAD_STATE,
            "pipe on a stopped port"
        );
        assert_eq!(doca_flow_entries_process(port, 0, 0, 0), BAD_STATE);
        assert_eq!(
            basic_add(0, basic, 0, &mut e),
            INVALID,
            "pipe destroyed with its port"
        );
        doca_flow_pipe_destroy(basic); // stale handle: ignored
        doca_flow_destroy();
        // After destroy, init is needed again.
        let mut pc: *mut PortCfg = null_mut();
        assert_eq!(doca_flow_port_cfg_create(&mut pc), OK);
        assert_eq!(doca_flow_port_cfg_set_dev(pc, dev), OK);
        assert_eq!(doca_flow_port_start(pc, &mut port), BAD_STATE);
        assert_eq!(doca_flow_port_cfg_destroy(pc), OK);
    }
}

fn cfg_for_reinit() -> *mut FlowCfg {
    let mut cfg: *mut FlowCfg = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { doca_flow_cfg_create(&mut cfg) }, OK);
    cfg // leaked on purpose: the call under test fails and the test ends soon after
}

/// The gpu_packet_processing root: UDP (prio 0) -> queue 0; TCP with SYN, RST or FIN
/// (masked `outer.tcp.flags`, prio 1) -> queue 12; other TCP (prio 3) -> queue 4; ICMP
/// (prio 3) -> queue 16.
#[test]
fn masked_control_entries_and_priorities() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let name = unique("fm");
    let (tx_dev, rx_dev) = (wire_dev(&name, 0), wire_dev(&name, 1));
    init(1);
    let port = start_port(rx_dev, 0);
    let soft = unsafe { doca_soft::testing::port_of(rx_dev) }.unwrap();
    let sinks: Vec<(u16, Arc<RecordingSink>)> = [0u16, 4, 12, 16]
        .iter()
        .map(|&q| (q, Arc::new(RecordingSink::new(2048, usize::MAX))))
        .collect();
    for (q, s) in &sinks {
        soft.register_rx_queue(*q, s.clone()).unwrap();
    }
    let root = create(pipe_cfg(port, DOCA_FLOW_PIPE_CONTROL, true), null(), null());
    let meta = |l4| {
        let mut m = doca_flow_match_v1::default();
        m.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
        m.parser_meta.outer_l4_type = l4;
        m
    };
    static Q0: [u16; 1] = [0];
    static Q4: [u16; 1] = [4];
    static Q12: [u16; 1] = [12];
    static Q16: [u16; 1] = [16];
    control_entry(
        root,
        &meta(DOCA_FLOW_L4_META_UDP),
        null(),
        0,
        &rss_fwd(&Q0, 0),
    );
    let mut ctl = meta(DOCA_FLOW_L4_META_TCP);
    ctl.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP;
    let mut ctl_mask = ctl;
    ctl_mask.parser_meta.outer_l3_type = u32::MAX;
    ctl_mask.parser_meta.outer_l4_type = u32::MAX;
    ctl_mask.outer.l4_type_ext = 0;
    ctl_mask.outer.__bindgen_anon_2.tcp.flags = (DOCA_FLOW_MATCH_TCP_FLAG_SYN
        | DOCA_FLOW_MATCH_TCP_FLAG_RST
        | DOCA_FLOW_MATCH_TCP_FLAG_FIN) as u8;
    let mut entries = Vec::new();
    for flag in [
        DOCA_FLOW_MATCH_TCP_FLAG_SYN,
        DOCA_FLOW_MATCH_TCP_FLAG_RST,
        DOCA_FLOW_MATCH_TCP_FLAG_FIN,
    ] {
        let mut m = ctl;
        m.outer.__bindgen_anon_2.tcp.flags = flag as u8;
        let mut e = null_mut();
        let rc = unsafe {
            doca_flow_pipe_control_add_entry_v1(
                0,
                root,
                &m,
                &ctl_mask,
                null(),
                null(),
                null(),
                null(),
                &counting(),
                1,
                &rss_fwd(&Q12, 0),
                null_mut(),
                &mut e,
            )
        };
        assert_eq!(rc, OK);
        entries.push(e);
    }
    control_entry(
        root,
        &meta(DOCA_FLOW_L4_META_TCP),
        null(),
        3,
        &rss_fwd(&Q4, 0),
    );
    control_entry(
        root,
        &meta(DOCA_FLOW_L4_META_ICMP),
        null(),
        3,
        &rss_fwd(&Q16, 0),
    );
    assert_eq!(doca_flow_entries_process(port, 0, 0, 0), OK);

    let tx = unsafe { doca_soft::testing::port_of(tx_dev) }.unwrap();
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let traffic = [
        udp4(a, b, 1, 53, b"dns"),
        tcp4(a, b, 1, 80, 0x02, b""),      // SYN
        tcp4(a, b, 1, 80, 0x12, b""),      // SYN+ACK: SYN bit set
        tcp4(a, b, 1, 80, 0x11, b""),      // FIN+ACK
        tcp4(a, b, 1, 80, 0x04, b""),      // RST
        tcp4(a, b, 1, 80, 0x18, b"GET /"), // PSH+ACK: data
        tcp4(a, b, 1, 80, 0x10, b""),      // ACK
        icmp4_echo(a, b, b"ping"),
    ];
    for f in &traffic {
        tx.send(f).unwrap();
    }
    assert!(eventually(LIMIT, || soft.counters().received == traffic.len() as u64));
    let count = |q: u16| {
        sinks
            .iter()
            .find(|(x, _)| *x == q)
            .unwrap()
            .1
            .frames()
            .len()
    };
    assert_eq!((count(0), count(12), count(4), count(16)), (1, 4, 2, 1));
    let hits: Vec<u64> = entries.iter().map(|&e| query(e).1).collect();
    assert_eq!(hits, vec![2, 1, 1], "SYN entry took SYN and SYN+ACK");
    for (q, _) in &sinks {
        soft.unregister_rx_queue(*q);
    }
    assert_eq!(doca_flow_port_stop(port), OK);
    doca_flow_destroy();
}
