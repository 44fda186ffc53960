//! AF_PACKET ports on a veth pair whose ends live in two network namespaces this test
//! creates: frames sent by the port on one end arrive at the port on the other end.
//! Skips (with a printed reason) without root or without the `ip` tool; the namespaces
//! are removed even when the test fails.

mod support;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use doca_soft::testing::frames::udp4;
use doca_soft::testing::{Entry, Field, FieldMatch, Fwd, Pipe, PipeKind, Port, PortSpec};
use support::{eventually, unique, RecordingSink};

const LIMIT: Duration = Duration::from_secs(10);

fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "ip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Deletes the namespaces it names when dropped (the veth pair goes with them).
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

/// Runs `f` on a thread that has entered network namespace `ns`.
fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let fd = File::open(&path).expect("netns file");
        // SAFETY: setns on a namespace fd; affects only this thread.
        let r = unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
        f()
    })
    .join()
    .expect("netns thread")
}

#[test]
fn veth_between_namespaces_carries_frames() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIP: needs root to create network namespaces"
            );
        };
        return;
    }
    if ip(&["-V"]).is_err() {
        {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIP: the `ip` tool (iproute2) is not installed"
            );
        };
        return;
    }
    let (na, nb) = (unique("dsa"), unique("dsb"));
    let guard = Namespaces(vec![na.clone(), nb.clone()]);
    let (va, vb) = (unique("va"), unique("vb"));
    for args in [
        vec!["netns", "add", &na],
        vec!["netns", "add", &nb],
        vec!["link", "add", &va, "type", "veth", "peer", "name", &vb],
        vec!["link", "set", &va, "netns", &na],
        vec!["link", "set", &vb, "netns", &nb],
        vec!["-n", &na, "link", "set", &va, "up"],
        vec!["-n", &nb, "link", "set", &vb, "up"],
    ] {
        ip(&args).unwrap();
    }
    let up = |ns: &str, dev: &str| {
        ip(&["-n", ns, "link", "show", dev]).is_ok_and(|s| s.contains("LOWER_UP"))
    };
    assert!(
        eventually(LIMIT, || up(&na, &va) && up(&nb, &vb)),
        "veth carrier"
    );

    // Receiving port on va (namespace A): UDP to port 7777 -> queue 0. The kernel's own
    // IPv6 chatter on the new link matches nothing.
    let sink = Arc::new(RecordingSink::new(2048, usize::MAX));
    let s2 = sink.clone();
    let va2 = va.clone();
    let rx = in_netns(&na, move || {
        let port = Port::for_spec(&PortSpec::Linux {
            ifname: va2,
            ifindex: 0,
        })
        .unwrap();
        let root = Arc::new(Pipe::new(
            "root",
            PipeKind::Control,
            Fwd::None,
            Fwd::None,
            false,
        ));
        let m = FieldMatch {
            field: Field::UdpDst,
            value: 7777,
            mask: 0xffff,
        };
        root.add(Entry {
            matches: vec![m],
            priority: 0,
            fwd: Fwd::Rss {
                queues: vec![0],
                flags: 0,
            },
            counter: None,
        });
        port.set_flow_root(Some(root));
        port.register_rx_queue(0, s2).unwrap();
        port
    });

    let frames: Vec<Vec<u8>> = (0..100u16)
        .map(|i| udp4([10, 7, 0, 1], [10, 7, 0, 2], 1000, 7777, &i.to_be_bytes()))
        .collect();
    let to_send = frames.clone();
    let vb2 = vb.clone();
    let sent = in_netns(&nb, move || {
        let port = Port::for_spec(&PortSpec::Linux {
            ifname: vb2,
            ifindex: 0,
        })
        .unwrap();
        for f in &to_send {
            port.send(f).unwrap();
        }
        port.counters().sent
    });
    assert_eq!(sent, 100);
    let got = sink.wait_for(frames.len(), LIMIT);
    assert_eq!(got, frames, "every frame once, in order");
    assert_eq!(rx.counters().delivered, 100);
    rx.unregister_rx_queue(0);
    drop(rx);
    drop(guard);
    assert!(
        ip(&["netns", "list"]).is_ok_and(|l| !l.contains(&na) && !l.contains(&nb)),
        "namespaces removed"
    );
}
