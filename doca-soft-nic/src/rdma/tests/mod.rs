//! Tests of the soft NIC beyond the unit tests next to each piece: WQE parsing against
//! byte images built here from the reference facts (`wqe_images`), two NIC instances of one
//! process (`loopback`), two processes on `lo` (`multiproc`), and two network namespaces
//! joined by a veth pair (`netns`).

mod child;
mod fixture;
mod loopback;
mod multiproc;
mod netns;
mod wqe_images;
