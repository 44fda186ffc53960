//! Driver calls whose name changed between CUDA 12 and 13. cudarc's `cuda-13000` bindings
//! call only the CUDA 13 name, which a CUDA 12 driver before 12.8 lacks (cudarc then panics
//! at the call), and the kernels' host side is meant to run on CUDA 12 drivers too
//! (`DOCA_BUILD_PTX_ISA=8.0` builds): doca-cuda-driver's entry point takes whichever name
//! the loaded driver exports.

use cudarc::driver::CudaEvent;
use doca_cuda_driver::result::{Error, Named, Result};
use doca_cuda_driver::{cu, sys::CUresult};

/// Milliseconds between two recorded events of one context, as
/// [`CudaEvent::elapsed_ms`] computes them, on any driver from CUDA 12.0 on.
pub(crate) fn elapsed_ms(start: &CudaEvent, end: &CudaEvent) -> Result<f32> {
    if start.context() != end.context() {
        return Err(Error::new(
            "cuEventElapsedTime",
            CUresult::CUDA_ERROR_INVALID_CONTEXT,
        ));
    }
    start.context().bind_to_thread().named("cuCtxSetCurrent")?;
    start.synchronize().named("cuEventSynchronize")?;
    end.synchronize().named("cuEventSynchronize")?;
    let mut ms = 0f32;
    let (s, e) = (start.cu_event().cast(), end.cu_event().cast());
    // SAFETY: both events are alive (borrowed), recorded in one context, which is bound to
    // this thread; `ms` is a valid float to write.
    unsafe { cu!(cuEventElapsedTime(&mut ms, s, e)) }?;
    Ok(ms)
}
