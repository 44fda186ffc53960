//! The worker runtime (`doca_urom_worker`): one process per worker id, spawned by the
//! daemon. It loads the plugins named on its command line (`so_path:id`), listens (TCP) on
//! the daemon's address, writes `UROM_WORKER_PORT <port>` to the file descriptor given by
//! `--port-fd` (the daemon passes a private pipe so plugin/UCX logs on stdout cannot
//! interfere), and serves any number of host connections (each one is a `dest_id`):
//! `Attach` (with the token the daemon set in `DOCA_UROM_WORKER_TOKEN`, and the host's UCX
//! worker address: the connection then moves to a UCX endpoint made from it, see
//! `urom::transport`), `Cmd` -> plugin `worker_cmd`, plugin `progress` -> `notif_pack` ->
//! `Notify` to the command's `dest_id`, `DomainInit`, `Ping`. `--probe PATH` only loads a
//! library and reports whether it is a plugin (how the daemon vets `UROM_PLUGIN_PATH`).
//!
//! Memory: command descs are allocated with libc `malloc` (plugins free them), notification
//! descs come from the plugins' `malloc` and are freed here with `free`, as the ABI says.
//! Frames are read in place from the connection decoders and notifications packed straight
//! into reused send buffers: the runtime itself allocates nothing per command.
//!
//! Idle policy (see [`spin`] and `AdaptiveSpin`): after its last activity the worker keeps
//! polling for up to `DOCA_SOFT_UROM_SPIN_US` microseconds (a window that shrinks while
//! spinning does not pay or is preempted), then arms UCX's event descriptor and those of
//! plugins with the wake-up extension (`doca_soft_urom_plugin_arm`) and sleeps in `poll()`
//! (the TCP sockets included). Plugins without the extension are progressed on every loop
//! iteration and woken by a `IDLE_TIMEOUT_MS` timeout while the worker sleeps.

pub(crate) mod args;
pub(crate) mod domain;
pub(crate) mod plugin;
pub mod spin;

use crate::daemon::plugins::{PROBE_ERR, PROBE_OK};
use crate::daemon::procs::{unhex, TOKEN_ENV};
use crate::error::{DocaError, DocaResult};
use crate::plugin_abi::{self, ListLink, WorkerCmdDesc};
use crate::stop::{install_stop_signals, stop_requested};
use crate::transport::{ConnId, EventRef, Limits, Node, PeerFailure};
use crate::wire::command::{push_status_notify, CmdHeader};
use crate::wire::{frame_begin, frame_end, Decoder, Msg, KIND_CMD, KIND_NOTIFY, OVERHEAD};
use args::WorkerArgs;
use clap::Parser;
use plugin::{Arm, LoadedPlugin};
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddrV4;
use std::path::Path;
use std::time::{Duration, Instant};

/// Longest sleep while a plugin without the wake-up extension is loaded (its own events
/// wait at most this long).
pub(crate) const IDLE_TIMEOUT_MS: i32 = 2;
/// An idle loop iteration longer than this means the worker was preempted: it stops
/// spinning and sleeps (see `Worker::run`).
const PREEMPTED: Duration = Duration::from_micros(50);
/// Idle loop iterations per look at the clock while spinning: an empty iteration (UCX
/// progress, the plugins' progress) takes about 100 ns, a clock read 50 to 150 ns on a
/// loaded virtual machine, which would more than double the time a spinning worker takes
/// to see a command. Busy iterations are timed at the next look (`busy_unclocked`).
const IDLE_CLOCK_EVERY: u32 = 8;
/// Longest sleep when every event source can wake the worker (bounds how late a stop
/// request that did not interrupt `poll()` is seen).
pub(crate) const ARMED_TIMEOUT_MS: i32 = 20;

fn send_status(
    node: &mut Node,
    conn: ConnId,
    type_: u64,
    ctx: u64,
    status: DocaError,
) -> DocaResult<()> {
    node.send_with(conn, |f| push_status_notify(f, type_, ctx, status))
}

/// Hands one command (`urom_worker_cmd` bytes from connection `conn`) to its plugin; errors
/// are answered with a bare notification. Err only when the answer could not be sent.
fn on_cmd(
    node: &mut Node,
    plugins: &mut [LoadedPlugin],
    conn: ConnId,
    bytes: &[u8],
) -> DocaResult<()> {
    let (hdr, body) = match CmdHeader::parse(bytes) {
        Ok(v) => v,
        Err(e) => {
            let (plugin, cookie) = e.header.map_or((0, 0), |h| (h.plugin, h.urom_context));
            return send_status(node, conn, plugin, cookie, e.error);
        }
    };
    let fail = |node: &mut Node, e| send_status(node, conn, hdr.plugin, hdr.urom_context, e);
    let Some(p) = plugins.iter_mut().find(|p| p.id == hdr.plugin) else {
        return fail(node, DocaError::NOT_FOUND);
    };
    let size = std::mem::size_of::<WorkerCmdDesc>() + body.len();
    // SAFETY: plain allocation; the plugin frees it with free() as the ABI requires.
    let desc = unsafe { libc::malloc(size) } as *mut WorkerCmdDesc;
    if desc.is_null() {
        return fail(node, DocaError::NO_MEMORY);
    }
    let mut head = plugin_abi::list_head();
    // SAFETY: desc has room for the header and body; head is a local list head.
    unsafe {
        std::ptr::addr_of_mut!((*desc).dest_id).write(conn);
        std::ptr::addr_of_mut!((*desc).worker_cmd).write(hdr.to_abi());
        let payload = (desc as *mut u8).add(std::mem::size_of::<WorkerCmdDesc>());
        std::ptr::copy_nonoverlapping(body.as_ptr(), payload, body.len());
        plugin_abi::list_init(&mut head);
        plugin_abi::list_add_tail(&mut head, desc as *mut ListLink);
    }
    // SAFETY: head lists the desc malloc'd above.
    let r = unsafe { p.worker_cmd(&mut head) };
    // A plugin that failed may have left the desc on the list: reclaim it.
    // SAFETY: whatever is still on the list is ours (malloc'd above).
    unsafe {
        loop {
            let n = plugin_abi::list_pop_head(&mut head);
            if n.is_null() {
                break;
            }
            libc::free(n as *mut libc::c_void);
        }
    }
    match r {
        Ok(()) => Ok(()),
        Err(e) => fail(node, e),
    }
}

struct Worker {
    args: WorkerArgs,
    // What an Attach must present (None: started by hand, any token is taken).
    token: Option<Vec<u8>>,
    node: Node,
    plugins: Vec<LoadedPlugin>,
    conns: HashMap<ConnId, Decoder>,
    // Busy-poll window after the last activity (see `spin`).
    spin: Duration,
    // Scratch reused by every loop iteration (no allocation per command).
    touched: Vec<ConnId>,
    closed: Vec<ConnId>,
    pfds: Vec<libc::pollfd>,
}

impl Worker {
    fn send(&mut self, conn: ConnId, m: &Msg) {
        if self.node.send(conn, m.encode()).is_err() {
            self.conns.remove(&conn);
        }
    }

    fn on_msg(&mut self, conn: ConnId, m: Msg) -> DocaResult<()> {
        let attached = self.node.is_admitted(conn);
        match m {
            Msg::Attach {
                worker_id,
                token,
                ucx_addr,
                unwatched,
            } => {
                if attached || worker_id != self.args.id {
                    return Err(DocaError::INVALID_VALUE);
                }
                if self.token.as_ref().is_some_and(|t| *t != token) {
                    sdk_warn!(
                        "urom_worker",
                        "connection {conn} ({:?}): attach with a wrong token",
                        self.node.peer(conn)
                    );
                    return Err(DocaError::AUTHENTICATION);
                }
                self.node.admit(conn);
                let addrs: Vec<(u64, Vec<u8>)> = self
                    .plugins
                    .iter()
                    .map(|p| (p.id, p.addr.clone()))
                    .collect();
                // Move to UCX when the host offers an address and this worker reaches it;
                // otherwise the data stays on this connection. The reply goes over TCP
                // either way; what follows an upgrade goes over UCX.
                // Unwatched (shared memory allowed) only when the host offered it and this
                // end agrees; the reply tells the host, which makes its endpoint alike.
                let unwatched = unwatched && self.node.may_go_unwatched(conn);
                let failure = if unwatched {
                    PeerFailure::NotDetected
                } else {
                    PeerFailure::Detected
                };
                let mut ours = Vec::new();
                if let Some(a) = self.node.ucx_address().filter(|_| !ucx_addr.is_empty()) {
                    let a = a.to_vec();
                    match self.node.upgrade_with(conn, &ucx_addr, failure) {
                        Ok(()) => ours = a,
                        Err(e) => {
                            sdk_warn!("urom_worker", "connection {conn}: staying on TCP ({e:?})")
                        }
                    }
                }
                let reply = Msg::Attached {
                    dest_id: conn,
                    addrs,
                    unwatched: unwatched && !ours.is_empty(),
                    ucx_addr: ours,
                };
                if self.node.send_tcp(conn, &reply.encode()).is_err() {
                    self.conns.remove(&conn);
                }
            }
            _ if !attached => return Err(DocaError::BAD_STATE),
            Msg::DomainInit { req, peers, bufs } => {
                domain::install(peers, bufs);
                self.send(conn, &Msg::DomainOk { req });
            }
            Msg::Ping { seq } => self.send(conn, &Msg::Pong { seq }),
            _ => return Err(DocaError::NOT_SUPPORTED),
        }
        Ok(())
    }

    fn drop_conn(&mut self, conn: ConnId, e: DocaError) {
        sdk_warn!(
            "urom_worker",
            "connection {conn}: protocol error {e:?}, dropping it"
        );
        self.send(conn, &Msg::Error { req: 0, code: e.0 });
        self.node.close_flushed(conn);
        self.conns.remove(&conn);
    }

    /// Serves the complete frames received on `conn`: commands in place, other messages
    /// decoded.
    fn serve(&mut self, conn: ConnId) {
        loop {
            let Some(dec) = self.conns.get_mut(&conn) else {
                return;
            };
            let msg = match dec.next_frame() {
                Ok(None) => return,
                Ok(Some((KIND_CMD, _))) if !self.node.is_admitted(conn) => {
                    Err(dec.reject(DocaError::BAD_STATE))
                }
                Ok(Some((KIND_CMD, bytes))) => {
                    if on_cmd(&mut self.node, &mut self.plugins, conn, bytes).is_err() {
                        self.conns.remove(&conn);
                        return;
                    }
                    continue;
                }
                Ok(Some((kind, payload))) => Msg::decode(kind, payload).map_err(|e| dec.reject(e)),
                Err(e) => Err(e),
            };
            if let Err(e) = msg.and_then(|m| self.on_msg(conn, m)) {
                self.drop_conn(conn, e);
                return;
            }
        }
    }

    /// Progresses the host connections; true if anything happened.
    fn poll_hosts(&mut self) -> bool {
        let max = self.args.max_msg as usize + OVERHEAD;
        let (conns, touched, closed) = (&mut self.conns, &mut self.touched, &mut self.closed);
        let busy = self.node.poll_with(|e| match e {
            EventRef::Accepted(c) => {
                conns.insert(c, Decoder::new(max));
            }
            EventRef::Data(c, b) => {
                if let Some(d) = conns.get_mut(&c) {
                    d.push(b);
                    if !touched.contains(&c) {
                        touched.push(c);
                    }
                }
            }
            EventRef::Closed(c) => closed.push(c),
        });
        let mut touched = std::mem::take(&mut self.touched);
        for c in touched.drain(..) {
            self.serve(c);
        }
        self.touched = touched;
        let mut closed = std::mem::take(&mut self.closed);
        for c in closed.drain(..) {
            self.conns.remove(&c);
            self.node.close(c);
        }
        self.closed = closed;
        busy
    }

    /// Progresses the plugins and sends their notifications; true if there were any.
    fn progress_plugins(&mut self) -> bool {
        let cap = self.args.max_msg as usize;
        let (node, conns) = (&mut self.node, &self.conns);
        let mut n = 0;
        for p in self.plugins.iter_mut() {
            let packer = p.packer();
            n += p.progress_each(|d| {
                // SAFETY: d is a live desc from this plugin.
                let (dest, t, c) = unsafe {
                    (
                        (*d).dest_id,
                        (*d).worker_notif.type_,
                        (*d).worker_notif.urom_context,
                    )
                };
                if !conns.contains_key(&dest) {
                    return;
                }
                // A failed send shows up as the connection closing.
                let _ = node.send_with(dest, |f| {
                    let at = frame_begin(f, KIND_NOTIFY);
                    let body = f.len();
                    f.resize(body + cap, 0);
                    // SAFETY: d came from this plugin's progress and is not freed yet.
                    match unsafe { packer.pack(d, &mut f[body..]) } {
                        Ok(len) => {
                            f.truncate(body + len);
                            frame_end(f, at);
                        }
                        Err(e) => {
                            f.truncate(at);
                            push_status_notify(f, t, c, e);
                        }
                    }
                });
            });
        }
        n > 0
    }

    /// Arms every event source and sleeps until one fires or the timeout passes; returns
    /// at once when a source has work pending.
    fn sleep(&mut self) {
        let mut pfds = std::mem::take(&mut self.pfds);
        if !self.node.sleep_fds(&mut pfds) {
            self.pfds = pfds;
            return;
        }
        let pfd = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut timeout = ARMED_TIMEOUT_MS;
        for p in self.plugins.iter_mut() {
            match p.arm() {
                Arm::Fd(fd) => pfds.push(pfd(fd)),
                Arm::CommandsOnly => {}
                Arm::Busy => {
                    self.pfds = pfds;
                    return;
                }
                Arm::Unknown => timeout = IDLE_TIMEOUT_MS,
            }
        }
        // SAFETY: pfds holds valid pollfds for its length.
        unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout) };
        self.pfds = pfds;
    }

    fn run(&mut self) {
        let mut spin = AdaptiveSpin::new(self.spin);
        // Idle iterations since the clock was last read (see `IDLE_CLOCK_EVERY`).
        let mut idle = 0u32;
        while !stop_requested() {
            let mut busy = self.poll_hosts();
            busy |= self.progress_plugins();
            if busy {
                idle = 0;
                if spin.busy_unclocked() {
                    continue;
                }
            } else {
                idle += 1;
                if idle < IDLE_CLOCK_EVERY && spin.spinning() {
                    std::hint::spin_loop();
                    continue;
                }
                idle = 0;
            }
            if spin.keep_polling(busy, Instant::now()) {
                std::hint::spin_loop();
            } else {
                self.sleep();
                spin.slept(Instant::now());
            }
        }
    }
}

/// The busy-poll decision of the worker loop: poll for up to `window` after the last
/// activity, then sleep. The window adapts: it is the full `max` while work keeps arriving
/// within `max` of the previous (spinning pays), and halves each time a whole window was
/// spun for nothing or the spin was preempted (the CPU is wanted elsewhere: with fewer cores
/// than busy parties spinning only delays the others), so a worker whose peers answer
/// slowly ends up sleeping at once, like `max = 0`. Work that comes right after a window
/// spun for nothing (within a quarter of it) means the peer was waiting for this CPU: the
/// window is not restored then, and until work arrives while spinning again it grows back
/// by doubling rather than jumping to `max` (on one shared CPU the full window cost each
/// round trip the window itself).
#[derive(Debug)]
pub(crate) struct AdaptiveSpin {
    max: Duration,
    window: Duration,
    last_busy: Instant,
    prev: Instant,
    slept: bool,
    // A busy iteration happened since the clock was last read (`busy_unclocked`).
    unclocked: bool,
    // The window spun for nothing before the current sleep, and when that sleep began.
    wasted: Duration,
    asleep_at: Instant,
    // Work came right after a wasted window (see `keep_polling`), and no work has arrived
    // while spinning since.
    contended: bool,
}

/// Where the window grows back from on a contended CPU.
const CONTENDED_MIN: Duration = Duration::from_micros(1);

impl AdaptiveSpin {
    /// A policy polling for at most `max` after each activity.
    pub(crate) fn new(max: Duration) -> AdaptiveSpin {
        let now = Instant::now();
        AdaptiveSpin {
            max,
            window: max,
            last_busy: now,
            prev: now,
            slept: false,
            unclocked: false,
            wasted: Duration::ZERO,
            asleep_at: now,
            contended: false,
        }
    }

    /// Whether idle iterations keep polling for now without a look at the clock: the
    /// window is open and the worker did not just wake up.
    pub(crate) fn spinning(&self) -> bool {
        !self.slept && !self.window.is_zero()
    }

    /// A busy iteration not timed now: the next [`AdaptiveSpin::keep_polling`] counts it as
    /// work at its own time (a few idle iterations later at most), so a command costs no
    /// clock read. `false` when the clock must be read at once: the first work after a
    /// sleep decides the window.
    pub(crate) fn busy_unclocked(&mut self) -> bool {
        if self.slept {
            return false;
        }
        self.unclocked = true;
        true
    }

    /// The current window.
    #[cfg(test)]
    fn window(&self) -> Duration {
        self.window
    }

    /// After one loop iteration (`busy`: it did something) at `now`: whether to keep
    /// polling (`false`: arm and sleep, then call [`AdaptiveSpin::slept`]).
    pub(crate) fn keep_polling(&mut self, busy: bool, now: Instant) -> bool {
        let iteration = now.saturating_duration_since(self.prev);
        self.prev = now;
        if busy || std::mem::take(&mut self.unclocked) {
            if !self.slept {
                // Work while spinning: spinning pays.
                self.window = self.max;
                self.contended = false;
            } else if now.saturating_duration_since(self.asleep_at) < self.wasted / 4 {
                // Work right after a window spun in vain: the peer was waiting for this
                // CPU (fewer cores than busy parties), so spinning kept it from running.
                self.contended = true;
            } else if now.saturating_duration_since(self.last_busy) <= self.max {
                // Work after a sleep that a full window would have caught: spinning pays;
                // on a contended CPU the window grows back gradually.
                self.window = if self.contended {
                    (self.window * 2).clamp(CONTENDED_MIN, self.max)
                } else {
                    self.max
                };
            }
            self.wasted = Duration::ZERO;
            self.slept = false;
            self.last_busy = now;
            return true;
        }
        if self.slept {
            // Woken for nothing (timeout): back to sleep.
            return false;
        }
        // An idle iteration takes a microsecond or so: a much longer one means the scheduler
        // ran something else on this CPU.
        if iteration > PREEMPTED {
            self.window /= 2;
            self.wasted = Duration::ZERO;
            return false;
        }
        if now.saturating_duration_since(self.last_busy) < self.window {
            return true;
        }
        // A whole window spun for nothing.
        self.wasted = self.window;
        self.asleep_at = now;
        self.window /= 2;
        false
    }

    /// The worker slept and woke at `now`.
    pub(crate) fn slept(&mut self, now: Instant) {
        self.slept = true;
        self.prev = now;
    }
}

/// `--probe PATH`: loads the library and reports on `fd` whether it is a plugin.
fn probe_main(path: &Path, fd: i32) -> i32 {
    let line = match load_for_probe(path) {
        Ok((version, name)) => format!("{PROBE_OK} {version} {}\n", name.as_deref().unwrap_or("-")),
        Err(why) => format!("{PROBE_ERR} {why}\n"),
    };
    write_fd(fd, &line);
    0
}

fn load_for_probe(path: &Path) -> Result<(u64, Option<String>), String> {
    // SAFETY: loading runs the library's initialisers: that is what this child is for (the
    // daemon probes in a process of its own).
    let lib =
        unsafe { libloading::Library::new(path) }.map_err(|e| format!("cannot load it: {e}"))?;
    let (version, _) = plugin::probe(&lib).map_err(|e| match e {
        DocaError::NOT_SUPPORTED => {
            "it does not export urom_plugin_get_version and urom_plugin_get_iface".to_string()
        }
        e => format!("its urom_plugin_get_version/get_iface failed: {e:?}"),
    })?;
    Ok((version, plugin::declared_name(&lib)))
}

/// Writes `line` to `fd` (stdout for 1), then closes it (unless stdout).
fn write_fd(fd: i32, line: &str) {
    if fd == 1 {
        let mut out = std::io::stdout();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
        return;
    }
    // SAFETY: writing a small buffer to the descriptor the daemon passed; closed after.
    unsafe {
        libc::write(fd, line.as_ptr() as *const libc::c_void, line.len());
        libc::close(fd);
    }
}

/// The attach token the daemon set (removed from the environment, so plugins and their
/// children do not see it).
fn take_token() -> Option<Vec<u8>> {
    let t = std::env::var(TOKEN_ENV).ok()?;
    std::env::remove_var(TOKEN_ENV);
    unhex(&t)
}

/// Entry point of `doca_urom_worker`; returns the process exit code (2: bad command line;
/// 3: a plugin failed to load or open; 4: UCX failed; 5: cannot listen).
pub(crate) fn main_with_args(argv: &[String]) -> i32 {
    let args = match WorkerArgs::try_parse_from(
        std::iter::once("doca_urom_worker".to_string()).chain(argv.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    if let Some(p) = &args.probe {
        return probe_main(p, args.port_fd);
    }
    // Before any thread exists (changing the environment is not thread-safe).
    let token = take_token();
    install_stop_signals();
    let mut plugins = Vec::new();
    for (path, id) in &args.plugins {
        match LoadedPlugin::load(path, *id) {
            Ok(p) => plugins.push(p),
            Err(e) => {
                eprintln!("doca_urom_worker: plugin {}: {e:?}", path.display());
                return 3;
            }
        }
    }
    let mut node = Node::new();
    if node.enable_ucx().is_err() {
        return 4;
    }
    let port = match node.listen(SocketAddrV4::new(args.listen, 0), Limits::for_worker()) {
        Ok(p) => p,
        Err(_) => return 5,
    };
    write_fd(args.port_fd, &format!("UROM_WORKER_PORT {port}\n"));
    let mut w = Worker {
        args,
        token,
        node,
        plugins,
        conns: HashMap::new(),
        spin: spin::spin_from_env(),
        touched: Vec::new(),
        closed: Vec::new(),
        pfds: Vec::new(),
    };
    w.run();
    // Plugins close before the node goes (they may hold UCX resources of their own).
    w.plugins.clear();
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Idle iterations 1 us apart from `from` until the policy says sleep; returns when.
    fn spin_until_sleep(s: &mut AdaptiveSpin, from: Instant) -> Duration {
        let us = Duration::from_micros;
        for i in 1..10_000 {
            if !s.keep_polling(false, from + us(i)) {
                return us(i);
            }
        }
        panic!("never slept");
    }

    #[test]
    fn adaptive_spin_shrinks_when_spinning_is_wasted_and_recovers() {
        let us = Duration::from_micros;
        let t0 = Instant::now();
        let mut s = AdaptiveSpin::new(us(100));
        assert!(s.keep_polling(true, t0), "work: keep polling");
        // A whole window idle: sleep at its end, and the next window is half.
        assert_eq!(spin_until_sleep(&mut s, t0), us(100));
        assert_eq!(s.window(), us(50));
        s.slept(t0 + us(101));
        assert!(
            !s.keep_polling(false, t0 + us(2101)),
            "timeout wake: sleep again"
        );
        // Woken by work long after the last: the window stays short.
        assert!(s.keep_polling(true, t0 + us(3000)));
        assert_eq!(s.window(), us(50));
        assert_eq!(spin_until_sleep(&mut s, t0 + us(3000)), us(50));
        assert_eq!(s.window(), us(25));
        s.slept(t0 + us(3051));
        // Woken by work soon after the last (a full window would have caught it): full.
        assert!(s.keep_polling(true, t0 + us(3080)));
        assert_eq!(s.window(), us(100));
        // Work arriving while spinning keeps the full window.
        assert!(s.keep_polling(false, t0 + us(3081)));
        assert!(s.keep_polling(true, t0 + us(3090)));
        assert_eq!(s.window(), us(100));
        // A preempted idle iteration (far longer than an iteration): sleep, halve.
        assert!(!s.keep_polling(false, t0 + us(3090) + PREEMPTED + us(1)));
        assert_eq!(s.window(), us(50));
        // Window 0: never poll while idle.
        let mut z = AdaptiveSpin::new(Duration::ZERO);
        assert!(z.keep_polling(true, t0));
        assert!(!z.keep_polling(false, t0 + us(1)));
    }

    #[test]
    fn work_right_after_a_wasted_window_does_not_restore_it() {
        let us = Duration::from_micros;
        let t0 = Instant::now();
        let mut s = AdaptiveSpin::new(us(100));
        assert!(s.keep_polling(true, t0));
        // A window spun for nothing, then work 5 us into the sleep: the peer was waiting
        // for this CPU. The window stays halved.
        assert_eq!(spin_until_sleep(&mut s, t0), us(100));
        s.slept(t0 + us(101));
        assert!(s.keep_polling(true, t0 + us(105)));
        assert_eq!(s.window(), us(50));
        assert_eq!(spin_until_sleep(&mut s, t0 + us(105)), us(50));
        s.slept(t0 + us(156));
        assert!(s.keep_polling(true, t0 + us(165)));
        assert_eq!(s.window(), us(25));
        // Work after a sleep that a full window would have caught, on a contended CPU: the
        // window doubles instead of going back to the full 100 us at once.
        assert_eq!(spin_until_sleep(&mut s, t0 + us(165)), us(25));
        s.slept(t0 + us(191));
        assert!(s.keep_polling(true, t0 + us(230)));
        assert_eq!(s.window(), us(25));
        // Work arriving while spinning: spinning pays again, full window.
        assert!(s.keep_polling(false, t0 + us(231)));
        assert!(s.keep_polling(true, t0 + us(232)));
        assert_eq!(s.window(), us(100));
    }

    #[test]
    fn unclocked_work_counts_at_the_next_look_at_the_clock() {
        let us = Duration::from_micros;
        let t0 = Instant::now();
        let mut s = AdaptiveSpin::new(us(100));
        assert!(s.keep_polling(true, t0));
        assert!(s.spinning());
        // Work seen without reading the clock: the next look counts it as work at its own
        // time, so the window runs from there (not from t0).
        assert!(s.busy_unclocked());
        assert!(
            s.keep_polling(false, t0 + us(40)),
            "unclocked work at 40 us"
        );
        assert_eq!(
            spin_until_sleep(&mut s, t0 + us(40)),
            us(100),
            "a whole window idle after the unclocked work"
        );
        assert_eq!(s.window(), us(50));
        // Right after a sleep the clock is read at once (the first work decides the window).
        s.slept(t0 + us(170));
        assert!(!s.spinning());
        assert!(!s.busy_unclocked());
        assert!(s.keep_polling(true, t0 + us(170)));
        // Unclocked work is not mistaken for a preempted idle iteration.
        assert!(s.busy_unclocked());
        assert!(s.keep_polling(false, t0 + us(170) + PREEMPTED * 2));
        assert_eq!(s.window(), us(100));
        // A window of 0 never spins without looking at the clock.
        assert!(!AdaptiveSpin::new(Duration::ZERO).spinning());
    }
}
