//! Two processes on `lo`: this test process runs one NIC and posts WQEs from the CPU into
//! host rings; a child process (see `child.rs`) runs the other NIC. GIDs, QP numbers,
//! addresses and keys travel over the child's pipes, as programs send them over their own
//! sockets.

use super::child::{pattern, Peer, MEM};
use super::fixture::{Side, T};
use crate::rdma::api::{NicEvent, QpState};
use crate::rdma::host::{
    self, cqe_bytes, cqe_counter, cqe_opcode, cqe_syndrome, HostQp, Seg, Sizes,
};
use doca_soft_packet::mlx5::{cqe_opcode as op, syndrome};
use std::time::{Duration, Instant};

fn ok(c: &[u8; 64], counter: u16) {
    assert_eq!(
        cqe_opcode(c),
        op::REQ,
        "WQE {counter}: syndrome {:#x}",
        cqe_syndrome(c)
    );
    assert_eq!(cqe_counter(c), counter);
}

/// A QP of `me` connected to the child's QP (one-sided traffic does not need the child's
/// QP to point back).
fn extra_qp(me: &Side, child: &Peer) -> HostQp {
    let q = HostQp::new(&me.nic, Sizes::default(), false).unwrap();
    q.qp().connect(&child.gid, child.qpn).unwrap();
    q
}

#[test]
fn two_processes_run_every_operation_and_report_errors() {
    let mut me = Side::new(MEM, false);
    let mut peer = Peer::spawn("127.0.0.1", None, &[]);
    me.q.qp().connect(&peer.gid, peer.qpn).unwrap();
    peer.ok(&format!(
        "connect {} {}",
        super::child::hex(&me.nic.gid()),
        me.q.qpn()
    ));
    let (paddr, pkey) = (peer.addr, peer.key);

    // RDMA write of 64 KiB and an inline write.
    me.mem.bytes_mut()[..65536].copy_from_slice(&pattern(65536, 3));
    let src = Seg {
        addr: me.at(0),
        key: me.key(),
        len: 65536,
    };
    me.q.post(|i, q| host::wqe_write(i, q, (paddr + 4096, pkey), &[src], None, true));
    let inl: Vec<u8> = (100..120).collect();
    me.q.post(|i, q| host::wqe_write_inline(i, q, (paddr + 100, pkey), &inl, true));
    me.q.ring();
    // The whole CQE: zero but for the QPN @56, the WQE counter @60 and op_own (REQ, owner
    // 0 in the first pass).
    let mut want = [0u8; 64];
    want[56..60].copy_from_slice(&me.q.qpn().to_be_bytes());
    assert_eq!(me.q.poll_send(T).unwrap(), want);
    want[61] = 1;
    assert_eq!(me.q.poll_send(T).unwrap(), want);
    assert_eq!(peer.dump(4096, 65536), pattern(65536, 3));
    assert_eq!(peer.dump(100, 20), inl);

    // RDMA read of what the child wrote into its own memory.
    peer.ok("fill 200000 3000 77");
    let dst = Seg {
        addr: me.at(300000),
        key: me.key(),
        len: 3000,
    };
    me.q.post(|i, q| host::wqe_read(i, q, (paddr + 200000, pkey), dst, true));
    me.q.ring();
    let c = me.q.poll_send(T).unwrap();
    ok(&c, 2);
    assert_eq!(cqe_bytes(&c), 3000);
    assert_eq!(me.mem.read(300000, 3000), pattern(3000, 77));

    // Fetch-add x3 then compare-swap on a zeroed word of the child.
    for k in 0..3u64 {
        let res = (me.at(400000 + 8 * k as usize), me.key());
        me.q.post(|i, q| host::wqe_atomic(i, q, (paddr + 500000, pkey), 10, None, res, true));
    }
    let res = (me.at(400064), me.key());
    me.q.post(|i, q| host::wqe_atomic(i, q, (paddr + 500000, pkey), 7, Some(30), res, true));
    me.q.ring();
    for k in 3..7 {
        ok(&me.q.poll_send(T).unwrap(), k);
    }
    let word = |b: Vec<u8>| u64::from_ne_bytes(b.try_into().unwrap());
    assert_eq!(
        [0, 8, 16].map(|o| word(me.mem.read(400000 + o, 8))),
        [0, 10, 20]
    );
    assert_eq!(word(me.mem.read(400064, 8)), 30);
    assert_eq!(word(peer.dump(500000, 8)), 7);

    // Send with immediate and a write with immediate into the child's receives.
    peer.ok("recv 600000 256 2");
    me.mem.bytes_mut()[..200].copy_from_slice(&pattern(200, 9));
    let s = Seg {
        addr: me.at(0),
        key: me.key(),
        len: 200,
    };
    me.q.post(|i, q| host::wqe_send(i, q, &[s], Some([5, 6, 7, 8]), true));
    let w = Seg {
        addr: me.at(0),
        key: me.key(),
        len: 64,
    };
    me.q.post(|i, q| host::wqe_write(i, q, (paddr + 700000, pkey), &[w], Some([1, 1, 2, 3]), true));
    me.q.ring();
    let r = peer.cqe(true, 20000).expect("send receive CQE");
    // Whole receive CQE: imm raw @36, byte count @44, the receiving QP @56, receive WQE
    // counter 0, op_own RESP_SEND_IMM << 4.
    let mut want = [0u8; 64];
    want[36..40].copy_from_slice(&[5, 6, 7, 8]);
    want[44..48].copy_from_slice(&200u32.to_be_bytes());
    want[56..60].copy_from_slice(&peer.qpn.to_be_bytes());
    want[63] = op::RESP_SEND_IMM << 4;
    assert_eq!(r, want);
    assert_eq!(peer.dump(600000, 200), pattern(200, 9));
    let r = peer.cqe(true, 20000).expect("write-imm receive CQE");
    assert_eq!(
        (cqe_opcode(&r), cqe_bytes(&r), cqe_counter(&r)),
        (op::RESP_WR_IMM, 64, 1)
    );
    assert_eq!(&r[36..40], &[1, 1, 2, 3]);
    assert_eq!(peer.dump(700000, 64), pattern(64, 9));
    ok(&me.q.poll_send(T).unwrap(), 7);
    ok(&me.q.poll_send(T).unwrap(), 8);

    // The child sends to us: our receive, our CQE.
    me.q.post_recv(me.at(800000), me.key(), 128);
    peer.ok("fill 0 100 21");
    peer.ok("send 0 100");
    let r = me.q.poll_recv(T).expect("our receive CQE");
    assert_eq!((cqe_opcode(&r), cqe_bytes(&r)), (op::RESP_SEND, 100));
    assert_eq!(me.mem.read(800000, 100), pattern(100, 21));
    let c = peer.cqe(false, 20000).expect("child send CQE");
    assert_eq!(cqe_opcode(&c), op::REQ);

    // WAIT: a companion QP's fetch-add waits for the main QP's next CQE.
    let mut comp = extra_qp(&me, &peer);
    let main_cqn = me.q.cqn();
    let next_main = me.q.next_index() as u32;
    let res = (me.at(900000), me.key());
    comp.post(|i, q| host::wqe_wait(i, q, next_main, main_cqn, false));
    comp.post(|i, q| host::wqe_atomic(i, q, (paddr + 510000, pkey), 1, None, res, true));
    comp.ring();
    assert!(comp.poll_send(Duration::from_millis(300)).is_none());
    let w8 = Seg {
        addr: me.at(0),
        key: me.key(),
        len: 8,
    };
    me.q.post(|i, q| host::wqe_write(i, q, (paddr + 520000, pkey), &[w8], None, true));
    me.q.ring();
    ok(&me.q.poll_send(T).unwrap(), next_main as u16);
    ok(&comp.poll_send(T).unwrap(), 1);
    assert_eq!(word(peer.dump(510000, 8)), 1);

    // Unknown key: error CQE, then flush; the host hears of it.
    let mut bad = extra_qp(&me, &peer);
    bad.post(|i, q| host::wqe_write(i, q, (paddr, 0x7fff_0000), &[w8], None, true));
    bad.post(|i, q| host::wqe_write(i, q, (paddr, pkey), &[w8], None, true));
    bad.ring();
    let c = bad.poll_send(T).unwrap();
    assert_eq!(
        (cqe_opcode(&c), cqe_syndrome(&c)),
        (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR)
    );
    let c = bad.poll_send(T).unwrap();
    assert_eq!(
        (cqe_opcode(&c), cqe_syndrome(&c)),
        (op::REQ_ERR, syndrome::WR_FLUSH_ERR)
    );
    assert_eq!(
        bad.qp().status(),
        (QpState::Error, syndrome::REMOTE_ACCESS_ERR)
    );

    // A range running past the child's registration: remote access error too; an atomic
    // on it as well (checked by the child's proxy).
    let mut out_of_range = extra_qp(&me, &peer);
    out_of_range
        .post(|i, q| host::wqe_write(i, q, (paddr + MEM as u64 - 4, pkey), &[w8], None, true));
    out_of_range.ring();
    let c = out_of_range.poll_send(T).unwrap();
    assert_eq!(
        (cqe_opcode(&c), cqe_syndrome(&c)),
        (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR)
    );
    let mut bad_atomic = extra_qp(&me, &peer);
    let res = (me.at(900008), me.key());
    bad_atomic.post(|i, q| host::wqe_atomic(i, q, (paddr + MEM as u64, pkey), 1, None, res, true));
    bad_atomic.ring();
    let c = bad_atomic.poll_send(T).unwrap();
    assert_eq!(
        (cqe_opcode(&c), cqe_syndrome(&c)),
        (op::REQ_ERR, syndrome::REMOTE_ACCESS_ERR)
    );
    assert!(me
        .nic
        .take_events()
        .iter()
        .any(|e| matches!(e, NicEvent::QpError { .. })));

    // The main QP still works.
    me.q.post(|i, q| host::wqe_write(i, q, (paddr, pkey), &[w8], None, true));
    me.q.ring();
    ok(&me.q.poll_send(T).unwrap(), next_main as u16 + 1);
}

#[test]
fn a_killed_peer_turns_every_pending_wqe_into_an_error_cqe_in_bounded_time() {
    let mut me = Side::new(MEM, false);
    let mut peer = Peer::spawn("127.0.0.1", None, &[]);
    me.q.qp().connect(&peer.gid, peer.qpn).unwrap();
    peer.ok(&format!(
        "connect {} {}",
        super::child::hex(&me.nic.gid()),
        me.q.qpn()
    ));
    let (paddr, pkey) = (peer.addr, peer.key);
    // A receive of ours that the peer would have filled, and a send waiting for the
    // child's receive (it never posts one).
    me.q.post_recv(me.at(0), me.key(), 64);
    let src = Seg {
        addr: me.at(4096),
        key: me.key(),
        len: 65536,
    };
    let mut posted = 0u64;
    for _ in 0..8 {
        me.q.post(|i, q| host::wqe_write(i, q, (paddr, pkey), &[src], None, true));
        posted += 1;
    }
    me.q.ring();
    ok(&me.q.poll_send(T).unwrap(), 0);
    let mut done = 1u64;
    let s = Seg {
        addr: me.at(4096),
        key: me.key(),
        len: 16,
    };
    me.q.post(|i, q| host::wqe_send(i, q, &[s], None, true));
    posted += 1;
    me.q.ring();
    peer.kill();
    // Keep posting after the kill: everything must complete, with errors from some point.
    for _ in 0..20 {
        me.q.post(|i, q| host::wqe_write(i, q, (paddr, pkey), &[src], None, true));
        posted += 1;
    }
    me.q.ring();
    let start = Instant::now();
    let mut first_error = None;
    while done < posted {
        let c =
            me.q.poll_send(Duration::from_secs(30))
                .expect("every WQE completes after the peer died");
        assert_eq!(cqe_counter(&c), done as u16, "in order");
        match (cqe_opcode(&c), first_error) {
            (op::REQ, None) => {}
            (op::REQ_ERR, None) => {
                first_error = Some(cqe_syndrome(&c));
                assert!(matches!(
                    cqe_syndrome(&c),
                    syndrome::TRANSPORT_RETRY_EXC_ERR | syndrome::WR_FLUSH_ERR
                ));
            }
            (op::REQ_ERR, Some(_)) => assert_eq!(cqe_syndrome(&c), syndrome::WR_FLUSH_ERR),
            other => panic!("unexpected CQE after an error: {other:?}"),
        }
        done += 1;
    }
    assert!(
        first_error.is_some(),
        "the send waiting for the dead peer failed"
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "bounded: {:?}",
        start.elapsed()
    );
    // Our posted receive is flushed, and the host is told.
    let r = me.q.poll_recv(T).expect("receive flushed");
    assert_eq!(
        (cqe_opcode(&r), cqe_syndrome(&r)),
        (op::RESP_ERR, syndrome::WR_FLUSH_ERR)
    );
    let ev = me.nic.take_events();
    assert!(
        ev.iter()
            .any(|e| matches!(e, NicEvent::PeerLost { gid } if *gid == peer.gid)),
        "{ev:?}"
    );
    assert_eq!(me.q.qp().status().0, QpState::Error);
}

#[test]
fn a_listener_that_never_answers_fails_the_queue_in_bounded_time() {
    // A TCP port that accepts connections and never speaks: not a soft NIC.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gid = crate::rdma::gid::Gid {
        ip: std::net::Ipv4Addr::LOCALHOST,
        port: silent.local_addr().unwrap().port(),
        instance: 1,
    }
    .encode();
    let mut peer = Peer::spawn("127.0.0.1", None, &[("DOCA_SOFT_NIC_CONNECT_MS", "1500")]);
    let start = Instant::now();
    peer.ok(&format!("connect {} 256", super::child::hex(&gid)));
    peer.ok("write 1000 4096 0 8 2");
    let c = peer.cqe(false, 30_000).expect("an error CQE, not a hang");
    assert_eq!(cqe_opcode(&c), op::REQ_ERR);
    assert!(matches!(
        cqe_syndrome(&c),
        syndrome::TRANSPORT_RETRY_EXC_ERR | syndrome::WR_FLUSH_ERR
    ));
    let c = peer.cqe(false, 30_000).expect("second error CQE");
    assert_eq!(
        (cqe_opcode(&c), cqe_syndrome(&c)),
        (op::REQ_ERR, syndrome::WR_FLUSH_ERR)
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(peer.cmd("events").contains("PeerLost"));
    drop(silent);
}
