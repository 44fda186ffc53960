//! Driver calls whose name changed between CUDA 12 and 13, resolved to whichever one the
//! loaded driver exports. cudarc's `cuda-13000` bindings call only the CUDA 13 name, which
//! a CUDA 12 driver before 12.8 lacks (cudarc then panics at the call), and the kernels'
//! host side is meant to run on CUDA 12 drivers too (`DOCA_BUILD_PTX_ISA=8.0` builds).

use cudarc::driver::sys::{CUevent, CUresult};
use cudarc::driver::{CudaEvent, DriverError};
use std::sync::OnceLock;

/// `cuEventElapsedTime_v2` and `cuEventElapsedTime`: the same signature.
type ElapsedFn = unsafe extern "C" fn(*mut f32, CUevent, CUevent) -> CUresult;

/// Milliseconds between two recorded events of one context, as
/// [`CudaEvent::elapsed_ms`] computes them, on any driver from CUDA 12.0 on.
pub(crate) fn elapsed_ms(start: &CudaEvent, end: &CudaEvent) -> Result<f32, DriverError> {
    if start.context() != end.context() {
        return Err(DriverError(CUresult::CUDA_ERROR_INVALID_CONTEXT));
    }
    start.context().bind_to_thread()?;
    start.synchronize()?;
    end.synchronize()?;
    let f = elapsed_fn().ok_or(DriverError(CUresult::CUDA_ERROR_NOT_FOUND))?;
    let mut ms = 0f32;
    call_elapsed(f, &mut ms, start, end)?;
    Ok(ms)
}

/// Runs `f` on the two events' handles.
fn call_elapsed(
    f: ElapsedFn,
    ms: &mut f32,
    start: &CudaEvent,
    end: &CudaEvent,
) -> Result<(), DriverError> {
    // SAFETY: `f` has the driver's signature for this call; both events are alive (borrowed)
    // and their context is bound to this thread; `ms` is a valid float to write.
    unsafe { f(ms, start.cu_event(), end.cu_event()) }.result()
}

/// The newer name when the driver exports it, else the older one (looked up once).
fn elapsed_fn() -> Option<ElapsedFn> {
    static F: OnceLock<Option<ElapsedFn>> = OnceLock::new();
    *F.get_or_init(|| {
        ["cuEventElapsedTime_v2", "cuEventElapsedTime"]
            .iter()
            .find_map(|name| driver_symbol(name))
    })
}

/// `name` from the driver library cudarc loaded, if exported.
fn driver_symbol(name: &str) -> Option<ElapsedFn> {
    // SAFETY: culib() loads the driver library (present: an event exists, so a context
    // does); both names this is called with have ElapsedFn's signature.
    unsafe {
        let lib = cudarc::driver::sys::culib();
        lib.get::<ElapsedFn>(name.as_bytes()).ok().map(|s| *s)
    }
}
