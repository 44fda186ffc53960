//! The soft NIC: a proxy thread that plays a ConnectX for GPU-initiated RDMA (DOCA GPU
//! verbs, and DOCA RDMA's GPU datapath, which runs on the same rings). CUDA kernels write
//! mlx5 work requests and doorbells exactly as DOCA 3.3's device helpers do (reference
//! facts §3.12); the proxy reads them, executes them between processes with UCX, and writes
//! mlx5 CQEs that the kernels poll.
//!
//! # Pieces
//!
//! | file | what |
//! |---|---|
//! | `api.rs` | the handles the C layer holds: [`Nic`], [`Cq`], [`Rq`], [`Qp`], events, counters |
//! | `engine/` | the proxy thread: the loop (`mod.rs`), commands (`commands.rs`), sleeping (`idle.rs`) |
//! | `sq/` | the send side: WQEs in index order (`issue.rs` starts one), UCX operations, in-order CQEs, errors |
//! | `rq.rs` | the receive side: posted receives, the bounded unexpected queue, receive CQEs |
//! | `peer.rs` | connections between NICs (handshake, endpoints) and the remote-key cache |
//! | `ring.rs`, `cq_ring.rs` | the work rings and doorbells it reads, the CQ rings it writes (the mlx5 byte formats are `doca_soft_packet::mlx5`) |
//! | `gid.rs` | the GID, `doca_rdma_export` and `doca_mmap_export_rdma` blob formats |
//! | `mkey.rs`, `local.rs` | the process-wide memory-key registry (lkey = rkey), the engine's cache of it |
//! | `wire.rs` | the messages NICs exchange |
//! | `ucp.rs`, `ucp_am.rs` | every UCX call (the only files using `crate::ucx::sys`) |
//! | `host.rs`, `bench.rs` | the CPU playing the GPU (tests), the benchmark entry point |
//!
//! # Memory the engine is given
//!
//! The C layer allocates the rings (host-pinned, device-mapped memory: the GPU writes WQEs
//! and doorbells across PCIe, the proxy reads them in place, and the CQEs it writes are read
//! by GPU pollers) and hands the engine raw addresses and sizes: the SQ ring (64-byte slots),
//! the RQ ring (16-byte slots) with its doorbell record, the CQ rings (64-byte CQEs,
//! initialised to `op_own` 0xF1), and the SQ doorbell in the form the QP's NIC handler
//! writes ([`SqDoorbell`]: the CPU-proxy slot, the DBR word, or the DB register image).
//! Nothing is copied: the memory must outlive the handle built on it.
//!
//! # What is executed
//!
//! RDMA write (+ immediate, + inline), RDMA read, 64-bit fetch-add and compare-swap, send
//! (+ immediate, + inline), WAIT (core-direct: the queue stops until the named CQ produced
//! the awaited CQE), DUMP and NOP (complete in order). One CQE per WQE that asks for one
//! (CE = CQE always), `REQ` for successes; error CQEs (`REQ_ERR` 0xD / `RESP_ERR` 0xE with a
//! syndrome) always: unknown key or range outside a registration (`LOCAL_PROT` /
//! `REMOTE_ACCESS`), peer gone (`TRANSPORT_RETRY_EXC`), malformed WQE or bad doorbell
//! (`LOCAL_QP_OP`), receive too small (`LOCAL_LENGTH`), no receive and no room
//! (`RNR_RETRY_EXC`); then the QP is in error and every later WQE completes with
//! `WR_FLUSH`. A destroyed QP flushes what its ring still holds the same way.
//!
//! # Ordering and visibility
//!
//! WQEs of one SQ start in index order and complete in index order. A write's CQE waits
//! for an endpoint flush issued after it (remote visibility); a send (and the notification
//! of a write with immediate) leaves only after earlier writes are flushed, and its CQE
//! waits for the peer's ACK, sent once the data sits in a posted receive; changes between
//! writes, reads and atomics are separated by `ucp_worker_fence`. Fetched atomic values are
//! written to their result buffers in WQE order, at completion. UCX keeps active messages
//! of one endpoint in order, which is what keeps receives FIFO.
//!
//! Atomics (refining the first plan of `ucp_atomic_op_nbx`): the target's proxy executes
//! them (ATOMIC / ATOMIC_REP messages), with a CPU atomic on host memory or a
//! read-modify-write through the device accessor on GPU memory. UCX 1.22's protocols offer
//! no atomic protocol on the TCP-only endpoints UCX selects here ("cannot find remote
//! protocol ... amo_fetch"), and a UCX software atomic on device memory would be a CPU
//! access to a GPU address in the target process. Messages of one endpoint stay in order,
//! so atomics to one word run in WQE order, and the target checks key, range, right and
//! alignment itself. An atomic leaves after earlier writes are flushed.
//!
//! # Keys
//!
//! One registry per process (`mkey`): registering memory maps it into UCX (device memory
//! as CUDA memory) and packs its remote key. A peer resolves an unknown 32-bit rkey by
//! asking (KEY_REQ / KEY_REP) the first time a WQE names it; memory blobs pre-seed that
//! cache ([`Nic::export_memory`], [`Nic::import_remote_key`]); deregistration revokes the
//! key at every peer (KEY_REVOKE). The proxy touches device memory itself only for
//! atomics (the target word, the fetched value), through the accessor the C layer installs
//! ([`mkey::set_device_memory`]).
//!
//! # Connections and peers
//!
//! Each NIC instance listens on its device's IPv4 address (127.0.0.1 for `lo`) on an
//! ephemeral port; its GID carries address, port and a random instance id (`gid`). A QP
//! connect reaches the peer's listener once per peer NIC, then both sides switch to
//! endpoints made from each other's full worker address (shared memory or CUDA IPC on one
//! host, TCP or RDMA between hosts). Endpoints use UCX's peer error handling: a peer whose
//! process exits is noticed (at once over TCP, within about two keepalive intervals of 1 s
//! otherwise), every QP to it completes what it holds with errors, and
//! `Nic::take_events` reports it.
//!
//! Measured with UCX 1.22 on a machine without RDMA devices: peer error handling admits
//! only transports that report peer failures, so UCX picks TCP (over `lo` between two
//! processes) and leaves out sysv/posix/cma, which it does choose for the same endpoints
//! without error handling. Error handling stays on (without it a vanished peer makes UCX
//! hang or abort the process); whether CUDA IPC is admitted is for `UCX_PROTO_INFO=y` on a
//! machine with a GPU to tell.
//!
//! # Threads and sleeping
//!
//! One proxy thread per NIC owns the UCX worker and every queue; handles talk to it with
//! commands. Environment: `DOCA_SOFT_NIC_SPIN_US` (default 50) and `DOCA_SOFT_NIC_SLEEP_US`
//! (default 100) tune the idle loop, `DOCA_SOFT_NIC_CONNECT_MS` (default 20 000) bounds a
//! connection attempt; `UCX_KEEPALIVE_INTERVAL` (default here 1 s) and the
//! usual `UCX_*` variables reach UCX. It never waits for the application: GPU doorbells are polled, with a short
//! spin after activity and bounded sleeps afterwards while QPs exist (see `engine/` for
//! `DOCA_SOFT_NIC_SPIN_US` / `DOCA_SOFT_NIC_SLEEP_US`). The steady path allocates nothing:
//! per-WQE state lives in slots allocated with the QP, keys are cached.

mod api;
#[cfg(test)]
mod bench;
mod cq_ring;
mod engine;
mod gid;
/// The CPU playing the GPU: host-memory QPs, WQE builders and CQE readers (the engine's
/// tests and the testing hooks of the crates above).
#[cfg(any(test, feature = "testing"))]
pub mod host;
mod local;
mod mkey;
mod peer;
mod ring;
mod rq;
mod shared;
mod sq;
pub(crate) mod ucp;
mod ucp_am;
mod wire;

#[cfg(test)]
mod tests;

pub use api::{Cq, Nic, NicEvent, Qp, QpState, Rq, Stats, WeakNic};
#[cfg(test)]
pub use bench::WriteBench;
pub use gid::{ConnInfo, Gid, MemExport, CONN_BLOB_LEN};
pub use mkey::{Access, AtomicOp, DeviceMemory, MemKind, Registration};
pub use ring::SqDoorbell;
pub use rq::{MAX_UNEXPECTED, MAX_UNEXPECTED_BYTES};

/// The memory-key registry.
pub mod keys {
    pub use super::mkey::{lookup, register, register_as, set_device_memory, CALLER_KEYS};
}
