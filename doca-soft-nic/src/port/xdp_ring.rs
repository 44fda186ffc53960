//! The user-space side of an AF_XDP socket: the UMEM (frame memory shared with the kernel)
//! and the four single-producer single-consumer rings (fill, completion, RX, TX), each a
//! mapping of the socket with a producer index, a consumer index and an array of entries.
//! Numbers and layouts are the Linux ABI of `<linux/if_xdp.h>` (stable since 4.18).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::DocaError;

pub(super) const AF_XDP: i32 = 44;
pub(super) const SOL_XDP: i32 = 283;
const XDP_MMAP_OFFSETS: i32 = 1;
pub(super) const XDP_RX_RING: i32 = 2;
pub(super) const XDP_TX_RING: i32 = 3;
const XDP_UMEM_REG: i32 = 4;
pub(super) const XDP_UMEM_FILL_RING: i32 = 5;
pub(super) const XDP_UMEM_COMPLETION_RING: i32 = 6;
const XDP_STATISTICS: i32 = 7;
pub(super) const XDP_COPY: u16 = 1 << 1;
pub(super) const XDP_ZEROCOPY: u16 = 1 << 2;
const XDP_PGOFF_RX_RING: i64 = 0;
const XDP_PGOFF_TX_RING: i64 = 0x8000_0000;
const XDP_UMEM_PGOFF_FILL_RING: i64 = 0x1_0000_0000;
const XDP_UMEM_PGOFF_COMPLETION_RING: i64 = 0x1_8000_0000;
/// Bytes the kernel keeps in front of a frame in every chunk (`XDP_PACKET_HEADROOM`).
pub(super) const KERNEL_HEADROOM: usize = 256;

/// `struct xdp_umem_reg`, with the `flags` and `tx_metadata_len` fields of recent kernels
/// (a kernel accepts only the sizes it knows: the 24-byte prefix is tried when the full
/// struct is refused).
#[repr(C)]
struct UmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
    flags: u32,
    tx_metadata_len: u32,
}

/// `struct xdp_ring_offset`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct RingOffset {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

/// `struct xdp_mmap_offsets`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct MmapOffsets {
    rx: RingOffset,
    tx: RingOffset,
    fr: RingOffset,
    cr: RingOffset,
}

/// `struct xdp_desc`: one frame of the RX or TX ring.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct XdpDesc {
    pub addr: u64,
    pub len: u32,
    pub options: u32,
}

/// `struct sockaddr_xdp`.
#[repr(C)]
pub(super) struct SockaddrXdp {
    pub family: u16,
    pub flags: u16,
    pub ifindex: u32,
    pub queue_id: u32,
    pub shared_umem_fd: u32,
}

/// `struct xdp_statistics`: the kernel's drop counters of one socket.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub(super) struct XdpStats {
    /// Dropped for other reasons.
    pub rx_dropped: u64,
    /// RX descriptors the kernel found invalid.
    pub rx_invalid_descs: u64,
    /// TX descriptors the kernel found invalid.
    pub tx_invalid_descs: u64,
    /// Dropped because the RX ring was full.
    pub rx_ring_full: u64,
    /// Times the fill ring was empty when a frame came.
    pub rx_fill_ring_empty_descs: u64,
    /// Times the TX ring was empty on a send call.
    pub tx_ring_empty_descs: u64,
}

/// The OS error of the last call, logged with the operation that failed.
pub(super) fn os_err(what: &str) -> (DocaError, String) {
    let e = std::io::Error::last_os_error();
    (DocaError::OPERATING_SYSTEM, format!("{what}: {e}"))
}

/// An error with its reason (the reason ends up in the fallback log line).
pub(super) type Why<T> = Result<T, (DocaError, String)>;

/// A fresh AF_XDP socket.
pub(super) fn xdp_socket() -> Why<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_err("socket(AF_XDP)"));
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(super) fn setsockopt<T>(fd: &OwnedFd, name: i32, value: &T, what: &str) -> Why<()> {
    setsockopt_len(fd, name, value, std::mem::size_of::<T>(), what)
}

fn setsockopt_len<T>(fd: &OwnedFd, name: i32, value: &T, len: usize, what: &str) -> Why<()> {
    // SAFETY: value points to a live T of at least len bytes.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            SOL_XDP,
            name,
            (value as *const T).cast(),
            len as u32,
        )
    };
    if r < 0 {
        return Err(os_err(what));
    }
    Ok(())
}

/// Frame memory registered with one socket: `count` chunks of `chunk` bytes.
pub(super) struct Umem {
    base: *mut u8,
    len: usize,
    pub chunk: usize,
}

// SAFETY: the mapping is plain memory; which thread writes which chunk is decided by the
// owners of the rings (a chunk is owned by exactly one side at a time).
unsafe impl Send for Umem {}
// SAFETY: as above.
unsafe impl Sync for Umem {}

impl Umem {
    /// Maps `count * chunk` bytes and registers them with `fd`.
    pub(super) fn register(fd: &OwnedFd, count: usize, chunk: usize) -> Why<Umem> {
        let len = count * chunk;
        // SAFETY: anonymous private mapping; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err("mmap(UMEM)"));
        }
        let umem = Umem {
            base: p.cast(),
            len,
            chunk,
        };
        let reg = UmemReg {
            addr: p as u64,
            len: len as u64,
            chunk_size: chunk as u32,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        // Kernels before 5.4 know only the first four fields (24 bytes).
        setsockopt(fd, XDP_UMEM_REG, &reg, "XDP_UMEM_REG")
            .or_else(|_| setsockopt_len(fd, XDP_UMEM_REG, &reg, 24, "XDP_UMEM_REG"))?;
        Ok(umem)
    }

    /// The `len` bytes at UMEM address `addr`, or `None` when they leave the UMEM.
    pub(super) fn slice(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let a = usize::try_from(addr).ok()?;
        if a.checked_add(len)? > self.len {
            return None;
        }
        // SAFETY: [a, a+len) is inside the mapping (checked); the chunk is owned by the
        // caller (handed over by the RX ring) until it goes back to the fill ring.
        Some(unsafe { std::slice::from_raw_parts(self.base.add(a), len) })
    }

    /// Copies `frame` into the chunk at `addr` (owned by the caller: taken from the free
    /// TX chunks).
    pub(super) fn write(&self, addr: u64, frame: &[u8]) {
        let a = addr as usize;
        assert!(a + frame.len() <= self.len && frame.len() <= self.chunk);
        // SAFETY: the destination is inside the mapping (asserted) and owned by the caller;
        // the source is a separate buffer.
        unsafe { std::ptr::copy_nonoverlapping(frame.as_ptr(), self.base.add(a), frame.len()) };
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping; the sockets using it are closed first (the
        // owners drop their rings and sockets before the UMEM).
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// Which of the socket's rings a [`Ring`] is.
#[derive(Clone, Copy)]
pub(super) enum RingKind {
    Rx,
    Tx,
    Fill,
    Completion,
}

/// One mapped ring of `T` entries (`u64` addresses for fill/completion, [`XdpDesc`] for
/// RX/TX). Single-threaded on our side: the owner is the only user-space producer or
/// consumer. `cached` is our own index (producer for fill/TX, consumer for RX/completion).
pub(super) struct Ring<T> {
    map: *mut u8,
    map_len: usize,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    desc: *mut T,
    mask: u32,
    size: u32,
}

// SAFETY: the ring is used by one thread at a time (its owner); the kernel side is
// synchronised through the atomic indices.
unsafe impl<T> Send for Ring<T> {}

fn mmap_offsets(fd: &OwnedFd) -> Why<MmapOffsets> {
    let mut off = MmapOffsets::default();
    let mut len = std::mem::size_of::<MmapOffsets>() as libc::socklen_t;
    // SAFETY: off and len are valid out-parameters of the sizes given.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            SOL_XDP,
            XDP_MMAP_OFFSETS,
            (&mut off as *mut MmapOffsets).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(os_err("XDP_MMAP_OFFSETS"));
    }
    if (len as usize) < std::mem::size_of::<MmapOffsets>() {
        // Kernels before 5.4 have no flags word: need_wakeup is then unknown, and we
        // always kick, so the flags offset is not used; refuse only shorter answers.
        return Err((
            DocaError::NOT_SUPPORTED,
            "XDP_MMAP_OFFSETS: kernel too old (no ring flags)".into(),
        ));
    }
    Ok(off)
}

impl<T> Ring<T> {
    /// Sizes ring `kind` of `fd` to `size` entries (a power of two) and maps it.
    pub(super) fn create(fd: &OwnedFd, kind: RingKind, size: u32) -> Why<Ring<T>> {
        let (opt, pgoff, name) = match kind {
            RingKind::Rx => (XDP_RX_RING, XDP_PGOFF_RX_RING, "XDP_RX_RING"),
            RingKind::Tx => (XDP_TX_RING, XDP_PGOFF_TX_RING, "XDP_TX_RING"),
            RingKind::Fill => (
                XDP_UMEM_FILL_RING,
                XDP_UMEM_PGOFF_FILL_RING,
                "XDP_UMEM_FILL_RING",
            ),
            RingKind::Completion => (
                XDP_UMEM_COMPLETION_RING,
                XDP_UMEM_PGOFF_COMPLETION_RING,
                "XDP_UMEM_COMPLETION_RING",
            ),
        };
        setsockopt(fd, opt, &size, name)?;
        let offs = mmap_offsets(fd)?;
        let o = match kind {
            RingKind::Rx => offs.rx,
            RingKind::Tx => offs.tx,
            RingKind::Fill => offs.fr,
            RingKind::Completion => offs.cr,
        };
        let map_len = o.desc as usize + size as usize * std::mem::size_of::<T>();
        // SAFETY: maps the ring the kernel allocated for this socket at its page offset.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                pgoff,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(os_err("mmap(XDP ring)"));
        }
        let map: *mut u8 = map.cast();
        // SAFETY: the offsets come from the kernel and lie inside the mapping.
        let (producer, consumer, flags, desc) = unsafe {
            (
                map.add(o.producer as usize).cast::<AtomicU32>(),
                map.add(o.consumer as usize).cast::<AtomicU32>(),
                map.add(o.flags as usize).cast::<AtomicU32>(),
                map.add(o.desc as usize).cast::<T>(),
            )
        };
        Ok(Ring {
            map,
            map_len,
            producer,
            consumer,
            flags,
            desc,
            mask: size - 1,
            size,
        })
    }

    fn idx(p: *const AtomicU32) -> &'static AtomicU32 {
        // SAFETY: p points into the ring mapping, which lives as long as the ring; the
        // 'static lifetime never escapes the methods below.
        unsafe { &*p }
    }

    /// Entries the kernel has produced that we have not consumed (RX, completion).
    pub(super) fn ready(&self) -> u32 {
        let prod = Self::idx(self.producer).load(Ordering::Acquire);
        let cons = Self::idx(self.consumer).load(Ordering::Relaxed);
        prod.wrapping_sub(cons)
    }

    /// Free entries we may produce (fill, TX).
    pub(super) fn free(&self) -> u32 {
        let prod = Self::idx(self.producer).load(Ordering::Relaxed);
        let cons = Self::idx(self.consumer).load(Ordering::Acquire);
        self.size - prod.wrapping_sub(cons)
    }

    /// Entries we produced that the kernel has not consumed yet (TX).
    pub(super) fn outstanding(&self) -> u32 {
        self.size - self.free()
    }

    /// Entry `i` of the next ones to consume (`i` < `ready()`).
    pub(super) fn peek(&self, i: u32) -> T
    where
        T: Copy,
    {
        let cons = Self::idx(self.consumer).load(Ordering::Relaxed);
        // SAFETY: the index is masked into the ring; the kernel wrote the entry before
        // publishing its producer index (acquired in `ready`).
        unsafe {
            self.desc
                .add((cons.wrapping_add(i) & self.mask) as usize)
                .read_volatile()
        }
    }

    /// Gives `n` consumed entries back to the kernel.
    pub(super) fn release(&self, n: u32) {
        let c = Self::idx(self.consumer);
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Release);
    }

    /// Writes entry `i` of the next ones to produce (`i` < `free()`).
    pub(super) fn put(&self, i: u32, v: T) {
        let prod = Self::idx(self.producer).load(Ordering::Relaxed);
        // SAFETY: the index is masked into the ring; the slot is ours until we publish.
        unsafe {
            self.desc
                .add((prod.wrapping_add(i) & self.mask) as usize)
                .write_volatile(v)
        };
    }

    /// Publishes `n` produced entries to the kernel.
    pub(super) fn submit(&self, n: u32) {
        let p = Self::idx(self.producer);
        p.store(p.load(Ordering::Relaxed).wrapping_add(n), Ordering::Release);
    }

    /// The ring's flags word (`XDP_RING_NEED_WAKEUP`).
    #[allow(dead_code)]
    pub(super) fn flags(&self) -> u32 {
        Self::idx(self.flags).load(Ordering::Acquire)
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping of the ring.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// The kernel's counters of socket `fd` (all zero when they cannot be read).
pub(super) fn statistics(fd: RawFd) -> XdpStats {
    let mut s = XdpStats::default();
    let mut len = std::mem::size_of::<XdpStats>() as libc::socklen_t;
    // SAFETY: s and len are valid out-parameters of the sizes given; a kernel with fewer
    // fields fills a prefix.
    let r = unsafe {
        libc::getsockopt(
            fd,
            SOL_XDP,
            XDP_STATISTICS,
            (&mut s as *mut XdpStats).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return XdpStats::default();
    }
    s
}
