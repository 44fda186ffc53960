//! `doca_verbs.h`: DOCA Verbs contexts, PDs, CQs, QPs and their attribute objects, on the
//! soft NIC (engine: `verbs/`, whose module documentation says what is supported, how
//! queues are placed, and what a C verbs program takes from rdma-core instead).
//!
//! Conventions: a NULL handle is `INVALID_VALUE` (or the getter's zero value); destroying
//! an object something still uses is `IN_USE`; an unsupported feature is `NOT_SUPPORTED`
//! with one log line naming it.

//!
//! One file per object, all re-exported here: `context` (contexts and PDs), `device_attr`,
//! `cq` (CQs and CQ attributes), `qp_init_attr`, `qp_attr`, `qp` and `ah_attr`. The setter
//! and getter macros below are shared by the attribute files.
use super::toolkit::handle;
use crate::error::{DocaError, DocaResult};

pub use crate::verbs::{
    AhAttr, CqAttr, DeviceAttr, QpAttr, QpInitAttr, Uar, Umem, VerbsAhAttr, VerbsContext, VerbsCq,
    VerbsPd, VerbsQp,
};

/// `struct doca_verbs_gid`: 16 raw bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerbsGid {
    /// The GID bytes.
    pub raw: [u8; 16],
}

/// The log line of a feature doca-soft does not have; returns `NOT_SUPPORTED`.
fn unsupported(what: &str) -> DocaError {
    sdk_err!("verbs", "{what} is not supported by doca-soft");
    DocaError::NOT_SUPPORTED
}

/// Borrows an object named by a handle address an attribute stored.
///
/// # Safety
/// `p` is 0 or a live handle of type `T` (the program keeps the objects its attributes
/// name alive until the create call).
unsafe fn stored<'a, T>(p: usize) -> DocaResult<&'a T> {
    // SAFETY: caller contract.
    unsafe { handle(p as *const T) }
}

/// Writes through an out-parameter when it is not NULL.
///
/// # Safety
/// A non-null `out` is writable.
unsafe fn maybe_out<T>(out: *mut T, v: T) {
    if !out.is_null() {
        // SAFETY: caller contract.
        unsafe { out.write(v) };
    }
}

/// A setter `doca_error_t name(T *attr, ARG v)` whose body gets `a: &mut T` and `v`.
macro_rules! setter {
    ($(#[$doc:meta])* $name:ident($ty:ty, $($v:ident: $vt:ty),+) |$a:ident| $body:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(attr: *mut $ty, $($v: $vt),+) -> u32 {
            call(stringify!($name), || {
                // SAFETY: C API contract (null or a live attribute object, not shared).
                let $a = unsafe { handle_mut(attr) }?;
                $body
            })
        }
    };
}

/// A getter `R name(const T *attr)`: `$zero` for NULL.
macro_rules! getter {
    ($(#[$doc:meta])* $name:ident($ty:ty) -> $rt:ty, $zero:expr, |$a:ident| $body:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(attr: *const $ty) -> $rt {
            call_value(stringify!($name), $zero, || {
                // SAFETY: C API contract (null or a live attribute object).
                match unsafe { handle(attr) } {
                    Ok($a) => $body,
                    Err(_) => $zero,
                }
            })
        }
    };
}

mod ah_attr;
mod context;
mod cq;
mod device_attr;
mod qp;
mod qp_attr;
mod qp_init_attr;

pub use ah_attr::*;
pub use context::*;
pub use cq::*;
pub use device_attr::*;
pub use qp::*;
pub use qp_attr::*;
pub use qp_init_attr::*;
