//! `Semaphore` on a real GPU (`doca_gpu_semaphore_create`): status and custom info round
//! trips in CPU_GPU memory, GPU-only memory refused for CPU access. Without a CUDA driver
//! each test prints why it skips and returns.

use doca_gpunetio::{take_drop_errors, Error, Gpu, MemType, SemStatus, Semaphore};
use doca_test_support::require_cuda;

fn gpu() -> Option<Gpu> {
    require_cuda("semaphores need doca_gpu_create")
        .then(|| Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open"))
}

#[test]
fn cpu_gpu_semaphore_round_trips_status_and_info() {
    let Some(gpu) = gpu() else { return };
    let sem = Semaphore::<[u64; 4]>::with_info(&gpu)
        .memory(MemType::CpuGpu)
        .items(1024)
        .start()
        .unwrap();
    assert!(sem.gpu().is_some());
    for i in (0..1024).step_by(97) {
        sem.set_custom_info(i, [i as u64, 2, 3, u64::MAX - i as u64])
            .unwrap();
        sem.set_status(i, SemStatus::Ready).unwrap();
    }
    for i in (0..1024).step_by(97) {
        assert_eq!(sem.status(i).unwrap(), SemStatus::Ready);
        assert_eq!(
            sem.custom_info(i).unwrap(),
            [i as u64, 2, 3, u64::MAX - i as u64]
        );
    }
    assert_eq!(sem.status(1).unwrap(), SemStatus::Free);
    sem.gpu_handle().unwrap();
    sem.stop().unwrap();
    assert!(take_drop_errors().is_empty());
}

#[test]
fn gpu_memory_semaphore_refuses_cpu_access() {
    let Some(gpu) = gpu() else { return };
    let sem = Semaphore::builder(&gpu)
        .memory(MemType::Gpu)
        .items(8)
        .start()
        .unwrap();
    assert!(matches!(sem.status(0), Err(Error::InvalidArgument(_))));
    sem.gpu_handle().unwrap();
    drop(sem);
    assert!(take_drop_errors().is_empty());
}
