//! MpiOob in a single-process MPI world (an MPI singleton: no mpirun needed): the all-gather
//! of one rank is its own contribution, a receive buffer of the wrong size and a call from
//! another thread (MPI initialised single-threaded) are refused without calling MPI. One
//! test: MPI is initialised once per process.

use doca::common::DocaError;
use doca::urom::domain::Oob;
use mpi::Threading;
use std::sync::Arc;
use urom_mpi::MpiOob;

#[test]
fn one_rank_gathers_itself_and_misuse_is_refused() {
    let (universe, threading) =
        mpi::initialize_with_threading(Threading::Single).expect("MPI initialises once");
    let oob = Arc::new(MpiOob::new(universe.world(), threading));
    assert_eq!((oob.index(), oob.size()), (0, 1));

    let mut recv = [0u8; 4];
    oob.allgather(b"urom", &mut recv).expect("allgather");
    assert_eq!(&recv, b"urom");

    let mut short = [0u8; 3];
    assert_eq!(
        oob.allgather(b"urom", &mut short),
        Err(DocaError::INVALID_VALUE)
    );

    if threading != Threading::Multiple {
        let other = oob.clone();
        let r = std::thread::spawn(move || other.allgather(b"urom", &mut [0u8; 4]))
            .join()
            .expect("thread");
        assert_eq!(r, Err(DocaError::BAD_STATE));
    }
}
