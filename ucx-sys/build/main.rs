//! Build script of ucx-sys, one concern per module:
//!
//! * `find`: locates UCX >= [`message::MIN_VERSION`] (`UCX_HOME`, `HPCX_UCX_DIR`, then
//!   pkg-config `ucx`), records where its libraries are for the run-time loader (or links
//!   them, on targets without it) and tells dependants where it is (metadata below);
//! * `message`: what the build says when no usable UCX is found;
//! * `bindings`: bindgen over `<ucp/api/ucp.h>`;
//! * `committed`: the bindings committed in `src/sys/bindings/ucx.rs`, used under `DOCS_RS`
//!   (docs.rs has neither UCX nor libclang: nothing is probed or linked then) and when
//!   `UCX_SYS_BINDINGS=committed`;
//! * `trampolines`: one trampoline per bound function, through which the run-time loader
//!   (`src/sys/loader.rs`) reaches the UCX it loads.
//!
//! Metadata for dependants (`links = "ucp"`): `DEP_UCP_INCLUDE` (include directory),
//! `DEP_UCP_LIBDIR` (library directory), `DEP_UCP_VERSION` (`major.minor` of the headers
//! built against) and `DEP_UCP_MIN_VERSION` (the oldest accepted).

mod bindings;
mod committed;
mod find;
mod message;
mod trampolines;

fn main() {
    println!("cargo:rerun-if-changed=build");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    if committed::docs_rs() {
        // A documentation build: no UCX to find, nothing to link, no libclang for bindgen.
        find::emit_unlinked();
        committed::install(&out);
    } else {
        let ucx = find::find_ucx();
        find::emit_link(&ucx);
        if committed::wanted() {
            committed::install(&out);
        } else {
            bindings::generate(&ucx);
        }
    }
    if find::loads_at_run_time() {
        trampolines::generate(&out.join("ucx_bindings.rs"), &out.join("trampolines.rs"));
    }
}
