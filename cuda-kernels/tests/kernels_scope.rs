//! Kernels run inside `Kernels::scope`, which joins them before it returns: a kernel whose
//! guard was leaked with `mem::forget`, or whose scope unwound, is told to finish and has
//! returned by the time the queue it reads can be stopped. (That the queue cannot be dropped
//! inside the scope is a compile_fail doctest of `Kernels::scope`.) Needs a CUDA driver;
//! prints why it skips without one.

use cuda_kernels::{ExecScope, ExitFlag, Kernels, RxCounters, JOIN_TIMEOUT};
use doca_gpunetio::{Device, EthRxq, Gpu, RxqType};
use doca_test_support::require_cuda;
use std::time::Instant;

fn gpu() -> Option<Gpu> {
    require_cuda("kernels in a scope")
        .then(|| Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open"))
}

fn rx_queue(gpu: &Gpu) -> EthRxq {
    let lo = Device::open("lo").expect("the lo device");
    EthRxq::builder(&lo)
        .max_burst_size(64)
        .max_packet_size(2048)
        .kind(RxqType::Cyclic)
        .gpu_packet_buffer(gpu)
        .start()
        .expect("GPU receive queue on lo")
}

#[test]
fn gpu_scope_joins_a_leaked_kernel_before_its_queue_is_stopped() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let rxq = rx_queue(&gpu);
    let (exit, counters) = (ExitFlag::new(&gpu).unwrap(), RxCounters::new(&gpu).unwrap());
    let handle = rxq.gpu_handle().unwrap();
    let t0 = Instant::now();
    let ran = kernels.scope(|s| {
        let running = s
            .launch_simple_receive(handle, ExecScope::Block, &exit, &counters)
            .unwrap();
        let ran = !running.is_finished();
        std::mem::forget(running);
        ran
    });
    assert!(ran, "the receive kernel runs until its exit flag is set");
    assert!(
        exit.is_set(),
        "the scope set the exit flag of the leaked kernel"
    );
    assert!(
        t0.elapsed() < JOIN_TIMEOUT,
        "joined without waiting out the timeout"
    );
    assert_eq!(counters.read().errors, 0);
    rxq.stop().unwrap();
}

#[test]
fn gpu_a_panicking_scope_still_joins_its_kernels() {
    let Some(gpu) = gpu() else { return };
    let kernels = Kernels::load(&gpu).unwrap();
    let rxq = rx_queue(&gpu);
    let (exit, counters) = (ExitFlag::new(&gpu).unwrap(), RxCounters::new(&gpu).unwrap());
    let handle = rxq.gpu_handle().unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        kernels.scope(|s| {
            let _running = s
                .launch_simple_receive(handle, ExecScope::Thread, &exit, &counters)
                .unwrap();
            panic!("an error path inside the scope");
        })
    }));
    assert!(r.is_err());
    assert!(
        exit.is_set(),
        "the kernel was told to finish while unwinding"
    );
    rxq.stop().unwrap();
}
