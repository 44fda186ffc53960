//! DOCA RDMA between two processes on `lo`, through the C API only: `doca_rdma` contexts on
//! the host data path of the testing hooks, connection blobs and memory exports moved over
//! the child's pipes (as the samples move them over TCP), and a CPU thread on each side
//! running the legacy GPU RDMA device functions ([`CpuRdma`]) on the rings the kernels would
//! use, executed by the soft NICs over UCX.
//!
//! * the exchange of `gpunetio_rdma_client_server_write` (writes with immediate, sends with
//!   immediate, strong and weak inline writes as flags, shared receive queue), every byte
//!   checked;
//! * reads, large and zero-length writes, inline sends, weak positions;
//! * bad input: unknown and foreign remote keys, ranges outside a registration, a peer that
//!   disappears mid-transfer (the CPU device sees error completions, the host a failure
//!   callback, nothing hangs).

mod rdma_support;

use std::time::{Duration, Instant};

use doca_soft::capi::doca_ctx::*;
use doca_soft::capi::doca_dev::doca_dev_close;
use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_pe::*;
use doca_soft::capi::doca_rdma::*;
use doca_soft::capi::doca_types::DocaData;
use doca_soft::testing::rdma::{CpuRdma, FLAG_IMM, RECV_WAIT_B, RECV_WAIT_NB};
use doca_soft::testing::GpuBufEntry;
use rdma_support::*;

const CHILD: &str = "child_process";

/// The connection half both roles do: export, swap blobs through the pipes, connect.
fn connect_with(peer: &mut Peer, r: *mut Rdma, n: usize) {
    for _ in 0..n {
        let (blob, conn) = export(r);
        let theirs = unhex(&peer.expect("conn"));
        peer.send(&format!("conn {}", hex(&blob)));
        // SAFETY: a started context; our connection; readable blob.
        assert_eq!(
            unsafe { doca_rdma_connect(r, theirs.as_ptr(), theirs.len(), conn) },
            0
        );
    }
}

fn wait_flag(mem: &[u8], i: usize, t: Duration) {
    let end = Instant::now() + t;
    // SAFETY: our own buffer, written by the NIC.
    while unsafe { std::ptr::read_volatile(mem.as_ptr().add(i)) } != 1 {
        assert!(Instant::now() < end, "flag {i} never came");
        std::hint::spin_loop();
    }
}

/// The child: the client of the sample (role `client`), or a passive target (role
/// `target`) that exports a region and obeys a few commands.
#[test]
#[ignore = "the child process of the two-process RDMA tests (started by them)"]
fn child_process() {
    if std::env::var_os("DOCA_SOFT_RDMA_CHILD").is_none() {
        println!("not started as a child: nothing to do");
        return;
    }
    let role = std::env::var("DOCA_SOFT_RDMA_ROLE").unwrap_or_default();
    let conns: u16 = std::env::var("DOCA_SOFT_RDMA_CONNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let dev = open_lo();
    let r = started_rdma(dev, conns, 256);
    let mut mine = Vec::new();
    for _ in 0..conns {
        let (blob, c) = export(r);
        answer(&format!("conn {}", hex(&blob)));
        let cmd = command().expect("conn");
        let theirs = unhex(cmd.strip_prefix("conn ").expect("conn command"));
        // SAFETY: a started context; our connection; readable blob.
        assert_eq!(
            unsafe { doca_rdma_connect(r, theirs.as_ptr(), theirs.len(), c) },
            0
        );
        mine.push(c);
    }
    let cpu = cpu_device(r);
    match role.as_str() {
        "client" => {
            let a_blob = unhex(command().unwrap().strip_prefix("mmap ").unwrap());
            let a = Remote::new(dev, &a_blob, 4, 256);
            let b = Region::new(dev, 4, 128, 0x02);
            let c = Region::new(dev, 4, 128, 0x03);
            let f = Region::new(dev, 1, 4, 0x00);
            answer(&format!("mmap {}", hex(&f.blob)));
            let (ab, bb, cb) = (a.bufs(), b.bufs(), c.bufs());
            for i in 0..4usize {
                // Thread 0 waits for the server's flag that its receives are posted.
                wait_flag(&f.mem, i, Duration::from_secs(20));
                for tid in 0..2u32 {
                    let local = if tid == 1 { &cb[i] } else { &bb[i] };
                    let imm = i as u32 + tid;
                    if i % 2 == 0 {
                        let off = if tid == 1 { 128 } else { 0 };
                        cpu.write(0, &ab[i], off, local, 0, 128, imm, FLAG_IMM, None)
                            .unwrap();
                    } else {
                        cpu.send(0, local, 0, 128, imm, FLAG_IMM, None).unwrap();
                    }
                }
                cpu.commit_strong(0).unwrap();
            }
            let n = cpu.wait_all().unwrap();
            answer(&format!("commits {n}"));
            // Stay until the parent has checked everything.
            let _ = command();
        }
        "target" => {
            // LOCAL_READ_WRITE | RDMA_READ | RDMA_WRITE.
            let region = Region::with_perms(dev, 4, 4096, 0x5a, 7);
            answer(&format!("mmap {}", hex(&region.blob)));
            let mut out = Vec::new();
            while let Some(cmd) = command() {
                let w: Vec<&str> = cmd.split_whitespace().collect();
                match w.first().copied() {
                    Some("recv") => {
                        let n: u32 = w[1].parse().unwrap();
                        let bufs = region.bufs();
                        for k in 0..n {
                            cpu.recv(Some(&bufs[(k % 4) as usize]), 4096, 0, 0, None)
                                .unwrap();
                        }
                        cpu.recv_commit_strong().unwrap();
                        answer("ok");
                    }
                    Some("waitrecv") => {
                        let r = cpu.recv_wait_all(RECV_WAIT_B, &mut out);
                        let imms: Vec<String> =
                            out.iter().map(|(i, c)| format!("{i}:{c}")).collect();
                        answer(&format!("recvd {:?} {}", r.err(), imms.join(",")));
                    }
                    Some("dump") => {
                        let (off, len): (usize, usize) =
                            (w[1].parse().unwrap(), w[2].parse().unwrap());
                        answer(&format!("data {}", hex(&region.snapshot()[off..off + len])));
                    }
                    Some("die") => std::process::exit(3),
                    _ => break,
                }
            }
        }
        other => panic!("unknown role '{other}'"),
    }
    destroy_rdma(r);
    // SAFETY: every user of the device is gone.
    assert_eq!(unsafe { doca_dev_close(dev) }, 0);
}

#[test]
#[allow(clippy::needless_range_loop)] // index i is also the round number the sample uses
fn client_server_write_between_two_processes() {
    let mut peer = Peer::spawn(CHILD, &[("DOCA_SOFT_RDMA_ROLE", "client")]);
    let dev = open_lo();
    let r = started_rdma(dev, 1, 256);
    connect_with(&mut peer, r, 1);
    let cpu = cpu_device(r);
    assert_eq!(cpu.num_connections(), 1);

    let a = Region::new(dev, 4, 256, 0x01);
    peer.send(&format!("mmap {}", hex(&a.blob)));
    let f = Remote::new(dev, &unhex(&peer.expect("mmap")), 1, 4);
    let (ab, fb) = (a.bufs(), f.bufs());
    assert_eq!(ab[1].addr, ab[0].addr + 256);
    assert_ne!(
        fb[0].mkey_be,
        ab[0].mkey_be.swap_bytes(),
        "keys are big-endian"
    );

    let mut got = Vec::new();
    for i in 0..4usize {
        for tid in 0..2u64 {
            if i % 2 == 0 {
                cpu.recv(None, 0, 0, 0, None).unwrap();
            } else {
                cpu.recv(Some(&ab[i]), 128, tid * 128, 0, None).unwrap();
            }
        }
        cpu.recv_commit_strong().unwrap();
        if i % 2 == 0 {
            cpu.write_inline(0, &fb[0], i as u64, &[1], 0, 0, None)
                .unwrap();
            cpu.commit_strong(0).unwrap();
        } else {
            let (pos, mask) = cpu.get_info(0).unwrap();
            assert_eq!((pos, mask), (i as u32, 255), "one WQE per round so far");
            cpu.write_inline(0, &fb[0], i as u64, &[1], 0, 0, Some(i as u32))
                .unwrap();
            cpu.commit_weak(0, 1).unwrap();
        }
        cpu.recv_wait_all(RECV_WAIT_B, &mut got).unwrap();
        assert_eq!(
            got,
            vec![(i as u32, 0), (i as u32 + 1, 0)],
            "round {i}: immediates and connection indices in arrival order"
        );
    }
    assert_eq!(peer.expect("commits"), "4");
    assert_eq!(cpu.wait_all().unwrap(), 4, "4 commits of the inline flags");
    let bytes = a.snapshot();
    for i in 0..4 {
        let e = &bytes[i * 256..(i + 1) * 256];
        assert!(
            e[..128].iter().all(|&b| b == 2),
            "buffer {i} first half: {:x?}",
            &e[..8]
        );
        assert!(
            e[128..].iter().all(|&b| b == 3),
            "buffer {i} second half: {:x?}",
            &e[128..136]
        );
    }
    let (pos, _) = cpu.recv_get_info().unwrap();
    assert_eq!(pos, 8, "eight receives committed");
    peer.send("done");
    assert!(peer.finish().success());
    drop((a, f));
    destroy_rdma(r);
    // SAFETY: every user of the device is gone.
    assert_eq!(unsafe { doca_dev_close(dev) }, 0);
}

fn syndrome(c: &[u8; 64]) -> (u8, u8) {
    (c[63] >> 4, c[55])
}

/// Waits for send CQE `k` of `conn`.
fn send_cqe(cpu: &CpuRdma, conn: u32, k: u64) -> [u8; 64] {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(c) = cpu.send_cqe(conn, k).unwrap() {
            return c;
        }
        assert!(
            Instant::now() < end,
            "CQE {k} of connection {conn} never came"
        );
        std::thread::yield_now();
    }
}

#[test]
fn reads_large_writes_inline_sends_and_weak_positions() {
    let mut peer = Peer::spawn(CHILD, &[("DOCA_SOFT_RDMA_ROLE", "target")]);
    let dev = open_lo();
    let r = started_rdma(dev, 1, 256);
    connect_with(&mut peer, r, 1);
    let cpu = cpu_device(r);
    let t = Remote::new(dev, &unhex(&peer.expect("mmap")), 4, 4096);
    let tb = t.bufs();
    let mut local = Region::new(dev, 4, 4096, 0);
    for (i, b) in local.mem.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    let lb = local.bufs();

    // A whole element, a write of 0 bytes, and a read back of the peer's fill.
    cpu.write(0, &tb[1], 0, &lb[0], 0, 4096, 0, 0, None)
        .unwrap();
    cpu.write(0, &tb[1], 100, &lb[0], 0, 0, 0, 0, None).unwrap();
    cpu.read(0, &tb[3], 8, &lb[2], 16, 1000, 0, None).unwrap();
    cpu.commit_strong(0).unwrap();
    assert_eq!(cpu.wait_all().unwrap(), 1);
    peer.send("dump 4096 4096");
    assert_eq!(
        unhex(&peer.expect("data")),
        local.snapshot()[..4096].to_vec()
    );
    let snap = local.snapshot();
    assert!(snap[2 * 4096 + 16..2 * 4096 + 1016]
        .iter()
        .all(|&b| b == 0x5a));
    assert_eq!(
        snap[2 * 4096 + 15],
        ((2 * 4096 + 15) * 7 + 3) as u8,
        "before the read"
    );

    // Weak operations at explicit positions, committed together.
    let (pos, mask) = cpu.get_info(0).unwrap();
    assert_eq!((pos, mask), (3, 255));
    cpu.write(0, &tb[2], 0, &lb[1], 0, 64, 0, 0, Some(pos + 1))
        .unwrap();
    cpu.write_inline(0, &tb[2], 64, b"inline!", 0, 0, Some(pos))
        .unwrap();
    cpu.commit_weak(0, 2).unwrap();
    assert_eq!(cpu.wait_all().unwrap(), 1);
    peer.send("dump 8192 71");
    let d = unhex(&peer.expect("data"));
    assert_eq!(&d[..64], &local.snapshot()[4096..4160]);
    assert_eq!(&d[64..71], b"inline!");

    // Inline sends and a send with immediate into the peer's receives.
    peer.send("recv 3");
    assert_eq!(peer.expect("ok"), "");
    cpu.send_inline(0, &[9u8; 44], 0, 0, None).unwrap();
    cpu.send(0, &lb[3], 0, 300, 0xabcd, FLAG_IMM, None).unwrap();
    cpu.send_inline(0, &[], 7, FLAG_IMM, None).unwrap();
    cpu.commit_strong(0).unwrap();
    cpu.wait_all().unwrap();
    peer.send("waitrecv");
    assert_eq!(
        peer.expect("recvd"),
        format!("None 0:0,{}:0,7:0", 0xabcdu32)
    );
    peer.send("dump 0 44");
    assert_eq!(unhex(&peer.expect("data")), vec![9u8; 44]);
    peer.send("dump 4096 300");
    assert_eq!(
        unhex(&peer.expect("data")),
        local.snapshot()[3 * 4096..3 * 4096 + 300].to_vec()
    );

    // Bad arguments are refused before anything is posted.
    let sent = cpu.sent(0).unwrap();
    assert_eq!(
        cpu.write_inline(0, &tb[0], 0, &[0; 29], 0, 0, None),
        Err(DocaError::INVALID_VALUE)
    );
    assert_eq!(
        cpu.send_inline(0, &[0; 45], 0, 0, None),
        Err(DocaError::INVALID_VALUE)
    );
    assert_eq!(
        cpu.write(1, &tb[0], 0, &lb[0], 0, 8, 0, 0, None),
        Err(DocaError::INVALID_VALUE)
    );
    assert_eq!(
        cpu.read(0, &tb[0], 0, &lb[0], 0, 8, 1, None),
        Err(DocaError::INVALID_VALUE)
    );
    assert_eq!(
        cpu.write(0, &tb[0], 0, &lb[0], 0, 8, 0, 2, None),
        Err(DocaError::INVALID_VALUE)
    );
    assert_eq!(cpu.recv(None, 8, 0, 0, None), Err(DocaError::INVALID_VALUE));
    assert_eq!(cpu.commit_weak(0, 257), Err(DocaError::INVALID_VALUE));
    let mut out = Vec::new();
    assert_eq!(
        cpu.recv_wait_all(7, &mut out),
        Err(DocaError::INVALID_VALUE)
    );
    assert_eq!(cpu.sent(0).unwrap(), sent);

    peer.send("exit");
    assert!(peer.finish().success());
    drop((t, local));
    destroy_rdma(r);
    // SAFETY: every user of the device is gone.
    assert_eq!(unsafe { doca_dev_close(dev) }, 0);
}

static FAILURES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

unsafe extern "C" fn on_failure(_c: *mut RdmaConnection, _cu: DocaData, _u: DocaData) {
    FAILURES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn bad_keys_bad_ranges_and_a_vanishing_peer_give_errors_not_hangs() {
    let mut peer = Peer::spawn(
        CHILD,
        &[
            ("DOCA_SOFT_RDMA_ROLE", "target"),
            ("DOCA_SOFT_RDMA_CONNS", "4"),
        ],
    );
    let dev = open_lo();
    let mut r = std::ptr::null_mut();
    let mut pe = std::ptr::null_mut();
    // SAFETY: live device; valid out-pointers.
    unsafe {
        assert_eq!(doca_rdma_create(dev, &mut r), 0);
        assert_eq!(doca_rdma_set_max_num_connections(r, 4), 0);
        assert_eq!(doca_rdma_set_send_queue_size(r, 64), 0);
        assert_eq!(
            doca_rdma_set_connection_state_callbacks(r, None, None, Some(on_failure), None),
            0
        );
        doca_soft::testing::rdma::rdma_set_host_datapath(r.cast()).unwrap();
        assert_eq!(doca_pe_create(&mut pe), 0);
        assert_eq!(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(r)), 0);
        assert_eq!(doca_ctx_start(doca_rdma_as_ctx(r)), 0);
    }
    connect_with(&mut peer, r, 4);
    let mut cpu = cpu_device(r);
    cpu.set_timeout(Duration::from_secs(30));
    let t = Remote::new(dev, &unhex(&peer.expect("mmap")), 4, 4096);
    let tb = t.bufs();
    let local = Region::new(dev, 1, 4096, 0x11);
    let lb = local.bufs();

    // Connection 0: a key the peer never registered.
    let unknown = GpuBufEntry {
        addr: tb[0].addr,
        mkey_be: 0x7654_3210u32.to_be(),
        reserved: 0,
    };
    cpu.write(0, &unknown, 0, &lb[0], 0, 64, 0, 0, None)
        .unwrap();
    cpu.commit_strong(0).unwrap();
    assert_eq!(cpu.wait_all(), Err(DocaError::IO_FAILED));
    assert_eq!(
        syndrome(&send_cqe(&cpu, 0, 0)),
        (0xd, 0x13),
        "REQ_ERR, remote access"
    );

    // Connection 1: past the end of the peer's registration.
    cpu.write(1, &tb[3], 4000, &lb[0], 0, 200, 0, 0, None)
        .unwrap();
    cpu.commit_strong(1).unwrap();
    let c = send_cqe(&cpu, 1, 0);
    assert_eq!(syndrome(&c), (0xd, 0x13));

    // Connection 2: a foreign key (one of ours the peer does not have) at the peer's
    // address.
    let other = Region::new(dev, 1, 64, 0);
    let foreign = GpuBufEntry {
        addr: tb[0].addr,
        mkey_be: other.bufs()[0].mkey_be,
        reserved: 0,
    };
    assert_ne!(foreign.mkey_be, tb[0].mkey_be);
    cpu.write(2, &foreign, 0, &lb[0], 0, 8, 0, 0, None).unwrap();
    cpu.commit_strong(2).unwrap();
    assert_eq!(syndrome(&send_cqe(&cpu, 2, 0)), (0xd, 0x13));
    peer.send("dump 0 4096");
    assert!(
        unhex(&peer.expect("data")).iter().all(|&b| b == 0x5a),
        "nothing landed"
    );

    // The host learns of the failed connections through the failure callback.
    let end = Instant::now() + Duration::from_secs(20);
    while FAILURES.load(std::sync::atomic::Ordering::SeqCst) < 3 {
        // SAFETY: a live PE.
        unsafe { doca_pe_progress(pe) };
        assert!(Instant::now() < end, "failure callbacks");
    }

    // Connection 3: good traffic, then the peer vanishes with receives posted here.
    let (p3, _) = cpu.get_info(3).unwrap();
    assert_eq!(p3, 0);
    cpu.write(3, &tb[1], 0, &lb[0], 0, 4096, 0, 0, None)
        .unwrap();
    cpu.commit_strong(3).unwrap();
    assert_eq!(syndrome(&send_cqe(&cpu, 3, 0)), (0, 0));
    cpu.recv(Some(&lb[0]), 4096, 0, 0, None).unwrap();
    cpu.recv(Some(&lb[0]), 4096, 0, 0, None).unwrap();
    cpu.recv_commit_strong().unwrap();
    peer.send("die");
    let start = Instant::now();
    let mut out = Vec::new();
    assert_eq!(
        cpu.recv_wait_all(RECV_WAIT_B, &mut out),
        Err(DocaError::IO_FAILED)
    );
    for k in 1..40u64 {
        cpu.write(3, &tb[1], 0, &lb[0], 0, 4096, 0, 0, None)
            .unwrap();
        cpu.commit_strong(3).unwrap();
        if cpu
            .send_cqe(3, k)
            .unwrap()
            .is_some_and(|c| c[63] >> 4 == 0xd)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(cpu.wait_all(), Err(DocaError::IO_FAILED));
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "errors, not hangs"
    );
    // Error completions are never consumed: every later wait reports them.
    assert_eq!(
        cpu.recv_wait_all(RECV_WAIT_NB, &mut out),
        Err(DocaError::IO_FAILED)
    );
    assert!(out.is_empty());
    let end = Instant::now() + Duration::from_secs(20);
    while FAILURES.load(std::sync::atomic::Ordering::SeqCst) < 4 {
        // SAFETY: a live PE.
        unsafe { doca_pe_progress(pe) };
        assert!(Instant::now() < end, "failure callback of connection 3");
    }
    peer.kill();
    drop((t, local, other));
    // SAFETY: live handles, destroyed once, in order.
    unsafe {
        assert_eq!(doca_ctx_stop(doca_rdma_as_ctx(r)), 0);
        assert_eq!(doca_rdma_destroy(r), 0);
        assert_eq!(doca_pe_destroy(pe), 0);
        assert_eq!(doca_dev_close(dev), 0);
    }
}
