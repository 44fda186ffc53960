//! GPU memory through the safe API, on a machine with a CUDA driver: every memory type,
//! both pointers, alignment, memory maps over GPU memory (dmabuf or address).
//! Without a driver each test prints why it skips and returns.

use doca_gpunetio::{AccessFlags, Device, Gpu, GpuAtomicBuffer, GpuBuffer, MemType, Mmap};
use doca_test_support::require_cuda;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

fn gpu() -> Option<Gpu> {
    require_cuda("")
        .then(|| Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open"))
}

/// A pattern that differs per element and per run (no test on zeros).
fn pattern(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761).wrapping_add(seed) | 1)
        .collect()
}

#[test]
fn every_memory_type_round_trips_through_both_pointers() {
    let Some(gpu) = gpu() else { return };
    let seed = std::process::id();
    for mt in [MemType::Gpu, MemType::GpuCpu, MemType::CpuGpu] {
        let n = 1 << 20;
        let mut buf = GpuBuffer::<u32>::with_alignment(&gpu, n, 65536, mt).unwrap();
        assert_eq!(buf.device_ptr() % 65536, 0, "{mt:?} alignment");
        assert_eq!(
            buf.cpu_ptr().is_some(),
            mt != MemType::Gpu,
            "{mt:?} cpu pointer"
        );
        let want = pattern(n, seed);
        buf.copy_from_host(&want).unwrap();
        let mut got = vec![0u32; n];
        buf.copy_to_host(&mut got).unwrap();
        assert_eq!(got, want, "{mt:?} round trip");
        if mt != MemType::Gpu {
            // Written through the CPU mapping, read through the GPU pointer with a CUDA copy.
            assert!(buf.write(7, 0xdead_beef));
            let mut dev_view = vec![0u32; 8];
            gpu.cuda().bind_to_thread().unwrap();
            // SAFETY: the device pointer covers at least 8 u32.
            unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut dev_view, buf.device_ptr()) }
                .unwrap();
            assert_eq!(
                dev_view[7], 0xdead_beef,
                "{mt:?}: CPU write visible through the GPU pointer"
            );
            // Written through the GPU pointer, read through the CPU mapping.
            // SAFETY: as above.
            unsafe {
                cudarc::driver::result::memcpy_htod_sync(
                    buf.device_ptr() + 4 * 3,
                    &[0x1234_5678u32],
                )
            }
            .unwrap();
            assert_eq!(
                buf.read(3),
                Some(0x1234_5678),
                "{mt:?}: GPU write visible through the CPU pointer"
            );
        } else {
            assert_eq!(buf.read(0), None);
        }
    }
}

#[test]
fn gpu_memory_maps_for_a_device() {
    let Some(gpu) = gpu() else { return };
    let lo = Device::open("lo").unwrap();
    let buf = GpuBuffer::<u8>::with_alignment(&gpu, 1 << 21, 65536, MemType::Gpu).unwrap();
    let m = Mmap::from_gpu_buffer(&buf, &[&lo], AccessFlags::LOCAL_READ_WRITE).unwrap();
    let (addr, len) = m.range().unwrap();
    assert_eq!((addr as u64, len), (buf.device_ptr(), 1 << 21));
    m.mkey(&lo).unwrap();
}

#[test]
fn bad_gpu_requests_are_clear_errors() {
    let Some(gpu) = gpu() else { return };
    assert!(GpuBuffer::<u8>::new(&gpu, 0, MemType::Gpu).is_err());
    assert!(GpuBuffer::<u8>::with_alignment(&gpu, 16, 3, MemType::Gpu).is_err());
    let e = Gpu::open("ff:1f.7").unwrap_err();
    assert!(e.to_string().contains("ff:1f.7"), "{e}");
    assert!(doca_gpunetio::take_drop_errors().is_empty());
}

#[test]
fn atomic_words_are_zeroed_shared_by_threads_and_seen_by_the_gpu() {
    let Some(gpu) = gpu() else { return };
    assert!(GpuAtomicBuffer::<AtomicU32>::new(&gpu, 1, MemType::Gpu).is_err());
    assert!(GpuAtomicBuffer::<AtomicU64>::new(&gpu, 0, MemType::CpuGpu).is_err());
    for mt in [MemType::CpuGpu, MemType::GpuCpu] {
        let words = GpuAtomicBuffer::<AtomicU64>::new(&gpu, 64, mt).unwrap();
        assert_eq!(words.len(), 64);
        assert!(
            words.iter().all(|w| w.load(Ordering::Acquire) == 0),
            "{mt:?} zeroed"
        );
        // Four threads store their own words through `&self`.
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let words = &words;
                s.spawn(move || {
                    for i in (t as usize..64).step_by(4) {
                        words[i].store(1000 + i as u64, Ordering::Release);
                    }
                });
            }
        });
        let mut dev_view = vec![0u64; 64];
        gpu.cuda().bind_to_thread().unwrap();
        // SAFETY: the device pointer covers 64 u64.
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut dev_view, words.device_ptr()) }
            .unwrap();
        let want: Vec<u64> = (0..64).map(|i| 1000 + i).collect();
        assert_eq!(
            dev_view, want,
            "{mt:?}: CPU stores visible through the GPU pointer"
        );
        // SAFETY: as above.
        unsafe { cudarc::driver::result::memcpy_htod_sync(words.device_ptr() + 8, &[77u64]) }
            .unwrap();
        assert_eq!(
            words[1].load(Ordering::Acquire),
            77,
            "{mt:?}: GPU write seen"
        );
    }
}
