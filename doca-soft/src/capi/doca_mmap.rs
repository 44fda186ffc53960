//! `doca_mmap.h`: memory maps. Setters work before start only (BAD_STATE after); destroy
//! and stop are IN_USE while buffers or queues use the map.

use std::ffi::{c_int, c_void};

use super::toolkit::{call, handle, new_handle, non_null, take_handle, write_out};
use crate::dev::Dev;
use crate::types::DocaData;

pub use crate::mmap::{Mmap, ACCESS_ALL_BITS, ACCESS_LOCAL_READ_WRITE};

/// `doca_mmap_create(&mmap)`.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_create(mmap: *mut *mut Mmap) -> u32 {
    call("doca_mmap_create", || {
        // SAFETY: C API contract (null or writable).
        unsafe { new_handle(mmap, Mmap::new()) }
    })
}

/// `doca_mmap_destroy(mmap)`: IN_USE while buffers or queues use it; a started mmap is
/// stopped first and its devices released.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_destroy(mmap: *mut Mmap) -> u32 {
    call("doca_mmap_destroy", || {
        // SAFETY: C API contract (null or an mmap from doca_mmap_create, not destroyed).
        let m = unsafe { handle(mmap) }?;
        m.ensure_unused()?;
        m.teardown();
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(mmap) }?);
        Ok(())
    })
}

/// `doca_mmap_start(mmap)`: BAD_STATE when started or without a range.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_start(mmap: *mut Mmap) -> u32 {
    call("doca_mmap_start", || {
        // SAFETY: C API contract (null or live).
        unsafe { handle(mmap) }?.start()
    })
}

/// `doca_mmap_stop(mmap)`: BAD_STATE when not started, IN_USE while it has users.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_stop(mmap: *mut Mmap) -> u32 {
    call("doca_mmap_stop", || {
        // SAFETY: C API contract.
        unsafe { handle(mmap) }?.stop()
    })
}

/// `doca_mmap_add_dev(mmap, dev)`: ALREADY_EXIST when added before, NO_MEMORY beyond the
/// most devices.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_add_dev(mmap: *mut Mmap, dev: *mut Dev) -> u32 {
    call("doca_mmap_add_dev", || {
        // SAFETY: C API contract (null or live, both).
        unsafe { handle(mmap)?.add_dev(handle(dev)?) }
    })
}

/// `doca_mmap_rm_dev(mmap, dev)`: NOT_FOUND for a device that was not added.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_rm_dev(mmap: *mut Mmap, dev: *mut Dev) -> u32 {
    call("doca_mmap_rm_dev", || {
        // SAFETY: C API contract.
        unsafe { handle(mmap)?.rm_dev(handle(dev)?) }
    })
}

/// `doca_mmap_set_memrange(mmap, addr, len)`: the application's memory (host or from
/// `doca_gpu_mem_alloc`).
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_memrange(
    mmap: *mut Mmap,
    addr: *mut c_void,
    len: usize,
) -> u32 {
    call("doca_mmap_set_memrange", || {
        // SAFETY: C API contract.
        unsafe { handle(mmap) }?.set_memrange(addr, len)
    })
}

/// `doca_mmap_set_dmabuf_memrange(mmap, fd, addr, offset, len)`: the range must be memory
/// from `doca_gpu_mem_alloc` (checked at start).
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_dmabuf_memrange(
    mmap: *mut Mmap,
    dmabuf_fd: c_int,
    addr: *mut c_void,
    dmabuf_offset: usize,
    len: usize,
) -> u32 {
    call("doca_mmap_set_dmabuf_memrange", || {
        // SAFETY: C API contract.
        unsafe { handle(mmap) }?.set_dmabuf_memrange(dmabuf_fd, addr, dmabuf_offset, len)
    })
}

/// `doca_mmap_set_permissions(mmap, access_mask)` (`doca_access_flag` bits).
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_permissions(mmap: *mut Mmap, access_mask: u32) -> u32 {
    call("doca_mmap_set_permissions", || {
        // SAFETY: C API contract.
        unsafe { handle(mmap) }?.set_permissions(access_mask)
    })
}

/// `doca_mmap_set_max_num_devices(mmap, n)`: at least 1 and the devices already added.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_max_num_devices(
    mmap: *mut Mmap,
    max_num_devices: u32,
) -> u32 {
    call("doca_mmap_set_max_num_devices", || {
        // SAFETY: C API contract.
        unsafe { handle(mmap) }?.set_max_num_devices(max_num_devices)
    })
}

/// `doca_mmap_get_memrange(mmap, &addr, &len)`: BAD_STATE when no range was set.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_memrange(
    mmap: *const Mmap,
    addr: *mut *mut c_void,
    len: *mut usize,
) -> u32 {
    call("doca_mmap_get_memrange", || {
        // SAFETY: C API contract.
        let m = unsafe { handle(mmap) }?;
        non_null(addr)?;
        non_null(len)?;
        let (a, l) = m.memrange()?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(addr, a)?;
            write_out(len, l)
        }
    })
}

/// `doca_mmap_get_mkey(mmap, dev, &mkey)`: host-order mkey; BAD_STATE before start,
/// NOT_FOUND for a device that was not added.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_mkey(
    mmap: *const Mmap,
    dev: *const Dev,
    mkey: *mut u32,
) -> u32 {
    call("doca_mmap_get_mkey", || {
        // SAFETY: C API contract.
        let (m, d) = unsafe { (handle(mmap)?, handle(dev)?) };
        non_null(mkey)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(mkey, m.mkey_for(d)?) }
    })
}

/// `doca_mmap_set_user_data(mmap, user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_set_user_data(mmap: *mut Mmap, user_data: DocaData) -> u32 {
    call("doca_mmap_set_user_data", || {
        // SAFETY: C API contract.
        unsafe { handle(mmap) }?.set_user_data(user_data);
        Ok(())
    })
}

/// `doca_mmap_get_user_data(mmap, &user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_user_data(
    mmap: *const Mmap,
    user_data: *mut DocaData,
) -> u32 {
    call("doca_mmap_get_user_data", || {
        // SAFETY: C API contract.
        unsafe { write_out(user_data, handle(mmap)?.user_data()) }
    })
}

/// `doca_mmap_get_permissions(mmap, &mask)`.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_permissions(
    mmap: *const Mmap,
    access_mask: *mut u32,
) -> u32 {
    call("doca_mmap_get_permissions", || {
        // SAFETY: C API contract.
        unsafe { write_out(access_mask, handle(mmap)?.permissions()) }
    })
}

/// `doca_mmap_get_max_num_devices(mmap, &n)`.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_get_max_num_devices(
    mmap: *const Mmap,
    max_num_devices: *mut u32,
) -> u32 {
    call("doca_mmap_get_max_num_devices", || {
        // SAFETY: C API contract.
        unsafe { write_out(max_num_devices, handle(mmap)?.max_num_devices()) }
    })
}

/// `doca_mmap_export_rdma(mmap, dev, &desc, &len)`: the blob a peer passes to
/// `doca_mmap_create_from_export`; valid until the mmap is stopped or destroyed.
/// BAD_STATE before start, NOT_PERMITTED without an RDMA permission, NOT_FOUND when `dev`
/// was not added.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_export_rdma(
    mmap: *mut Mmap,
    dev: *const Dev,
    export_desc: *mut *const c_void,
    export_desc_len: *mut usize,
) -> u32 {
    call("doca_mmap_export_rdma", || {
        // SAFETY: C API contract (null or live, both).
        let (m, d) = unsafe { (handle(mmap)?, handle(dev)?) };
        non_null(export_desc)?;
        non_null(export_desc_len)?;
        let (p, n) = m.export_rdma(d)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe {
            write_out(export_desc, p.cast())?;
            write_out(export_desc_len, n)
        }
    })
}

/// `doca_mmap_create_from_export(user_data, desc, len, dev, &mmap)`: an mmap standing for
/// a peer's memory, usable without start; INVALID_VALUE for bytes that are not an export.
#[no_mangle]
pub unsafe extern "C" fn doca_mmap_create_from_export(
    user_data: *const DocaData,
    export_desc: *const c_void,
    export_desc_len: usize,
    dev: *mut Dev,
    mmap: *mut *mut Mmap,
) -> u32 {
    call("doca_mmap_create_from_export", || {
        // SAFETY: C API contract.
        let d = unsafe { handle(dev) }?;
        non_null(export_desc)?;
        non_null(mmap)?;
        if export_desc_len == 0 {
            return Err(crate::error::DocaError::INVALID_VALUE);
        }
        // SAFETY: C API contract: `export_desc_len` readable bytes (null checked).
        let blob = unsafe { std::slice::from_raw_parts(export_desc.cast::<u8>(), export_desc_len) };
        // SAFETY: C API contract (null or readable).
        let ud = unsafe { user_data.as_ref() }
            .copied()
            .unwrap_or(DocaData { u64: 0 });
        let m = Mmap::from_export(ud, blob, d)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { new_handle(mmap, m) }
    })
}
