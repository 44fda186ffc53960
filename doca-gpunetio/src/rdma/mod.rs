//! GPU-initiated RDMA (`doca_rdma` with its data path on the GPU): connections between
//! processes or machines whose work requests CUDA kernels post through the legacy device
//! API (`doca_gpunetio_dev_rdma.cuh`).
//!
//! # Quick start
//!
//! One side of DOCA's `gpunetio_rdma_client_server_write` (the server):
//!
//! ```no_run
//! use doca_gpunetio::rdma::{self, oob, GpuBufArr, Local, Rdma, Remote, RemoteMmap};
//! use doca_gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap};
//!
//! fn main() -> Result<(), doca_gpunetio::Error> {
//!     let dev = Device::open("soft_lo")?;
//!     let gpu = Gpu::by_ordinal(0)?;
//!     let rdma = Rdma::builder(&dev)
//!         .permissions(AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE)
//!         .send_queue_size(8192)
//!         .recv_queue_size(8192)
//!         .gpu_datapath(&gpu)
//!         .start()?;
//!     let mut peer = oob::OobStream::accept(oob::DEFAULT_PORT)?;
//!     // Connection details out, the peer's in, connect.
//!     let (ours, conn) = rdma.export()?;
//!     peer.send_blob(ours.as_bytes())?;
//!     rdma.connect(&conn, &peer.recv_blob()?)?;
//!     // Our buffer out, the peer's flag buffer in.
//!     let a = GpuBuffer::<u8>::with_alignment(&gpu, 4 * 256, 4096, MemType::GpuCpu)?;
//!     let perms = AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE;
//!     let a_map = Mmap::from_gpu_buffer(&a, &[&dev], perms)?;
//!     peer.send_blob(rdma::export_mmap(&a_map, &dev)?.as_bytes())?;
//!     let f_map = RemoteMmap::from_export(&dev, &peer.recv_blob()?)?;
//!     let a_arr = GpuBufArr::<Local>::new(&a_map, &gpu, 4, 256)?;
//!     let f_arr = GpuBufArr::<Remote>::new(&f_map, &gpu, 1, 4)?;
//!     // Kernel arguments: rdma.gpu_handle()?, a_arr.gpu_handle()?, f_arr.gpu_handle()?
//!     # let _ = (a_arr, f_arr);
//!     Ok(())
//! }
//! ```
//!
//! # Typing
//!
//! Buffer arrays are typed by where their memory is: [`GpuBufArr<Local>`] over an
//! [`Mmap`](crate::Mmap) of this process, [`GpuBufArr<Remote>`] over a [`RemoteMmap`] made
//! from a peer's export, and their device handles ([`BufArrHandle<Local>`],
//! [`BufArrHandle<Remote>`]) keep the distinction, so a typed kernel launcher cannot be
//! handed a local range where it writes to the peer.
//!
//! # Connections
//!
//! Out of band ([`Rdma::export`] / [`Rdma::connect`], the blobs moved by the program; the
//! [`oob`] module moves them the way DOCA's samples do), or through RDMA-CM
//! ([`RdmaBuilder::rdma_cm`]: [`Rdma::listen`] / [`Rdma::connect_to_addr`], progressed by a
//! [`ProgressEngine`](doca_common::ProgressEngine), requests accepted automatically,
//! [`Rdma::wait_established`]).

mod connect_args;
mod context;
mod memory;
pub mod oob;

pub use connect_args::*;
pub use context::*;
pub use memory::*;
