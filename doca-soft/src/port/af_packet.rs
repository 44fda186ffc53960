//! AF_PACKET port on a Linux interface: RX through TPACKET_V3 mmap rings, one socket per
//! receive lane, all in one PACKET_FANOUT group in hash mode (the kernel keeps a flow on
//! one socket, so per-flow order holds); TX with `send` on a separate socket. Outgoing
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

/// RX ring block size (bytes); a frame must fit in one block.
const BLOCK_SIZE: u32 = 1 << 20;
/// RX ring blocks (64 MiB of ring in total).
const BLOCK_COUNT: u32 = 64;
/// Nominal frame slot size (TPACKET_V3 packs frames of any size into blocks).
const FRAME_SIZE: u32 = 2048;
/// A block is handed to user space at the latest this long after its first frame (ms).
const RETIRE_TIMEOUT_MS: u32 = 1;
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
            max_frame: (mtu + L2_OVERHEAD).min(BLOCK_SIZE as usize - 256),
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
        let (ring, id) = TpacketRing::open(self.ifindex, join)?;
        *group = Some(id);
        Ok(Some(Box::new(ring)))
    }
}

/// A TPACKET_V3 receive ring bound to one interface.
struct TpacketRing {
    fd: OwnedFd,
    ring: *mut u8,
    len: usize,
    next_block: u32,
}

// SAFETY: the ring mapping is owned by this value and used by one thread at a time.
unsafe impl Send for TpacketRing {}

impl TpacketRing {
    /// A ring bound to `ifindex`, in fanout group `group` (or a new one); returns the ring
    /// and its group id.
    fn open(ifindex: u32, group: Option<u16>) -> DocaResult<(TpacketRing, u16)> {
        let fd = raw_socket()?;
        let v3 = libc::tpacket_versions::TPACKET_V3 as i32;
        setsockopt(&fd, libc::PACKET_VERSION, &v3).map_err(|_| os_err("PACKET_VERSION"))?;
        // Kernels before 4.20 lack it; the filter and the pkttype check cover them.
        let _ = setsockopt(&fd, libc::PACKET_IGNORE_OUTGOING, &1i32);
        // A socket joining a running group sees every frame on its own between bind and
        // the join (copies of what the group gets): it drops all until it is in.
        if group.is_some() {
            attach_filter(&fd, true).map_err(|_| os_err("SO_ATTACH_FILTER"))?;
        } else {
            attach_filter(&fd, false).map_err(|_| os_err("SO_ATTACH_FILTER"))?;
        }
        let req = libc::tpacket_req3 {
            tp_block_size: BLOCK_SIZE,
            tp_block_nr: BLOCK_COUNT,
            tp_frame_size: FRAME_SIZE,
            tp_frame_nr: BLOCK_SIZE / FRAME_SIZE * BLOCK_COUNT,
            tp_retire_blk_tov: RETIRE_TIMEOUT_MS,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(&fd, libc::PACKET_RX_RING, &req).map_err(|_| os_err("PACKET_RX_RING"))?;
        let len = (BLOCK_SIZE * BLOCK_COUNT) as usize;
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
            len,
            next_block: 0,
        };
        // Binding with a protocol starts reception, on this interface only.
        bind(&me.fd, ifindex, libc::ETH_P_ALL as u16)?;
        let id = join_fanout(&me.fd, group)?;
        if group.is_some() {
            attach_filter(&me.fd, false).map_err(|_| os_err("SO_ATTACH_FILTER"))?;
        }
        Ok((me, id))
    }

    fn block(&self, i: u32) -> *mut libc::tpacket_block_desc {
        // SAFETY: i < BLOCK_COUNT, so the offset stays inside the mapping.
        unsafe { self.ring.add((i * BLOCK_SIZE) as usize) }.cast()
    }

    /// Status word of block `i` (shared with the kernel).
    fn status(&self, i: u32) -> *mut u32 {
        // SAFETY: block_status is the first field of the v1 header inside the block.
        unsafe { std::ptr::addr_of_mut!((*self.block(i)).hdr.bh1.block_status) }
    }

    fn block_ready(&self, i: u32) -> bool {
        // SAFETY: status points into the live mapping; the kernel writes it concurrently,
        // hence the volatile read and the acquire fence before reading the frames.
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

    /// Hands every frame of ready block `i` to `f`, then gives the block back.
    fn drain_block(&self, i: u32, f: &mut dyn FnMut(&[u8], u64, usize)) -> usize {
        let base = self.block(i).cast::<u8>();
        // SAFETY: the block is owned by user space until we reset its status.
        let bh = unsafe { std::ptr::addr_of!((*self.block(i)).hdr.bh1).read() };
        let mut off = bh.offset_to_first_pkt as usize;
        let hdr_len = (std::mem::size_of::<libc::tpacket3_hdr>() + 15) & !15;
        let mut n = 0;
        for _ in 0..bh.num_pkts {
            if off + hdr_len + std::mem::size_of::<libc::sockaddr_ll>() > BLOCK_SIZE as usize {
                break;
            }
            // SAFETY: off is inside the block (checked above); the kernel wrote a header
            // there. read_unaligned because the layout is the kernel's.
            let h = unsafe { base.add(off).cast::<libc::tpacket3_hdr>().read_unaligned() };
            // SAFETY: the sockaddr_ll follows the aligned header (checked to fit above).
            let sll = unsafe {
                base.add(off + hdr_len)
                    .cast::<libc::sockaddr_ll>()
                    .read_unaligned()
            };
            let start = off + usize::from(h.tp_mac);
            let snap = h.tp_snaplen as usize;
            if sll.sll_pkttype != libc::PACKET_OUTGOING && start + snap <= BLOCK_SIZE as usize {
                // SAFETY: [start, start+snap) is inside the block (checked).
                let frame = unsafe { std::slice::from_raw_parts(base.add(start), snap) };
                let ts = u64::from(h.tp_sec) * 1_000_000_000 + u64::from(h.tp_nsec);
                f(frame, ts, h.tp_len as usize);
                n += 1;
            }
            if h.tp_next_offset == 0 {
                break;
            }
            off += h.tp_next_offset as usize;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        // SAFETY: returning the block to the kernel: a volatile store of TP_STATUS_KERNEL.
        unsafe { self.status(i).write_volatile(libc::TP_STATUS_KERNEL) };
        n
    }
}

impl RxSource for TpacketRing {
    fn poll(
        &mut self,
        max: usize,
        timeout: Duration,
        f: &mut dyn FnMut(&[u8], u64, usize),
    ) -> usize {
        if !self.block_ready(self.next_block) {
            if timeout.is_zero() {
                return 0;
            }
            self.wait(timeout);
        }
        let mut n = 0;
        while n < max && self.block_ready(self.next_block) {
            n += self.drain_block(self.next_block, f);
            self.next_block = (self.next_block + 1) % BLOCK_COUNT;
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
        unsafe { libc::munmap(self.ring.cast(), self.len) };
    }
}
