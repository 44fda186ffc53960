//! Worker idle policy and wake-ups: sandbox ping-pong between two workers whose processes
//! sleep as soon as they are idle (`DOCA_SOFT_UROM_SPIN_US=0`), so every worker-to-worker
//! message must wake its receiver through the plugin's event descriptor (the doca-soft
//! wake-up extension); and the callback storage of `Worker::submit_ref` (inline and boxed
//! closures, dropped when a submission fails).

mod support;

use doca_urom::domain::Oob;
use doca_urom::graph::Graph;
use doca_urom::{DocaError, Domain, ThreadOob, Worker};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;
use worker_sandbox::host::{Received, Sandbox};

const PING: u64 = 0x1234;
const PONG: u64 = 0x5678;
const ROUNDS: u64 = 300;

type Slot<T> = Arc<Mutex<Option<Result<T, DocaError>>>>;

/// Progresses `w` until `slot` is filled (generous deadline: a lost wake-up would still
/// complete on the runtime's fallback timeouts, only slowly).
fn wait<T>(w: &Worker, slot: &Slot<T>) -> Result<T, DocaError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        w.progress();
        if let Some(r) = slot.lock().unwrap().take() {
            return r;
        }
        assert!(Instant::now() < deadline, "no answer from the worker");
    }
}

fn recv(sb: &Sandbox, w: &Worker, tag: u64) -> Slot<Received> {
    let slot: Slot<Received> = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    sb.tag_recv_with(w, tag, 8, tag, 0xffff, move |r| {
        *s2.lock().unwrap() = Some(r)
    })
    .expect("post receive");
    slot
}

fn send(sb: &Sandbox, w: &Worker, dest: u64, round: u64, tag: u64) {
    let slot: Slot<i32> = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    sb.tag_send_with(w, tag, dest, &round.to_le_bytes(), tag, move |r| {
        *s2.lock().unwrap() = Some(r.map(|d| d.ucs_status))
    })
    .expect("post send");
    assert_eq!(wait(w, &slot), Ok(0), "send completes with UCS_OK");
}

#[test]
fn sandbox_ping_pong_between_sleeping_workers() {
    let (d, dev) = start_daemon(&["worker_sandbox"]);
    let svc = start_service(&d, &dev, 2);
    let sb = Sandbox::find(&svc).expect("worker_sandbox offered");
    let workers: Vec<Arc<Worker>> = (0..2u64)
        .map(|id| {
            Worker::builder(&svc)
                .id(id)
                .env(["DOCA_SOFT_UROM_SPIN_US=0", "UCX_LOG_LEVEL=error"])
                .plugins(sb.plugin.id)
                .start()
                .expect("worker start")
        })
        .collect();
    let rounds: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = ThreadOob::group(2)
            .into_iter()
            .zip(0..2u32)
            .map(|(oob, rank)| {
                let (w, sb) = (workers[rank as usize].clone(), &sb);
                s.spawn(move || {
                    let oob: Arc<dyn Oob> = Arc::new(oob);
                    let _domain = Domain::start(w.pe(), &[(rank as u64, w.clone())], oob, vec![])
                        .expect("domain start");
                    let mut done = 0;
                    for round in 0..ROUNDS {
                        if rank == 0 {
                            let got = wait(&w, &recv(sb, &w, PING)).expect("PING");
                            assert_eq!((got.ucs_status, got.sender_tag), (0, PING));
                            assert_eq!(got.data, round.to_le_bytes());
                            send(sb, &w, 1, round, PONG);
                        } else {
                            let pong = recv(sb, &w, PONG);
                            send(sb, &w, 0, round, PING);
                            let got = wait(&w, &pong).expect("PONG");
                            assert_eq!((got.ucs_status, got.sender_tag), (0, PONG));
                            assert_eq!(got.data, round.to_le_bytes());
                        }
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(rounds, vec![ROUNDS, ROUNDS], "every round trip completed");
}

#[test]
fn submit_ref_keeps_small_and_large_callbacks_and_drops_refused_ones() {
    let (d, dev) = start_daemon(&["worker_graph"]);
    let svc = start_service(&d, &dev, 1);
    let graph = Graph::find(&svc).unwrap();
    let w = Worker::builder(&svc)
        .plugins(graph.plugin.id)
        .max_inflight_tasks(1)
        .start()
        .unwrap();

    // 16 bytes of captures (kept in the task) and 64 (boxed): both run once, with the body.
    let small: Slot<u64> = Arc::new(Mutex::new(None));
    let s2 = small.clone();
    graph
        .loopback_with(&w, 11, move |r| *s2.lock().unwrap() = Some(r))
        .unwrap();
    assert_eq!(wait(&w, &small), Ok(11));
    let large: Slot<u64> = Arc::new(Mutex::new(None));
    let (l2, pad) = (large.clone(), [7u64; 7]);
    w.submit_ref(
        graph.plugin.id,
        &doca_urom::graph::loopback_cmd(22),
        move |n| {
            let v = doca_urom::graph::parse_loopback_ref(n).map(|v| v + pad.iter().sum::<u64>());
            *l2.lock().unwrap() = Some(v)
        },
    )
    .unwrap();
    assert_eq!(wait(&w, &large), Ok(22 + 49));

    // A payload over the capacity is refused; the callback is dropped, never run.
    let token = Arc::new(());
    let t2 = token.clone();
    let too_big = vec![0u8; 1 << 20];
    let r = w.submit_ref(graph.plugin.id, &too_big, move |_| drop(t2));
    assert!(r.is_err());
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "the refused callback was dropped"
    );
    // So is one refused by the submission itself (one task in flight at most).
    let first: Slot<u64> = Arc::new(Mutex::new(None));
    let f2 = first.clone();
    graph
        .loopback_with(&w, 33, move |r| *f2.lock().unwrap() = Some(r))
        .unwrap();
    let t2 = token.clone();
    let r = graph.loopback_with(&w, 44, move |_| drop(t2));
    assert_eq!(r.map_err(|e| e.doca_code()), Err(Some(DocaError::AGAIN)));
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "the refused callback was dropped"
    );
    assert_eq!(wait(&w, &first), Ok(33));
}
