//! # urom-mpi: UROM domains over MPI
//!
//! A UROM [`Domain`](doca::urom::Domain) joins the workers of several processes through an
//! out-of-band all-gather, the [`Oob`] trait. [`MpiOob`] implements it with MPI's
//! `MPI_Allgather` on any communicator, through the `mpi` crate (rsmpi), which binds MPI's
//! standard C API: Open MPI, MPICH and their derivatives all work, with no knowledge of an
//! implementation's ABI.
//!
//! ```no_run
//! use doca::urom::domain::Oob;
//! use mpi::Threading;
//! use std::sync::Arc;
//! use urom_mpi::MpiOob;
//!
//! let (universe, threading) = mpi::initialize_with_threading(Threading::Single).unwrap();
//! let oob: Arc<dyn Oob> = Arc::new(MpiOob::new(universe.world(), threading));
//! println!("rank {} of {}", oob.index(), oob.size());
//! // Domain::start(&pe, &workers, oob, buffers) all-gathers through MPI.
//! ```
//!
//! The `urom_ping_pong` binary of this crate is the UROM ping-pong sample built on it:
//! `mpirun -np 2 urom_ping_pong -d lo -m "hello"` against a running UROM daemon.

use doca::common::DocaError;
use doca::urom::domain::Oob;
use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;
use mpi::Threading;
use std::thread::ThreadId;

/// A UROM domain's out-of-band collective over an MPI communicator.
///
/// The [`Oob`] trait asks for `Send + Sync`. Unless MPI was initialised with
/// `MPI_THREAD_MULTIPLE`, MPI may only be called from one thread: then `allgather` works
/// only on the thread that made this value, and fails with `DOCA_ERROR_BAD_STATE`
/// elsewhere, never calling MPI from a second thread.
pub struct MpiOob<C: Communicator> {
    comm: C,
    rank: u32,
    size: u32,
    /// The one thread allowed to call MPI, or `None` with `MPI_THREAD_MULTIPLE`.
    owner: Option<ThreadId>,
}

// SAFETY: every MPI call made through this value (allgather) first checks that it runs on
// `owner`, the thread that created it, unless MPI is fully thread-safe (owner None); the
// communicator handle itself is plain data.
unsafe impl<C: Communicator> Send for MpiOob<C> {}
// SAFETY: as above.
unsafe impl<C: Communicator> Sync for MpiOob<C> {}

impl<C: Communicator> MpiOob<C> {
    /// An OOB over `comm`; `threading` is the level MPI was initialised with (what
    /// `mpi::initialize_with_threading` returned).
    pub fn new(comm: C, threading: Threading) -> MpiOob<C> {
        let (rank, size) = (comm.rank() as u32, comm.size() as u32);
        let owner = (threading != Threading::Multiple).then(|| std::thread::current().id());
        MpiOob {
            comm,
            rank,
            size,
            owner,
        }
    }

    /// The communicator.
    pub fn communicator(&self) -> &C {
        &self.comm
    }
}

impl<C: Communicator> Oob for MpiOob<C> {
    fn size(&self) -> u32 {
        self.size
    }

    fn index(&self) -> u32 {
        self.rank
    }

    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<(), DocaError> {
        if self.owner.is_some_and(|t| t != std::thread::current().id()) {
            return Err(DocaError::BAD_STATE);
        }
        if recv.len() != send.len() * self.size as usize {
            return Err(DocaError::INVALID_VALUE);
        }
        self.comm.all_gather_into(send, recv);
        Ok(())
    }
}
