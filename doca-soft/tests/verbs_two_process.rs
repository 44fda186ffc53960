//! GPU verbs between two processes on `lo`, no GPU: this process exports its QPs to host
//! memory and a CPU thread posts, through the exported descriptor, the WQEs the device
//! helpers post (testing::verbs::DevQp); a child process (verbs_cpu_peer) is the other side.
//! Every operation of the nine samples: raw writes (write_bw), the write ping-pong
//! (write_lat), put in thread and warp scope (put_bw), get with and without DUMP (get_bw),
//! put_signal and its ping-pong (put_signal_bw/lat), put_counter with the companion's WAIT
//! (put_counter_bw/lat), send/receive with and without inline CQEs and the flag write of the
//! server (twosided_bw); and the error completions: wrong rkey, a doorbell past the queue
//! depth, a peer that went away.

mod verbs_cpu_peer;
mod verbs_cpu_support;

use doca_soft::testing::verbs::{cqe_fields, wqe_write, Addr, PollError, Wq, CQ_UPDATE};
use verbs_cpu_peer::{parse_cqe, Peer};
use verbs_cpu_support::*;

#[test]
#[ignore = "the child process of the two-process verbs tests (started by them)"]
fn verbs_child() {
    if std::env::var_os("DOCA_SOFT_VERBS_CHILD").is_none() {
        println!("not started as a child (DOCA_SOFT_VERBS_CHILD unset): nothing to do");
        return;
    }
    verbs_cpu_peer::child_main();
}

/// This side: context, 4 MiB of memory, a main QP and a companion, connected to `peer`.
// Fields drop in order: QPs, then memory, then the PD and context.
struct Me {
    main: Qp,
    comp: Qp,
    mem: Mem,
    _base: Base,
}

impl Me {
    fn new(peer: &mut Peer, handler: u32, no_dbr: bool) -> Me {
        let base = Base::new();
        let mem = Mem::new(&base, 4 << 20);
        let o = QpOpts {
            sq: 1024,
            rq: 1024,
            handler,
            no_dbr,
            ..Default::default()
        };
        let main = Qp::new(&base, o);
        let comp = Qp::new(
            &base,
            QpOpts {
                rq: 0,
                core_direct: true,
                ..o
            },
        );
        main.connect(&base, peer.gid, peer.qpn, false);
        comp.connect(&base, peer.gid, peer.cqpn, true);
        peer.ok(&format!(
            "connect {} {} {}",
            hex(&base.gid),
            main.qpn(),
            comp.qpn()
        ));
        assert_eq!(main.state(), RTS);
        Me {
            _base: base,
            mem,
            main,
            comp,
        }
    }
}

/// Compares byte strings, reporting the first difference (not megabytes of numbers).
#[track_caller]
fn same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!("{what}: byte {i} is {} instead of {}", got[i], want[i]);
    }
}

#[track_caller]
fn done(r: Result<[u8; 64], PollError>, k: u64) -> [u8; 64] {
    let c = r.unwrap_or_else(|e| panic!("CQE {k}: {e:?}"));
    let (op, ctr, _, _) = cqe_fields(&c);
    assert_eq!((op, ctr), (0, k as u16), "CQE {k} is a success for WQE {k}");
    c
}

#[test]
fn one_sided_writes_reads_and_the_write_ping_pong() {
    let mut peer = Peer::spawn(handler::CPU_PROXY, false);
    let mut me = Me::new(&mut peer, handler::GPU_SM_DB, false);
    let (d, q) = (me.main.dev, me.main.qpn());

    // write_bw: T "threads" take slots sq_wqe_pi + tid, the last submits; 4 rounds of 64.
    let (threads, size) = (64u64, 256u64);
    for i in 0..threads * size {
        me.mem.bytes_mut()[i as usize] = (i / size + 1) as u8;
    }
    let mut last = 0;
    for _round in 0..4 {
        let pi = d.sq_wqe_pi();
        for tid in 0..threads {
            let idx = pi + tid;
            let w = wqe_write(
                idx,
                q,
                CQ_UPDATE,
                peer.at(size * tid),
                me.mem.at(size * tid),
                size as u32,
                None,
            );
            d.write_wqe(idx, &w);
        }
        last = pi + threads - 1;
        d.submit(last + 1);
    }
    done(d.poll_cq_at(Wq::Sq, last, T), last);
    d.sync_after_raw();
    let got = peer.dump(0, (threads * size) as usize);
    assert!(
        got.iter()
            .enumerate()
            .all(|(i, &b)| b == (i as u64 / size + 1) as u8),
        "write_bw data"
    );

    // put (thread scope) of 64 KiB; put (warp scope): 32 lanes of 512 bytes.
    me.mem.bytes_mut()[..65536].copy_from_slice(&pattern(65536, 3));
    let t = d.put(peer.at(1 << 20), me.mem.at(0), 65536, T).unwrap();
    done(d.wait(t, T), t);
    same(&peer.dump(1 << 20, 65536), &pattern(65536, 3), "put");
    let lanes: Vec<(Addr, Addr)> = (0..32)
        .map(|l| (peer.at((2 << 20) + 512 * l), me.mem.at(512 * l)))
        .collect();
    let base = d.put_warp(&lanes, 512, T).unwrap();
    for l in 0..32 {
        done(d.wait(base + l, T), base + l);
    }
    same(
        &peer.dump(2 << 20, 16384),
        &pattern(65536, 3)[..16384],
        "warp put",
    );

    // p: an inline write of a value.
    let t = d.p(peer.at(3 << 20), 0x1122_3344_5566_7788, T).unwrap();
    done(d.wait(t, T), t);
    assert_eq!(peer.u64_at(3 << 20), 0x1122_3344_5566_7788);

    // get (get_bw): remote bytes land locally; then a DUMP completes in order (MCST).
    peer.ok("fill 100000 3000 77");
    let t = d.get(peer.at(100000), me.mem.at(3 << 20), 3000, T).unwrap();
    done(d.wait(t, T), t);
    same(&me.mem.read(3 << 20, 3000), &pattern(3000, 77), "get");
    let t = d
        .get(peer.at(100000), me.mem.at((3 << 20) + 8192), 3000, T)
        .unwrap();
    let dump = d.dump_wait(me.mem.at(4 << 19), T).unwrap();
    assert_eq!(dump, t + 1);
    same(
        &me.mem.read((3 << 20) + 8192, 3000),
        &pattern(3000, 77),
        "get + dump",
    );
    assert_eq!(d.cqe_ci(Wq::Sq), dump + 1);

    // write_lat: byte ping-pong, 50 round trips (the child mirrors every byte back).
    let ping = 200000u64;
    peer.ok(&format!(
        "mirror_write 50 {ping} {:x} {}",
        me.mem.addr() + ping,
        me.mem.key
    ));
    for i in 1..=50u8 {
        me.mem.bytes_mut()[(ping + 4096) as usize] = i;
        let t = d.put(peer.at(ping), me.mem.at(ping + 4096), 1, T).unwrap();
        done(d.wait(t, T), t);
        let end = std::time::Instant::now() + T;
        while me.mem.read(ping as usize, 1)[0] != i {
            assert!(std::time::Instant::now() < end, "pong {i}");
            std::thread::yield_now();
        }
    }
    peer.ok("join");
}

#[test]
fn signals_and_counters_reach_the_peer_in_order() {
    let mut peer = Peer::spawn(handler::GPU_SM_DB, false);
    let mut me = Me::new(&mut peer, handler::CPU_PROXY, false);
    let d = me.main.dev;

    // put_signal_bw: 2 "blocks" of 4 threads share the QP (GPU sharing mode), each does
    // `it` put_signal with +1 on its own flag of the peer, two launches.
    let (threads, it, size) = (8u64, 64u64, 128u64);
    let flags = 1u64 << 20;
    for launch in 0..2u64 {
        let (maddr, mkey) = (me.mem.addr(), me.mem.key);
        let pa = peer.at(0);
        std::thread::scope(|s| {
            for gtid in 0..threads {
                s.spawn(move || {
                    let m = Addr {
                        addr: maddr,
                        key: mkey,
                    };
                    for i in 0..it {
                        let prev = m.at(flags + 8 * gtid);
                        let t = d
                            .put_signal(
                                pa.at(size * gtid),
                                m.at(size * gtid),
                                size as u32,
                                pa.at(flags + 8 * gtid),
                                prev,
                                1,
                                T,
                            )
                            .unwrap();
                        d.wait(t, T).unwrap();
                        // The fetched old value: launch * it + i.
                        // SAFETY: an aligned u64 of this test's registered memory.
                        let old = unsafe { std::ptr::read_volatile(prev.addr as *const u64) };
                        assert_eq!(old, launch * it + i);
                    }
                });
            }
        });
    }
    let sum: u64 = (0..threads)
        .map(|g| peer.u64_at((flags + 8 * g) as usize))
        .sum();
    assert_eq!(
        sum,
        threads * it * 2,
        "Flag value = 2 * iterations per thread, summed"
    );

    // put_signal_lat: the peer mirrors each signal (30 round trips).
    let (lf, ls) = (2u64 << 20, (2u64 << 20) + 64);
    peer.ok(&format!(
        "mirror_signal 30 {} {} 0 64 {:x} {} {:x} {}",
        lf,
        lf + 64,
        me.mem.addr() + (3 << 20),
        me.mem.key,
        me.mem.addr() + lf,
        me.mem.key
    ));
    for i in 1..=30u64 {
        let t = d
            .put_signal(
                peer.at(3 << 20),
                me.mem.at(0),
                64,
                peer.at(lf),
                me.mem.at(ls),
                1,
                T,
            )
            .unwrap();
        d.wait(t, T).unwrap();
        let end = std::time::Instant::now() + T;
        while me.mem.u64_at(lf as usize) != i {
            assert!(std::time::Instant::now() < end, "signal back {i}");
            std::thread::yield_now();
        }
    }
    peer.ok("join");

    // put_counter: the companion's WAIT holds the counter's fetch-add until the write
    // completed, so the peer never sees a counter before its data (checked there).
    let (coff, doff, len) = (3u64 << 20, 3u64 << 19, 4096u64);
    peer.ok(&format!("check_counter 40 {coff} {doff} {len}"));
    for k in 1..=40u64 {
        me.mem.bytes_mut()[..len as usize].copy_from_slice(&pattern(len as usize, k as u8));
        d.put_counter(
            &me.comp.dev,
            peer.at(doff + (k - 1) * len),
            me.mem.at(0),
            len as u32,
            peer.at(coff),
            me.mem.at(7 << 19),
            1,
            T,
        )
        .unwrap();
        // The main write and the companion's FA both completed before the source is reused.
        done(d.wait(d.sq_rsvd_index() - 1, T), d.sq_rsvd_index() - 1);
        let c = me.comp.dev;
        c.wait(c.sq_rsvd_index() - 1, T).unwrap();
        assert_eq!(me.mem.u64_at(7 << 19), k - 1, "the counter's old value");
    }
    peer.ok("join");
    assert_eq!(peer.u64_at(coff as usize), 40);
}

#[test]
fn send_and_receive_with_and_without_inline_cqes() {
    for inline in [false, true] {
        let mut peer = Peer::spawn(handler::GPU_SM_DB, inline);
        let mut me = Me::new(&mut peer, handler::GPU_SM_NO_DBR, true);
        let d = me.main.dev;
        // twosided_bw: the server posts receives then writes a flag; the client waits for
        // the flag, then sends.
        let sizes: &[u32] = if inline {
            &[1, 4, 8, 12, 16, 20, 24, 28, 30, 32]
        } else {
            &[1, 64, 1000, 4096]
        };
        let a = peer.ask(&format!("recv 0 4096 {}", sizes.len()));
        let first: u64 = a.strip_prefix("ok ").expect("recv ticket").parse().unwrap();
        let flag = peer.ask(&format!(
            "put 4000000 {:x} {} 8",
            me.mem.addr() + 100,
            me.mem.key
        ));
        assert!(!parse_cqe(&flag).0, "flag write {flag}");
        for (i, &sz) in sizes.iter().enumerate() {
            let src = 65536 * (i as u64 + 1);
            me.mem.bytes_mut()[src as usize..(src + sz as u64) as usize]
                .copy_from_slice(&pattern(sz as usize, i as u8 + 1));
            let t = d.send(me.mem.at(src), sz, T).unwrap();
            done(d.wait(t, T), t);
            let r = peer.ask(&format!("rwait {} 20000", first + i as u64));
            let (err, op, ctr, bytes, _, c) = parse_cqe(&r);
            assert!(!err, "{r}");
            assert_eq!(
                (op, ctr, bytes),
                (2, (first + i as u64) as u16, sz),
                "RESP_SEND"
            );
            assert_eq!(c[63] & 4 != 0, inline, "inline bit");
            if inline {
                assert_eq!(
                    &c[..sz as usize],
                    &pattern(sz as usize, i as u8 + 1)[..],
                    "data in the CQE"
                );
                assert_eq!(
                    peer.dump(4096 * i, sz as usize),
                    vec![0; sz as usize],
                    "buffer untouched"
                );
            } else {
                same(
                    &peer.dump(4096 * i, sz as usize),
                    &pattern(sz as usize, i as u8 + 1),
                    "received",
                );
            }
        }
    }
}

#[test]
fn errors_complete_with_error_cqes_never_hang() {
    let mut peer = Peer::spawn(handler::CPU_PROXY, false);
    let me = Me::new(&mut peer, handler::CPU_PROXY, false);
    let d = me.main.dev;
    // A wrong rkey: REQ_ERR with REMOTE_ACCESS; the QP is then in error and later WQEs
    // complete with flush errors.
    let bad = Addr {
        addr: peer.addr,
        key: peer.key ^ 0x55,
    };
    let t = d.put(bad, me.mem.at(0), 64, T).unwrap();
    match d.wait(t, T) {
        Err(PollError::Error(c)) => {
            let (op, ctr, _, synd) = cqe_fields(&c);
            assert_eq!((op, ctr), (0xd, t as u16));
            assert_eq!(synd, 0x13, "REMOTE_ACCESS");
        }
        r => panic!("wrong rkey: {r:?}"),
    }
    let t2 = d.put(peer.at(0), me.mem.at(0), 64, T).unwrap();
    match d.wait(t2, T) {
        Err(PollError::Error(c)) => assert_eq!(cqe_fields(&c).3, 0x05, "WR_FLUSH"),
        r => panic!("after an error: {r:?}"),
    }
    assert_eq!(me.main.state(), ERR);

    // A doorbell past the queue depth (1024 slots): the companion, written by hand.
    let c = me.comp.dev;
    c.submit(5000);
    match c.poll_cq_at(Wq::Sq, 0, T) {
        Err(PollError::Error(e)) => assert_eq!(cqe_fields(&e).3, 0x02, "LOCAL_QP_OP"),
        r => panic!("past the depth: {r:?}"),
    }

    // A peer that goes away: writes to it complete with transport errors.
    let mut peer2 = Peer::spawn(handler::CPU_PROXY, false);
    let me2 = Me::new(&mut peer2, handler::GPU_SM_DB, false);
    let t = me2.main.dev.put(peer2.at(0), me2.mem.at(0), 64, T).unwrap();
    done(me2.main.dev.wait(t, T), t);
    peer2.kill();
    let mut saw_error = false;
    for _ in 0..64 {
        match me2
            .main
            .dev
            .put(peer2.at(0), me2.mem.at(0), 64, T)
            .and_then(|t| me2.main.dev.wait(t, T))
        {
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
            Err(PollError::Error(e)) => {
                assert!(
                    matches!(cqe_fields(&e).3, 0x15 | 0x05),
                    "TRANSPORT_RETRY_EXC or flush"
                );
                saw_error = true;
                break;
            }
            Err(PollError::Timeout) => panic!("a lost peer must not hang the QP"),
        }
    }
    assert!(saw_error, "the lost peer was noticed");
    assert_eq!(me2.main.state(), ERR);
}
