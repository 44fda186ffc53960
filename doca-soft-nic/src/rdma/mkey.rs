//! The process-wide memory-key registry: 32-bit keys (lkey = rkey in this NIC) for
//! registered ranges of host or GPU memory, each with its UCX registration and packed
//! remote key.
//!
//! Keys start at 0x1000 and only grow (a key is never reused in a process, so a peer's
//! cached key can never name a later registration); `MLX5_INVALID_LKEY` (0x100) and 0 are
//! never handed out. Keys from 0x8000_0000 on are the caller's to choose
//! ([`register_as`]: the C layer registers an mmap under its own mkey; a peer's cached key
//! of an earlier registration under the same key was revoked when it was deregistered). Lookups take a read lock; engines cache what they looked up and drop
//! their cache when [`generation`] moves (every deregistration bumps it).
//!
//! GPU memory is registered as UCX CUDA memory (UCX then moves it with its CUDA
//! transports). Where the proxy itself must touch memory the CPU cannot address (the value
//! an atomic fetched, when its result buffer is device memory; the target word of an
//! atomic in device memory), it goes through the [`DeviceMemory`] accessor the C layer
//! installs ([`set_device_memory`]); without one, such operations fail with an error
//! completion.

use super::ucp::{self, MemHandle};
use crate::error::{DocaError, DocaResult};
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Access rights of a registration (the ibverbs bit values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Access(pub u32);

impl Access {
    /// Local writes (receives, read results, fetched values land here).
    pub const LOCAL_WRITE: Access = Access(1);
    /// Peers may write.
    pub const REMOTE_WRITE: Access = Access(2);
    /// Peers may read.
    pub const REMOTE_READ: Access = Access(4);
    /// Peers may run atomics.
    pub const REMOTE_ATOMIC: Access = Access(8);

    /// Whether every bit of `other` is set.
    pub fn has(self, other: Access) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Access {
    type Output = Access;
    fn bitor(self, o: Access) -> Access {
        Access(self.0 | o.0)
    }
}

/// Where registered memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// Memory the CPU addresses directly (malloc, pinned or device-mapped host memory).
    Host,
    /// CUDA device memory (only UCX's CUDA transports and the device writer reach it).
    Cuda,
}

/// One registration.
pub struct Region {
    /// The key.
    pub key: u32,
    /// First byte.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// Rights.
    pub access: Access,
    /// Host or device memory.
    pub kind: MemKind,
    /// The UCX registration.
    pub memh: MemHandle,
    /// The packed remote key peers unpack.
    pub packed: Vec<u8>,
}

impl Region {
    /// Whether `[addr, addr + len)` lies inside the region (`len` 0: `addr` within or at
    /// the end).
    pub(crate) fn covers(&self, addr: u64, len: u64) -> bool {
        match addr.checked_add(len) {
            Some(end) => addr >= self.addr && end <= self.addr + self.len,
            None => false,
        }
    }
}

/// Reads and writes device memory the CPU cannot address (the C layer implements it with
/// CUDA copies).
pub trait DeviceMemory: Send + Sync {
    /// Copies `out.len()` bytes from device address `src`.
    fn read(&self, src: u64, out: &mut [u8]) -> DocaResult<()>;
    /// Copies `bytes` to device address `dst`.
    fn write(&self, dst: u64, bytes: &[u8]) -> DocaResult<()>;
    /// Makes the context of the GPU of the latest CUDA registration current on the calling
    /// thread (UCX's CUDA transports run their copies in the caller's current context).
    /// The returned value keeps the context held; drop it when the thread ends.
    fn bind_thread(&self) -> DocaResult<Box<dyn Send>>;
}

/// A 64-bit atomic the target of an atomic WQE executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Add, return the old value.
    FetchAdd(u64),
    /// If the word equals `compare`, store `swap`; return the old value.
    CompareSwap { compare: u64, swap: u64 },
}

struct Registry {
    regions: RwLock<HashMap<u32, Arc<Region>>>,
    next: AtomicU32,
    revoked: RevocationLog,
    device: RwLock<Option<Arc<dyn DeviceMemory>>>,
    // Serialises read-modify-write atomics on device memory.
    device_atomics: std::sync::Mutex<()>,
    // Counts CUDA registrations; the proxy threads bind the GPU context of the latest one
    // when it moves (see `bind_device_context`).
    cuda_epoch: AtomicU64,
}

static REGISTRY: Lazy<Registry> = Lazy::new(|| Registry {
    regions: RwLock::new(HashMap::new()),
    next: AtomicU32::new(0x1000),
    revoked: RevocationLog::default(),
    device: RwLock::new(None),
    device_atomics: std::sync::Mutex::new(()),
    cuda_epoch: AtomicU64::new(0),
});

/// The generation counter and the latest deregistrations, which engines read to tell their
/// peers. The counter moves only while the log's lock is held, together with the entry it
/// numbers: a reader that sees generation `g` under the lock also sees every key up to `g`.
/// (Bumping it before taking the lock let an engine read the new generation, find no key
/// for it yet, and skip that key for good: its peers kept the stale key cached.)
#[derive(Default)]
struct RevocationLog {
    generation: AtomicU64,
    // (generation after, key) of the latest deregistrations, oldest first.
    keys: std::sync::Mutex<std::collections::VecDeque<(u64, u32)>>,
}

impl RevocationLog {
    /// Records that `key` is gone: the generation moves on.
    fn record(&self, key: u32) {
        let mut r = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        let g = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        if r.len() == REVOKED_KEPT {
            r.pop_front();
        }
        r.push_back((g, key));
    }

    /// See [`revoked_since`].
    fn since(&self, since: u64) -> (Option<Vec<u32>>, u64) {
        let r = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.generation();
        if now == since {
            return (Some(Vec::new()), now);
        }
        let complete = r.front().is_some_and(|&(g, _)| g <= since + 1);
        let keys = complete.then(|| {
            r.iter()
                .filter(|&&(g, _)| g > since)
                .map(|&(_, k)| k)
                .collect()
        });
        (keys, now)
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

/// A live registration; deregistered when dropped (UCX unmaps it once the last operation
/// using it has let go).
pub struct Registration {
    region: Arc<Region>,
}

impl Registration {
    /// The key (tests; the C layer reads `region().key`).
    #[cfg(any(test, feature = "testing"))]
    pub fn key(&self) -> u32 {
        self.region.key
    }

    /// The registered region.
    pub(crate) fn region(&self) -> &Arc<Region> {
        &self.region
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        {
            let mut map = REGISTRY.regions.write().unwrap_or_else(|p| p.into_inner());
            map.remove(&self.region.key);
            // Still under the map's lock: an engine that sees the new generation finds the
            // key gone from the map (its local cache relies on that order).
            REGISTRY.revoked.record(self.region.key);
        }
        // Engines look at the generation once per round; one asleep (no QP) would not
        // tell its peers until something else woke it.
        super::shared::wake_all();
    }
}

/// Registers `[addr, addr + len)`.
pub fn register(addr: u64, len: u64, access: Access, kind: MemKind) -> DocaResult<Registration> {
    if !valid_range(addr, len, access) {
        return Err(DocaError::INVALID_VALUE);
    }
    let mut region = map_region(addr, len, access, kind)?;
    region.key = loop {
        let k = REGISTRY.next.fetch_add(1, Ordering::Relaxed);
        if (0x1000..CALLER_KEYS).contains(&k) {
            break k;
        }
        if k >= CALLER_KEYS {
            // 2^31 registrations in one process: start over (older keys are long gone).
            REGISTRY.next.store(0x1000, Ordering::Relaxed);
        }
    };
    let region = Arc::new(region);
    REGISTRY
        .regions
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(region.key, region.clone());
    Ok(Registration { region })
}

/// Whether `[addr, addr + len)` and `access` may be registered.
fn valid_range(addr: u64, len: u64, access: Access) -> bool {
    addr != 0 && len != 0 && addr.checked_add(len).is_some() && access.0 & !0xf == 0
}

/// Maps `[addr, addr + len)` for UCX (a CUDA mapping starts a new CUDA epoch): its region,
/// whose key the caller sets.
fn map_region(addr: u64, len: u64, access: Access, kind: MemKind) -> DocaResult<Region> {
    let (memh, packed) = ucp::context()?.mem_map(addr, len, kind == MemKind::Cuda)?;
    if kind == MemKind::Cuda {
        REGISTRY.cuda_epoch.fetch_add(1, Ordering::AcqRel);
    }
    Ok(Region {
        key: 0,
        addr,
        len,
        access,
        kind,
        memh,
        packed,
    })
}

/// Keys from here on are chosen by callers ([`register_as`]); [`register`] hands out
/// keys below.
pub const CALLER_KEYS: u32 = 0x8000_0000;

/// Registers `[addr, addr + len)` under `key` (at least [`CALLER_KEYS`]): the C layer
/// gives an mmap's own mkey, so the keys programs read from the mmap name this
/// registration. ALREADY_EXIST while `key` is registered.
pub fn register_as(
    key: u32,
    addr: u64,
    len: u64,
    access: Access,
    kind: MemKind,
) -> DocaResult<Registration> {
    if key < CALLER_KEYS || !valid_range(addr, len, access) {
        return Err(DocaError::INVALID_VALUE);
    }
    if lookup(key).is_some() {
        return Err(DocaError::ALREADY_EXIST);
    }
    let region = Arc::new(Region {
        key,
        ..map_region(addr, len, access, kind)?
    });
    let mut map = REGISTRY.regions.write().unwrap_or_else(|p| p.into_inner());
    if map.contains_key(&key) {
        return Err(DocaError::ALREADY_EXIST);
    }
    map.insert(key, region.clone());
    Ok(Registration { region })
}

/// The registration of `key`, if it is live.
pub fn lookup(key: u32) -> Option<Arc<Region>> {
    REGISTRY
        .regions
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned()
}

/// How many deregistrations [`revoked_since`] remembers.
const REVOKED_KEPT: usize = 4096;

/// The keys deregistered after generation `since`, and the current generation; `None` for
/// the keys when more happened than are remembered (then every key may be gone).
pub(crate) fn revoked_since(since: u64) -> (Option<Vec<u32>>, u64) {
    REGISTRY.revoked.since(since)
}

/// Moves on every deregistration (caches compare it).
pub(crate) fn generation() -> u64 {
    REGISTRY.revoked.generation()
}

/// Installs (or removes) the accessor for device memory.
pub fn set_device_memory(d: Option<Arc<dyn DeviceMemory>>) {
    *REGISTRY.device.write().unwrap_or_else(|p| p.into_inner()) = d;
}

/// How many CUDA registrations the process made (0 when none): a proxy thread compares
/// it with what it saw when it last bound a context.
pub(crate) fn cuda_epoch() -> u64 {
    REGISTRY.cuda_epoch.load(Ordering::Acquire)
}

/// Makes the context of the GPU of the latest CUDA registration current on the calling
/// thread. UCX executes puts, gets and active-message data on CUDA memory in the calling
/// thread's current context; a proxy thread has none of its own.
pub(crate) fn bind_device_context() -> DocaResult<Box<dyn Send>> {
    device()?.bind_thread()
}

fn device() -> DocaResult<Arc<dyn DeviceMemory>> {
    REGISTRY
        .device
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .ok_or_else(|| {
            sdk_err!(
                "nic",
                "device memory touched by the proxy, but no device accessor is installed"
            );
            DocaError::NOT_SUPPORTED
        })
}

/// Writes `bytes` at `dst` inside `region` (host memory directly, device memory through
/// the accessor). The caller checked the range and the right.
pub(crate) fn write_local(region: &Region, dst: u64, bytes: &[u8]) -> DocaResult<()> {
    if !region.covers(dst, bytes.len() as u64) {
        return Err(DocaError::INVALID_VALUE);
    }
    match region.kind {
        MemKind::Host => {
            // SAFETY: the range lies inside a live registration of host memory, which its
            // owner gave the NIC to write (LOCAL_WRITE checked by the caller).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, bytes.len()) };
            Ok(())
        }
        MemKind::Cuda => device()?.write(dst, bytes),
    }
}

/// Runs `op` on the 64-bit word at `addr` (8-byte aligned, inside `region`) and returns the
/// old value. Host memory: a CPU atomic (atomic with respect to every other CPU or GPU
/// system-scope atomic on that word). Device memory: read-modify-write through the
/// accessor, atomic with respect to the other NIC atomics of this process only.
pub(crate) fn atomic64(region: &Region, addr: u64, op: AtomicOp) -> DocaResult<u64> {
    if !addr.is_multiple_of(8) || !region.covers(addr, 8) {
        return Err(DocaError::INVALID_VALUE);
    }
    match region.kind {
        MemKind::Host => {
            // SAFETY: an aligned word inside a live registration of host memory that its
            // owner opened to remote atomics (checked by the caller).
            let w = unsafe { &*(addr as *const std::sync::atomic::AtomicU64) };
            Ok(match op {
                AtomicOp::FetchAdd(v) => w.fetch_add(v, Ordering::SeqCst),
                AtomicOp::CompareSwap { compare, swap } => {
                    match w.compare_exchange(compare, swap, Ordering::SeqCst, Ordering::SeqCst) {
                        Ok(old) | Err(old) => old,
                    }
                }
            })
        }
        MemKind::Cuda => {
            let d = device()?;
            let _g = REGISTRY
                .device_atomics
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let mut b = [0u8; 8];
            d.read(addr, &mut b)?;
            let old = u64::from_ne_bytes(b);
            let new = match op {
                AtomicOp::FetchAdd(v) => Some(old.wrapping_add(v)),
                AtomicOp::CompareSwap { compare, swap } => (old == compare).then_some(swap),
            };
            if let Some(n) = new {
                d.write(addr, &n.to_ne_bytes())?;
            }
            Ok(old)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_lookups_follow_registration_and_bounds_are_checked() {
        let buf = vec![0u8; 8192];
        let a = buf.as_ptr() as u64;
        let r1 = register(
            a,
            4096,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE,
            MemKind::Host,
        )
        .expect("register");
        let r2 = register(a + 4096, 4096, Access::REMOTE_READ, MemKind::Host).expect("register");
        assert_ne!(r1.key(), r2.key());
        assert!(r1.key() >= 0x1000 && r2.key() >= 0x1000);
        let g = lookup(r1.key()).expect("live");
        assert_eq!((g.addr, g.len), (a, 4096));
        assert!(g.covers(a, 4096));
        assert!(g.covers(a + 4095, 1));
        assert!(!g.covers(a + 4095, 2));
        assert!(!g.covers(a - 1, 1));
        assert!(!g.covers(u64::MAX, 2));
        assert!(!g.packed.is_empty());
        let gen = generation();
        let k1 = r1.key();
        drop(r1);
        assert!(lookup(k1).is_none());
        assert!(generation() > gen);
        assert!(lookup(r2.key()).is_some());
        assert_eq!(
            register(0, 10, Access::default(), MemKind::Host).err(),
            Some(DocaError::INVALID_VALUE)
        );
        assert_eq!(
            register(a, 0, Access::default(), MemKind::Host).err(),
            Some(DocaError::INVALID_VALUE)
        );
        assert_eq!(
            register(a, 10, Access(0x10), MemKind::Host).err(),
            Some(DocaError::INVALID_VALUE)
        );
    }

    /// Engines poll the log while deregistrations go on in other threads; every key must
    /// reach them. (The generation used to move before the key was logged: a poll in
    /// between consumed the generation without the key, which no later poll returned.)
    #[test]
    fn every_revoked_key_reaches_a_concurrent_reader() {
        // The window was a few instructions wide: many short rounds give it many chances.
        for _ in 0..200 {
            revoked_keys_reach_a_concurrent_reader();
        }
    }

    fn revoked_keys_reach_a_concurrent_reader() {
        const WRITERS: u32 = 4;
        const EACH: u32 = 1000; // WRITERS * EACH < REVOKED_KEPT: the log never overflows
        let log = Arc::new(RevocationLog::default());
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (log, done) = (log.clone(), done.clone());
            std::thread::spawn(move || {
                let mut seen = 0u64;
                let mut keys = Vec::new();
                loop {
                    let finished = done.load(Ordering::Acquire);
                    if log.generation() != seen {
                        let (k, now) = log.since(seen);
                        keys.extend(k.expect("the log kept every key"));
                        seen = now;
                    }
                    if finished {
                        return keys;
                    }
                    std::hint::spin_loop();
                }
            })
        };
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let log = log.clone();
                std::thread::spawn(move || {
                    for i in 0..EACH {
                        log.record(w * EACH + i);
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Release);
        let got = reader.join().unwrap();
        let keys: std::collections::BTreeSet<u32> = got.iter().copied().collect();
        let missed: Vec<u32> = (0..WRITERS * EACH).filter(|k| !keys.contains(k)).collect();
        assert!(missed.is_empty(), "keys never reported: {missed:?}");
        assert_eq!(got.len(), keys.len(), "a key reported twice");
        assert_eq!(log.generation(), u64::from(WRITERS * EACH));
    }

    #[test]
    fn host_atomics_return_the_old_value_and_check_alignment() {
        let buf = [0u64; 4];
        let a = buf.as_ptr() as u64;
        let r = register(a, 32, Access::REMOTE_ATOMIC, MemKind::Host).expect("register");
        let g = r.region().clone();
        assert_eq!(atomic64(&g, a + 8, AtomicOp::FetchAdd(5)), Ok(0));
        assert_eq!(atomic64(&g, a + 8, AtomicOp::FetchAdd(2)), Ok(5));
        assert_eq!(
            atomic64(
                &g,
                a + 8,
                AtomicOp::CompareSwap {
                    compare: 6,
                    swap: 1
                }
            ),
            Ok(7)
        );
        assert_eq!(
            atomic64(
                &g,
                a + 8,
                AtomicOp::CompareSwap {
                    compare: 7,
                    swap: 1
                }
            ),
            Ok(7)
        );
        // SAFETY: reading our own vector after the NIC-style atomics.
        assert_eq!(unsafe { std::ptr::read_volatile(buf.as_ptr().add(1)) }, 1);
        assert!(
            atomic64(&g, a + 4, AtomicOp::FetchAdd(1)).is_err(),
            "misaligned"
        );
        assert!(
            atomic64(&g, a + 32, AtomicOp::FetchAdd(1)).is_err(),
            "outside"
        );
        let dev = register(a, 32, Access::REMOTE_ATOMIC, MemKind::Host).expect("register");
        let mut cuda_like = Region {
            key: 0,
            addr: a,
            len: 32,
            access: Access::REMOTE_ATOMIC,
            kind: MemKind::Cuda,
            memh: ucp::context().unwrap().mem_map(a, 32, false).unwrap().0,
            packed: Vec::new(),
        };
        cuda_like.key = dev.key();
        set_device_memory(None);
        assert_eq!(
            atomic64(&cuda_like, a, AtomicOp::FetchAdd(1)),
            Err(DocaError::NOT_SUPPORTED)
        );
    }
}
