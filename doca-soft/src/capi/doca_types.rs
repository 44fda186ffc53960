//! `doca_types.h`: plain types the other headers share (no functions).

pub use crate::types::{DocaData, GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU, GPU_MEM_TYPE_GPU_CPU};
