//! Loading the fatbin into a GPU's context and typed launchers.

use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};
use doca_gpunetio::{Gpu, GpuBuffer, GpuPod};
use std::collections::HashMap;
use std::sync::Arc;

/// Errors from loading or launching kernels.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// A CUDA driver call failed.
    #[error("{op}: {msg}")]
    Cuda {
        /// What was being done.
        op: &'static str,
        /// The driver's message.
        msg: String,
    },
    /// Arguments rejected before launching.
    #[error("invalid launch: {0}")]
    Invalid(String),
    /// A kernel did not return within the given time after its exit flag was set (it is
    /// still running: freeing what it uses would wait for it, so exit the process).
    #[error("the kernel did not finish within {0:?} after its exit flag was set")]
    Hung(std::time::Duration),
}

fn cuda<E: std::fmt::Display>(op: &'static str) -> impl FnOnce(E) -> KernelError {
    move |e| KernelError::Cuda {
        op,
        msg: e.to_string(),
    }
}

/// The driver's version as `major.minor`, or `?`.
fn driver_version() -> String {
    match doca_cuda_driver::result::driver_version() {
        Ok((major, minor)) => format!("{major}.{minor}"),
        Err(_) => "?".into(),
    }
}

/// What to do when the driver refuses the fatbin with `code`: the codes a driver older than
/// the build gives (PTX of an ISA it does not know, no image it can use, an image it cannot
/// read), else nothing.
fn load_advice(code: cudarc::driver::sys::CUresult, driver: String) -> String {
    use cudarc::driver::sys::CUresult as R;
    match code {
        R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | R::CUDA_ERROR_NO_BINARY_FOR_GPU
        | R::CUDA_ERROR_INVALID_IMAGE
        | R::CUDA_ERROR_INVALID_PTX => format!(
            " (driver CUDA {driver}; kernels built with nvcc 13.0's default recipe need a \
             CUDA 13 driver, >= 580: for CUDA 12 drivers rebuild with DOCA_BUILD_PTX_ISA=8.0, \
             doca-build's older-driver recipe)"
        ),
        _ => String::new(),
    }
}

/// The kernels, loaded into one GPU's context.
pub struct Kernels {
    gpu: Gpu,
    module: Arc<CudaModule>,
    /// Every kernel, looked up at load (see `preload`: lazy loading would otherwise load a
    /// kernel at its first launch, which can wait for kernels already running).
    functions: HashMap<String, CudaFunction>,
}

impl Kernels {
    /// Loads the embedded fatbin into `gpu`'s primary context.
    ///
    /// A driver that cannot take the fatbin (a CUDA 12 driver and the default nvcc 13.0
    /// build) fails with the driver's code, its version and what to rebuild with.
    pub fn load(gpu: &Gpu) -> Result<Self, KernelError> {
        let ptx = cudarc::nvrtc::Ptx::from_binary(crate::FATBIN.to_vec());
        let module = gpu.cuda().load_module(ptx).map_err(|e| KernelError::Cuda {
            op: "load the kernels fatbin",
            msg: format!("{e}{}", load_advice(e.0, driver_version())),
        })?;
        let functions = crate::preload::function_names(crate::FATBIN)
            .into_iter()
            .filter_map(|name| {
                // Device functions kept out of line have code too; only kernels are found.
                let f = module.load_function(&name).ok()?;
                Some((name, f))
            })
            .collect();
        Ok(Kernels {
            gpu: gpu.clone(),
            module,
            functions,
        })
    }

    /// A kernel by its (extern "C") name.
    pub fn function(&self, name: &str) -> Result<CudaFunction, KernelError> {
        if let Some(f) = self.functions.get(name) {
            return Ok(f.clone());
        }
        self.module
            .load_function(name)
            .map_err(|e| KernelError::Cuda {
                op: "cuModuleGetFunction",
                msg: format!("{name}: {e}"),
            })
    }

    /// The GPU these kernels run on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Fills `buf[i] = i * 2654435761 + seed` on the GPU and waits for it.
    pub fn fill_pattern(&self, buf: &GpuBuffer<u32>, seed: u32) -> Result<(), KernelError> {
        let f = self.function("doca_rs_fill_pattern")?;
        let stream = self.gpu.cuda().default_stream();
        let (ptr, n) = (buf.device_ptr(), buf.len() as u64);
        let mut b = stream.launch_builder(&f);
        b.arg(&ptr).arg(&n).arg(&seed);
        // SAFETY: the kernel writes n u32 at ptr, which the buffer holds.
        unsafe { b.launch(LaunchConfig::for_num_elems(buf.len().min(1 << 24) as u32)) }
            .map_err(cuda("launch doca_rs_fill_pattern"))?;
        stream.synchronize().map_err(cuda("synchronize"))
    }

    /// Sums a buffer of u32 on the GPU (reads every element once).
    pub fn sum_u32(&self, buf: &GpuBuffer<u32>) -> Result<u64, KernelError> {
        let f = self.function("doca_rs_sum_u32")?;
        let stream = self.gpu.cuda().default_stream();
        let mut out = stream.alloc_zeros::<u64>(1).map_err(cuda("alloc"))?;
        let (ptr, n) = (buf.device_ptr(), buf.len() as u64);
        let mut b = stream.launch_builder(&f);
        b.arg(&ptr).arg(&n).arg(&mut out);
        // SAFETY: reads n u32 at ptr; writes one u64 to `out`.
        unsafe { b.launch(LaunchConfig::for_num_elems(buf.len().min(1 << 24) as u32)) }
            .map_err(cuda("launch doca_rs_sum_u32"))?;
        let v = stream.clone_dtoh(&out).map_err(cuda("copy result"))?;
        Ok(v[0])
    }
}

#[allow(dead_code)]
fn _assert_pod<T: GpuPod>() {}

/// A one-dimensional launch: `blocks` blocks of `threads_per_block` threads, no dynamic
/// shared memory (every kernel of this crate).
pub(crate) fn grid(blocks: u32, threads_per_block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads_per_block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Maps a failed `cuLaunchKernel` of kernel `name` to [`KernelError::Cuda`].
pub(crate) fn launch_err(
    name: &str,
) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError + '_ {
    move |e| KernelError::Cuda {
        op: "cuLaunchKernel",
        msg: format!("{name}: {e}"),
    }
}

#[cfg(test)]
mod load_advice_tests {
    use super::load_advice;
    use cudarc::driver::sys::CUresult as R;

    #[test]
    fn a_driver_older_than_the_build_gets_the_rebuild_advice() {
        for code in [
            R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            R::CUDA_ERROR_NO_BINARY_FOR_GPU,
            R::CUDA_ERROR_INVALID_IMAGE,
            R::CUDA_ERROR_INVALID_PTX,
        ] {
            let text = load_advice(code, "12.4".into());
            assert!(text.contains("driver CUDA 12.4"), "{code:?}: {text}");
            assert!(text.contains("DOCA_BUILD_PTX_ISA=8.0"), "{code:?}: {text}");
        }
    }

    #[test]
    fn other_failures_get_no_advice() {
        assert_eq!(load_advice(R::CUDA_ERROR_OUT_OF_MEMORY, "13.0".into()), "");
    }
}
