//! `Worker::command_future` under an executor that sleeps until woken: the future completes,
//! and while a command that takes 100 ms is outstanding it is polled a bounded number of
//! times (it sleeps between polls: the runtime's notification handle where there is one,
//! else the bounded backoff), never thousands.

mod support;

use doca_urom::{DocaError, Worker};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};
use support::*;

/// Wakes the blocked thread.
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `f` to completion on this thread, parking between polls (a poll only happens after
/// a wake-up, as under any real executor); returns the output and the number of polls.
fn block_on_counting<F: Future>(f: F) -> (F::Output, usize) {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(v) = Pin::as_mut(&mut f).poll(&mut cx) {
            return (v, polls);
        }
        std::thread::park();
    }
}

fn delay_cmd(ms: u64) -> Vec<u8> {
    [3u64.to_le_bytes(), ms.to_le_bytes()].concat()
}

#[test]
fn command_future_completes_without_spinning() {
    let c_dir = tempfile::tempdir().unwrap();
    build_c_plugin("worker_echo_c", c_dir.path());
    let (d, dev) = start(daemon(&[]).plugin_dir(c_dir.path()));
    let svc = start_service(&d, &dev, 1);
    let echo = svc.plugin("worker_echo_c").unwrap();
    let w = Worker::builder(&svc)
        .plugins(echo.id)
        .env(["UCX_LOG_LEVEL=error"])
        .start()
        .unwrap();

    // A quick command first: completes, with the echoed body.
    let quick = [0u64.to_le_bytes(), 41u64.to_le_bytes()].concat();
    let (n, _) = block_on_counting(w.command_future(echo.id, &quick));
    let n = n.unwrap();
    assert_eq!((n.status, n.data), (Ok(()), quick));

    // A command the plugin answers 100 ms later.
    let t0 = Instant::now();
    let (n, polls) = block_on_counting(w.command_future(echo.id, &delay_cmd(100)));
    let took = t0.elapsed();
    let n = n.unwrap();
    assert_eq!((n.status, n.data), (Ok(()), delay_cmd(100)));
    assert!(
        took >= Duration::from_millis(100),
        "answered after {took:?}"
    );
    // Without a notification handle the re-poll delay grows to 1 ms: about 100 polls for
    // 100 ms. A future that woke itself at once would be polled tens of thousands of times.
    assert!(polls >= 2, "{polls} polls: the future never waited");
    assert!(
        polls <= 400,
        "{polls} polls in {took:?}: the waiting future spins"
    );

    // A refused command still completes, with the plugin's status.
    let (n, _) = block_on_counting(w.command_future(echo.id, &[0u8; 8]));
    assert_eq!(n.unwrap().status, Err(DocaError::INVALID_VALUE));
}
