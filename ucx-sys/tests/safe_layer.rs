//! The safe layer against the real UCX: streams over a loopback listener, peer failure,
//! rejected connections, memory maps, errors naming the failed call.

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use ucx_sys::{
    CloseMode, Context, Endpoint, Features, Listener, MemMap, PeerFailure, Sent, Status,
    ThreadMode, Worker,
};

fn context() -> Context {
    Context::builder()
        .features(Features::STREAM | Features::WAKEUP | Features::RMA)
        .config("WARN_UNUSED_ENV_VARS", "n")
        .config_default("TLS", "tcp,sm")
        .build()
        .expect("context")
}

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// Progresses both workers until `done` or 10 s.
fn until(a: &Worker, b: &Worker, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        a.progress_all();
        b.progress_all();
        if done() {
            return true;
        }
    }
    false
}

#[test]
fn streams_flow_both_ways_and_a_closed_peer_is_seen() {
    let ctx = context();
    let server = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    assert!(server.event_fd().is_some(), "WAKEUP context has an fd");
    let listener = Listener::bind(&server, loopback()).unwrap();
    let addr = listener.local_addr().unwrap();
    assert_ne!(addr.port(), 0);
    let client = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let ep = Endpoint::connect(&client, addr).unwrap();
    let mut pending = Vec::new();
    for chunk in [&b"hello, "[..], b"world"] {
        match ep.stream_send(chunk.to_vec()) {
            Sent::Done(b) => assert_eq!(b, chunk),
            Sent::Pending(p) => pending.push(p),
            Sent::Failed(e, _) => panic!("send: {e}"),
        }
    }
    let mut accepted: Option<Endpoint> = None;
    let mut got = Vec::new();
    assert!(until(&client, &server, || {
        for r in listener.take_requests() {
            accepted = Some(Endpoint::accept(&server, r).expect("accept"));
        }
        if let Some(a) = &accepted {
            while let Some(d) = a.stream_recv() {
                got.extend_from_slice(&d);
            }
        }
        got.len() >= 12
    }));
    assert_eq!(got, b"hello, world");
    // Completed sends give their buffers back.
    for p in pending {
        assert!(until(&client, &server, || p.is_done()));
        let (buf, status) = p.finish().ok().expect("finished");
        assert_eq!(status, Status::OK);
        assert!(!buf.is_empty());
    }
    // Back the other way.
    let a = accepted.expect("accepted");
    assert!(matches!(
        a.stream_send(b"back".to_vec()),
        Sent::Done(_) | Sent::Pending(_)
    ));
    let mut back = Vec::new();
    assert!(until(&client, &server, || {
        while let Some(d) = ep.stream_recv() {
            back.extend_from_slice(&d);
        }
        back.len() >= 4
    }));
    assert_eq!(back, b"back");
    // The client goes away: the server's endpoint reports it.
    ep.close(CloseMode::Flush);
    drop(client);
    assert!(until(&server, &server, || a.failure().is_some()));
    assert!(a.failure().unwrap().is_err());
}

#[test]
fn connecting_to_nothing_fails_the_endpoint_not_the_process() {
    let ctx = context();
    // A port nobody listens on: bind and drop a listener to get one.
    let port = {
        let w = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
        let l = Listener::bind(&w, loopback()).unwrap();
        l.local_addr().unwrap()
    };
    let w = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let ep = Endpoint::connect(&w, port).unwrap();
    let _ = ep.stream_send(vec![1u8; 16]);
    assert!(until(&w, &w, || ep.failure().is_some()), "failure reported");
    let sent = ep.stream_send(vec![2u8; 16]);
    assert!(
        !matches!(sent, Sent::Done(_)),
        "no send on a failed endpoint"
    );
}

#[test]
fn an_unaccepted_request_is_rejected_and_the_client_sees_it() {
    let ctx = context();
    let server = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let listener = Listener::bind(&server, loopback()).unwrap();
    let client = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let ep = Endpoint::connect(&client, listener.local_addr().unwrap()).unwrap();
    let _ = ep.stream_send(vec![0u8; 8]);
    let mut rejected = 0;
    assert!(until(&client, &server, || {
        rejected += listener.take_requests().len(); // dropped: rejected
        rejected > 0 && ep.failure().is_some()
    }));
}

#[test]
fn an_endpoint_needs_the_listeners_worker() {
    let ctx = context();
    let server = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let other = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let listener = Listener::bind(&server, loopback()).unwrap();
    let client = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let _ep = Endpoint::connect(&client, listener.local_addr().unwrap()).unwrap();
    let mut reqs = Vec::new();
    assert!(until(&client, &server, || {
        reqs.extend(listener.take_requests());
        !reqs.is_empty()
    }));
    let e = Endpoint::accept(&other, reqs.pop().unwrap()).unwrap_err();
    assert_eq!(e.status, Status::ERR_INVALID_PARAM);
    assert_eq!(e.op, "ucp_ep_create");
}

#[test]
fn memory_maps_register_and_pack_keys() {
    let ctx = context();
    let m = MemMap::allocate(&ctx, 8192).unwrap();
    assert!(!m.address().is_null());
    assert!(m.len() >= 8192);
    // SAFETY: UCX allocated `len` writable bytes.
    unsafe { std::ptr::write_bytes(m.address(), 0x5a, m.len()) };
    assert!(!m.pack_rkey().unwrap().is_empty());
    let mut own = vec![0u8; 4096];
    // SAFETY: `own` outlives the map (dropped first below).
    let r = unsafe { MemMap::register(&ctx, own.as_mut_ptr(), own.len()) }.unwrap();
    assert_eq!(r.address(), own.as_mut_ptr());
    assert_eq!(r.len(), 4096);
    drop(r);
}

#[test]
fn bad_configuration_names_the_call() {
    let e = Context::builder()
        .features(Features::STREAM)
        .config("NO_SUCH_UCX_SETTING", "1")
        .build()
        .err()
        .expect("unknown setting refused");
    assert_eq!(e.op, "ucp_config_modify");
    assert!(e.status.is_err());
    assert!(e.to_string().starts_with("ucp_config_modify failed: "));
}

/// Bytes received on `ep` until `n` arrived (progressing both workers).
fn recv_n(a: &Worker, b: &Worker, ep: &Endpoint, n: usize) -> Vec<u8> {
    let mut got = Vec::new();
    until(a, b, || {
        while let Some(d) = ep.stream_recv() {
            got.extend_from_slice(&d);
        }
        got.len() >= n
    });
    got
}

#[test]
fn endpoints_made_from_worker_addresses_pair_up_even_when_data_arrives_first() {
    let ctx = context();
    let a = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let b = Worker::new(&ctx, ThreadMode::Serialized).unwrap();
    let (addr_a, addr_b) = (a.address().unwrap(), b.address().unwrap());
    assert!(
        Endpoint::connect_to_address(&a, &[]).is_err(),
        "empty address"
    );
    // A connects and sends before B has an endpoint to A: UCX keeps the data for the
    // endpoint B makes next.
    let ab = Endpoint::connect_to_address(&a, &addr_b).unwrap();
    let _pending = ab.stream_send(b"early".to_vec());
    let settle = Instant::now() + Duration::from_millis(200);
    until(&a, &b, || Instant::now() > settle);
    let ba = Endpoint::connect_to_address(&b, &addr_a).unwrap();
    assert_eq!(recv_n(&a, &b, &ba, 5), b"early");
    let _back = ba.stream_send(b"reply".to_vec());
    assert_eq!(recv_n(&a, &b, &ab, 5), b"reply");
    // B goes away: A's endpoint reports it.
    drop(ba);
    drop(b);
    assert!(
        until(&a, &a, || ab.failure().is_some()),
        "peer failure seen"
    );
}

#[test]
fn shared_memory_carries_only_endpoints_that_do_not_watch_their_peer() {
    // UCX's shared-memory transports cannot tell that a peer died, so an endpoint with
    // peer failure detection finds a shared-memory-only peer unreachable; without it, the
    // same addresses connect over shared memory.
    let shm = || {
        Context::builder()
            .features(Features::STREAM | Features::WAKEUP)
            .config("WARN_UNUSED_ENV_VARS", "n")
            .config("TLS", "shm")
            .build()
            .expect("shared-memory context")
    };
    let (ca, cb) = (shm(), shm());
    let a = Worker::new(&ca, ThreadMode::Serialized).unwrap();
    let b = Worker::new(&cb, ThreadMode::Serialized).unwrap();
    let (addr_a, addr_b) = (a.address().unwrap(), b.address().unwrap());
    // (On a worker of its own: after a failed ucp_ep_create, UCX 1.22 leaves later
    // endpoints of that worker to the same peer without traffic.)
    let c = Worker::new(&ca, ThreadMode::Serialized).unwrap();
    let e = Endpoint::connect_to_address(&c, &addr_b).expect_err("no watched transport");
    assert_eq!(e.status, Status::ERR_UNREACHABLE, "{e}");
    let ab = Endpoint::connect_to_address_with(&a, &addr_b, PeerFailure::NotDetected).unwrap();
    let ba = Endpoint::connect_to_address_with(&b, &addr_a, PeerFailure::NotDetected).unwrap();
    let _s = ab.stream_send(b"over shm".to_vec());
    assert_eq!(recv_n(&a, &b, &ba, 8), b"over shm");
    let _r = ba.stream_send(b"back".to_vec());
    assert_eq!(recv_n(&a, &b, &ab, 4), b"back");
    ab.close(CloseMode::Flush);
    ba.close(CloseMode::Flush);
}
