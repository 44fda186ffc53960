//! The safe API end to end: service, workers in threads, graph loopback through the Rust
//! SDK plugin, the C plugin side by side, gid queries, drops.

mod support;

use doca_urom::graph::Graph;
use doca_urom::{DocaError, Worker, WORKER_ID_ANY};
use std::sync::Arc;
use support::*;

#[test]
fn graph_loopback_in_worker_threads_and_gid_queries() {
    let (d, dev) = start_daemon(&["worker_graph"]);
    let svc = start_service(&d, &dev, 4);
    let graph = Graph::find(&svc).expect("worker_graph offered");
    assert!(graph.plugin.id.is_power_of_two());
    assert!(svc.cpuset().unwrap().contains(0));

    let threads: Vec<_> = (0..4u64)
        .map(|i| {
            let svc = svc.clone();
            let graph = graph.clone();
            std::thread::spawn(move || {
                let w = Worker::builder(&svc)
                    .id(i)
                    .gid((i % 2) as u32)
                    .max_inflight_tasks(2)
                    .env(["UCX_LOG_LEVEL=error"])
                    .plugins(graph.plugin.id)
                    .start()
                    .expect("worker start");
                assert_eq!(w.id().unwrap(), i);
                assert_eq!(graph.loopback(&w, i * 1000 + 7).unwrap(), i * 1000 + 7);
                w
            })
        })
        .collect();
    let workers: Vec<Arc<Worker>> = threads
        .into_iter()
        .map(|t| t.join().expect("worker thread"))
        .collect();
    let mut odd = svc.workers_by_gid(1).unwrap();
    odd.sort();
    assert_eq!(odd, vec![1, 3]);
    let mut even = svc.workers_by_gid(0).unwrap();
    even.sort();
    assert_eq!(even, vec![0, 2]);

    // Callback form.
    let (tx, rx) = std::sync::mpsc::channel();
    graph
        .loopback_with(&workers[1], 99, move |r| tx.send(r).unwrap())
        .unwrap();
    let got = loop {
        workers[1].progress();
        if let Ok(r) = rx.try_recv() {
            break r;
        }
    };
    assert_eq!(got, Ok(99));
    // Future form, on a minimal executor.
    let fut = workers[2].command_future(graph.plugin.id, &doca_urom::graph::loopback_cmd(1234));
    let n = block_on(fut).unwrap();
    assert_eq!(doca_urom::graph::parse_loopback(&n), Ok(1234));
    // A command the plugin refuses (wrong length) reports the plugin's status.
    let n = workers[0].command(graph.plugin.id, &[0u8; 8]).unwrap();
    assert_eq!(n.status, Err(DocaError::INVALID_VALUE));

    // A second connection to an existing worker id reaches the same process.
    let again = Worker::builder(&svc).id(2).plugins(graph.plugin.id).start();
    // max_workers is 4 and all are in use: the service refuses a fifth context.
    assert!(again.is_err());
    drop(workers);
    assert!(
        svc.workers_by_gid(0).unwrap().is_empty(),
        "dropped workers are torn down"
    );
}

#[test]
fn c_and_rust_plugins_side_by_side() {
    let c_dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", c_dir.path());
    // Two folders on the plugin path: the C plugin's, then the daemon's own with the Rust one.
    let (d, dev) = start(
        daemon(&[])
            .plugin_dir(c_dir.path())
            .plugin(bins().plugin("worker_graph"), "worker_graph"),
    );
    let svc = start_service(&d, &dev, 2);
    let plugins = svc.plugins().unwrap();
    let names: Vec<&str> = plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["worker_echo_c", "worker_graph"],
        "scan order: directories in order"
    );
    let echo = svc.plugin("worker_echo_c").unwrap();
    // A missing plugin: the error names it and what is offered.
    let missing = svc.plugin("worker_missing").unwrap_err().to_string();
    for part in ["\"worker_missing\"", "worker_echo_c", "worker_graph"] {
        assert!(missing.contains(part), "{part} not in: {missing}");
    }
    let graph = Graph::find(&svc).unwrap();
    assert_ne!(echo.id, graph.plugin.id);
    let w = Worker::builder(&svc)
        .id(WORKER_ID_ANY)
        .plugins(echo.id | graph.plugin.id)
        .start()
        .unwrap();
    assert_eq!(graph.loopback(&w, 5).unwrap(), 5);
    let cmd = [0u64.to_le_bytes(), 77u64.to_le_bytes()].concat();
    let n = w.command(echo.id, &cmd).unwrap();
    assert_eq!(n.status, Ok(()));
    assert_eq!(n.data, cmd);
    assert!(svc.plugin("worker_rdmo").is_err());
}

/// Polls a future to completion with a waker that does nothing (the UROM future wakes
/// itself by busy-polling).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
    fn noop_raw() -> RawWaker {
        fn clone(_: *const ()) -> RawWaker {
            noop_raw()
        }
        fn noop(_: *const ()) {}
        static VT: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
        RawWaker::new(std::ptr::null(), &VT)
    }
    // SAFETY: the vtable functions ignore the data pointer.
    let waker = unsafe { Waker::from_raw(noop_raw()) };
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}
