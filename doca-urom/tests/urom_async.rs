//! `Worker::command_future` under an executor that sleeps until woken: the future completes,
//! and while a command that takes 100 ms is outstanding it is polled a bounded number of
//! times (it sleeps between polls: the runtime's notification handle where there is one,
//! else the bounded backoff), never thousands. And the engine of a worker context notifies:
//! it has a handle, arming it succeeds, an idle engine's handle stays quiet, and the handle
//! becomes readable when a command's answer arrives, so a loop sleeping on it calls
//! progress a few times per command, not in a spin.

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

/// One worker running the C echo plugin, on a daemon and service of its own. Fields drop in
/// order: the worker first, the plugin folder last.
struct EchoWorker {
    worker: Arc<Worker>,
    /// The echo plugin's id.
    plugin: u64,
    _svc: Arc<doca_urom::Service>,
    _dev: doca_urom::Device,
    _daemon: Daemon,
    _plugin_dir: tempfile::TempDir,
}

impl EchoWorker {
    fn start() -> EchoWorker {
        let plugin_dir = tempfile::tempdir().unwrap();
        build_c_plugin("worker_echo_c", plugin_dir.path());
        let (daemon, dev) = start(daemon(&[]).plugin_dir(plugin_dir.path()));
        let svc = start_service(&daemon, &dev, 1);
        let plugin = svc.plugin("worker_echo_c").unwrap().id;
        let worker = Worker::builder(&svc)
            .plugins(plugin)
            .env(["UCX_LOG_LEVEL=error"])
            .start()
            .unwrap();
        EchoWorker {
            worker,
            plugin,
            _svc: svc,
            _dev: dev,
            _daemon: daemon,
            _plugin_dir: plugin_dir,
        }
    }
}

fn delay_cmd(ms: u64) -> Vec<u8> {
    [3u64.to_le_bytes(), ms.to_le_bytes()].concat()
}

#[test]
fn command_future_completes_without_spinning() {
    let rig = EchoWorker::start();
    let (w, echo) = (&rig.worker, rig.plugin);

    // A quick command first: completes, with the echoed body.
    let quick = [0u64.to_le_bytes(), 41u64.to_le_bytes()].concat();
    let (n, _) = block_on_counting(w.command_future(echo, &quick));
    let n = n.unwrap();
    assert_eq!((n.status, n.data), (Ok(()), quick));

    // A command the plugin answers 100 ms later.
    let t0 = Instant::now();
    let (n, polls) = block_on_counting(w.command_future(echo, &delay_cmd(100)));
    let took = t0.elapsed();
    let n = n.unwrap();
    assert_eq!((n.status, n.data), (Ok(()), delay_cmd(100)));
    assert!(
        took >= Duration::from_millis(100),
        "answered after {took:?}"
    );
    // With the engine's notification (the soft runtime's worker contexts have one) the
    // future is polled when the answer arrives: a handful of polls. Without one the re-poll
    // delay grows to 1 ms: about 100 polls for 100 ms. A future that woke itself at once
    // would be polled tens of thousands of times.
    let notifies = w.pe().notification_handle().is_some() && w.pe().request_notification().is_ok();
    assert!(polls >= 2, "{polls} polls: the future never waited");
    let most = if notifies { 20 } else { 400 };
    assert!(
        polls <= most,
        "{polls} polls in {took:?} (notification handle: {notifies}): the waiting future spins"
    );

    // A refused command still completes, with the plugin's status.
    let (n, _) = block_on_counting(w.command_future(echo, &[0u8; 8]));
    assert_eq!(n.unwrap().status, Err(DocaError::INVALID_VALUE));
}

/// Whether `fd` becomes readable within `timeout_ms`.
fn readable(fd: std::os::fd::RawFd, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) == 1 }
}

#[test]
fn a_worker_engine_sleeps_on_its_handle_until_the_answer_arrives() {
    let rig = EchoWorker::start();
    let (w, echo) = (&rig.worker, rig.plugin);
    let pe = w.pe();
    let fd = pe
        .notification_handle()
        .expect("the engine of a UROM worker has a notification handle");

    // Idle (nothing outstanding) for 300 ms: armed, the sleeper is woken rarely if at all
    // (UCX's own events after the start wake it a few times: 0 to 4 seen), never in a
    // spin (thousands).
    let idle_until = Instant::now() + Duration::from_millis(300);
    let mut idle_wakeups = 0u32;
    loop {
        while pe.progress() {}
        pe.request_notification()
            .expect("an engine holding a UROM worker context can be armed");
        let left = idle_until.saturating_duration_since(Instant::now());
        if left.is_zero() || !readable(fd, left.as_millis() as i32 + 1) {
            break;
        }
        idle_wakeups += 1;
        pe.clear_notification().unwrap();
        assert!(
            idle_wakeups <= 20,
            "an idle worker's engine woke its sleeper {idle_wakeups} times"
        );
    }
    eprintln!("idle: {idle_wakeups} wake-ups in 300 ms");
    pe.clear_notification().unwrap();

    // A command the plugin answers 300 ms later; the loop sleeps on the handle whenever a
    // progress call finds nothing.
    let answer = Arc::new(std::sync::Mutex::new(None));
    let a2 = answer.clone();
    w.submit(echo, &delay_cmd(300), move |n| {
        *a2.lock().unwrap() = Some(n)
    })
    .unwrap();
    let (mut progress_calls, mut sleeps) = (0u32, 0u32);
    let deadline = Instant::now() + Duration::from_secs(30);
    while answer.lock().unwrap().is_none() {
        assert!(Instant::now() < deadline, "no answer within 30 s");
        progress_calls += 1;
        if pe.progress() {
            continue;
        }
        pe.request_notification()
            .expect("arming with a command outstanding");
        // What completed while arming may not make the handle readable: look once more.
        progress_calls += 1;
        if !pe.progress() {
            sleeps += 1;
            assert!(
                readable(fd, 20_000),
                "the handle did not become readable while the command was outstanding"
            );
        }
        pe.clear_notification().unwrap();
    }
    let n = answer.lock().unwrap().take().unwrap();
    assert_eq!((n.status, n.data), (Ok(()), delay_cmd(300)));
    assert!(
        sleeps >= 1,
        "the loop never slept: the answer cannot have taken 300 ms"
    );
    // A loop that spun for 300 ms would call progress hundreds of thousands of times; one
    // that sleeps wakes for the answer (and the odd transport event).
    eprintln!("one command: {progress_calls} progress calls, {sleeps} sleeps");
    assert!(
        progress_calls <= 60,
        "{progress_calls} progress calls ({sleeps} sleeps) for one command: the engine spins"
    );
}
