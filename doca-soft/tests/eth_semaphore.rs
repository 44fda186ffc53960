//! `doca_gpu_semaphore_*` through the C ABI on a host-memory semaphore (no GPU in CI):
//! state rules, CPU access rules per memory type, status words, custom info and the device
//! handle layout.

use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_gpunetio::*;
use doca_soft::capi::doca_types::{GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU, GPU_MEM_TYPE_GPU_CPU};
use doca_soft::testing::SemHandle;
use std::ffi::c_void;
use std::ptr::null_mut;

const INVALID: u32 = DocaError::INVALID_VALUE.0;
const BAD_STATE: u32 = DocaError::BAD_STATE.0;

fn host_sem() -> *mut Semaphore {
    doca_soft::testing::host_semaphore()
}

#[test]
fn create_needs_a_gpu_and_nulls_are_rejected() {
    let mut s = null_mut();
    // SAFETY: null pointers must be rejected.
    unsafe {
        assert_eq!(doca_gpu_semaphore_create(null_mut(), &mut s), INVALID);
        assert_eq!(doca_gpu_semaphore_destroy(null_mut()), INVALID);
        assert_eq!(doca_gpu_semaphore_start(null_mut()), INVALID);
        assert_eq!(doca_gpu_semaphore_set_items_num(null_mut(), 4), INVALID);
        let mut st = 0u32;
        assert_eq!(
            doca_gpu_semaphore_get_status(null_mut(), 0, &mut st),
            INVALID
        );
    }
}

#[test]
fn lifecycle_status_words_and_custom_info() {
    let s = host_sem();
    let mut st = 0u32;
    let mut h: *mut c_void = null_mut();
    let mut info: *mut c_void = null_mut();
    // SAFETY: live semaphore; out pointers valid or null where they must be rejected.
    unsafe {
        assert_eq!(doca_gpu_semaphore_start(s), BAD_STATE, "no items yet");
        assert_eq!(doca_gpu_semaphore_set_items_num(s, 0), INVALID);
        assert_eq!(doca_gpu_semaphore_set_memory_type(s, 3), INVALID);
        assert_eq!(
            doca_gpu_semaphore_set_custom_info(s, 0, GPU_MEM_TYPE_CPU_GPU),
            INVALID
        );
        assert_eq!(doca_gpu_semaphore_set_items_num(s, 1024), 0);
        assert_eq!(
            doca_gpu_semaphore_set_memory_type(s, GPU_MEM_TYPE_CPU_GPU),
            0
        );
        assert_eq!(
            doca_gpu_semaphore_set_custom_info(s, 48, GPU_MEM_TYPE_CPU_GPU),
            0
        );
        assert_eq!(doca_gpu_semaphore_get_status(s, 0, &mut st), BAD_STATE);
        assert_eq!(doca_gpu_semaphore_get_gpu_handle(s, &mut h), BAD_STATE);
        assert_eq!(doca_gpu_semaphore_start(s), 0);
        assert_eq!(doca_gpu_semaphore_set_items_num(s, 8), BAD_STATE);
        assert_eq!(
            doca_gpu_semaphore_set_memory_type(s, GPU_MEM_TYPE_GPU),
            BAD_STATE
        );
        assert_eq!(doca_gpu_semaphore_start(s), BAD_STATE);

        // Every item starts FREE; statuses round-trip; out of range and bad values refused.
        assert_eq!(doca_gpu_semaphore_get_status(s, 1023, &mut st), 0);
        assert_eq!(st, 0);
        assert_eq!(doca_gpu_semaphore_set_status(s, 7, 1), 0);
        assert_eq!(doca_gpu_semaphore_get_status(s, 7, &mut st), 0);
        assert_eq!(st, 1);
        assert_eq!(doca_gpu_semaphore_get_status(s, 6, &mut st), 0);
        assert_eq!(st, 0, "neighbours untouched");
        assert_eq!(doca_gpu_semaphore_set_status(s, 1024, 1), INVALID);
        assert_eq!(doca_gpu_semaphore_set_status(s, 0, 6), INVALID);
        assert_eq!(doca_gpu_semaphore_get_status(s, 0, null_mut()), INVALID);

        // The device handle describes the same memory.
        assert_eq!(doca_gpu_semaphore_get_gpu_handle(s, &mut h), 0);
        let hd = *(h as *const SemHandle);
        assert_eq!(hd.num_items, 1024);
        assert_eq!(hd.custom_nbytes, 48);
        assert_eq!(*(hd.status_addr as *const u32).add(7), 1);
        *(hd.status_addr as *mut u32).add(9) = 2; // as a kernel would
        assert_eq!(doca_gpu_semaphore_get_status(s, 9, &mut st), 0);
        assert_eq!(st, 2);

        // Custom info: one blob per item, at the handle's custom address.
        assert_eq!(doca_gpu_semaphore_get_custom_info_addr(s, 3, &mut info), 0);
        assert_eq!(info as u64, hd.custom_addr + 3 * 48);
        std::ptr::write_bytes(info as *mut u8, 0xab, 48);
        let mut info4: *mut c_void = null_mut();
        assert_eq!(doca_gpu_semaphore_get_custom_info_addr(s, 4, &mut info4), 0);
        assert_eq!(*(info4 as *const u8), 0, "blobs do not overlap");
        assert_eq!(
            doca_gpu_semaphore_get_custom_info_addr(s, 1024, &mut info),
            INVALID
        );

        assert_eq!(doca_gpu_semaphore_stop(s), 0);
        assert_eq!(doca_gpu_semaphore_stop(s), BAD_STATE);
        assert_eq!(doca_gpu_semaphore_get_status(s, 0, &mut st), BAD_STATE);
        // Reconfigurable after stop; a restart gives FREE items again.
        assert_eq!(doca_gpu_semaphore_set_items_num(s, 16), 0);
        assert_eq!(doca_gpu_semaphore_start(s), 0);
        assert_eq!(doca_gpu_semaphore_get_status(s, 7, &mut st), 0);
        assert_eq!(st, 0);
        assert_eq!(doca_gpu_semaphore_destroy(s), 0);
    }
}

#[test]
fn cpu_access_follows_the_memory_type() {
    // SAFETY: live semaphores.
    unsafe {
        let s = host_sem();
        let mut st = 0u32;
        let mut info: *mut c_void = null_mut();
        assert_eq!(doca_gpu_semaphore_set_items_num(s, 4), 0);
        // Device-only status words, CPU-visible custom info.
        assert_eq!(doca_gpu_semaphore_set_memory_type(s, GPU_MEM_TYPE_GPU), 0);
        assert_eq!(
            doca_gpu_semaphore_set_custom_info(s, 8, GPU_MEM_TYPE_GPU_CPU),
            0
        );
        assert_eq!(doca_gpu_semaphore_start(s), 0);
        assert_eq!(
            doca_gpu_semaphore_get_status(s, 0, &mut st),
            DocaError::NOT_SUPPORTED.0
        );
        assert_eq!(
            doca_gpu_semaphore_set_status(s, 0, 1),
            DocaError::NOT_SUPPORTED.0
        );
        assert_eq!(doca_gpu_semaphore_get_custom_info_addr(s, 1, &mut info), 0);
        assert!(!info.is_null());
        assert_eq!(
            doca_gpu_semaphore_destroy(s),
            0,
            "destroy frees a started one"
        );

        let s = host_sem();
        assert_eq!(doca_gpu_semaphore_set_items_num(s, 4), 0);
        assert_eq!(
            doca_gpu_semaphore_set_memory_type(s, GPU_MEM_TYPE_GPU_CPU),
            0
        );
        assert_eq!(doca_gpu_semaphore_start(s), 0);
        assert_eq!(doca_gpu_semaphore_set_status(s, 3, 5), 0);
        assert_eq!(
            doca_gpu_semaphore_get_custom_info_addr(s, 0, &mut info),
            INVALID,
            "no custom info configured"
        );
        assert_eq!(doca_gpu_semaphore_destroy(s), 0);
    }
}
