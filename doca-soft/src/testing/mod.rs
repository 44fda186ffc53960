//! What tests and benches may use of the runtime beyond its C API (feature `testing`):
//! the one surface other crates' tests, the benches and this crate's integration tests
//! reach the engine through.

pub mod urom;
