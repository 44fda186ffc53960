//! Build script of ucx-sys, one concern per module:
//!
//! * `find`: locates UCX >= [`message::MIN_VERSION`] (`UCX_HOME`, `HPCX_UCX_DIR`, then
//!   pkg-config `ucx`), records where its libraries are for the run-time loader (or links
//!   them, on targets without it) and tells dependants where it is (metadata below);
//! * `message`: what the build says when no usable UCX is found;
//! * `bindings`: bindgen over `<ucp/api/ucp.h>`;
//! * `trampolines`: one trampoline per bound function, through which the run-time loader
//!   (`src/loader.rs`) reaches the UCX it loads.
//!
//! Metadata for dependants (`links = "ucp"`): `DEP_UCP_INCLUDE` (include directory),
//! `DEP_UCP_LIBDIR` (library directory), `DEP_UCP_VERSION` (`major.minor` of the headers
//! built against) and `DEP_UCP_MIN_VERSION` (the oldest accepted).

mod bindings;
mod find;
mod message;
mod trampolines;

fn main() {
    println!("cargo:rerun-if-changed=build");
    let ucx = find::find_ucx();
    find::emit_link(&ucx);
    bindings::generate(&ucx);
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    if find::loads_at_run_time() {
        trampolines::generate(&out.join("ucx_bindings.rs"), &out.join("trampolines.rs"));
    }
}
