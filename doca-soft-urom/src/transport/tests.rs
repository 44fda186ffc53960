use super::*;
use std::net::Ipv4Addr;

fn loopback(port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
}

fn limits() -> Limits {
    Limits {
        max_conns: 8,
        max_per_peer: 8,
        max_pending: 3,
        pending_timeout: Duration::from_secs(30),
        eviction_age: Duration::ZERO,
    }
}

/// Polls both nodes until `done` says so (10 s at most); events go to `seen`.
fn pump(
    a: &mut Node,
    b: &mut Node,
    seen: &mut Vec<(bool, Event)>,
    mut done: impl FnMut(&[(bool, Event)]) -> bool,
) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        seen.extend(a.poll().into_iter().map(|e| (true, e)));
        seen.extend(b.poll().into_iter().map(|e| (false, e)));
        if done(seen) {
            return true;
        }
    }
    false
}

fn bytes_of(seen: &[(bool, Event)], at_a: bool) -> Vec<u8> {
    seen.iter()
        .filter(|(a, _)| *a == at_a)
        .filter_map(|(_, e)| match e {
            Event::Data(_, b) => Some(b.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[test]
fn bytes_flow_over_tcp_then_over_ucx_after_the_upgrade_and_the_end_is_seen() {
    let mut server = Node::new();
    let port = server.listen(loopback(0), limits()).expect("listen");
    let mut client = Node::new();
    let c = client.connect(loopback(port)).expect("connect");
    client.send(c, b"hello".to_vec()).expect("send");
    let mut seen = Vec::new();
    assert!(pump(&mut client, &mut server, &mut seen, |s| bytes_of(
        s, false
    )
    .len()
        >= 5));
    assert_eq!(bytes_of(&seen, false), b"hello");
    let sid = seen
        .iter()
        .find_map(|(_, e)| match e {
            Event::Accepted(id) => Some(*id),
            _ => None,
        })
        .expect("accepted");
    // Both move to UCX endpoints made from each other's address.
    client.enable_ucx().expect("client UCX");
    server.enable_ucx().expect("server UCX");
    let (ca, sa) = (
        client.ucx_address().unwrap().to_vec(),
        server.ucx_address().unwrap().to_vec(),
    );
    server.upgrade(sid, &ca).expect("server upgrade");
    client.upgrade(c, &sa).expect("client upgrade");
    assert!(server.is_upgraded(sid) && client.is_upgraded(c));
    server.send(sid, b"over ucx".to_vec()).expect("send");
    client.send(c, b"back".to_vec()).expect("send");
    seen.clear();
    assert!(pump(&mut client, &mut server, &mut seen, |s| {
        bytes_of(s, true).len() >= 8 && bytes_of(s, false).len() >= 4
    }));
    assert_eq!(bytes_of(&seen, true), b"over ucx");
    assert_eq!(bytes_of(&seen, false), b"back");
    drop(client);
    seen.clear();
    let mut spare = Node::new();
    assert!(
        pump(&mut server, &mut spare, &mut seen, |s| s.iter().any(
            |(a, e)| *a && matches!(e, Event::Closed(id) if *id == sid)
        )),
        "the server sees the client go away"
    );
}

fn accepted(seen: &[(bool, Event)]) -> Vec<ConnId> {
    seen.iter()
        .filter_map(|(_, e)| match e {
            Event::Accepted(id) => Some(*id),
            _ => None,
        })
        .collect()
}

fn closed(seen: &[(bool, Event)]) -> Vec<ConnId> {
    seen.iter()
        .filter_map(|(_, e)| match e {
            Event::Closed(id) => Some(*id),
            _ => None,
        })
        .collect()
}

#[test]
fn silent_connections_are_evicted_oldest_first_and_admitted_ones_stay() {
    let mut server = Node::new();
    let port = server.listen(loopback(0), limits()).expect("listen");
    let mut clients: Vec<std::net::TcpStream> = Vec::new();
    let mut seen = Vec::new();
    let mut idle = Node::new();
    // One connection that speaks and is admitted.
    clients.push(std::net::TcpStream::connect(loopback(port)).unwrap());
    assert!(pump(&mut server, &mut idle, &mut seen, |s| accepted(s)
        .len()
        == 1));
    let host = accepted(&seen)[0];
    server.admit(host);
    // Five silent ones: only the three newest stay pending.
    for _ in 0..5 {
        clients.push(std::net::TcpStream::connect(loopback(port)).unwrap());
    }
    let ok = pump(&mut server, &mut idle, &mut seen, |s| {
        accepted(s).len() == 6 && closed(s).len() == 2
    });
    assert!(ok, "{seen:?}");
    let ids = accepted(&seen);
    assert_eq!(
        closed(&seen),
        ids[1..3].to_vec(),
        "the two oldest silent ones go"
    );
    assert!(!closed(&seen).contains(&host));
    assert_eq!(server.live, 4);
    assert_eq!(server.live_pending, 3);
    for id in closed(&seen) {
        server.close(id);
    }
    assert_eq!(
        server.live, 4,
        "closing an evicted connection counts it once"
    );
}

#[test]
fn pending_connections_time_out_and_the_limits_refuse_the_rest() {
    let mut server = Node::new();
    let port = server
        .listen(
            loopback(0),
            Limits {
                max_conns: 2,
                max_per_peer: 2,
                max_pending: 2,
                pending_timeout: Duration::from_millis(200),
                eviction_age: Duration::ZERO,
            },
        )
        .expect("listen");
    let mut idle = Node::new();
    let mut seen = Vec::new();
    let mut socks = vec![
        std::net::TcpStream::connect(loopback(port)).unwrap(),
        std::net::TcpStream::connect(loopback(port)).unwrap(),
    ];
    assert!(pump(&mut server, &mut idle, &mut seen, |s| accepted(s)
        .len()
        == 2));
    let ids = accepted(&seen);
    server.admit(ids[0]);
    server.admit(ids[1]);
    // Full: a third connection is closed at once (nothing pending to evict).
    socks.push(std::net::TcpStream::connect(loopback(port)).unwrap());
    let t = Instant::now() + Duration::from_millis(300);
    pump(&mut server, &mut idle, &mut seen, |_| Instant::now() > t);
    assert_eq!(
        accepted(&seen).len(),
        2,
        "refused beyond max_conns {seen:?}"
    );
    let mut b = [0u8; 1];
    socks[2]
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert!(
        matches!(std::io::Read::read(&mut socks[2], &mut b), Ok(0) | Err(_)),
        "the refused connection is closed"
    );
    // Room again: a silent connection is closed after the pending timeout.
    server.close(ids[1]);
    socks.push(std::net::TcpStream::connect(loopback(port)).unwrap());
    assert!(pump(&mut server, &mut idle, &mut seen, |s| accepted(s)
        .len()
        == 3));
    let silent = accepted(&seen)[2];
    let started = Instant::now();
    assert!(pump(&mut server, &mut idle, &mut seen, |s| closed(s)
        .contains(&silent)));
    assert!(started.elapsed() >= Duration::from_millis(150));
}
