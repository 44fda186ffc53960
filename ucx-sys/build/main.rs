//! Build script of ucx-sys, one concern per module:
//!
//! * `find`: locates UCX >= [`find::MIN_VERSION`] (`UCX_HOME`, then pkg-config `ucx`),
//!   links `libucp`/`libucs` and tells dependants where it is (metadata below).
//! * `bindings`: bindgen over `<ucp/api/ucp.h>`.
//!
//! Metadata for dependants (`links = "ucp"`): `DEP_UCP_INCLUDE` (include directory),
//! `DEP_UCP_LIBDIR` (library directory, for an rpath), `DEP_UCP_VERSION` (`major.minor`
//! of the headers built against) and `DEP_UCP_MIN_VERSION` (the oldest accepted).

mod bindings;
mod find;

fn main() {
    println!("cargo:rerun-if-changed=build");
    let ucx = find::find_ucx();
    find::emit_link(&ucx);
    bindings::generate(&ucx);
}
