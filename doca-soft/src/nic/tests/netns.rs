//! Two NIC processes in two network namespaces joined by a veth pair: UCX over TCP between
//! namespaces, as between two machines. No interface of the test's own namespace takes
//! part (the pair is created inside the namespaces), so UCX contexts of other tests in
//! this process never see it. Skips, saying why, without root or `ip`.

use super::child::{hex, pattern, Peer};
use crate::nic::cqe::op;
use crate::nic::host::{cqe_bytes, cqe_opcode};
use std::process::Command;

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Two namespaces and the veth pair between them; removed on drop.
struct Pair {
    ns: [String; 2],
    dev: [String; 2],
    addr: [String; 2],
}

impl Pair {
    fn create() -> Result<Pair, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root (creating network namespaces needs it)".into());
        }
        if !ip(&["-V"]) {
            return Err("no `ip` command (iproute2)".into());
        }
        let pid = std::process::id();
        let net = 10 + pid % 200;
        let p = Pair {
            ns: [format!("nicA{pid}"), format!("nicB{pid}")],
            dev: [
                format!("na{}", pid % 100_000),
                format!("nb{}", pid % 100_000),
            ],
            addr: [format!("10.214.{net}.1"), format!("10.214.{net}.2")],
        };
        for ns in &p.ns {
            if !ip(&["netns", "add", ns]) {
                return Err(format!("`ip netns add {ns}` failed"));
            }
        }
        let ok = ip(&[
            "-n", &p.ns[0], "link", "add", &p.dev[0], "type", "veth", "peer", "name", &p.dev[1],
            "netns", &p.ns[1],
        ]) && (0..2).all(|i| {
            ip(&[
                "-n",
                &p.ns[i],
                "addr",
                "add",
                &format!("{}/24", p.addr[i]),
                "dev",
                &p.dev[i],
            ]) && ip(&["-n", &p.ns[i], "link", "set", &p.dev[i], "up"])
                && ip(&["-n", &p.ns[i], "link", "set", "lo", "up"])
        });
        if !ok {
            return Err("creating the veth pair between the namespaces failed".into());
        }
        // UCX lists the interfaces that are running when a process starts: wait for the
        // pair to have carrier on both ends first.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let up = |i: usize| {
            Command::new("ip")
                .args(["-n", &p.ns[i], "-o", "link", "show", "dev", &p.dev[i]])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).contains("state UP"))
                .unwrap_or(false)
        };
        while !(up(0) && up(1)) {
            if std::time::Instant::now() > deadline {
                return Err("the veth pair did not come up".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(p)
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        ip(&["-n", &self.ns[0], "link", "del", &self.dev[0]]);
        for ns in &self.ns {
            ip(&["netns", "del", ns]);
        }
    }
}

#[test]
fn two_namespaces_over_veth_write_and_send() {
    let pair = match Pair::create() {
        Ok(p) => p,
        Err(why) => {
            println!("SKIPPED two_namespaces_over_veth_write_and_send: {why}");
            return;
        }
    };
    let spawn = |i: usize| {
        let env = [("UCX_TLS", "tcp")];
        Peer::spawn(&pair.addr[i], Some(&pair.ns[i]), &env)
    };
    let mut a = spawn(0);
    let mut b = spawn(1);
    // The GIDs carry the veth addresses.
    assert_eq!(
        &a.gid[12..],
        &pair.addr[0].parse::<std::net::Ipv4Addr>().unwrap().octets()
    );
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
