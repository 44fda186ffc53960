//! GPU memory through the C API on a real GPU. Without a CUDA driver every test prints
//! "skipped: <test>: no CUDA driver ..." and returns. Runnable standalone:
//! `cargo test -p doca-soft --test gpu_mem` (or the built test binary on a machine with an NVIDIA GPU).

use doca_soft::capi::doca_error::DocaError;
use doca_soft::capi::doca_gpunetio::{
    doca_gpu_create, doca_gpu_destroy, doca_gpu_dmabuf_fd, doca_gpu_mem_alloc, doca_gpu_mem_free,
    Gpu,
};
use doca_soft::capi::doca_types::{GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU, GPU_MEM_TYPE_GPU_CPU};
use std::ffi::{c_int, c_void, CStr, CString};

/// The PCI bus id of CUDA device 0, or None (with the skip line printed) when no GPU is
/// usable.
fn first_gpu_bus_id() -> Option<CString> {
    doca_test_support::require_gpu("GPU memory through the C API").map(|g| g.bus_id)
}

fn open(bus: &CStr) -> *mut Gpu {
    let mut g: *mut Gpu = std::ptr::null_mut();
    // SAFETY: valid string and out-pointer.
    assert_eq!(unsafe { doca_gpu_create(bus.as_ptr(), &mut g) }, 0);
    assert!(!g.is_null());
    g
}

fn alloc(g: *mut Gpu, size: usize, align: usize, t: u32) -> (*mut c_void, *mut c_void) {
    let (mut d, mut c) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: live GPU and writable out-pointers.
    assert_eq!(
        unsafe { doca_gpu_mem_alloc(g, size, align, t, &mut d, &mut c) },
        0
    );
    assert!(!d.is_null());
    (d, c)
}

#[test]
fn create_with_real_and_unknown_bus_ids() {
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    let mut other: *mut Gpu = std::ptr::null_mut();
    // SAFETY: valid arguments; g is destroyed once.
    unsafe {
        assert_eq!(
            doca_gpu_create(c"0000:ff:1f.7".as_ptr(), &mut other),
            DocaError::NOT_FOUND.0
        );
        assert_eq!(doca_gpu_destroy(g), 0);
    }
}

#[test]
fn device_memory_round_trip_alignment_and_double_free() {
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    // SAFETY: g is live until destroyed at the end.
    let gpu = unsafe { doca_soft::testing::GpuView::new(g) }.unwrap();
    let (d, c) = alloc(g, 4096 + 3, 65536, GPU_MEM_TYPE_GPU);
    assert!(c.is_null(), "GPU memory has no CPU pointer");
    assert_eq!(d as u64 % 65536, 0, "alignment honoured");
    let data: Vec<u8> = (0..4099u32).map(|i| (i * 7) as u8).collect();
    gpu.copy_to_device(d as u64, &data).unwrap();
    let mut back = vec![0u8; data.len()];
    gpu.copy_from_device(&mut back, d as u64).unwrap();
    assert_eq!(back, data);
    assert!(gpu.cpu_ptr_of(d as u64).is_none());
    // SAFETY: d came from mem_alloc; the second free must be rejected.
    unsafe {
        assert_eq!(doca_gpu_mem_free(g, d), 0);
        assert_eq!(doca_gpu_mem_free(g, d), DocaError::INVALID_VALUE.0);
        let mut x = 0u64;
        assert_eq!(
            doca_gpu_mem_free(g, (&mut x as *mut u64).cast()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_gpu_destroy(g), 0);
    }
}

#[test]
fn mapped_memory_is_visible_from_both_sides() {
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    // SAFETY: g is live until destroyed at the end.
    let gpu = unsafe { doca_soft::testing::GpuView::new(g) }.unwrap();
    for t in [GPU_MEM_TYPE_CPU_GPU, GPU_MEM_TYPE_GPU_CPU] {
        let (d, c) = alloc(g, 1000, 4096, t);
        assert!(!c.is_null(), "type {t} has a CPU pointer");
        assert_eq!(d as u64 % 4096, 0);
        assert_eq!(c as u64 % 4096, 0);
        assert_eq!(
            gpu.cpu_ptr_of(d as u64 + 10),
            Some((c as usize + 10) as *mut u8)
        );
        // CPU write, device read.
        // SAFETY: c points to 1000 CPU-mapped bytes.
        unsafe { std::ptr::write_bytes(c.cast::<u8>(), 0xab, 1000) };
        let mut back = vec![0u8; 1000];
        gpu.copy_from_device(&mut back, d as u64).unwrap();
        assert!(back.iter().all(|b| *b == 0xab));
        // Device write, CPU read.
        let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        gpu.copy_to_device(d as u64, &data).unwrap();
        // SAFETY: as above.
        let seen = unsafe { std::slice::from_raw_parts(c.cast::<u8>(), 1000) };
        assert_eq!(seen, &data[..]);
        // SAFETY: d came from mem_alloc.
        assert_eq!(unsafe { doca_gpu_mem_free(g, d) }, 0);
    }
    // SAFETY: g from doca_gpu_create.
    assert_eq!(unsafe { doca_gpu_destroy(g) }, 0);
}

#[test]
fn bad_alloc_arguments() {
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    let (mut d, mut c) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: live GPU and writable out-pointers.
    unsafe {
        assert_eq!(
            doca_gpu_mem_alloc(g, 0, 0, GPU_MEM_TYPE_GPU, &mut d, &mut c),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_gpu_mem_alloc(g, 64, 48, GPU_MEM_TYPE_GPU, &mut d, &mut c),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_gpu_mem_alloc(g, 64, 0, GPU_MEM_TYPE_CPU_GPU, &mut d, std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_gpu_destroy(g), 0);
    }
}

#[test]
fn dmabuf_fd_is_valid_or_not_supported() {
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    let size = 2 << 20;
    let (d, _) = alloc(g, size, 2 << 20, GPU_MEM_TYPE_GPU);
    let mut fd: c_int = -1;
    // SAFETY: live GPU and writable out-pointer.
    let r = unsafe { doca_gpu_dmabuf_fd(g, d, size, &mut fd) };
    if r == 0 {
        // SAFETY: an all-zero stat is valid to fill.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fd is the descriptor just returned.
        assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0, "dmabuf fd is open");
        // SAFETY: we own the descriptor.
        unsafe { libc::close(fd) };
        println!("dmabuf supported");
    } else {
        assert_eq!(r, DocaError::NOT_SUPPORTED.0);
        println!("dmabuf not supported by this driver");
    }
    // SAFETY: d came from mem_alloc; g from doca_gpu_create.
    unsafe {
        assert_eq!(doca_gpu_mem_free(g, d), 0);
        assert_eq!(doca_gpu_destroy(g), 0);
    }
}

#[test]
fn destroy_frees_leftover_memory() {
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    let (d, _) = alloc(g, 1 << 20, 0, GPU_MEM_TYPE_GPU);
    // SAFETY: g from doca_gpu_create; d was not freed by the program.
    unsafe { assert_eq!(doca_gpu_destroy(g), 0) };
    assert!(!doca_soft::testing::gpu_memory_registered(d as u64, 1));
}

#[test]
fn mmap_of_gpu_memory_and_buf_arr_handle() {
    use doca_soft::capi::doca_buf_array::*;
    use doca_soft::capi::doca_mmap::*;
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    // SAFETY: g is live until destroyed at the end.
    let gpu = unsafe { doca_soft::testing::GpuView::new(g) }.unwrap();
    let size = 1 << 16;
    let (d, _) = alloc(g, size, 4096, GPU_MEM_TYPE_GPU);
    let (mut m, mut a) = (std::ptr::null_mut(), std::ptr::null_mut());
    let mut h: *mut c_void = std::ptr::null_mut();
    // SAFETY: live objects, writable out-pointers; torn down in reverse order.
    unsafe {
        assert_eq!(doca_mmap_create(&mut m), 0);
        assert_eq!(doca_mmap_set_memrange(m, d, size), 0);
        assert_eq!(doca_mmap_start(m), 0);
        let mm = doca_soft::testing::MmapView::new(m).unwrap();
        assert!(mm.gpu_addr().is_some(), "range is GPU memory");
        assert!(mm.cpu_ptr().is_none(), "device-only memory");
        mm.write_at(100, b"hello gpu").unwrap();
        let mut back = [0u8; 9];
        mm.read_at(100, &mut back).unwrap();
        assert_eq!(&back, b"hello gpu");
        let mut direct = [0u8; 9];
        gpu.copy_from_device(&mut direct, d as u64 + 100).unwrap();
        assert_eq!(&direct, b"hello gpu");

        assert_eq!(doca_buf_arr_create(8, &mut a), 0);
        assert_eq!(doca_buf_arr_set_params(a, m, 1024, 512), 0);
        assert_eq!(doca_buf_arr_set_target_gpu(a, g), 0);
        assert_eq!(doca_buf_arr_start(a), 0);
        assert_eq!(doca_buf_arr_get_gpu_handle(a, &mut h), 0);
        assert!(!h.is_null());
        let mut raw = [0u8; 16 * 8];
        gpu.copy_from_device(&mut raw, h as u64).unwrap();
        let e3_addr = u64::from_ne_bytes(raw[48..56].try_into().unwrap());
        let e3_mkey = u32::from_ne_bytes(raw[56..60].try_into().unwrap());
        assert_eq!(e3_addr, d as u64 + 512 + 3 * 1024);
        assert_eq!(u32::from_be(e3_mkey), mm.mkey());
        assert_eq!(doca_buf_arr_stop(a), 0);
        assert_eq!(doca_buf_arr_destroy(a), 0);
        assert_eq!(doca_mmap_destroy(m), 0);
        assert_eq!(doca_gpu_mem_free(g, d), 0);
        assert_eq!(doca_gpu_destroy(g), 0);
    }
}

#[test]
fn mmap_by_cpu_address_of_mapped_memory() {
    use doca_soft::capi::doca_mmap::*;
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    let (d, c) = alloc(g, 4096, 0, GPU_MEM_TYPE_CPU_GPU);
    let mut m = std::ptr::null_mut();
    // SAFETY: live objects; c maps 4096 bytes.
    unsafe {
        assert_eq!(doca_mmap_create(&mut m), 0);
        assert_eq!(doca_mmap_set_memrange(m, c, 4096), 0);
        assert_eq!(doca_mmap_start(m), 0);
        let mm = doca_soft::testing::MmapView::new(m).unwrap();
        let r = mm
            .gpu_addr()
            .expect("CPU address of a GPU allocation is recognised");
        assert_eq!(r, d as u64);
        assert_eq!(mm.cpu_ptr(), Some(c.cast::<u8>()));
        mm.write_at(0, b"abc").unwrap();
        assert_eq!(std::slice::from_raw_parts(c.cast::<u8>(), 3), b"abc");
        assert_eq!(doca_mmap_destroy(m), 0);
        assert_eq!(doca_gpu_mem_free(g, d), 0);
        assert_eq!(doca_gpu_destroy(g), 0);
    }
}

#[test]
fn objects_using_a_destroyed_gpu_keep_its_memory() {
    use doca_soft::capi::doca_mmap::*;
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let g = open(&bus);
    let (d, _) = alloc(g, 4096, 0, GPU_MEM_TYPE_GPU);
    let mut m = std::ptr::null_mut();
    // SAFETY: live objects; the GPU handle is not used after its destroy.
    unsafe {
        assert_eq!(doca_mmap_create(&mut m), 0);
        assert_eq!(doca_mmap_set_memrange(m, d, 4096), 0);
        assert_eq!(doca_mmap_start(m), 0);
        assert_eq!(
            doca_gpu_destroy(g),
            0,
            "destroy succeeds while the mmap uses the GPU"
        );
        let mm = doca_soft::testing::MmapView::new(m).unwrap();
        mm.write_at(8, b"still here").unwrap();
        let mut back = [0u8; 10];
        mm.read_at(8, &mut back).unwrap();
        assert_eq!(&back, b"still here");
        assert!(doca_soft::testing::gpu_memory_registered(d as u64, 1));
        assert_eq!(doca_mmap_destroy(m), 0);
    }
    assert!(
        !doca_soft::testing::gpu_memory_registered(d as u64, 1),
        "leftover memory freed with the last user"
    );
}
