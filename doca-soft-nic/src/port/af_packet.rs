//! AF_PACKET port on a Linux interface: RX through TPACKET_V2 mmap rings, one socket per
//! receive lane, all in one PACKET_FANOUT group in hash mode (the kernel keeps a flow on
//! one socket, so per-flow order holds); TX with `send`/`sendmmsg` on a separate socket.
//!
//! Why V2 and not V3: a V3 ring hands frames over a block at a time, and a block that is
//! not full is handed over only when its retire timer fires (1 ms at best, one jiffy,
//! up to 4 ms, in practice), so a lone frame waited about 1 ms. A V2 ring has a status
//! word per frame and wakes the reader for each, so a lone frame is read at once; under
//! load the lane drains many frames per wake-up all the same.
//!
//! Ring size: `DOCA_SOFT_AF_PACKET_RING_KB` KiB per lane (see [`ring_bytes`]); the ring's
//! frame slots fit the interface's largest frame up to a jumbo frame ([`SLOT_FRAME_MAX`]).
//! Outgoing
//! copies (our own sends, other local senders) are dropped in the kernel, before the ring:
//! by the fanout group's ignore-outgoing flag (recent kernels), else by a four-instruction
//! classic BPF filter on each socket (PACKET_IGNORE_OUTGOING, Linux >= 4.20, covers a
//! socket only until it joins the group); the pkttype check in user space covers the rest.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;
use std::time::Duration;

use super::{Backend, RxSource};
use crate::error::{DocaError, DocaResult};

/// Environment variable: RX ring size per lane in KiB (default [`DEFAULT_RING_KB`], at
/// least one block; rounded down to whole blocks).
pub(crate) const RING_KB_ENV: &str = "DOCA_SOFT_AF_PACKET_RING_KB";
/// Default RX ring per lane: 4 MiB (2048 slots of 2 KiB on a 1500-byte MTU interface),
/// raised to [`MIN_DEFAULT_SLOTS`] slots when slots are larger (jumbo MTU).
pub(crate) const DEFAULT_RING_KB: usize = 4096;
/// Slots a default-sized ring holds at least (room for bursts while a lane is descheduled).
const MIN_DEFAULT_SLOTS: usize = 2048;
/// Largest frame a ring slot is made to hold (jumbo 9216 + L2 overhead). An interface with
/// a larger MTU (`lo`: 65536, where only segmentation-offload super-frames are that large)
/// gets 2 KiB slots ([`SMALL_SLOT`]); a larger frame there arrives truncated and is counted
/// as a truncated drop.
const SLOT_FRAME_MAX: usize = 9216 + L2_OVERHEAD;
/// Slot size for interfaces whose MTU exceeds [`SLOT_FRAME_MAX`].
const SMALL_SLOT: usize = 2048;
/// Bytes the kernel puts in a V2 slot before the frame: the header and the sockaddr_ll
/// (52), aligned to 16 with room for the MAC header (`tp_mac` is 66 for Ethernet); 80
/// leaves room for the alignment.
const SLOT_HEADROOM: usize = 80;
/// Ring block size at least (bytes): blocks are physically contiguous kernel allocations;
/// 64 KiB keeps them cheap to find and holds 32 slots of 2 KiB.
const MIN_BLOCK: usize = 64 << 10;
/// Frames per `sendmmsg` call of `send_batch`.
const SEND_BATCH: usize = 64;
/// Room for two VLAN tags on top of the MTU and the Ethernet header.
const L2_OVERHEAD: usize = 14 + 8;

// Linux ABI numbers of <linux/if_packet.h> that the libc crate does not export here.
const PACKET_FANOUT: i32 = 18;
const PACKET_FANOUT_HASH: u32 = 0;
const PACKET_FANOUT_FLAG_UNIQUEID: u32 = 0x2000;
const PACKET_FANOUT_FLAG_IGNORE_OUTGOING: u32 = 0x4000;
/// `SO_ATTACH_FILTER` (generic socket option number, as on x86 and arm64).
const SO_ATTACH_FILTER: i32 = 26;

fn os_err(what: &str) -> DocaError {
    let e = std::io::Error::last_os_error();
    sdk_err!("af_packet", "{what}: {e}");
    DocaError::OPERATING_SYSTEM
}

/// Opens a raw AF_PACKET socket that receives nothing until bound with a protocol.
fn raw_socket() -> DocaResult<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_err("socket(AF_PACKET)"));
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(fd: &OwnedFd, ifindex: u32, protocol: u16) -> DocaResult<()> {
    // SAFETY: sockaddr_ll is plain data; all-zero is a valid starting value.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_protocol = protocol.to_be();
    sa.sll_ifindex = ifindex as i32;
    // SAFETY: sa is a valid sockaddr_ll and its size is passed.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    if r < 0 {
        return Err(os_err("bind(AF_PACKET)"));
    }
    Ok(())
}

fn setsockopt<T>(fd: &OwnedFd, name: i32, value: &T) -> Result<(), std::io::Error> {
    setsockopt_at(fd, libc::SOL_PACKET, name, value)
}

fn setsockopt_at<T>(fd: &OwnedFd, level: i32, name: i32, value: &T) -> std::io::Result<()> {
    // SAFETY: value points to a live T of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as u32,
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Attaches a classic BPF program that drops frames whose packet type is PACKET_OUTGOING
/// and keeps the rest, or (`drop_all`) drops everything (used while a socket joins the
/// fanout group).
fn attach_filter(fd: &OwnedFd, drop_all: bool) -> std::io::Result<()> {
    let ins = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let mut prog = if drop_all {
        vec![ins(libc::BPF_RET | libc::BPF_K, 0, 0, 0)]
    } else {
        vec![
            // A = skb->pkt_type (ancillary load).
            ins(
                libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
                0,
                0,
                (libc::SKF_AD_OFF + libc::SKF_AD_PKTTYPE) as u32,
            ),
            // Outgoing: next instruction (drop); else skip it (keep).
            ins(
                libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
                0,
                1,
                u32::from(libc::PACKET_OUTGOING),
            ),
            ins(libc::BPF_RET | libc::BPF_K, 0, 0, 0),
            ins(libc::BPF_RET | libc::BPF_K, 0, 0, u32::MAX),
        ]
    };
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    setsockopt_at(fd, libc::SOL_SOCKET, SO_ATTACH_FILTER, &fprog)
}

/// Joins `fd` to fanout group `id` in hash mode, or (id `None`) creates a group with an id
/// the kernel picks; returns the group id.
fn join_fanout(fd: &OwnedFd, id: Option<u16>) -> DocaResult<u16> {
    // Every member must ask for the same flags: try with ignore-outgoing, then without
    // (kernels before it); the group keeps whichever its creator got.
    let try_join = |id: u16, flags: u32| {
        let arg = |f: u32| u32::from(id) | ((PACKET_FANOUT_HASH | f) << 16);
        setsockopt(
            fd,
            PACKET_FANOUT,
            &arg(flags | PACKET_FANOUT_FLAG_IGNORE_OUTGOING),
        )
        .or_else(|_| setsockopt(fd, PACKET_FANOUT, &arg(flags)))
    };
    if let Some(id) = id {
        try_join(id, 0).map_err(|_| os_err("PACKET_FANOUT"))?;
        return Ok(id);
    }
    if try_join(0, PACKET_FANOUT_FLAG_UNIQUEID).is_err() {
        // Kernels before 4.4 cannot pick an id: take one from the process id and a count.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = (std::process::id().wrapping_mul(31).wrapping_add(n) & 0xffff) as u16;
        try_join(id, 0).map_err(|_| os_err("PACKET_FANOUT"))?;
        return Ok(id);
    }
    let mut v: u32 = 0;
    let mut len = std::mem::size_of::<u32>() as libc::socklen_t;
    // SAFETY: v and len are valid out-parameters of the sizes given.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_FANOUT,
            (&mut v as *mut u32).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(os_err("getsockopt(PACKET_FANOUT)"));
    }
    Ok(v as u16)
}

/// The interface index of `ifname`, or NOT_FOUND.
pub(super) fn ifindex_of(ifname: &str) -> DocaResult<u32> {
    let c = CString::new(ifname).map_err(|_| DocaError::INVALID_VALUE)?;
    // SAFETY: c is a valid NUL-terminated string.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(DocaError::NOT_FOUND),
        i => Ok(i),
    }
}

/// An AF_PACKET port (the backend of a `PortSpec::Linux`).
pub(crate) struct AfPacket {
    ifname: String,
    ifindex: u32,
    tx: OwnedFd,
    max_frame: usize,
    /// Fanout group of the running lanes (set by lane 0, joined by the others).
    fanout: Mutex<Option<u16>>,
}

impl AfPacket {
    /// Opens the TX socket of `ifname` (`ifindex` 0: looked up by name).
    pub(crate) fn open(ifname: &str, ifindex: u32) -> DocaResult<AfPacket> {
        let ifindex = if ifindex == 0 {
            ifindex_of(ifname)?
        } else {
            ifindex
        };
        let mtu = std::fs::read_to_string(format!("/sys/class/net/{ifname}/mtu"))
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(1500);
        let tx = raw_socket()?;
        // Protocol 0: this socket never receives.
        bind(&tx, ifindex, 0)?;
        Ok(AfPacket {
            ifname: ifname.to_string(),
            ifindex,
            tx,
            max_frame: mtu + L2_OVERHEAD,
            fanout: Mutex::new(None),
        })
    }
}

impl Backend for AfPacket {
    fn send(&self, frame: &[u8]) -> DocaResult<()> {
        // SAFETY: frame is a valid buffer of frame.len() bytes.
        let n = unsafe { libc::send(self.tx.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOBUFS) | Some(libc::EAGAIN) => DocaError::AGAIN,
                Some(libc::EMSGSIZE) => DocaError::TOO_BIG,
                _ => {
                    sdk_err!("af_packet", "send on {}: {e}", self.ifname);
                    DocaError::IO_FAILED
                }
            });
        }
        Ok(())
    }

    fn send_batch(&self, frames: &[&[u8]]) -> (usize, DocaResult<()>) {
        // Headers on the stack, one chunk of SEND_BATCH frames per system call: no
        // allocation per call.
        // SAFETY: iovec and mmsghdr are plain data; all-zero is a valid starting value.
        let mut iov: [libc::iovec; SEND_BATCH] = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut msgs: [libc::mmsghdr; SEND_BATCH] = unsafe { std::mem::zeroed() };
        let mut done = 0;
        while done < frames.len() {
            let chunk = &frames[done..(done + SEND_BATCH).min(frames.len())];
            for (i, f) in chunk.iter().enumerate() {
                iov[i] = libc::iovec {
                    iov_base: f.as_ptr() as *mut libc::c_void,
                    iov_len: f.len(),
                };
                msgs[i].msg_hdr.msg_iov = &mut iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
                msgs[i].msg_len = 0;
            }
            // SAFETY: msgs[..chunk.len()] each point to one live iovec over a frame that
            // outlives the call.
            let n = unsafe {
                libc::sendmmsg(
                    self.tx.as_raw_fd(),
                    msgs.as_mut_ptr(),
                    chunk.len() as u32,
                    0,
                )
            };
            let n = n.max(0) as usize;
            done += n;
            if n < chunk.len() {
                // Short or failed batch: `send` the first unsent frame; it either goes out
                // (carry on after it) or gives the error to report.
                match self.send(chunk[n]) {
                    Ok(()) => done += 1,
                    Err(e) => return (done, Err(e)),
                }
            }
        }
        (done, Ok(()))
    }

    fn max_frame(&self) -> usize {
        self.max_frame
    }

    fn open_rx(&self, lane: usize) -> DocaResult<Option<Box<dyn RxSource>>> {
        let mut group = self.fanout.lock().unwrap_or_else(|e| e.into_inner());
        // Lane 0 starts every run of lanes: it makes a new group (the old one went with
        // its sockets).
        let join = if lane == 0 { None } else { *group };
        let geo = Geometry::new(self.max_frame, ring_bytes(self.max_frame));
        let (ring, id) = TpacketRing::open(self.ifindex, join, geo)?;
        *group = Some(id);
        Ok(Some(Box::new(ring)))
    }
}

/// Shape of a V2 receive ring: slots of `slot` bytes, `block / slot` to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Slot (frame) size, a multiple of 16.
    pub slot: usize,
    /// Block size, a multiple of the page size.
    pub block: usize,
    /// Blocks.
    pub blocks: usize,
}

impl Geometry {
    /// The ring for frames up to `max_frame` bytes (L2 header included) in about
    /// `ring_bytes` (rounded down to whole blocks, at least one).
    pub(crate) fn new(max_frame: usize, ring_bytes: usize) -> Geometry {
        let slot = if max_frame > SLOT_FRAME_MAX {
            SMALL_SLOT
        } else {
            (max_frame + SLOT_HEADROOM)
                .next_multiple_of(16)
                .max(SMALL_SLOT)
        };
        let page = page_size();
        let block = slot.next_multiple_of(page).max(MIN_BLOCK);
        Geometry {
            slot,
            block,
            blocks: (ring_bytes / block).max(1),
        }
    }

    /// Slots in a block.
    fn per_block(&self) -> usize {
        self.block / self.slot
    }

    /// Slots in the ring.
    pub(crate) fn slots(&self) -> usize {
        self.per_block() * self.blocks
    }

    /// Bytes of the ring (what is mapped).
    pub(crate) fn bytes(&self) -> usize {
        self.block * self.blocks
    }

    /// Largest frame a slot holds whole.
    #[cfg(test)]
    fn snap(&self) -> usize {
        self.slot - SLOT_HEADROOM
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// RX ring bytes per lane for frames up to `max_frame`: `DOCA_SOFT_AF_PACKET_RING_KB` KiB
/// when set to a positive number, else [`DEFAULT_RING_KB`] KiB or [`MIN_DEFAULT_SLOTS`]
/// slots, whichever is larger. Read once per process.
pub(crate) fn ring_bytes(max_frame: usize) -> usize {
    static KB: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let kb = *KB.get_or_init(|| {
        let v = std::env::var(RING_KB_ENV).ok()?;
        match parse_ring_kb(&v) {
            Some(kb) => Some(kb),
            None => {
                sdk_err!(
                    "af_packet",
                    "{RING_KB_ENV}={v:?} is not a size in KiB (1 to 4194304): using the default"
                );
                None
            }
        }
    });
    kb.map(|kb| kb << 10)
        .unwrap_or_else(|| default_ring_bytes(max_frame))
}

/// The default ring size for frames up to `max_frame`.
fn default_ring_bytes(max_frame: usize) -> usize {
    let g = Geometry::new(max_frame, 0);
    let blocks = MIN_DEFAULT_SLOTS.div_ceil(g.per_block());
    (DEFAULT_RING_KB << 10).max(blocks * g.block)
}

/// A `DOCA_SOFT_AF_PACKET_RING_KB` value: KiB, 1 to 4 GiB.
fn parse_ring_kb(v: &str) -> Option<usize> {
    match v.trim().parse::<usize>() {
        Ok(kb) if (1..=4 << 20).contains(&kb) => Some(kb),
        _ => None,
    }
}

/// A TPACKET_V2 receive ring bound to one interface.
struct TpacketRing {
    fd: OwnedFd,
    ring: *mut u8,
    geo: Geometry,
    /// Next slot to read.
    next: usize,
}

// SAFETY: the ring mapping is owned by this value and used by one thread at a time.
unsafe impl Send for TpacketRing {}

/// Offset of the sockaddr_ll in a V2 slot (after the 16-aligned header).
const SLL_OFFSET: usize = (std::mem::size_of::<libc::tpacket2_hdr>() + 15) & !15;

impl TpacketRing {
    /// A ring of shape `geo` bound to `ifindex`, in fanout group `group` (or a new one);
    /// returns the ring and its group id.
    fn open(ifindex: u32, group: Option<u16>, geo: Geometry) -> DocaResult<(TpacketRing, u16)> {
        let fd = raw_socket()?;
        let v2 = libc::tpacket_versions::TPACKET_V2 as i32;
        setsockopt(&fd, libc::PACKET_VERSION, &v2).map_err(|_| os_err("PACKET_VERSION"))?;
        // Kernels before 4.20 lack it; the filter and the pkttype check cover them.
        let _ = setsockopt(&fd, libc::PACKET_IGNORE_OUTGOING, &1i32);
        // A socket joining a running group sees every frame on its own between bind and
        // the join (copies of what the group gets): it drops all until it is in.
        if group.is_some() {
            attach_filter(&fd, true).map_err(|_| os_err("SO_ATTACH_FILTER"))?;
        } else {
            attach_filter(&fd, false).map_err(|_| os_err("SO_ATTACH_FILTER"))?;
        }
        let req = libc::tpacket_req {
            tp_block_size: geo.block as u32,
            tp_block_nr: geo.blocks as u32,
            tp_frame_size: geo.slot as u32,
            tp_frame_nr: geo.slots() as u32,
        };
        setsockopt(&fd, libc::PACKET_RX_RING, &req).map_err(|_| os_err("PACKET_RX_RING"))?;
        let len = geo.bytes();
        // SAFETY: maps the ring the kernel just allocated for this socket.
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ring == libc::MAP_FAILED {
            return Err(os_err("mmap(PACKET_RX_RING)"));
        }
        let me = TpacketRing {
            fd,
            ring: ring.cast(),
            geo,
            next: 0,
        };
        // Binding with a protocol starts reception, on this interface only.
        bind(&me.fd, ifindex, libc::ETH_P_ALL as u16)?;
        let id = join_fanout(&me.fd, group)?;
        if group.is_some() {
            attach_filter(&me.fd, false).map_err(|_| os_err("SO_ATTACH_FILTER"))?;
        }
        Ok((me, id))
    }

    /// Start of slot `i` (< slots).
    fn slot(&self, i: usize) -> *mut u8 {
        let per = self.geo.per_block();
        let off = (i / per) * self.geo.block + (i % per) * self.geo.slot;
        // SAFETY: i < slots, so the slot lies inside the mapping.
        unsafe { self.ring.add(off) }
    }

    /// Status word of slot `i` (shared with the kernel).
    fn status(&self, i: usize) -> *mut u32 {
        // SAFETY: tp_status is the first field of the header at the slot's start.
        unsafe { std::ptr::addr_of_mut!((*self.slot(i).cast::<libc::tpacket2_hdr>()).tp_status) }
    }

    fn slot_ready(&self, i: usize) -> bool {
        // SAFETY: status points into the live mapping; the kernel writes it concurrently,
        // hence the volatile read and the acquire fence before reading the frame.
        let s = unsafe { self.status(i).read_volatile() };
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        s & libc::TP_STATUS_USER != 0
    }

    fn wait(&self, timeout: Duration) {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN | libc::POLLERR,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: pfd is a valid pollfd array of length 1.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r > 0 && pfd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
            // A pending socket error (interface down or gone): clear it and back off
            // instead of spinning on a descriptor that stays readable.
            let mut err: i32 = 0;
            let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
            // SAFETY: err and len are valid out-parameters of the sizes given.
            unsafe {
                libc::getsockopt(
                    self.fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_ERROR,
                    (&mut err as *mut i32).cast(),
                    &mut len,
                )
            };
            std::thread::sleep(timeout);
        }
    }

    /// Hands the frame of ready slot `i` to `f` (unless it is an outgoing copy), then gives
    /// the slot back; returns whether `f` was called.
    fn take_slot(&self, i: usize, f: &mut dyn FnMut(&[u8], u64, usize)) -> bool {
        let base = self.slot(i);
        let slot = self.geo.slot;
        // SAFETY: the slot is owned by user space until its status is reset; the kernel
        // wrote a header at its start. read_unaligned because the layout is the kernel's.
        let h = unsafe { base.cast::<libc::tpacket2_hdr>().read_unaligned() };
        // SAFETY: the sockaddr_ll follows the aligned header, inside the slot.
        let sll = unsafe {
            base.add(SLL_OFFSET)
                .cast::<libc::sockaddr_ll>()
                .read_unaligned()
        };
        let start = usize::from(h.tp_mac);
        let snap = h.tp_snaplen as usize;
        let mut handed = false;
        if sll.sll_pkttype != libc::PACKET_OUTGOING && start + snap <= slot {
            // SAFETY: [start, start+snap) is inside the slot (checked).
            let frame = unsafe { std::slice::from_raw_parts(base.add(start), snap) };
            let ts = u64::from(h.tp_sec) * 1_000_000_000 + u64::from(h.tp_nsec);
            f(frame, ts, h.tp_len as usize);
            handed = true;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        // SAFETY: returning the slot to the kernel: a volatile store of TP_STATUS_KERNEL.
        unsafe { self.status(i).write_volatile(libc::TP_STATUS_KERNEL) };
        handed
    }
}

impl RxSource for TpacketRing {
    fn poll(
        &mut self,
        max: usize,
        timeout: Duration,
        f: &mut dyn FnMut(&[u8], u64, usize),
    ) -> usize {
        if !self.slot_ready(self.next) {
            if timeout.is_zero() {
                return 0;
            }
            self.wait(timeout);
        }
        let (mut seen, mut n) = (0, 0);
        let slots = self.geo.slots();
        while seen < max && self.slot_ready(self.next) {
            n += usize::from(self.take_slot(self.next, f));
            seen += 1;
            self.next = if self.next + 1 == slots {
                0
            } else {
                self.next + 1
            };
        }
        n
    }

    fn waits(&self) -> bool {
        true
    }
}

impl Drop for TpacketRing {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping created in open; nothing refers to it any more.
        unsafe { libc::munmap(self.ring.cast(), self.geo.bytes()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fit_the_largest_frame_up_to_jumbo_and_the_ring_is_the_size_asked() {
        for mtu in [576, 1500, 4000, 9000, 9216] {
            let max = mtu + L2_OVERHEAD;
            let g = Geometry::new(max, 4 << 20);
            assert!(g.snap() >= max, "mtu {mtu}: slot {} too small", g.slot);
            assert_eq!(g.slot % 16, 0);
            assert_eq!(g.block % page_size(), 0);
            assert!(g.per_block() >= 1);
            assert!(g.bytes() <= 4 << 20, "never more than asked");
            assert!(g.bytes() > (4 << 20) - g.block, "less than a block short");
        }
        // 1500 MTU: 2 KiB slots, 64 KiB blocks, 2048 slots in 4 MiB.
        let g = Geometry::new(1500 + L2_OVERHEAD, 4 << 20);
        assert_eq!(
            (g.slot, g.block, g.blocks, g.slots()),
            (2048, 64 << 10, 64, 2048)
        );
        // lo (MTU 65536): 2 KiB slots all the same.
        assert_eq!(Geometry::new(65536 + L2_OVERHEAD, 4 << 20).slot, SMALL_SLOT);
        // Less than a block: one block.
        assert_eq!(Geometry::new(1522, 1).blocks, 1);
        // Default sizes: 4 MiB at 1500 MTU; jumbo slots get at least 2048 of them.
        assert_eq!(default_ring_bytes(1522), 4 << 20);
        let jumbo = Geometry::new(9216 + L2_OVERHEAD, default_ring_bytes(9216 + L2_OVERHEAD));
        assert!(jumbo.slots() >= MIN_DEFAULT_SLOTS);
    }

    #[test]
    fn ring_size_setting_is_parsed_or_rejected() {
        assert_eq!(parse_ring_kb("2048"), Some(2048));
        assert_eq!(parse_ring_kb(" 512\n"), Some(512));
        assert_eq!(parse_ring_kb("0"), None);
        assert_eq!(parse_ring_kb("-4"), None);
        assert_eq!(parse_ring_kb("4M"), None);
        assert_eq!(parse_ring_kb("99999999999"), None);
    }

    /// Size of the mapping starting at `addr` in /proc/self/smaps (KiB), and its Rss.
    fn mapping_kb(addr: usize) -> Option<(usize, usize)> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut lines = smaps.lines();
        while let Some(l) = lines.next() {
            let Some((range, _)) = l.split_once(' ') else {
                continue;
            };
            let Some((start, _)) = range.split_once('-') else {
                continue;
            };
            if usize::from_str_radix(start, 16).ok() != Some(addr) {
                continue;
            }
            let field = |line: &str, name: &str| -> Option<usize> {
                line.strip_prefix(name)?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()
            };
            let (mut size, mut rss) = (None, None);
            for l in lines.by_ref().take(8) {
                size = size.or_else(|| field(l, "Size:"));
                rss = rss.or_else(|| field(l, "Rss:"));
            }
            return Some((size?, rss?));
        }
        None
    }

    #[test]
    fn a_lone_frame_on_lo_is_delivered_and_the_ring_maps_what_was_configured() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIP: AF_PACKET needs root (CAP_NET_RAW)");
            return;
        }
        let port = AfPacket::open("lo", 0).expect("lo");
        let geo = Geometry::new(port.max_frame, 1 << 20);
        let (mut ring, _) = TpacketRing::open(port.ifindex, None, geo).expect("ring");
        assert_eq!(geo.bytes(), 1 << 20);
        let (size, _) = mapping_kb(ring.ring as usize).expect("the ring in smaps");
        assert_eq!(size << 10, geo.bytes(), "mapped ring = configured size");
        // One frame, nothing after it: it must be read without more traffic behind it
        // (a V3 block would wait for its retire timer; this only checks delivery).
        let mut frame = vec![0u8; 60];
        frame[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x77]);
        frame[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x78]);
        frame[12..14].copy_from_slice(&0x88b5u16.to_be_bytes()); // local experimental
        let marker = std::process::id().to_be_bytes();
        frame[14..18].copy_from_slice(&marker);
        port.send(&frame).expect("send on lo");
        let t0 = std::time::Instant::now();
        let mut found = false;
        while !found {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "the lone frame never arrived"
            );
            ring.poll(64, Duration::from_millis(100), &mut |f, ts, len| {
                if f.len() >= 18 && f[12..14] == [0x88, 0xb5] && f[14..18] == marker {
                    assert_eq!(len, f.len(), "whole frame");
                    assert!(ts > 0, "kernel timestamp");
                    found = true;
                }
            });
        }
        let (_, rss) = mapping_kb(ring.ring as usize).expect("the ring in smaps");
        assert!(rss << 10 <= geo.bytes(), "resident part within the ring");
    }
}
