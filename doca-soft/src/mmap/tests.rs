//! Tests of the mmap state machine and its C API (host memory; no GPU needed).

use super::*;
use crate::capi::doca_dev::doca_dev_close;
use crate::capi::doca_mmap::*;
use crate::dev::build_list;
use crate::dev::config::parse_ports;

/// An open device (a wire port, so no Linux interface is needed), as a C pointer.
pub(crate) fn test_dev() -> *mut Dev {
    let list = build_list(&[], &parse_ports("wire:mt").unwrap(), &[]);
    Box::into_raw(Box::new(Dev::new(Arc::new(list[0].clone()))))
}

fn create() -> *mut Mmap {
    let mut m: *mut Mmap = std::ptr::null_mut();
    // SAFETY: writable out-pointer.
    assert_eq!(unsafe { doca_mmap_create(&mut m) }, 0);
    m
}

#[test]
fn setters_work_only_before_start() {
    let m = create();
    let dev = test_dev();
    let mut mem = vec![0u8; 4096];
    let p = mem.as_mut_ptr().cast::<c_void>();
    // SAFETY: live mmap and device; mem outlives the mmap.
    unsafe {
        assert_eq!(doca_mmap_start(m), DocaError::BAD_STATE.0, "no range yet");
        assert_eq!(doca_mmap_stop(m), DocaError::BAD_STATE.0, "not started");
        assert_eq!(doca_mmap_set_memrange(m, p, 0), DocaError::INVALID_VALUE.0);
        assert_eq!(
            doca_mmap_set_memrange(m, std::ptr::null_mut(), 10),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_mmap_set_memrange(m, p, 4096), 0);
        assert_eq!(
            doca_mmap_set_permissions(m, 0x80),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_mmap_set_permissions(m, ACCESS_LOCAL_READ_WRITE), 0);
        assert_eq!(doca_mmap_add_dev(m, dev), 0);
        assert_eq!(doca_mmap_add_dev(m, dev), DocaError::ALREADY_EXIST.0);
        assert_eq!(
            doca_mmap_set_max_num_devices(m, 0),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_mmap_start(m), 0);
        assert_eq!(doca_mmap_start(m), DocaError::BAD_STATE.0);
        assert_eq!(doca_mmap_set_memrange(m, p, 100), DocaError::BAD_STATE.0);
        assert_eq!(doca_mmap_set_permissions(m, 1), DocaError::BAD_STATE.0);
        assert_eq!(doca_mmap_set_max_num_devices(m, 4), DocaError::BAD_STATE.0);
        assert_eq!(doca_mmap_add_dev(m, dev), DocaError::BAD_STATE.0);
        assert_eq!(doca_mmap_rm_dev(m, dev), DocaError::BAD_STATE.0);
        assert_eq!(
            doca_mmap_set_dmabuf_memrange(m, 3, p, 0, 100),
            DocaError::BAD_STATE.0
        );
        let (mut a, mut l) = (std::ptr::null_mut(), 0usize);
        assert_eq!(doca_mmap_get_memrange(m, &mut a, &mut l), 0);
        assert_eq!((a, l), (p, 4096));
        assert_eq!(doca_mmap_stop(m), 0);
        assert_eq!(
            doca_mmap_set_memrange(m, p, 100),
            0,
            "setters work again after stop"
        );
        assert_eq!(
            doca_dev_close(dev),
            DocaError::IN_USE.0,
            "device added to an mmap"
        );
        assert_eq!(doca_mmap_destroy(m), 0);
        assert_eq!(doca_dev_close(dev), 0, "destroy released the device");
    }
}

#[test]
fn mkey_needs_start_and_an_added_device() {
    let m = create();
    let dev = test_dev();
    let other = test_dev();
    let mut mem = vec![0u8; 256];
    let mut key = 0u32;
    // SAFETY: live objects; mem outlives the mmap.
    unsafe {
        assert_eq!(doca_mmap_add_dev(m, dev), 0);
        assert_eq!(doca_mmap_set_memrange(m, mem.as_mut_ptr().cast(), 256), 0);
        assert_eq!(doca_mmap_get_mkey(m, dev, &mut key), DocaError::BAD_STATE.0);
        assert_eq!(doca_mmap_start(m), 0);
        assert_eq!(
            doca_mmap_get_mkey(m, other, &mut key),
            DocaError::NOT_FOUND.0
        );
        assert_eq!(
            doca_mmap_get_mkey(m, std::ptr::null(), &mut key),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_mmap_get_mkey(m, dev, std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_mmap_get_mkey(m, dev, &mut key), 0);
        assert_eq!(key, (*m).mkey());
        assert!(Arc::ptr_eq(&mmap_by_mkey(key).unwrap(), (*m).shared()));
        assert_eq!(doca_mmap_destroy(m), 0);
        assert!(
            mmap_by_mkey(key).is_none(),
            "destroyed mmaps leave the mkey table"
        );
        assert_eq!(doca_dev_close(dev), 0);
        assert_eq!(doca_dev_close(other), 0);
    }
}

#[test]
fn users_block_stop_and_destroy() {
    let m = create();
    let mut mem = vec![0u8; 64];
    // SAFETY: live mmap; mem outlives it.
    unsafe {
        assert_eq!(doca_mmap_set_memrange(m, mem.as_mut_ptr().cast(), 64), 0);
        assert_eq!(doca_mmap_start(m), 0);
        (*m).add_user();
        assert_eq!(doca_mmap_stop(m), DocaError::IN_USE.0);
        assert_eq!(doca_mmap_destroy(m), DocaError::IN_USE.0);
        (*m).remove_user();
        assert_eq!(
            doca_mmap_destroy(m),
            0,
            "destroy of a started mmap stops it"
        );
    }
}

#[test]
fn device_limits_and_removal() {
    let m = create();
    let (a, b) = (test_dev(), test_dev());
    // SAFETY: live objects.
    unsafe {
        assert_eq!(doca_mmap_set_max_num_devices(m, 1), 0);
        assert_eq!(doca_mmap_add_dev(m, a), 0);
        assert_eq!(doca_mmap_add_dev(m, b), DocaError::NO_MEMORY.0);
        assert_eq!(doca_mmap_rm_dev(m, b), DocaError::NOT_FOUND.0);
        assert_eq!(doca_mmap_rm_dev(m, a), 0);
        assert_eq!(doca_dev_close(a), 0, "removed device is free to close");
        let mut n = 0u32;
        assert_eq!(doca_mmap_get_max_num_devices(m, &mut n), 0);
        assert_eq!(n, 1);
        assert_eq!(
            doca_mmap_add_dev(m, std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_mmap_destroy(m), 0);
        assert_eq!(doca_dev_close(b), 0);
    }
}

#[test]
fn host_range_copies_are_bounds_checked() {
    let m = create();
    let mut mem = vec![0u8; 128];
    let base = mem.as_mut_ptr();
    // SAFETY: live mmap; mem outlives it and is only read back after the copies.
    unsafe {
        assert_eq!(doca_mmap_set_memrange(m, base.cast(), 128), 0);
        assert_eq!((*m).write_at(0, b"x"), Err(DocaError::BAD_STATE));
        assert_eq!(doca_mmap_start(m), 0);
        assert!((*m).gpu_range().is_none(), "host memory");
        assert_eq!((*m).cpu_ptr(), Some(base));
        assert_eq!((*m).range().unwrap(), (base, 128));
        (*m).write_at(120, b"abcdefgh").unwrap();
        assert_eq!(
            (*m).write_at(121, b"abcdefgh"),
            Err(DocaError::INVALID_VALUE)
        );
        assert_eq!(
            (*m).write_at(usize::MAX, b"a"),
            Err(DocaError::INVALID_VALUE)
        );
        let mut back = [0u8; 8];
        (*m).read_at(120, &mut back).unwrap();
        assert_eq!(&back, b"abcdefgh");
        assert_eq!(doca_mmap_destroy(m), 0);
    }
    assert_eq!(&mem[120..], b"abcdefgh");
}

#[test]
fn dmabuf_range_must_be_gpu_memory() {
    let m = create();
    let mut mem = vec![0u8; 64];
    // SAFETY: live mmap; mem outlives it.
    unsafe {
        assert_eq!(
            doca_mmap_set_dmabuf_memrange(m, -1, mem.as_mut_ptr().cast(), 0, 64),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_mmap_set_dmabuf_memrange(m, 5, mem.as_mut_ptr().cast(), 0, 64),
            0
        );
        assert_eq!(doca_mmap_start(m), DocaError::INVALID_VALUE.0);
        assert_eq!(doca_mmap_destroy(m), 0);
        assert_eq!(
            doca_mmap_destroy(std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_mmap_create(std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
    }
}
