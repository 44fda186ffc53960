//! Two NIC processes in two network namespaces joined by a veth pair: UCX over TCP between
//! namespaces, as between two machines. No interface of the test's own namespace takes
//! part (the pair is created inside the namespaces), so UCX contexts of other tests in
//! this process never see it. Skips, saying why, without root or the veth driver.

use super::child::{hex, pattern, Peer};
use crate::rdma::host::{cqe_bytes, cqe_opcode};
use doca_soft_packet::mlx5::cqe_opcode as op;
use doca_test_support::netns::VethPair;

#[test]
fn two_namespaces_over_veth_write_and_send() {
    let pair = match VethPair::create() {
        Ok(p) => p,
        Err(why) => {
            println!("SKIPPED two_namespaces_over_veth_write_and_send: {why}");
            return;
        }
    };
    let spawn = |i: usize| {
        let env = [("UCX_TLS", "tcp")];
        Peer::spawn(&pair.addr[i].to_string(), Some(&pair.ns[i]), &env)
    };
    let mut a = spawn(0);
    let mut b = spawn(1);
    // The GIDs carry the veth addresses.
    assert_eq!(&a.gid[12..], &pair.addr[0].octets());
    a.ok(&format!("connect {} {}", hex(&b.gid), b.qpn));
    b.ok(&format!("connect {} {}", hex(&a.gid), a.qpn));
    // A writes 100 KiB into B, twice.
    a.ok("fill 0 102400 5");
    a.ok(&format!(
        "write {:x} {} 0 102400 2",
        b.addr + 200_000,
        b.key
    ));
    for _ in 0..2 {
        let c = a.cqe(false, 30_000).expect("write CQE");
        assert_eq!(cqe_opcode(&c), op::REQ);
    }
    assert_eq!(b.dump(200_000, 102_400), pattern(102_400, 5));
    // B sends to A.
    a.ok("recv 500000 4096 1");
    b.ok("fill 0 3000 8");
    b.ok("send 0 3000");
    let r = a.cqe(true, 30_000).expect("receive CQE");
    assert_eq!((cqe_opcode(&r), cqe_bytes(&r)), (op::RESP_SEND, 3000));
    assert_eq!(a.dump(500_000, 3000), pattern(3000, 8));
    let c = b.cqe(false, 30_000).expect("send CQE");
    assert_eq!(cqe_opcode(&c), op::REQ);
    drop((a, b));
    drop(pair);
}
