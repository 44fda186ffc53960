//! Tests of inventories and buffers (host memory).

use super::*;
use crate::capi::doca_buf::*;
use crate::capi::doca_buf_inventory::*;
use crate::capi::doca_mmap::{
    doca_mmap_create, doca_mmap_destroy, doca_mmap_set_memrange, doca_mmap_start,
};
use std::ffi::c_void;

struct Fixture {
    mem: Vec<u8>,
    mmap: *mut Mmap,
    inv: *mut BufInventory,
}

impl Fixture {
    fn new(n: usize) -> Fixture {
        let mut mem = vec![0u8; 1024];
        let mut mmap = std::ptr::null_mut();
        let mut inv = std::ptr::null_mut();
        // SAFETY: writable out-pointers; mem outlives the mmap (Fixture drop order).
        unsafe {
            assert_eq!(doca_mmap_create(&mut mmap), 0);
            assert_eq!(
                doca_mmap_set_memrange(mmap, mem.as_mut_ptr().cast(), 1024),
                0
            );
            assert_eq!(doca_mmap_start(mmap), 0);
            assert_eq!(doca_buf_inventory_create(n, &mut inv), 0);
        }
        Fixture { mem, mmap, inv }
    }

    fn at(&mut self, off: usize) -> *mut c_void {
        // SAFETY: tests pass offsets within (or one past) the 1024-byte region.
        unsafe { self.mem.as_mut_ptr().add(off).cast() }
    }

    fn get(&mut self, off: usize, len: usize) -> Result<*mut Buf, u32> {
        let a = self.at(off);
        let mut b = std::ptr::null_mut();
        // SAFETY: live inventory and mmap, writable out-pointer.
        let r = unsafe { doca_buf_inventory_buf_get_by_data(self.inv, self.mmap, a, len, &mut b) };
        if r == 0 {
            Ok(b)
        } else {
            Err(r)
        }
    }

    fn free_count(&self) -> u32 {
        let mut n = 0;
        // SAFETY: live inventory.
        assert_eq!(
            unsafe { doca_buf_inventory_get_num_free_elements(self.inv, &mut n) },
            0
        );
        n
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // SAFETY: objects created in new(); every test returns its buffers first.
        unsafe {
            assert_eq!(doca_buf_inventory_destroy(self.inv), 0);
            assert_eq!(doca_mmap_destroy(self.mmap), 0);
        }
    }
}

#[test]
fn inventory_must_be_started_and_runs_out() {
    let mut f = Fixture::new(2);
    assert_eq!(f.get(0, 10), Err(DocaError::BAD_STATE.0));
    // SAFETY: live inventory.
    unsafe {
        assert_eq!(doca_buf_inventory_start(f.inv), 0);
        assert_eq!(doca_buf_inventory_start(f.inv), DocaError::BAD_STATE.0);
    }
    let a = f.get(0, 10).unwrap();
    let b = f.get(10, 10).unwrap();
    assert_eq!(f.get(20, 10), Err(DocaError::NO_MEMORY.0));
    assert_eq!(f.free_count(), 0);
    // SAFETY: live objects.
    unsafe {
        assert_eq!(doca_buf_inventory_stop(f.inv), DocaError::IN_USE.0);
        assert_eq!(doca_buf_inventory_destroy(f.inv), DocaError::IN_USE.0);
        assert_eq!(
            doca_mmap_destroy(f.mmap),
            DocaError::IN_USE.0,
            "buffers use the mmap"
        );
        assert_eq!(doca_buf_inventory_expand(f.inv, 1), 0);
        let c = f.get(20, 10).unwrap();
        let mut total = 0;
        assert_eq!(doca_buf_inventory_get_num_elements(f.inv, &mut total), 0);
        assert_eq!(total, 3);
        for x in [a, b, c] {
            let mut rc = 9;
            assert_eq!(doca_buf_dec_refcount(x, &mut rc), 0);
            assert_eq!(rc, 0);
        }
        assert_eq!(f.free_count(), 3);
        assert_eq!(
            doca_buf_dec_refcount(a, std::ptr::null_mut()),
            DocaError::BAD_STATE.0
        );
        assert_eq!(doca_buf_inventory_stop(f.inv), 0);
    }
}

#[test]
fn windows_must_lie_inside_the_mmap() {
    let mut f = Fixture::new(4);
    // SAFETY: live inventory.
    unsafe { assert_eq!(doca_buf_inventory_start(f.inv), 0) };
    assert_eq!(f.get(1000, 25), Err(DocaError::INVALID_VALUE.0));
    let (a, d) = (f.at(0), f.at(100));
    let mut b = std::ptr::null_mut();
    // SAFETY: live objects; out-pointer writable.
    unsafe {
        assert_eq!(
            doca_buf_inventory_buf_get_by_args(f.inv, f.mmap, a, 50, d, 1, &mut b),
            DocaError::INVALID_VALUE.0,
            "data outside the window"
        );
        assert_eq!(
            doca_buf_inventory_buf_get_by_args(f.inv, std::ptr::null_mut(), a, 50, a, 1, &mut b),
            DocaError::INVALID_VALUE.0
        );
    }
    let ok = f.get(1000, 24).unwrap();
    // SAFETY: ok is a buffer in use.
    unsafe { assert_eq!(doca_buf_dec_refcount(ok, std::ptr::null_mut()), 0) };
}

#[test]
fn data_section_is_bounds_checked() {
    let mut f = Fixture::new(2);
    // SAFETY: live inventory.
    unsafe { assert_eq!(doca_buf_inventory_start(f.inv), 0) };
    let (head, d10, d60) = (f.at(0), f.at(10), f.at(60));
    let mut b = std::ptr::null_mut();
    // SAFETY: live objects and in-use buffer.
    unsafe {
        assert_eq!(
            doca_buf_inventory_buf_get_by_args(f.inv, f.mmap, head, 64, head, 0, &mut b),
            0
        );
        let (mut len, mut dl) = (0usize, 0usize);
        let (mut h, mut d) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(doca_buf_get_len(b, &mut len), 0);
        assert_eq!(doca_buf_get_head(b, &mut h), 0);
        assert_eq!((len, h), (64, head));
        assert_eq!(doca_buf_set_data(b, d10, 54), 0);
        assert_eq!(doca_buf_set_data(b, d10, 55), DocaError::INVALID_VALUE.0);
        assert_eq!(doca_buf_set_data(b, d60, 5), DocaError::INVALID_VALUE.0);
        assert_eq!(
            doca_buf_set_data(b, f.at(64), 0),
            0,
            "empty data at the very end"
        );
        assert_eq!(doca_buf_set_data(b, d10, 4), 0);
        assert_eq!(doca_buf_set_data_len(b, 54), 0);
        assert_eq!(doca_buf_set_data_len(b, 55), DocaError::INVALID_VALUE.0);
        assert_eq!(doca_buf_get_data(b, &mut d), 0);
        assert_eq!(doca_buf_get_data_len(b, &mut dl), 0);
        assert_eq!((d, dl), (d10, 54));
        assert_eq!(doca_buf_reset_data_len(b), 0);
        assert_eq!(doca_buf_get_data_len(b, &mut dl), 0);
        assert_eq!(dl, 0);
        let mut rc = 0u16;
        assert_eq!(doca_buf_inc_refcount(b, &mut rc), 0);
        assert_eq!(rc, 2);
        assert_eq!(doca_buf_dec_refcount(b, &mut rc), 0);
        assert_eq!(rc, 1);
        assert_eq!(f.free_count(), 1);
        assert_eq!(doca_buf_get_refcount(b, &mut rc), 0);
        assert_eq!(rc, 1);
        assert_eq!(
            doca_buf_get_len(std::ptr::null(), &mut len),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_buf_dec_refcount(b, &mut rc), 0);
        assert_eq!(f.free_count(), 2);
    }
}

#[test]
fn lists_chain_unchain_and_release_together() {
    let mut f = Fixture::new(4);
    // SAFETY: live inventory.
    unsafe { assert_eq!(doca_buf_inventory_start(f.inv), 0) };
    let a = f.get(0, 10).unwrap();
    let b = f.get(10, 10).unwrap();
    let c = f.get(20, 10).unwrap();
    // SAFETY: in-use buffers of the fixture's inventory.
    unsafe {
        assert_eq!(doca_buf_chain_list(a, b), 0);
        assert_eq!(
            doca_buf_chain_list(a, b),
            DocaError::INVALID_VALUE.0,
            "b is not a head"
        );
        let mut last = std::ptr::null_mut();
        assert_eq!(doca_buf_get_last_in_list(a, &mut last), 0);
        assert_eq!(last, b);
        assert_eq!(
            doca_buf_chain_list_tail(a, a, c),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_buf_chain_list_tail(b, a, c), 0);
        assert_eq!(doca_buf_chain_list(a, a), DocaError::INVALID_VALUE.0);
        let mut n = 0u32;
        assert_eq!(doca_buf_get_list_len(a, &mut n), 0);
        assert_eq!(n, 3);
        let (mut first, mut is_last, mut in_list) = (0u8, 0u8, 0u8);
        assert_eq!(doca_buf_is_first_in_list(b, &mut first), 0);
        assert_eq!(doca_buf_is_last_in_list(c, &mut is_last), 0);
        assert_eq!(doca_buf_is_in_list(b, &mut in_list), 0);
        assert_eq!((first, is_last, in_list), (0, 1, 1));
        let mut next = std::ptr::null_mut();
        assert_eq!(doca_buf_get_next_in_list(a, &mut next), 0);
        assert_eq!(next, b);
        assert_eq!(doca_buf_unchain_list(a, c), 0);
        assert_eq!(doca_buf_get_list_len(a, &mut n), 0);
        assert_eq!(n, 2);
        assert_eq!(doca_buf_unchain_list(a, c), DocaError::NOT_FOUND.0);
        // Releasing the head releases the list (b) too; c is separate.
        assert_eq!(doca_buf_dec_refcount(a, std::ptr::null_mut()), 0);
        assert_eq!(f.free_count(), 3);
        let mut dup = std::ptr::null_mut();
        assert_eq!(doca_buf_inventory_buf_dup(f.inv, c, &mut dup), 0);
        let mut dl = 0usize;
        assert_eq!(doca_buf_get_data_len(dup, &mut dl), 0);
        assert_eq!(dl, 10);
        assert_eq!(doca_buf_dec_refcount(dup, std::ptr::null_mut()), 0);
        assert_eq!(doca_buf_dec_refcount(c, std::ptr::null_mut()), 0);
        assert_eq!(f.free_count(), 4);
    }
}

#[test]
fn sizes_beyond_memory_or_u32_are_no_memory_not_an_abort() {
    let mut f = Fixture::new(4);
    // SAFETY: f.inv is live; out-pointers are writable.
    unsafe {
        assert_eq!(doca_buf_inventory_start(f.inv), 0);
        // 4 + UINT32_MAX elements cannot be counted in the API's u32.
        assert_eq!(
            doca_buf_inventory_expand(f.inv, u32::MAX),
            DocaError::NO_MEMORY.0
        );
        let mut n = 0u32;
        assert_eq!(doca_buf_inventory_get_num_elements(f.inv, &mut n), 0);
        assert_eq!(n, 4, "a refused expand adds nothing");
        let b = f.get(0, 16).expect("the inventory still works");
        assert_eq!(f.free_count(), 3);
        assert_eq!(doca_buf_dec_refcount(b, std::ptr::null_mut()), 0);
    }
    // 2^31-1 elements need about 2^31 * (a slot and a free-list entry) bytes: NO_MEMORY
    // on any machine with less memory than that (it must never abort the process).
    let need =
        ((1u64 << 31) - 1) * (std::mem::size_of::<Buf>() + std::mem::size_of::<*mut Buf>()) as u64;
    if need > physical_memory() {
        let mut inv = std::ptr::null_mut();
        // SAFETY: writable out-pointer.
        let rc = unsafe { doca_buf_inventory_create((1 << 31) - 1, &mut inv) };
        assert_eq!(rc, DocaError::NO_MEMORY.0);
        assert!(inv.is_null(), "nothing is written on failure");
    } else {
        println!("skipped the 2^31-1 create: this machine has more than {need} bytes");
    }
}
