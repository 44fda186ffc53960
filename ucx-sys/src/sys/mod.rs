//! The raw layer: UCP's declarations exactly as bindgen generates them from
//! `<ucp/api/ucp.h>` of the UCX this crate was built against (see the build script), and
//! the run-time loader every one of those functions goes through ([`library`]).
//!
//! Enums are integer constants named `<enum>_<VALUE>` (for example `ucs_status_t_UCS_OK`).
//! Everything here is `unsafe` to call and returns UCX's own status codes and pointers;
//! [`crate::result`] turns a status into an error naming the call, and [`crate::safe`] wraps
//! the calls the workspace needs.

mod loader;

pub use loader::{build_libdir, library, Found, Library, LoadError};

/// bindgen's output, re-exported whole as this module's items.
#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    missing_docs,
    clippy::all
)]
mod bindings {
    include!(concat!(env!("OUT_DIR"), "/ucx_bindings.rs"));
}

pub use bindings::*;
