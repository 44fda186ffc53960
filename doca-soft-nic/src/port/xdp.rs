//! AF_XDP port on a Linux interface (`xdp:IFACE` in `DOCA_SOFT_PORTS`): the interface's
//! frames are handed to our sockets by a small XDP program (see `xdp_bpf`) before the
//! kernel's stack sees them, into frame memory we share with the kernel (see `xdp_ring`);
//! transmit goes through the TX ring of queue 0's socket.
//!
//! One socket per receive queue of the interface (at most [`MAX_LANES`]), each with a UMEM of
//! its own; queue 0's UMEM has a second half for transmit. Lanes split the queues between
//! them: lane `l` of `n` running lanes serves the queues `q` with `q % n == l` (a veth has
//! one queue, so one lane does all the work there). Frames of one queue are handled in
//! ring order, so order holds per queue, as on a NIC.
//!
//! Copy mode (`XDP_COPY`) is the default and works on every interface (veth, lo-like ones,
//! any driver in generic mode); `xdp:IFACE,native` attaches in driver mode and
//! `xdp:IFACE,zerocopy` asks for zero-copy too (driver mode), keeping copy mode with one log
//! line when the driver refuses it. Opening fails with the reason when AF_XDP cannot be
//! used here; the port then falls back to AF_PACKET (`Port::for_spec`).
//!
//! A lane that finds its rings empty lets frames gather for [`RX_GATHER`] before it looks
//! again, and only then sleeps in `poll`: a socket wakes a sleeping reader for every frame,
//! which under a steady stream cost more than the frame itself. A lone frame may so wait up
//! to that long more (AF_PACKET's TPACKET_V3 block timer holds one up to 1 ms).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::lanes::MAX_LANES;
use super::xdp_bpf::{native_unsupported, XdpProgram, XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE};
use super::xdp_ring::{
    statistics, xdp_socket, Ring, RingKind, SockaddrXdp, Umem, Why, XdpDesc, AF_XDP,
    KERNEL_HEADROOM, XDP_COPY, XDP_ZEROCOPY,
};
use super::{now_ns, Backend, RxSource};
use crate::error::{DocaError, DocaResult};

/// Frames (chunks) per receive queue; also the size of its fill and RX rings.
const RX_FRAMES: u32 = 4096;
/// Frames for transmit (queue 0 only); also the size of the TX and completion rings.
const TX_FRAMES: u32 = 2048;
/// How long a lane that found its rings empty lets frames gather before it looks again
/// (and, if still empty, sleeps until the kernel wakes it).
const RX_GATHER: Duration = Duration::from_micros(200);
/// Room for two VLAN tags on top of the MTU and the Ethernet header.
const L2_OVERHEAD: usize = 14 + 8;
/// Longest a send waits for the kernel to take its frames before leaving them queued in
/// the TX ring (the next send pushes them).
const TX_PUSH_LIMIT: Duration = Duration::from_millis(20);

/// How a `xdp:` port is asked to attach.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct XdpMode {
    /// Attach in driver (native) mode instead of generic mode.
    pub(crate) native: bool,
    /// Ask for zero-copy sockets (implies driver mode); copy mode when refused.
    pub(crate) zerocopy: bool,
}

/// One socket with its UMEM (the socket is closed before the UMEM is unmapped).
struct Xsk {
    fd: OwnedFd,
    umem: Umem,
}

/// The receive rings of one queue, used by one lane at a time.
struct RxSide {
    xsk: Arc<Xsk>,
    rx: Ring<XdpDesc>,
    fill: Ring<u64>,
}

impl RxSide {
    /// Hands up to `max` received frames to `f` and gives their chunks back to the kernel.
    fn drain(&mut self, max: usize, f: &mut dyn FnMut(&[u8], u64, usize)) -> usize {
        let n = self
            .rx
            .ready()
            .min(self.fill.free())
            .min(max.min(u32::MAX as usize) as u32);
        if n == 0 {
            return 0;
        }
        let ts = now_ns();
        let chunk = self.xsk.umem.chunk as u64;
        for i in 0..n {
            let d = self.rx.peek(i);
            if let Some(frame) = self.xsk.umem.slice(d.addr, d.len as usize) {
                f(frame, ts, d.len as usize);
            }
            self.fill.put(i, d.addr - d.addr % chunk);
        }
        self.rx.release(n);
        self.fill.submit(n);
        n as usize
    }

    /// Drops whatever waits in the RX ring (frames from before the lanes started).
    fn discard(&mut self) {
        while self.drain(usize::MAX, &mut |_, _, _| {}) > 0 {}
    }
}

/// The transmit rings of queue 0's socket and its free TX chunks.
struct TxSide {
    xsk: Arc<Xsk>,
    tx: Ring<XdpDesc>,
    comp: Ring<u64>,
    free: Vec<u64>,
}

impl TxSide {
    /// Takes back the chunks the kernel has sent.
    fn reap(&mut self) {
        let n = self.comp.ready();
        for i in 0..n {
            self.free.push(self.comp.peek(i));
        }
        self.comp.release(n);
    }

    /// Asks the kernel to send what the TX ring holds; `Err` only for errors other than
    /// "busy, try again".
    fn kick(&self) -> DocaResult<()> {
        // SAFETY: a zero-length send on our socket: the kernel reads the TX ring.
        let r = unsafe {
            libc::sendto(
                self.xsk.fd.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) => Ok(()),
                _ => {
                    sdk_err!("af_xdp", "send: {e}");
                    Err(DocaError::IO_FAILED)
                }
            };
        }
        Ok(())
    }

    /// Queues `frames` (as many as fit, in order) and pushes them out; returns how many
    /// were queued.
    fn send(&mut self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        let mut done = 0;
        let start = Instant::now();
        while done < frames.len() {
            self.reap();
            let room = (self.tx.free() as usize)
                .min(self.free.len())
                .min(frames.len() - done);
            for (i, f) in frames[done..done + room].iter().enumerate() {
                let addr = self.free.pop().expect("counted above");
                self.xsk.umem.write(addr, f);
                self.tx.put(
                    i as u32,
                    XdpDesc {
                        addr,
                        len: f.len() as u32,
                        options: 0,
                    },
                );
            }
            self.tx.submit(room as u32);
            done += room;
            if let Err(e) = self.kick() {
                return (done, Err(e));
            }
            if room == 0 {
                if start.elapsed() > TX_PUSH_LIMIT {
                    return (done, Err(DocaError::AGAIN));
                }
                std::thread::yield_now();
            }
        }
        // The kernel takes a bounded number of frames per call: push until it has them all.
        while self.tx.outstanding() > 0 && start.elapsed() < TX_PUSH_LIMIT {
            if let Err(e) = self.kick() {
                return (done, Err(e));
            }
        }
        self.reap();
        (done, Ok(()))
    }
}

/// What the port and its lanes' sources share.
struct Shared {
    ifname: String,
    prog: XdpProgram,
    queues: Vec<Mutex<RxSide>>,
    fds: Vec<RawFd>,
    /// Lanes started in the current run (lane `l` serves queues `q % running == l`).
    running: AtomicUsize,
    /// Sources alive; the sockets are in the map while it is non-zero.
    live: Mutex<usize>,
}

/// An AF_XDP port (the backend of a `PortSpec::Xdp` when AF_XDP is usable).
pub(crate) struct XdpPort {
    shared: Arc<Shared>,
    tx: Mutex<TxSide>,
    max_frame: usize,
    describe: String,
}

/// `SIOCETHTOOL` and the ethtool commands used here (`<linux/ethtool.h>`).
const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GCHANNELS: u32 = 0x3c;

/// `struct ethtool_channels`.
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

/// `ioctl(request)` on a datagram socket of the calling thread's network namespace with an
/// `ifreq` naming `ifname` whose data member is `data`: the interface is looked up where
/// the port's sockets live (sysfs shows the namespace it was mounted in, which may differ).
fn if_ioctl(ifname: &str, request: libc::c_ulong, data: libc::ifreq) -> Option<libc::ifreq> {
    // SAFETY: plain socket(2) call; checked below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: fd is a fresh descriptor we own.
    let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let mut ifr = data;
    if ifname.len() >= ifr.ifr_name.len() {
        return None;
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(ifname.bytes().chain([0])) {
        *d = s as libc::c_char;
    }
    // SAFETY: ifr is a valid ifreq naming the interface; its data member is what the
    // request reads or writes (checked by the callers).
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, &mut ifr) };
    (r == 0).then_some(ifr)
}

/// The interface's MTU (1500 when it cannot be read).
fn iface_mtu(ifname: &str) -> usize {
    // SAFETY: ifreq is plain data; all-zero is valid.
    let z: libc::ifreq = unsafe { std::mem::zeroed() };
    // SAFETY: SIOCGIFMTU fills the ifru_mtu member of the union.
    if_ioctl(ifname, libc::SIOCGIFMTU, z)
        .map_or(1500, |r| unsafe { r.ifr_ifru.ifru_mtu }.max(68) as usize)
}

/// The interface's receive queues (ethtool's channel count; 1 when unknown).
fn rx_queue_count(ifname: &str) -> u32 {
    let mut ch = EthtoolChannels {
        cmd: ETHTOOL_GCHANNELS,
        ..Default::default()
    };
    // SAFETY: ifreq is plain data; all-zero is valid.
    let mut z: libc::ifreq = unsafe { std::mem::zeroed() };
    z.ifr_ifru.ifru_data = (&mut ch as *mut EthtoolChannels).cast();
    if if_ioctl(ifname, SIOCETHTOOL, z).is_some() {
        return ch.rx_count.max(ch.combined_count).max(1);
    }
    1
}

/// Binds `fd` to queue `queue` of `ifindex`. A socket of a port that just went away may
/// hold the queue for a moment (the kernel frees it after a grace period): EBUSY is
/// retried for up to a second.
/// Binds `fd` to queue `queue` of `ifindex`. A socket of a port that just went away may
/// hold the queue for a moment (the kernel frees it after a grace period): EBUSY is
/// retried for up to a second.
fn bind(fd: &OwnedFd, ifindex: u32, queue: u32, flags: u16) -> Why<()> {
    let sa = SockaddrXdp {
        family: AF_XDP as u16,
        flags,
        ifindex,
        queue_id: queue,
        shared_umem_fd: 0,
    };
    let end = Instant::now() + Duration::from_secs(1);
    loop {
        // SAFETY: sa is a valid sockaddr_xdp and its size is passed.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sa as *const SockaddrXdp).cast(),
                std::mem::size_of::<SockaddrXdp>() as u32,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EBUSY) || Instant::now() >= end {
            return Err((
                DocaError::OPERATING_SYSTEM,
                format!("bind(AF_XDP) to queue {queue}: {e}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// One queue's socket: UMEM of `RX_FRAMES` (+ `TX_FRAMES` with `with_tx`) chunks, all RX
/// chunks put in the fill ring. Returns the RX side, the TX side if asked, and whether it
/// got zero-copy.
fn open_queue(
    ifindex: u32,
    queue: u32,
    chunk: usize,
    with_tx: bool,
    zerocopy: bool,
) -> Why<(RxSide, Option<TxSide>, bool)> {
    let fd = xdp_socket()?;
    let frames = RX_FRAMES + if with_tx { TX_FRAMES } else { 0 };
    let umem = Umem::register(&fd, frames as usize, chunk)?;
    let fill = Ring::<u64>::create(&fd, RingKind::Fill, RX_FRAMES)?;
    let comp = Ring::<u64>::create(&fd, RingKind::Completion, TX_FRAMES)?;
    let rx = Ring::<XdpDesc>::create(&fd, RingKind::Rx, RX_FRAMES)?;
    let tx = if with_tx {
        Some(Ring::<XdpDesc>::create(&fd, RingKind::Tx, TX_FRAMES)?)
    } else {
        None
    };
    for i in 0..RX_FRAMES {
        fill.put(i, u64::from(i) * chunk as u64);
    }
    fill.submit(RX_FRAMES);
    let zc = if zerocopy {
        match bind(&fd, ifindex, queue, XDP_ZEROCOPY) {
            Ok(()) => true,
            Err((_, why)) => {
                if queue == 0 {
                    sdk_warn!("af_xdp", "zero-copy refused ({why}); using copy mode");
                }
                bind(&fd, ifindex, queue, XDP_COPY)?;
                false
            }
        }
    } else {
        bind(&fd, ifindex, queue, XDP_COPY)?;
        false
    };
    let xsk = Arc::new(Xsk { fd, umem });
    let tx = tx.map(|tx| TxSide {
        xsk: xsk.clone(),
        tx,
        comp,
        free: (RX_FRAMES..frames)
            .map(|i| u64::from(i) * chunk as u64)
            .collect(),
    });
    Ok((RxSide { xsk, rx, fill }, tx, zc))
}

impl XdpPort {
    /// Attaches the redirect program to `ifname` and opens one socket per receive queue.
    /// The error carries the reason AF_XDP cannot be used (logged by the caller).
    pub(crate) fn open(ifname: &str, ifindex: u32, mode: XdpMode) -> Why<XdpPort> {
        let mtu = iface_mtu(ifname);
        let want = mtu + L2_OVERHEAD;
        let chunk = if want + KERNEL_HEADROOM <= 2048 {
            2048
        } else {
            4096
        };
        let max_frame = want.min(chunk - KERNEL_HEADROOM);
        let nq = rx_queue_count(ifname).min(MAX_LANES as u32);
        let driver = mode.native || mode.zerocopy;
        let prog = if driver {
            match XdpProgram::attach(ifindex, nq, XDP_FLAGS_DRV_MODE) {
                Err(e) if native_unsupported(&e) => {
                    sdk_warn!(
                        "af_xdp",
                        "{ifname}: driver-mode XDP refused ({}); using generic mode",
                        e.1
                    );
                    XdpProgram::attach(ifindex, nq, XDP_FLAGS_SKB_MODE)?
                }
                r => r?,
            }
        } else {
            XdpProgram::attach(ifindex, nq, XDP_FLAGS_SKB_MODE)?
        };
        let zc_ok = mode.zerocopy && prog.mode == XDP_FLAGS_DRV_MODE;
        let mut queues = Vec::new();
        let mut tx_side = None;
        let mut zerocopy = zc_ok;
        for q in 0..nq {
            let (rx, tx, zc) = open_queue(ifindex, q, chunk, q == 0, zc_ok)?;
            zerocopy &= zc;
            if let Some(tx) = tx {
                tx_side = Some(tx);
            }
            queues.push(rx);
        }
        let tx = tx_side.ok_or((DocaError::BAD_STATE, "no queue 0".to_string()))?;
        let describe = format!(
            "af_xdp {} {} mode, {nq} queue{}",
            if zerocopy { "zero-copy" } else { "copy" },
            if prog.mode == XDP_FLAGS_DRV_MODE {
                "driver"
            } else {
                "generic"
            },
            if nq == 1 { "" } else { "s" },
        );
        sdk_info!("af_xdp", "{ifname}: {describe}");
        let fds = queues.iter().map(|r| r.xsk.fd.as_raw_fd()).collect();
        Ok(XdpPort {
            shared: Arc::new(Shared {
                ifname: ifname.to_string(),
                prog,
                queues: queues.into_iter().map(Mutex::new).collect(),
                fds,
                running: AtomicUsize::new(1),
                live: Mutex::new(0),
            }),
            tx: Mutex::new(tx),
            max_frame,
            describe,
        })
    }

    /// Backend kind, mode and queue count (`af_xdp copy generic mode, 1 queue`).
    pub(crate) fn describe(&self) -> &str {
        &self.describe
    }
}

impl Backend for XdpPort {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        let (n, r) = self.send_batch(&[frame]);
        match (n, r) {
            (1, _) => Ok(()),
            (_, Err(e)) => Err(e),
            _ => Err(DocaError::AGAIN),
        }
    }

    fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        self.tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(frames)
    }

    fn max_frame(&self) -> usize {
        self.max_frame
    }

    fn kernel_drops(&self) -> Option<u64> {
        let mut n = 0;
        for &fd in &self.shared.fds {
            let s = statistics(fd);
            n += s.rx_dropped + s.rx_ring_full + s.rx_fill_ring_empty_descs;
        }
        Some(n)
    }

    fn open_rx(&self, lane: usize) -> DocaResult<Option<Box<dyn RxSource>>> {
        let s = &self.shared;
        s.running.store(lane + 1, Ordering::Release);
        if lane >= s.queues.len() {
            // More lanes than queues: this one serves only its input queue.
            return Ok(None);
        }
        let mut live = s.live.lock().unwrap_or_else(|e| e.into_inner());
        if *live == 0 {
            for (q, side) in s.queues.iter().enumerate() {
                let mut side = side.lock().unwrap_or_else(|e| e.into_inner());
                side.discard();
                if let Err((e, why)) = s.prog.insert(q as u32, &side.xsk.fd) {
                    sdk_err!("af_xdp", "{}: queue {q}: {why}", s.ifname);
                    for q2 in 0..q {
                        s.prog.remove(q2 as u32);
                    }
                    return Err(e);
                }
            }
        }
        *live += 1;
        Ok(Some(Box::new(XskSource {
            shared: s.clone(),
            lane,
            pfds: Vec::new(),
        })))
    }
}

/// The receive side of one lane: the queues it serves now.
struct XskSource {
    shared: Arc<Shared>,
    lane: usize,
    /// Reused poll set (no allocation per wait once grown).
    pfds: Vec<libc::pollfd>,
}

impl XskSource {
    fn my_queues(&self) -> impl Iterator<Item = usize> {
        let n = self.shared.running.load(Ordering::Acquire).max(1);
        (self.lane..self.shared.queues.len()).step_by(n)
    }

    fn drain(&mut self, max: usize, f: &mut dyn FnMut(&[u8], u64, usize)) -> usize {
        let mut n = 0;
        for q in self.my_queues() {
            if n >= max {
                break;
            }
            // Another lane may hold it for a moment while the lanes are re-spread.
            if let Ok(mut side) = self.shared.queues[q].try_lock() {
                n += side.drain(max - n, f);
            }
        }
        n
    }
}

impl RxSource for XskSource {
    fn poll(
        &mut self,
        max: usize,
        timeout: Duration,
        f: &mut dyn FnMut(&[u8], u64, usize),
    ) -> usize {
        let n = self.drain(max, f);
        if n > 0 || timeout.is_zero() {
            return n;
        }
        // A socket wakes its sleeping reader for every frame (there is no block timer as
        // TPACKET_V3 has), which costs both sides a wake-up per frame under a steady
        // stream. Let frames gather for a moment first, without being waited for: the
        // kernel wakes nobody then; sleep in `poll` only when that brought nothing.
        std::thread::sleep(RX_GATHER.min(timeout));
        let n = self.drain(max, f);
        if n > 0 {
            return n;
        }
        self.pfds.clear();
        for q in self.my_queues() {
            self.pfds.push(libc::pollfd {
                fd: self.shared.fds[q],
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: pfds is a valid array of pollfd of the length passed.
        let r = unsafe { libc::poll(self.pfds.as_mut_ptr(), self.pfds.len() as _, ms) };
        if r > 0 {
            self.drain(max, f)
        } else {
            0
        }
    }

    fn waits(&self) -> bool {
        true
    }
}

impl Drop for XskSource {
    fn drop(&mut self) {
        let s = &self.shared;
        let mut live = s.live.lock().unwrap_or_else(|e| e.into_inner());
        *live -= 1;
        if *live == 0 {
            // No lane reads the sockets now: the kernel's stack gets the frames again.
            for q in 0..s.queues.len() {
                s.prog.remove(q as u32);
            }
        }
    }
}
