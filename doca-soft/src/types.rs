//! Plain types shared by the C API (`doca_types.h`).

use std::ffi::c_void;

/// `union doca_data`: user data passed through callbacks.
#[repr(C)]
#[derive(Clone, Copy)]
pub union DocaData {
    /// As a pointer.
    pub ptr: *mut c_void,
    /// As an integer.
    pub u64: u64,
}

// SAFETY: DocaData is plain data owned by the application; the runtime only stores and
// hands it back, never dereferences it.
unsafe impl Send for DocaData {}
// SAFETY: as above.
unsafe impl Sync for DocaData {}

impl std::fmt::Debug for DocaData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: both members are 8 bytes of plain data; reading the integer is always valid.
        write!(f, "DocaData({:#x})", unsafe { self.u64 })
    }
}

/// `DOCA_GPU_MEM_TYPE_GPU`.
pub const GPU_MEM_TYPE_GPU: u32 = 0;
/// `DOCA_GPU_MEM_TYPE_GPU_CPU`.
pub const GPU_MEM_TYPE_GPU_CPU: u32 = 1;
/// `DOCA_GPU_MEM_TYPE_CPU_GPU`.
pub const GPU_MEM_TYPE_CPU_GPU: u32 = 2;
