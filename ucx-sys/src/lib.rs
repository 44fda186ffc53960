//! # ucx-sys: UCX bindings in three layers
//!
//! As cudarc keeps its CUDA driver bindings:
//!
//! * [`sys`], the raw layer: the UCP declarations bindgen generates from the UCX headers
//!   found at build time (`UCX_HOME`, else pkg-config `ucx`; at least 1.15), and the
//!   run-time loader they go through ([`library`], [`build_libdir`]). Unsafe, C types, raw
//!   `ucs_status_t` codes; for callers that need UCP calls the safe layer does not cover
//!   (doca-soft's software NIC).
//! * [`result`]: UCX status codes as Rust results. [`Status`] names and describes a code,
//!   [`Error`] names the failed call and its status, [`ptr_is_err`] reads a
//!   `ucs_status_ptr_t`.
//! * [`safe`]: owned handles over what the workspace needs: [`Context`], [`Worker`],
//!   [`Listener`], [`Endpoint`] with byte streams, [`Request`], [`MemMap`], and
//!   [`check_version`]. Every failure is an [`Error`].
//!
//! The crate root re-exports the safe layer, the result types and the loader's answers, so
//! `ucx_sys::Context` and `ucx_sys::safe::Context` are the same type.
//!
//! ## Quick start
//!
//! Two workers of one process, a listener on loopback, bytes both ways:
//!
//! ```
//! use ucx_sys::{check_version, Context, Endpoint, Features, Listener, Sent, ThreadMode, Worker};
//! use std::time::{Duration, Instant};
//!
//! check_version()?;
//! let ctx = Context::builder()
//!     .features(Features::STREAM | Features::WAKEUP)
//!     .config_default("TLS", "tcp")
//!     .build()?;
//! let server = Worker::new(&ctx, ThreadMode::Serialized)?;
//! let listener = Listener::bind(&server, "127.0.0.1:0".parse().unwrap())?;
//! let client = Worker::new(&ctx, ThreadMode::Serialized)?;
//! let ep = Endpoint::connect(&client, listener.local_addr()?)?;
//! let mut pending = match ep.stream_send(b"hello".to_vec()) {
//!     Sent::Done(_) => None,
//!     Sent::Pending(p) => Some(p),
//!     Sent::Failed(e, _) => return Err(e.into()),
//! };
//! let (mut accepted, mut got) = (None, Vec::new());
//! let deadline = Instant::now() + Duration::from_secs(10);
//! while got.len() < 5 && Instant::now() < deadline {
//!     client.progress_all();
//!     server.progress_all();
//!     for req in listener.take_requests() {
//!         accepted = Some(Endpoint::accept(&server, req)?);
//!     }
//!     if let Some(a) = &accepted {
//!         while let Some(data) = a.stream_recv() {
//!             got.extend_from_slice(&data);
//!         }
//!     }
//!     pending = pending.filter(|p| !p.is_done());
//! }
//! assert_eq!(got, b"hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Threads
//!
//! A [`Context`] is `Send + Sync`. A [`Worker`] and what is made on it are neither: UCX
//! workers must not be used by two threads at once. A worker created
//! [`ThreadMode::Serialized`] may move to another thread together with everything made on
//! it; the owner of such a group asserts it with an `unsafe impl Send` on the struct holding
//! them (doca-soft's UROM transport does).
//!
//! ## Finding UCX
//!
//! At build time: `UCX_HOME`, `HPCX_UCX_DIR`, then pkg-config's `ucx`, at least 1.15; when
//! none fits, the build stops naming each place it looked and what it found there (the
//! system's run-time library too) and how to point it at another UCX (`UCX_HOME`,
//! `PKG_CONFIG_PATH`, HPC-X, Spack).
//!
//! At run time, on x86-64 Linux, this crate loads UCX itself ([`library`]): the UCX the
//! process already has, else one in `LD_LIBRARY_PATH`, else the one found at build time
//! (its directory recorded as an absolute path: [`build_libdir`]), else the system's. So
//! any binary that depends on this crate, directly or through others, runs with the UCX it
//! was built against, without an rpath or `LD_LIBRARY_PATH`; UCX's own libraries
//! (`libucs`, `libuct` and the transport modules) come from its directory. When an older
//! UCX is loaded anyway, [`check_version`] refuses it with a message naming both versions
//! and the file. Other targets link `libucp`/`libucs` at build time (an rpath for this
//! crate's own binaries). Dependants read the build's findings from the `links = "ucp"`
//! metadata: `DEP_UCP_INCLUDE`, `DEP_UCP_LIBDIR`, `DEP_UCP_VERSION`, `DEP_UCP_MIN_VERSION`.

pub mod result;
pub mod safe;
pub mod sys;

pub use result::{ptr_is_err, Error, Result, Status};
pub use safe::*;
pub use sys::{build_libdir, library, Found, Library, LoadError};
