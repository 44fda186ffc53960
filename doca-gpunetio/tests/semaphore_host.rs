//! `Semaphore` through the safe API on the software runtime's host-memory semaphore (no GPU
//! here): builder validation, status round trips, unknown status values, typed custom
//! info, CPU access rules per memory type, the device handle and clean teardown.

// These tests drive the software runtime (its host-memory hooks and wire ports).
#![cfg(doca_backend = "soft")]

use doca_gpunetio::{
    sys, take_drop_errors, Error, GpuPod, MemType, NoInfo, SemStatus, SemaphoreBuilder,
};
use std::ptr::NonNull;

/// Per-item statistics, like the ones gpu_packet_processing passes from kernel to CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C)]
struct Stats {
    packets: u64,
    bytes: u64,
    dns: u32,
    other: u32,
}
// SAFETY: integers only, no padding (8 + 8 + 4 + 4 bytes, alignment 8).
unsafe impl GpuPod for Stats {}

fn host_builder<T: GpuPod>() -> SemaphoreBuilder<T> {
    let raw = doca_soft::testing::host_semaphore();
    let raw = NonNull::new(raw as *mut sys::doca_gpu_semaphore).unwrap();
    // SAFETY: a fresh, unstarted runtime semaphore (the C type is doca-soft's Semaphore);
    // the builder takes ownership.
    unsafe { SemaphoreBuilder::from_raw(raw) }
}

#[test]
fn status_round_trips_for_every_item_and_value() {
    let sem = host_builder::<NoInfo>()
        .memory(MemType::CpuGpu)
        .items(64)
        .start()
        .unwrap();
    assert_eq!(sem.items(), 64);
    assert!(sem.gpu().is_none());
    for i in 0..64 {
        assert_eq!(sem.status(i).unwrap(), SemStatus::Free, "items start FREE");
    }
    let all = [
        SemStatus::Ready,
        SemStatus::Done,
        SemStatus::Hold,
        SemStatus::Error,
        SemStatus::Exit,
        SemStatus::Free,
    ];
    for i in 0..64u32 {
        sem.set_status(i, all[i as usize % all.len()]).unwrap();
    }
    for i in 0..64u32 {
        assert_eq!(
            sem.status(i).unwrap(),
            all[i as usize % all.len()],
            "item {i}"
        );
    }
    // Out of range and unknown values are refused before DOCA, with clear messages.
    let e = sem.status(64).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("item 64 out of range")),
        "{e}"
    );
    let e = sem.set_status(0, SemStatus::Unknown(42)).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("Unknown(42)")),
        "{e}"
    );
    assert_eq!(
        sem.status(0).unwrap(),
        SemStatus::Ready,
        "a refused set changes nothing"
    );
    // No custom info on a NoInfo semaphore.
    let e = sem.custom_info(0).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("no custom information")),
        "{e}"
    );
    sem.stop().unwrap();
    assert!(take_drop_errors().is_empty());
}

#[test]
fn an_unknown_status_word_written_by_a_kernel_is_reported_not_ub() {
    let sem = host_builder::<NoInfo>().items(4).start().unwrap();
    // The C API refuses values outside the enum...
    // SAFETY: the semaphore is live and started; index in range.
    let rc = unsafe {
        sys::doca_gpu_semaphore_set_status(sem.as_raw(), 2, sys::doca_gpu_semaphore_status(77))
    };
    assert_eq!(rc, sys::doca_error_t::DOCA_ERROR_INVALID_VALUE);
    // ...but a kernel writes the status word directly. Host memory here: the device handle
    // and the status array are CPU pointers.
    let h = sem.gpu_handle().unwrap();
    // SAFETY: the runtime's device handle layout (doca_soft::testing::SemHandle), live
    // while `sem` is; item 2 is in range.
    unsafe {
        let handle = &*(h.as_raw() as *const doca_soft::testing::SemHandle);
        assert_eq!(handle.num_items, 4);
        std::ptr::write_volatile((handle.status_addr as *mut u32).add(2), 77);
    }
    assert_eq!(sem.status(2).unwrap(), SemStatus::Unknown(77));
    assert_eq!(sem.status(1).unwrap(), SemStatus::Free);
    sem.set_status(2, SemStatus::Exit).unwrap();
    assert_eq!(sem.status(2).unwrap(), SemStatus::Exit);
    drop(sem);
    assert!(take_drop_errors().is_empty());
}

#[test]
fn typed_custom_info_round_trips_per_item() {
    let sem = host_builder::<Stats>()
        .memory(MemType::CpuGpu)
        .custom_info_memory(MemType::CpuGpu)
        .items(16)
        .start()
        .unwrap();
    for i in 0..16u32 {
        let s = Stats {
            packets: 1000 + i as u64,
            bytes: (i as u64) << 40 | 7,
            dns: i * 3,
            other: !i,
        };
        sem.set_custom_info(i, s).unwrap();
        sem.set_status(i, SemStatus::Ready).unwrap();
    }
    for i in 0..16u32 {
        assert_eq!(sem.status(i).unwrap(), SemStatus::Ready);
        let s = sem.custom_info(i).unwrap();
        assert_eq!(
            s,
            Stats {
                packets: 1000 + i as u64,
                bytes: (i as u64) << 40 | 7,
                dns: i * 3,
                other: !i
            },
            "item {i}"
        );
        sem.set_status(i, SemStatus::Free).unwrap();
    }
    assert!(sem.custom_info(16).is_err());
    // The device handle is stable.
    assert_eq!(
        sem.gpu_handle().unwrap().as_raw(),
        sem.gpu_handle().unwrap().as_raw()
    );
    drop(sem);
    assert!(take_drop_errors().is_empty());
}

#[test]
fn gpu_only_memory_is_not_cpu_accessible() {
    let sem = host_builder::<Stats>()
        .memory(MemType::Gpu)
        .custom_info_memory(MemType::Gpu)
        .items(8)
        .start()
        .unwrap();
    let e = sem.status(0).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("Gpu memory") && m.contains("CpuGpu")),
        "{e}"
    );
    let e = sem.set_status(0, SemStatus::Ready).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let e = sem.custom_info(0).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("custom information lives in Gpu memory")),
        "{e}"
    );
    // Kernels can still use it.
    sem.gpu_handle().unwrap();
    drop(sem);
    // Status words in CPU memory, info on the GPU: only the info is refused.
    let sem = host_builder::<Stats>()
        .memory(MemType::CpuGpu)
        .custom_info_memory(MemType::Gpu)
        .items(8)
        .start()
        .unwrap();
    sem.set_status(3, SemStatus::Done).unwrap();
    assert_eq!(sem.status(3).unwrap(), SemStatus::Done);
    assert!(sem.set_custom_info(3, Stats::default()).is_err());
    drop(sem);
    assert!(take_drop_errors().is_empty());
}

#[test]
fn builder_validation_destroys_the_adopted_object() {
    let e = host_builder::<NoInfo>().start().unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("Semaphore::start") && m.contains("items")),
        "{e}"
    );
    // A builder dropped without start destroys its adopted semaphore too.
    drop(host_builder::<Stats>().items(4));
    assert!(take_drop_errors().is_empty());
    assert!(
        format!("{:?}", host_builder::<Stats>().items(2).start().unwrap())
            .contains("info_bytes: 24")
    );
}
