//! The C API: every exported `doca_*` function, one file per DOCA header, all written the
//! same way (see [`toolkit`]). The engine behind them is crate-private.

// Until every exported function goes through it (the C API is being moved here), parts
// of the toolkit have no caller yet.
#[allow(dead_code)]
pub(crate) mod toolkit;

pub mod doca_urom;
