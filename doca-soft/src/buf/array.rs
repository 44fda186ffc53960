//! Buffer arrays (`doca_buf_arr.h`, host side): `num_elem` fixed-size elements of an mmap,
//! exported to a GPU as a device-memory array of [`GpuBufEntry`] (the device API's
//! `struct doca_gpu_buf_arr` is that array and `struct doca_gpu_buf` one entry).
//!
//! Order: create -> set_params -> (set_target_gpu) -> start -> get_gpu_handle -> stop ->
//! destroy. Setters after start are BAD_STATE; start needs params and a started mmap large
//! enough (INVALID_VALUE otherwise); the GPU handle exists only for a started array with a
//! target GPU (NOT_SUPPORTED without one, BAD_STATE before start).

use crate::error::{DocaError, DocaResult};
use crate::gpu::{Gpu, GpuShared};
use crate::mmap::{Mmap, MmapShared};
use crate::sync::lock;
use crate::types::GPU_MEM_TYPE_GPU;
use std::sync::{Arc, Mutex, MutexGuard};

/// One element as the device sees it: address and big-endian mkey (ready for the device
/// send calls, which take big-endian mkeys).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuBufEntry {
    /// Element address (device address for GPU memory).
    pub addr: u64,
    /// mkey of the mmap, big-endian.
    pub mkey_be: u32,
    /// Padding to 16 bytes.
    pub reserved: u32,
}

const _: () = assert!(std::mem::size_of::<GpuBufEntry>() == 16);

struct State {
    mmap: Option<Arc<MmapShared>>,
    elem_size: usize,
    start_offset: u64,
    gpu: Option<Arc<GpuShared>>,
    started: bool,
    /// Device address of the entry array while started with a GPU.
    gpu_entries: u64,
}

/// The C `struct doca_buf_arr`.
pub struct BufArr {
    num_elem: usize,
    state: Mutex<State>,
}

/// The element entries for `num` elements of `elem_size` bytes from `base + offset`.
pub(crate) fn entries(
    base: u64,
    offset: u64,
    elem_size: usize,
    num: usize,
    mkey: u32,
) -> DocaResult<Vec<GpuBufEntry>> {
    let mut v = Vec::new();
    // Fallible: `num` comes from the application (NO_MEMORY, not an abort).
    v.try_reserve_exact(num).map_err(|_| DocaError::NO_MEMORY)?;
    v.extend((0..num).map(|i| GpuBufEntry {
        addr: base + offset + (i * elem_size) as u64,
        mkey_be: mkey.to_be(),
        reserved: 0,
    }));
    Ok(v)
}

impl BufArr {
    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// `set_params`: elements of `elem_size` bytes from `start_offset` of `mmap` (before start).
    pub(crate) fn set_params(
        &self,
        mmap: &Mmap,
        elem_size: usize,
        start_offset: u64,
    ) -> DocaResult<()> {
        if elem_size == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        let mut s = self.lock();
        if s.started {
            return Err(DocaError::BAD_STATE);
        }
        s.mmap = Some(mmap.shared().clone());
        s.elem_size = elem_size;
        s.start_offset = start_offset;
        Ok(())
    }

    /// `set_target_gpu`: the GPU the element array is exported to (before start).
    pub(crate) fn set_target_gpu(&self, gpu: &Gpu) -> DocaResult<()> {
        let mut s = self.lock();
        if s.started {
            return Err(DocaError::BAD_STATE);
        }
        s.gpu = Some(gpu.shared().clone());
        Ok(())
    }

    /// `start`: checks the elements fit the started mmap and exports them to the GPU.
    pub(crate) fn start(&self) -> DocaResult<()> {
        let mut s = self.lock();
        if s.started {
            return Err(DocaError::BAD_STATE);
        }
        let mmap = s.mmap.clone().ok_or(DocaError::BAD_STATE)?;
        let (base, len) = mmap.range()?;
        let need = (s.elem_size as u64)
            .checked_mul(self.num_elem as u64)
            .and_then(|n| n.checked_add(s.start_offset))
            .ok_or(DocaError::INVALID_VALUE)?;
        if need > len as u64 {
            sdk_err!(
                "buf_arr",
                "{need} bytes of elements do not fit the mmap's {len}"
            );
            return Err(DocaError::INVALID_VALUE);
        }
        if let Some(gpu) = s.gpu.clone() {
            // Elements are addressed the way the device reaches the memory.
            let dev_base = mmap.gpu_range().map_or(base as u64, |g| g.gpu_addr);
            let e = entries(
                dev_base,
                s.start_offset,
                s.elem_size,
                self.num_elem,
                mmap.mkey(),
            )?;
            let bytes = e.len() * std::mem::size_of::<GpuBufEntry>();
            let (d, _) = gpu.alloc(bytes, 64, GPU_MEM_TYPE_GPU)?;
            // SAFETY: GpuBufEntry is plain old data; the slice covers exactly `e`.
            let raw = unsafe { std::slice::from_raw_parts(e.as_ptr().cast::<u8>(), bytes) };
            if let Err(err) = gpu.copy_to_device(d, raw) {
                let _ = gpu.free(d);
                return Err(err);
            }
            s.gpu_entries = d;
        }
        mmap.add_user();
        s.started = true;
        Ok(())
    }

    /// `stop`: frees the exported array; BAD_STATE when not started.
    pub(crate) fn stop(&self) -> DocaResult<()> {
        let mut s = self.lock();
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        if let (Some(g), true) = (&s.gpu, s.gpu_entries != 0) {
            let _ = g.free(s.gpu_entries);
        }
        s.gpu_entries = 0;
        if let Some(m) = &s.mmap {
            m.remove_user();
        }
        s.started = false;
        Ok(())
    }

    /// The exported array's device address (started, with a target GPU).
    pub(crate) fn gpu_handle(&self) -> DocaResult<u64> {
        let s = self.lock();
        if !s.started {
            return Err(DocaError::BAD_STATE);
        }
        if s.gpu.is_none() {
            return Err(DocaError::NOT_SUPPORTED);
        }
        Ok(s.gpu_entries)
    }
}

impl BufArr {
    /// An array of `num_elem` elements (INVALID_VALUE for 0), not configured.
    pub(crate) fn new(num_elem: usize) -> DocaResult<BufArr> {
        if num_elem == 0 {
            return Err(DocaError::INVALID_VALUE);
        }
        Ok(BufArr {
            num_elem,
            state: Mutex::new(State {
                mmap: None,
                elem_size: 0,
                start_offset: 0,
                gpu: None,
                started: false,
                gpu_entries: 0,
            }),
        })
    }

    /// Before destroy: stops a started array (its device memory is freed).
    pub(crate) fn stop_if_started(&self) {
        if self.lock().started {
            let _ = self.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::doca_buf_array::*;
    use crate::capi::doca_mmap::{
        doca_mmap_create, doca_mmap_destroy, doca_mmap_set_memrange, doca_mmap_start,
    };
    use std::ffi::c_void;

    #[test]
    fn entries_are_spaced_by_element_size_with_big_endian_mkey() {
        let e = entries(0x1000, 64, 256, 3, 0x0102_0304).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].addr, 0x1040);
        assert_eq!(e[2].addr, 0x1040 + 512);
        assert_eq!(e[1].mkey_be.to_ne_bytes(), [1, 2, 3, 4]);
    }

    #[test]
    fn state_rules_without_a_gpu() {
        let mut mem = vec![0u8; 4096];
        let (mut m, mut a) = (std::ptr::null_mut(), std::ptr::null_mut());
        let mut h: *mut c_void = std::ptr::null_mut();
        // SAFETY: writable out-pointers; mem outlives the mmap.
        unsafe {
            assert_eq!(doca_mmap_create(&mut m), 0);
            assert_eq!(doca_mmap_set_memrange(m, mem.as_mut_ptr().cast(), 4096), 0);
            assert_eq!(doca_buf_arr_create(0, &mut a), DocaError::INVALID_VALUE.0);
            assert_eq!(doca_buf_arr_create(16, &mut a), 0);
            assert_eq!(doca_buf_arr_start(a), DocaError::BAD_STATE.0, "no params");
            assert_eq!(
                doca_buf_arr_set_params(a, m, 0, 0),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(
                doca_buf_arr_set_params(a, std::ptr::null_mut(), 256, 0),
                DocaError::INVALID_VALUE.0
            );
            assert_eq!(doca_buf_arr_set_params(a, m, 256, 1), 0);
            assert_eq!(
                doca_buf_arr_start(a),
                DocaError::BAD_STATE.0,
                "mmap not started"
            );
            assert_eq!(doca_mmap_start(m), 0);
            assert_eq!(
                doca_buf_arr_start(a),
                DocaError::INVALID_VALUE.0,
                "16*256+1 > 4096"
            );
            assert_eq!(doca_buf_arr_set_params(a, m, 256, 0), 0);
            assert_eq!(
                doca_buf_arr_get_gpu_handle(a, &mut h),
                DocaError::BAD_STATE.0
            );
            assert_eq!(doca_buf_arr_start(a), 0);
            assert_eq!(
                doca_buf_arr_set_params(a, m, 128, 0),
                DocaError::BAD_STATE.0
            );
            assert_eq!(
                doca_buf_arr_get_gpu_handle(a, &mut h),
                DocaError::NOT_SUPPORTED.0
            );
            assert_eq!(
                doca_mmap_destroy(m),
                DocaError::IN_USE.0,
                "array uses the mmap"
            );
            assert_eq!(doca_buf_arr_stop(a), 0);
            assert_eq!(doca_buf_arr_stop(a), DocaError::BAD_STATE.0);
            assert_eq!(doca_buf_arr_destroy(a), 0);
            assert_eq!(doca_mmap_destroy(m), 0);
        }
    }
}
