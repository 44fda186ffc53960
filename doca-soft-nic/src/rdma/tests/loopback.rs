//! Two NIC instances of one process on 127.0.0.1, driven from the CPU.

use super::fixture::{pair, Side, T};
use crate::rdma::api::{NicEvent, QpState};
use crate::rdma::bench::WriteBench;
use crate::rdma::host::{
    self, cqe_bytes, cqe_counter, cqe_opcode, cqe_syndrome, HostQp, Seg, Sizes,
};
use crate::rdma::ring::SqDoorbell;
use doca_soft_packet::mlx5::{cqe_opcode as op, syndrome};
use std::time::Duration;

fn qpn_of(c: &[u8; 64]) -> u32 {
    u32::from_be_bytes([0, c[57], c[58], c[59]])
}

fn fill(s: &mut Side, off: usize, len: usize, seed: u8) {
    for (i, x) in s.mem.bytes_mut()[off..off + len].iter_mut().enumerate() {
        *x = seed.wrapping_add((i * 7) as u8);
    }
}

fn expect_ok(q: &mut HostQp, counter: u16) -> [u8; 64] {
    let c = q.poll_send(T).expect("CQE");
    assert_eq!(
        cqe_opcode(&c),
        op::REQ,
        "WQE {counter}: syndrome {:#x}",
        cqe_syndrome(&c)
    );
    assert_eq!(cqe_counter(&c), counter);
    c
}

fn expect_err(q: &mut HostQp, counter: u16, synd: u8) {
    let c = q.poll_send(T).expect("error CQE");
    assert_eq!(
        (cqe_opcode(&c), cqe_syndrome(&c), cqe_counter(&c)),
        (op::REQ_ERR, synd, counter)
    );
}

#[test]
fn rdma_write_lands_at_the_peer_and_completes_in_order() {
    let (mut a, b) = pair(1 << 16, false);
    fill(&mut a, 0, 4096, 1);
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 4096,
    };
    for k in 0..3u64 {
        let dst = (b.at(8192 + 4096 * k as usize), b.key());
        a.q.post(|i, q| host::wqe_write(i, q, dst, &[src], None, true));
    }
    a.q.ring();
    for k in 0..3u16 {
        let c = expect_ok(&mut a.q, k);
        assert_eq!(qpn_of(&c), a.q.qpn());
    }
    for k in 0..3 {
        assert_eq!(b.mem.read(8192 + 4096 * k, 4096), a.mem.read(0, 4096));
    }
    assert_eq!(a.q.qp().status().0, QpState::Ready);
}

#[test]
fn inline_write_read_and_two_segment_write() {
    let (mut a, mut b) = pair(1 << 16, false);
    let data: Vec<u8> = (1..=28).collect();
    let dst = (b.at(100), b.key());
    a.q.post(|i, q| host::wqe_write_inline(i, q, dst, &data, true));
    fill(&mut b, 4096, 1000, 9);
    let rsrc = (b.at(4096), b.key());
    let rdst = Seg {
        addr: a.at(8192),
        key: a.key(),
        len: 1000,
    };
    a.q.post(|i, q| host::wqe_read(i, q, rsrc, rdst, true));
    fill(&mut a, 0, 300, 3);
    let s1 = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 100,
    };
    let s2 = Seg {
        addr: a.at(200),
        key: a.key(),
        len: 100,
    };
    let wdst = (b.at(20000), b.key());
    a.q.post(|i, q| host::wqe_write(i, q, wdst, &[s1, s2], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    let rc = expect_ok(&mut a.q, 1);
    assert_eq!(cqe_bytes(&rc), 1000, "a read reports its byte count");
    expect_ok(&mut a.q, 2);
    assert_eq!(b.mem.read(100, 28), data);
    assert_eq!(a.mem.read(8192, 1000), b.mem.read(4096, 1000));
    let mut both = a.mem.read(0, 100);
    both.extend(a.mem.read(200, 100));
    assert_eq!(b.mem.read(20000, 200), both);
}

#[test]
fn fetch_add_and_compare_swap_return_the_old_value_natively() {
    let (mut a, mut b) = pair(1 << 16, false);
    b.mem.bytes_mut()[64..72].copy_from_slice(&5u64.to_ne_bytes());
    let dst = (b.at(64), b.key());
    for k in 0..4u64 {
        let res = (a.at(1024 + 8 * k as usize), a.key());
        a.q.post(|i, q| host::wqe_atomic(i, q, dst, 3, None, res, true));
    }
    // compare 17 (the value after four adds) -> swap in 100.
    let res = (a.at(2048), a.key());
    a.q.post(|i, q| host::wqe_atomic(i, q, dst, 100, Some(17), res, true));
    // compare 17 again: fails, returns 100, leaves it.
    let res2 = (a.at(2056), a.key());
    a.q.post(|i, q| host::wqe_atomic(i, q, dst, 555, Some(17), res2, true));
    a.q.ring();
    for k in 0..6 {
        let c = expect_ok(&mut a.q, k);
        assert_eq!(cqe_bytes(&c), 8);
    }
    let u = |m: &Side, off: usize| u64::from_ne_bytes(m.mem.read(off, 8).try_into().unwrap());
    assert_eq!(
        [u(&a, 1024), u(&a, 1032), u(&a, 1040), u(&a, 1048)],
        [5, 8, 11, 14]
    );
    assert_eq!(u(&a, 2048), 17);
    assert_eq!(u(&a, 2056), 100);
    assert_eq!(u(&b, 64), 100);
}

#[test]
fn send_receive_with_immediate_and_unexpected_messages() {
    let (mut a, mut b) = pair(1 << 16, false);
    // One receive posted before, one message arrives before its receive.
    b.q.post_recv(b.at(0), b.key(), 64);
    fill(&mut a, 0, 100, 11);
    let s = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 40,
    };
    a.q.post(|i, q| host::wqe_send(i, q, &[s], Some([1, 2, 3, 4]), true));
    let s2 = Seg {
        addr: a.at(40),
        key: a.key(),
        len: 60,
    };
    a.q.post(|i, q| host::wqe_send(i, q, &[s2], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    let r = b.q.poll_recv(T).expect("receive CQE");
    assert_eq!(cqe_opcode(&r), op::RESP_SEND_IMM);
    assert_eq!(
        (cqe_bytes(&r), cqe_counter(&r), qpn_of(&r)),
        (40, 0, b.q.qpn())
    );
    assert_eq!(&r[36..40], &[1, 2, 3, 4]);
    assert_eq!(b.mem.read(0, 40), a.mem.read(0, 40));
    // The second waits for a receive: neither its CQE nor the sender's completion yet.
    assert!(b.q.poll_recv(Duration::from_millis(200)).is_none());
    assert!(
        a.q.poll_send(Duration::from_millis(10)).is_none(),
        "a send completes once delivered"
    );
    b.q.post_recv(b.at(1000), b.key(), 64);
    let r = b.q.poll_recv(T).expect("late receive CQE");
    assert_eq!(
        (cqe_opcode(&r), cqe_bytes(&r), cqe_counter(&r)),
        (op::RESP_SEND, 60, 1)
    );
    assert_eq!(b.mem.read(1000, 60), a.mem.read(40, 60));
    expect_ok(&mut a.q, 1);
}

#[test]
fn inline_receive_lands_in_the_cqe_not_the_buffer() {
    let (mut a, mut b) = pair(1 << 16, true);
    b.q.post_recv(b.at(0), b.key(), 64);
    b.q.post_recv(b.at(64), b.key(), 64);
    fill(&mut a, 0, 64, 40);
    let small = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 32,
    };
    let big = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 33,
    };
    a.q.post(|i, q| host::wqe_send(i, q, &[small], None, true));
    a.q.post(|i, q| host::wqe_send(i, q, &[big], None, true));
    a.q.ring();
    let r = b.q.poll_recv(T).unwrap();
    assert_eq!(r[63] & 0xf4, (op::RESP_SEND << 4) | 0x4, "inline bit set");
    assert_eq!(&r[..32], &a.mem.read(0, 32)[..]);
    assert_eq!(b.mem.read(0, 32), vec![0; 32], "the buffer stays untouched");
    let r = b.q.poll_recv(T).unwrap();
    assert_eq!(r[63] & 0x4, 0, "33 bytes are not inline");
    assert_eq!(b.mem.read(64, 33), a.mem.read(0, 33));
    expect_ok(&mut a.q, 0);
    expect_ok(&mut a.q, 1);
}

#[test]
fn write_with_immediate_consumes_a_receive_after_the_data() {
    let (mut a, mut b) = pair(1 << 16, false);
    b.q.post_recv(0, 0x100, 0); // DOCA RDMA's "no buffer" receive
    fill(&mut a, 0, 512, 77);
    let s = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 512,
    };
    let dst = (b.at(4096), b.key());
    a.q.post(|i, q| host::wqe_write(i, q, dst, &[s], Some([0xaa, 0xbb, 0xcc, 0xdd]), true));
    a.q.ring();
    let r = b.q.poll_recv(T).expect("receive CQE");
    // When the CQE is visible, the data is too.
    assert_eq!(b.mem.read(4096, 512), a.mem.read(0, 512));
    assert_eq!((cqe_opcode(&r), cqe_bytes(&r)), (op::RESP_WR_IMM, 512));
    assert_eq!(&r[36..40], &[0xaa, 0xbb, 0xcc, 0xdd]);
    expect_ok(&mut a.q, 0);
}

#[test]
fn wait_holds_the_companion_queue_until_the_main_cqe() {
    let (mut a, b) = pair(1 << 16, false);
    let mut comp = HostQp::new(&a.nic, Sizes::default(), false).unwrap();
    comp.qp().connect(&b.nic.gid(), b.q.qpn()).unwrap();
    let cqn = a.q.cqn();
    // Companion: WAIT for CQE 0 of the main send CQ, then fetch-add.
    let dst = (b.at(0), b.key());
    let res = (a.at(8), a.key());
    comp.post(|i, q| host::wqe_wait(i, q, 0, cqn, false));
    comp.post(|i, q| host::wqe_atomic(i, q, dst, 1, None, res, true));
    comp.ring();
    assert!(
        comp.poll_send(Duration::from_millis(300)).is_none(),
        "held by the WAIT"
    );
    assert_eq!(u64::from_ne_bytes(b.mem.read(0, 8).try_into().unwrap()), 0);
    let src = Seg {
        addr: a.at(100),
        key: a.key(),
        len: 8,
    };
    let wdst = (b.at(100), b.key());
    a.q.post(|i, q| host::wqe_write(i, q, wdst, &[src], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    let c = comp.poll_send(T).expect("atomic after the wait");
    assert_eq!(
        (cqe_opcode(&c), cqe_counter(&c)),
        (op::REQ, 1),
        "the unsignaled WAIT has no CQE"
    );
    assert_eq!(u64::from_ne_bytes(b.mem.read(0, 8).try_into().unwrap()), 1);
}

#[test]
fn unknown_rkey_fails_then_everything_flushes_and_the_host_hears_of_it() {
    let (mut a, b) = pair(1 << 16, false);
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 8,
    };
    a.q.post(|i, q| host::wqe_write(i, q, (b.at(0), b.key()), &[src], None, true));
    a.q.post(|i, q| host::wqe_write(i, q, (b.at(0), 0x7fff_fff0), &[src], None, false));
    a.q.post(|i, q| host::wqe_write(i, q, (b.at(0), b.key()), &[src], None, false));
    a.q.post(|i, q| host::wqe_write(i, q, (b.at(0), b.key()), &[src], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    expect_err(&mut a.q, 1, syndrome::REMOTE_ACCESS_ERR);
    expect_err(&mut a.q, 2, syndrome::WR_FLUSH_ERR);
    expect_err(&mut a.q, 3, syndrome::WR_FLUSH_ERR);
    assert_eq!(
        a.q.qp().status(),
        (QpState::Error, syndrome::REMOTE_ACCESS_ERR)
    );
    assert!(a.nic.take_events().contains(&NicEvent::QpError {
        qpn: a.q.qpn(),
        syndrome: syndrome::REMOTE_ACCESS_ERR
    }));
    // Later WQEs flush at once.
    a.q.post(|i, q| host::wqe_write(i, q, (b.at(0), b.key()), &[src], None, true));
    a.q.ring();
    expect_err(&mut a.q, 4, syndrome::WR_FLUSH_ERR);
}

#[test]
fn ranges_outside_registrations_fail_locally_and_remotely() {
    let (mut a, b) = pair(1 << 16, false);
    let bad_src = Seg {
        addr: a.at((1 << 16) - 4),
        key: a.key(),
        len: 8,
    };
    a.q.post(|i, q| host::wqe_write(i, q, (b.at(0), b.key()), &[bad_src], None, true));
    a.q.ring();
    expect_err(&mut a.q, 0, syndrome::LOCAL_PROT_ERR);
    let (mut c, d) = pair(1 << 16, false);
    let src = Seg {
        addr: c.at(0),
        key: c.key(),
        len: 8,
    };
    c.q.post(|i, q| host::wqe_write(i, q, (d.at((1 << 16) - 4), d.key()), &[src], None, true));
    c.q.ring();
    expect_err(&mut c.q, 0, syndrome::REMOTE_ACCESS_ERR);
}

#[test]
fn malformed_wqes_and_receives_too_small_are_error_completions() {
    let (mut a, mut b) = pair(1 << 16, false);
    a.q.post(|i, q| {
        let mut w = host::wqe_write(i, q, (0, 0), &[], None, true);
        w[3] = 0x14; // masked compare-swap
        w
    });
    a.q.ring();
    expect_err(&mut a.q, 0, syndrome::LOCAL_QP_OP_ERR);
    // A 100-byte send into a 50-byte receive: the receiver's QP errs too.
    let (mut c, mut d) = pair(1 << 16, false);
    d.q.post_recv(d.at(0), d.key(), 50);
    d.q.post_recv(d.at(100), d.key(), 50);
    let s = Seg {
        addr: c.at(0),
        key: c.key(),
        len: 100,
    };
    c.q.post(|i, q| host::wqe_send(i, q, &[s], None, true));
    c.q.ring();
    expect_err(&mut c.q, 0, syndrome::REMOTE_INVAL_REQ_ERR);
    let r = d.q.poll_recv(T).expect("receive error CQE");
    assert_eq!(
        (cqe_opcode(&r), cqe_syndrome(&r), cqe_counter(&r)),
        (op::RESP_ERR, syndrome::LOCAL_LENGTH_ERR, 0)
    );
    let r = d.q.poll_recv(T).expect("the other receive flushes");
    assert_eq!(
        (cqe_opcode(&r), cqe_syndrome(&r), cqe_counter(&r)),
        (op::RESP_ERR, syndrome::WR_FLUSH_ERR, 1)
    );
    let _ = (&mut b, &mut d);
}

#[test]
fn destroying_a_qp_flushes_what_its_ring_holds() {
    let a = Side::new(4096, false);
    let mut q = HostQp::new(&a.nic, Sizes::default(), false).unwrap();
    // Never connected: the WQEs wait, then the destroy flushes them.
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 8,
    };
    for _ in 0..3 {
        q.post(|i, qpn| host::wqe_write(i, qpn, (0x1000, 1), &[src], None, true));
    }
    q.ring();
    assert!(q.poll_send(Duration::from_millis(200)).is_none());
    assert!(
        q.rq_in_use() && q.rcq_in_use(),
        "the QP holds its RQ, the RQ its CQ"
    );
    q.destroy_qp();
    assert!(!q.rq_in_use());
    for k in 0..3 {
        expect_err(&mut q, k, syndrome::WR_FLUSH_ERR);
    }
}

#[test]
fn bad_connect_arguments_are_refused() {
    let a = Side::new(4096, false);
    let b = Side::new(4096, false);
    assert!(
        a.q.qp().connect(&[0; 16], 5).is_err(),
        "not a doca-soft GID"
    );
    assert!(a.q.qp().connect(&b.nic.gid(), 0).is_err());
    a.q.qp().connect(&b.nic.gid(), b.q.qpn()).unwrap();
    assert!(
        a.q.qp().connect(&b.nic.gid(), b.q.qpn()).is_err(),
        "already connected"
    );
}

#[test]
fn the_benchmark_entry_point_moves_the_bytes() {
    let mut bench = WriteBench::new(4096).unwrap();
    for (i, x) in bench.source_mut()[..256].iter_mut().enumerate() {
        *x = i as u8 ^ 0x5a;
    }
    bench.run(1000, 256).unwrap();
    let want: Vec<u8> = (0..256).map(|i| i as u8 ^ 0x5a).collect();
    assert_eq!(&bench.destination()[..256], &want[..]);
    assert!(bench.run(1, 0).is_err());
    assert!(bench.run(1, 8192).is_err());
}

/// Rings in host memory for QPs built by hand (shared receive queue, other doorbells).
struct Rings {
    mem: crate::rdma::host::HostMem,
}

impl Rings {
    fn new() -> Rings {
        Rings {
            mem: crate::rdma::host::HostMem::new(1 << 20).expect("memory"),
        }
    }
    fn at(&self, off: usize) -> *mut u8 {
        // SAFETY: offsets used below stay inside the 1 MiB.
        unsafe { self.mem.ptr().add(off) }
    }
    /// A CQ ring of 64 entries at `off`, initialised.
    fn cq(&mut self, off: usize) -> *mut u8 {
        for k in 0..64 {
            self.mem.bytes_mut()[off + 64 * k + 63] = 0xf1;
        }
        self.at(off)
    }
    fn cqe(&self, off: usize, n: usize) -> Option<[u8; 64]> {
        let deadline = std::time::Instant::now() + T;
        let o = off + 64 * (n % 64);
        while std::time::Instant::now() < deadline {
            // op_own first, with acquire: the NIC writes it last, so the rest of the CQE read
            // after it is complete (a plain copy could read the owner byte new and the rest old).
            // SAFETY: `o + 63` is inside the CQ ring.
            let op_own = unsafe {
                (*(self.at(o + 63) as *const std::sync::atomic::AtomicU8))
                    .load(std::sync::atomic::Ordering::Acquire)
            };
            if op_own >> 4 != 0xf && (op_own & 1) as usize == (n / 64) & 1 {
                return Some(self.mem.read(o, 64).try_into().unwrap());
            }
            std::thread::yield_now();
        }
        None
    }
    fn put(&mut self, off: usize, b: &[u8]) {
        self.mem.bytes_mut()[off..off + b.len()].copy_from_slice(b);
    }
    fn store_u32(&self, off: usize, v: u32) {
        // SAFETY: an aligned word inside the rings.
        unsafe {
            (*(self.at(off) as *const std::sync::atomic::AtomicU32))
                .store(v, std::sync::atomic::Ordering::Release)
        };
    }
    fn store_u64(&self, off: usize, v: u64) {
        // SAFETY: an aligned word inside the rings.
        unsafe {
            (*(self.at(off) as *const std::sync::atomic::AtomicU64))
                .store(v, std::sync::atomic::Ordering::Release)
        };
    }
}

#[test]
fn a_shared_receive_queue_serves_several_qps_in_arrival_order() {
    let mut a = Side::new(1 << 16, false);
    let b = Side::new(1 << 16, false);
    let mut r = Rings::new();
    // On b: one receive queue (DOCA RDMA's), two connection QPs using it.
    let (rcq, scq1, scq2) = (r.cq(0), r.cq(8192), r.cq(16384));
    // SAFETY: the rings live in `r`, which outlives every handle below (dropped first).
    let (rcq, scq1, scq2) = unsafe {
        (
            b.nic.create_cq(rcq, 64).unwrap(),
            b.nic.create_cq(scq1, 64).unwrap(),
            b.nic.create_cq(scq2, 64).unwrap(),
        )
    };
    // SAFETY: as above.
    let rq = unsafe {
        b.nic
            .create_rq(r.at(32768), 64, r.at(40960) as *const u32, &rcq, false)
            .unwrap()
    };
    let db1 = SqDoorbell::ProxySlot(r.at(40960 + 64) as *const u64);
    let db2 = SqDoorbell::ProxySlot(r.at(40960 + 128) as *const u64);
    // SAFETY: as above.
    let (q1, q2) = unsafe {
        (
            b.nic
                .create_qp(r.at(49152), 64, db1, &scq1, Some(&rq))
                .unwrap(),
            b.nic
                .create_qp(r.at(53248), 64, db2, &scq2, Some(&rq))
                .unwrap(),
        )
    };
    assert!(rq.in_use() && rcq.in_use());
    let mut a2 = HostQp::new(&a.nic, Sizes::default(), false).unwrap();
    a.q.qp().connect(&b.nic.gid(), q1.qpn()).unwrap();
    a2.qp().connect(&b.nic.gid(), q2.qpn()).unwrap();
    q1.connect(&a.nic.gid(), a.q.qpn()).unwrap();
    q2.connect(&a.nic.gid(), a2.qpn()).unwrap();
    // Three receives: {BE32 len, BE32 key, BE64 addr}.
    for k in 0..3u64 {
        let mut w = [0u8; 16];
        w[0..4].copy_from_slice(&100u32.to_be_bytes());
        w[4..8].copy_from_slice(&b.key().to_be_bytes());
        w[8..16].copy_from_slice(&(b.at(1000 * k as usize)).to_be_bytes());
        r.put(32768 + 16 * k as usize, &w);
    }
    r.store_u32(40960, 3u32.to_be());
    fill(&mut a, 0, 300, 1);
    let s = |off: usize, len: u32| Seg {
        addr: a.at(off),
        key: a.key(),
        len,
    };
    let (s0, s1, s2, s3) = (s(0, 10), s(0, 20), s(100, 30), s(200, 40));
    a.q.post(|i, q| host::wqe_send(i, q, &[s0], Some([0, 0, 0, 1]), true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    a2.post(|i, q| host::wqe_send(i, q, &[s1], Some([0, 0, 0, 2]), true));
    a2.ring();
    expect_ok(&mut a2, 0);
    // Two entries gathered into one message.
    a.q.post(|i, q| host::wqe_send(i, q, &[s2, s3], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 1);
    let c0 = r.cqe(0, 0).expect("first receive");
    let c1 = r.cqe(0, 1).expect("second receive");
    let c2 = r.cqe(0, 2).expect("third receive");
    assert_eq!((qpn_of(&c0), cqe_bytes(&c0), c0[39]), (q1.qpn(), 10, 1));
    assert_eq!(
        (qpn_of(&c1), cqe_bytes(&c1), c1[39]),
        (q2.qpn(), 20, 2),
        "the QP it arrived on"
    );
    assert_eq!(
        (qpn_of(&c2), cqe_bytes(&c2), cqe_opcode(&c2)),
        (q1.qpn(), 70, op::RESP_SEND)
    );
    assert_eq!(b.mem.read(0, 10), a.mem.read(0, 10));
    assert_eq!(b.mem.read(1000, 20), a.mem.read(0, 20));
    let mut both = a.mem.read(100, 30);
    both.extend(a.mem.read(200, 40));
    assert_eq!(b.mem.read(2000, 70), both);
    drop((q1, q2, rq, rcq, scq1, scq2));
    drop(r);
}

#[test]
fn gpu_doorbell_forms_record_and_register_both_drive_the_ring() {
    let mut a = Side::new(1 << 16, false);
    let b = Side::new(1 << 16, false);
    let mut r = Rings::new();
    let cq = r.cq(0);
    // SAFETY: the rings live in `r`, dropped after the handles.
    let cq = unsafe { a.nic.create_cq(cq, 64).unwrap() };
    let rec = SqDoorbell::Record(r.at(8192) as *const u32);
    let reg = SqDoorbell::Register(r.at(8192 + 64) as *const u64);
    // SAFETY: as above.
    let (qa, qb) = unsafe {
        (
            a.nic.create_qp(r.at(16384), 64, rec, &cq, None).unwrap(),
            a.nic.create_qp(r.at(32768), 64, reg, &cq, None).unwrap(),
        )
    };
    qa.connect(&b.nic.gid(), b.q.qpn()).unwrap();
    qb.connect(&b.nic.gid(), b.q.qpn()).unwrap();
    fill(&mut a, 0, 64, 30);
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 64,
    };
    // Record: two WQEs, then the DBR word BE32(2).
    for i in 0..2u16 {
        r.put(
            16384 + 64 * i as usize,
            &host::wqe_write(
                i,
                qa.qpn(),
                (b.at(64 * i as usize), b.key()),
                &[src],
                None,
                true,
            ),
        );
    }
    r.store_u32(8192, 2u32.to_be());
    assert!(r.cqe(0, 0).is_some() && r.cqe(0, 1).is_some());
    // Register image: first word BE32(prod << 8), second BE32(QPN << 8).
    r.put(
        32768,
        &host::wqe_write(0, qb.qpn(), (b.at(1000), b.key()), &[src], None, true),
    );
    let mut img = [0u8; 8];
    img[..4].copy_from_slice(&(1u32 << 8).to_be_bytes());
    img[4..].copy_from_slice(&(qb.qpn() << 8).to_be_bytes());
    r.store_u64(8192 + 64, u64::from_ne_bytes(img));
    let c = r.cqe(0, 2).expect("CQE of the register-rung WQE");
    assert_eq!((qpn_of(&c), cqe_opcode(&c)), (qb.qpn(), op::REQ));
    assert_eq!(b.mem.read(0, 64), a.mem.read(0, 64));
    assert_eq!(b.mem.read(64, 64), a.mem.read(0, 64));
    assert_eq!(b.mem.read(1000, 64), a.mem.read(0, 64));
    // A record announcing more WQEs than the ring holds: the QP errs, nothing runs.
    r.store_u32(8192, 200u32.to_be());
    let deadline = std::time::Instant::now() + T;
    while qa.status().0 != QpState::Error && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(qa.status(), (QpState::Error, syndrome::LOCAL_QP_OP_ERR));
    drop((qa, qb, cq));
    drop(r);
}

#[test]
fn a_qp_may_talk_to_a_qp_of_its_own_nic() {
    let mut a = Side::new(1 << 16, false);
    let mut q2 = HostQp::new(&a.nic, Sizes::default(), false).unwrap();
    a.q.qp().connect(&a.nic.gid(), q2.qpn()).unwrap();
    q2.qp().connect(&a.nic.gid(), a.q.qpn()).unwrap();
    fill(&mut a, 0, 128, 60);
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 128,
    };
    let dst = (a.at(4096), a.key());
    a.q.post(|i, q| host::wqe_write(i, q, dst, &[src], None, true));
    q2.post_recv(a.at(8192), a.key(), 128);
    a.q.post(|i, q| host::wqe_send(i, q, &[src], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    expect_ok(&mut a.q, 1);
    let r = q2.poll_recv(T).unwrap();
    assert_eq!(cqe_opcode(&r), op::RESP_SEND);
    assert_eq!(a.mem.read(4096, 128), a.mem.read(0, 128));
    assert_eq!(a.mem.read(8192, 128), a.mem.read(0, 128));
}

#[test]
fn an_unreachable_peer_fails_the_queue_instead_of_hanging() {
    let mut a = Side::new(4096, false);
    // A GID whose listener port nobody uses: a NIC that was stopped.
    let gone = {
        let n = crate::rdma::api::Nic::start(std::net::Ipv4Addr::LOCALHOST).unwrap();
        n.gid()
    };
    std::thread::sleep(Duration::from_millis(100));
    a.q.qp().connect(&gone, 0x100).unwrap();
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 8,
    };
    for _ in 0..3 {
        a.q.post(|i, q| host::wqe_write(i, q, (0x1000, 1), &[src], None, true));
    }
    a.q.ring();
    let c = a.q.poll_send(T).expect("an error CQE, not a hang");
    assert_eq!(cqe_opcode(&c), op::REQ_ERR);
    assert!(matches!(
        cqe_syndrome(&c),
        syndrome::TRANSPORT_RETRY_EXC_ERR | syndrome::WR_FLUSH_ERR
    ));
    expect_err(&mut a.q, 1, syndrome::WR_FLUSH_ERR);
    expect_err(&mut a.q, 2, syndrome::WR_FLUSH_ERR);
    assert!(a
        .nic
        .take_events()
        .iter()
        .any(|e| matches!(e, NicEvent::PeerLost { gid } if *gid == gone)));
}

#[test]
fn the_unexpected_queue_is_bounded_and_refuses_past_it() {
    let a = Side::new(4096, false);
    let big = Sizes {
        sq: 8192,
        rq: 16,
        cq: 8192,
    };
    let mut tx = HostQp::new(&a.nic, big, false).unwrap();
    let mut b = Side::new(4096, false);
    tx.qp().connect(&b.nic.gid(), b.q.qpn()).unwrap();
    b.q.qp().connect(&a.nic.gid(), tx.qpn()).unwrap();
    let n = crate::rdma::MAX_UNEXPECTED + 4;
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 8,
    };
    for _ in 0..n {
        tx.post(|i, q| host::wqe_send(i, q, &[src], None, true));
    }
    tx.ring();
    // The first messages wait for receives (their sends do not complete); one past the
    // bound is refused.
    let deadline = std::time::Instant::now() + T;
    while b
        .nic
        .stats()
        .rnr_drops
        .load(std::sync::atomic::Ordering::Relaxed)
        == 0
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        b.nic
            .stats()
            .rnr_drops
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 1
    );
    assert!(
        tx.poll_send(Duration::from_millis(100)).is_none(),
        "held sends wait for receives"
    );
    // The refusal reached the sender: its QP is in error with the RNR syndrome.
    let mut events = Vec::new();
    while !events.iter().any(|e| matches!(e, NicEvent::QpError { .. }))
        && std::time::Instant::now() < deadline
    {
        events.extend(a.nic.take_events());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        events.contains(&NicEvent::QpError {
            qpn: tx.qpn(),
            syndrome: syndrome::RNR_RETRY_EXC_ERR
        }),
        "{events:?}"
    );
    // Receives arrive: the held messages complete in order, then the refused one fails.
    for k in 0..16 {
        b.q.post_recv(b.at(8 * k), b.key(), 8);
    }
    for k in 0..16 {
        expect_ok(&mut tx, k);
    }
    let r = b.q.poll_recv(T).unwrap();
    assert_eq!(cqe_opcode(&r), op::RESP_SEND);
}

#[test]
fn an_imported_memory_blob_spares_the_key_request() {
    let (mut a, b) = pair(1 << 16, false);
    let blob = b.nic.export_memory(&b.reg).encode();
    let export = crate::rdma::gid::MemExport::decode(&blob).expect("blob parses");
    a.nic.import_remote_key(&export).unwrap();
    fill(&mut a, 0, 512, 90);
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 512,
    };
    a.q.post(|i, q| host::wqe_write(i, q, (b.at(2048), b.key()), &[src], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    assert_eq!(b.mem.read(2048, 512), a.mem.read(0, 512));
    assert_eq!(
        a.nic
            .stats()
            .key_requests
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
    // A blob whose GID is not a NIC's is refused.
    let mut bad = export.clone();
    bad.gid = [0; 16];
    assert!(a.nic.import_remote_key(&bad).is_err());
}

#[test]
fn deregistered_memory_is_revoked_at_the_peers() {
    let (mut a, b) = pair(1 << 16, false);
    let victim = crate::rdma::host::HostMem::new(4096).expect("memory");
    let reg = crate::rdma::mkey::register(
        victim.addr(),
        4096,
        crate::rdma::mkey::Access::REMOTE_WRITE,
        crate::rdma::mkey::MemKind::Host,
    )
    .unwrap();
    let key = reg.key();
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 8,
    };
    a.q.post(|i, q| host::wqe_write(i, q, (victim.addr(), key), &[src], None, true));
    a.q.ring();
    expect_ok(&mut a.q, 0);
    drop(reg);
    // Once b's NIC has told a's, the key is unknown there.
    let deadline = std::time::Instant::now() + T;
    let mut q = HostQp::new(&a.nic, Sizes::default(), false).unwrap();
    q.qp().connect(&b.nic.gid(), b.q.qpn()).unwrap();
    let mut n = 0u16;
    loop {
        q.post(|i, qn| host::wqe_write(i, qn, (victim.addr(), key), &[src], None, true));
        q.ring();
        let c = q.poll_send(T).expect("CQE");
        if cqe_opcode(&c) == op::REQ_ERR {
            assert_eq!(cqe_syndrome(&c), syndrome::REMOTE_ACCESS_ERR);
            assert_eq!(cqe_counter(&c), n);
            break;
        }
        n += 1;
        assert!(
            std::time::Instant::now() < deadline,
            "the revocation never arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(b);
}

#[test]
fn a_nic_without_queues_still_revokes() {
    // b's only QP is gone before the deregistration: its proxy thread then sleeps without a
    // timeout, and only the deregistration itself can wake it to tell a.
    let mut a = Side::new(1 << 16, false);
    let b = crate::rdma::Nic::start(std::net::Ipv4Addr::LOCALHOST).expect("start NIC");
    let victim = crate::rdma::host::HostMem::new(4096).expect("memory");
    let reg = crate::rdma::mkey::register(
        victim.addr(),
        4096,
        crate::rdma::mkey::Access::REMOTE_WRITE,
        crate::rdma::mkey::MemKind::Host,
    )
    .unwrap();
    let key = reg.key();
    let src = Seg {
        addr: a.at(0),
        key: a.key(),
        len: 8,
    };
    {
        let qb = HostQp::new(&b, Sizes::default(), false).unwrap();
        a.q.qp().connect(&b.gid(), qb.qpn()).unwrap();
        qb.qp().connect(&a.nic.gid(), a.q.qpn()).unwrap();
        a.q.post(|i, q| host::wqe_write(i, q, (victim.addr(), key), &[src], None, true));
        a.q.ring();
        expect_ok(&mut a.q, 0);
    }
    // Time for b's proxy to let the QP go and fall asleep.
    std::thread::sleep(Duration::from_millis(300));
    let revocations = || {
        a.nic
            .stats()
            .revocations
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let before = revocations();
    drop(reg);
    // No traffic meanwhile (a write would wake b by itself): the revocation arrives alone.
    let deadline = std::time::Instant::now() + T;
    while revocations() == before {
        assert!(
            std::time::Instant::now() < deadline,
            "the sleeping NIC never sent the revocation"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The count may have moved for a key deregistered elsewhere in the process (tests run
    // in parallel) just before ours: write until refused, within the deadline.
    let mut n = 1u16;
    loop {
        a.q.post(|i, q| host::wqe_write(i, q, (victim.addr(), key), &[src], None, true));
        a.q.ring();
        let c = a.q.poll_send(T).expect("CQE");
        if cqe_opcode(&c) == op::REQ_ERR {
            assert_eq!(cqe_syndrome(&c), syndrome::REMOTE_ACCESS_ERR);
            assert_eq!(cqe_counter(&c), n);
            break;
        }
        n += 1;
        assert!(
            std::time::Instant::now() < deadline,
            "writes through the revoked key kept landing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(b);
}
