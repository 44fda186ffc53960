//! `doca_buf_inventory.h`: pools of buffers. Buffers are taken from a started inventory
//! over a started mmap and come back when their count reaches zero; an empty pool is
//! NO_MEMORY, stop and destroy are IN_USE while buffers are out.

use std::ffi::c_void;

use super::toolkit::{call, handle, non_null, take_handle, write_out};
use crate::buf::{buf_mut, Buf};
use crate::error::DocaError;
use crate::mmap::Mmap;
use crate::types::DocaData;

pub use crate::buf::inventory::BufInventory;

/// `doca_buf_inventory_create(num_elements, &inventory)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_create(
    num_elements: usize,
    inventory: *mut *mut BufInventory,
) -> u32 {
    call("doca_buf_inventory_create", || {
        non_null(inventory)?;
        let inv = BufInventory::new_boxed(num_elements)?;
        // SAFETY: C API contract (checked non-null, writable); freed by take_handle.
        unsafe { write_out(inventory, Box::into_raw(inv)) }
    })
}

/// `doca_buf_inventory_destroy(inventory)`: IN_USE while buffers are out.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_destroy(inventory: *mut BufInventory) -> u32 {
    call("doca_buf_inventory_destroy", || {
        // SAFETY: C API contract (null or an inventory from create, not destroyed).
        unsafe { handle(inventory) }?.ensure_unused()?;
        // SAFETY: as above; the caller gives the handle up.
        drop(unsafe { take_handle(inventory) }?);
        Ok(())
    })
}

/// `doca_buf_inventory_start(inventory)`: BAD_STATE when started.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_start(inventory: *mut BufInventory) -> u32 {
    call("doca_buf_inventory_start", || {
        // SAFETY: C API contract (null or live).
        unsafe { handle(inventory) }?.start()
    })
}

/// `doca_buf_inventory_stop(inventory)`: BAD_STATE when stopped, IN_USE with buffers out.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_stop(inventory: *mut BufInventory) -> u32 {
    call("doca_buf_inventory_stop", || {
        // SAFETY: C API contract.
        unsafe { handle(inventory) }?.stop()
    })
}

/// `doca_buf_inventory_expand(inventory, num_elements)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_expand(
    inventory: *mut BufInventory,
    num_elements: u32,
) -> u32 {
    call("doca_buf_inventory_expand", || {
        // SAFETY: C API contract.
        unsafe { handle(inventory) }?.expand(num_elements)
    })
}

/// `doca_buf_inventory_get_num_elements(inventory, &n)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_get_num_elements(
    inventory: *const BufInventory,
    num_of_elements: *mut u32,
) -> u32 {
    call("doca_buf_inventory_get_num_elements", || {
        // SAFETY: C API contract.
        unsafe { write_out(num_of_elements, handle(inventory)?.counts().0 as u32) }
    })
}

/// `doca_buf_inventory_get_num_free_elements(inventory, &n)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_get_num_free_elements(
    inventory: *const BufInventory,
    num_of_free_elements: *mut u32,
) -> u32 {
    call("doca_buf_inventory_get_num_free_elements", || {
        // SAFETY: C API contract.
        unsafe { write_out(num_of_free_elements, handle(inventory)?.counts().1 as u32) }
    })
}

/// `doca_buf_inventory_set_user_data(inventory, user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_set_user_data(
    inventory: *mut BufInventory,
    user_data: DocaData,
) -> u32 {
    call("doca_buf_inventory_set_user_data", || {
        // SAFETY: C API contract.
        unsafe { handle(inventory) }?.set_user_data(user_data);
        Ok(())
    })
}

/// `doca_buf_inventory_get_user_data(inventory, &user_data)`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_get_user_data(
    inventory: *const BufInventory,
    user_data: *mut DocaData,
) -> u32 {
    call("doca_buf_inventory_get_user_data", || {
        // SAFETY: C API contract.
        unsafe { write_out(user_data, handle(inventory)?.user_data()) }
    })
}

/// `doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, data, data_len, &buf)`:
/// a buffer whose window `[addr, addr+len)` lies in the mmap's range and holds the data.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_buf_get_by_args(
    inventory: *mut BufInventory,
    mmap: *mut Mmap,
    addr: *mut c_void,
    len: usize,
    data: *mut c_void,
    data_len: usize,
    buf: *mut *mut Buf,
) -> u32 {
    call("doca_buf_inventory_buf_get_by_args", || {
        // SAFETY: C API contract (null or live, both).
        let (i, m) = unsafe { (handle(inventory)?, handle(mmap)?) };
        if buf.is_null() || addr.is_null() || data.is_null() {
            return Err(DocaError::INVALID_VALUE);
        }
        let b = i.take(m, addr as usize, len, data as usize, data_len)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(buf, b) }
    })
}

/// `doca_buf_inventory_buf_get_by_data(inventory, mmap, data, data_len, &buf)`: the
/// buffer's window is exactly its data.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_buf_get_by_data(
    inventory: *mut BufInventory,
    mmap: *mut Mmap,
    data: *mut c_void,
    data_len: usize,
    buf: *mut *mut Buf,
) -> u32 {
    // SAFETY: C API contract (the same arguments).
    unsafe {
        doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf)
    }
}

/// `doca_buf_inventory_buf_dup(inventory, src, &dst)`: a new buffer with the same window
/// and data as `src`.
#[no_mangle]
pub unsafe extern "C" fn doca_buf_inventory_buf_dup(
    inventory: *mut BufInventory,
    src_buf: *const Buf,
    dst_buf: *mut *mut Buf,
) -> u32 {
    call("doca_buf_inventory_buf_dup", || {
        // SAFETY: C API contract (null or live; null or a buffer of a live inventory).
        let (i, s) = unsafe { (handle(inventory)?, buf_mut(src_buf as *mut Buf)?) };
        non_null(dst_buf)?;
        let d = i.dup(s)?;
        // SAFETY: C API contract (checked non-null, writable).
        unsafe { write_out(dst_buf, d) }
    })
}
