//! The TX proxies' batched reads of frames in device-only GPU memory (`RuntimeFrames::read_many`):
//! nearby frames of one allocation are copied as one span, spans never cross allocations,
//! and every segment comes back with exactly its own bytes, in order, errors in place.
//! Without a CUDA driver the test prints "skipped: ..." and returns.

use doca_soft::capi::doca_gpunetio::{
    doca_gpu_create, doca_gpu_destroy, doca_gpu_mem_alloc, doca_gpu_mem_free, Gpu,
};
use doca_soft::capi::doca_types::GPU_MEM_TYPE_GPU;
use doca_soft::testing::{FrameSeg, FrameSource};
use std::ffi::{c_void, CString};

/// The PCI bus id of CUDA device 0, or None (with the skip line printed) when no GPU is
/// usable.
fn first_gpu_bus_id() -> Option<CString> {
    doca_test_support::require_gpu("device-only GPU frames").map(|g| g.bus_id)
}

/// Device-only memory holding `pattern`; returns its device address.
fn device_buffer(g: *mut Gpu, pattern: &[u8]) -> u64 {
    let (mut d, mut c): (*mut c_void, *mut c_void) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: live GPU and writable out-pointers.
    let r = unsafe { doca_gpu_mem_alloc(g, pattern.len(), 4096, GPU_MEM_TYPE_GPU, &mut d, &mut c) };
    assert_eq!(r, 0);
    // SAFETY: `g` is a live GPU.
    let gpu = unsafe { doca_soft::testing::GpuView::new(g) }.unwrap();
    gpu.copy_to_device(d as u64, pattern).unwrap();
    d as u64
}

#[test]
fn batched_device_reads_return_each_segment_exactly() {
    let Some(bus) = first_gpu_bus_id() else {
        return;
    };
    let mut g: *mut Gpu = std::ptr::null_mut();
    // SAFETY: valid string and out-pointer.
    assert_eq!(unsafe { doca_gpu_create(bus.as_ptr(), &mut g) }, 0);
    let a_bytes: Vec<u8> = (0..(1usize << 20))
        .map(|i| (i * 7 + i / 251) as u8)
        .collect();
    let b_bytes: Vec<u8> = (0..65536usize).map(|i| (i * 13 + 5) as u8).collect();
    let a = device_buffer(g, &a_bytes);
    let b = device_buffer(g, &b_bytes);
    // SAFETY: a live GPU handle.
    let frames = unsafe { doca_soft::testing::runtime_frames(g) }.unwrap();
    let seg = |addr: u64, len: usize| FrameSeg {
        addr,
        mkey_be: 0,
        len,
    };
    // (segment, expected bytes or None for an error)
    let cases: Vec<(FrameSeg, Option<&[u8]>)> = vec![
        (seg(a, 100), Some(&a_bytes[..100])),
        (seg(a + 200, 100), Some(&a_bytes[200..300])),
        // Below the span so far: the span grows downwards.
        (seg(a + 150, 30), Some(&a_bytes[150..180])),
        // Far away in the same allocation: a span of its own.
        (seg(a + 600_000, 64), Some(&a_bytes[600_000..600_064])),
        // Another allocation right after: never merged across allocations.
        (seg(b + 10, 40), Some(&b_bytes[10..50])),
        // Not registered memory: an error in place, neighbours unaffected.
        (seg(0x10, 64), None),
        // The last bytes of an allocation.
        (seg(a + (1 << 20) - 8, 8), Some(&a_bytes[(1 << 20) - 8..])),
        (seg(b, 65536), Some(&b_bytes[..])),
    ];
    let segs: Vec<FrameSeg> = cases.iter().map(|c| c.0).collect();
    let mut out = vec![0xAAu8; 3]; // reads append after what is already there
    let mut got = Vec::new();
    frames.read_many(&segs, &mut out, &mut got);
    assert_eq!(got.len(), cases.len());
    assert_eq!(&out[..3], &[0xAA; 3], "bytes before the batch untouched");
    for (i, ((_, want), got)) in cases.iter().zip(&got).enumerate() {
        match (want, got) {
            (Some(w), Ok(r)) => assert_eq!(&out[r.clone()], *w, "segment {i}"),
            (None, Err(_)) => {}
            (w, g) => panic!("segment {i}: expected ok={} got {g:?}", w.is_some()),
        }
    }
    // One by one gives the same bytes.
    for (i, (s, want)) in cases.iter().enumerate() {
        let mut one = Vec::new();
        let r = frames.read(s.addr, s.mkey_be, s.len, &mut one);
        assert_eq!(r.is_ok(), want.is_some(), "segment {i}");
        if let Some(w) = want {
            assert_eq!(&one[..], *w, "segment {i} read alone");
        }
    }
    drop(frames);
    // SAFETY: live GPU; the buffers came from doca_gpu_mem_alloc and are freed once.
    unsafe {
        assert_eq!(doca_gpu_mem_free(g, a as *mut c_void), 0);
        assert_eq!(doca_gpu_mem_free(g, b as *mut c_void), 0);
        assert_eq!(doca_gpu_destroy(g), 0);
    }
}
