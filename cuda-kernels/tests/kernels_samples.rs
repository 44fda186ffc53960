//! The sample kernels: every launcher's kernel is in the embedded fatbin and loads on a
//! GPU (skips without a CUDA driver); exec scopes map from the samples' `-e` values; the
//! exit flag and counters work through their CPU mappings.

use cuda_kernels::{ExecScope, ExitFlag, Kernels, TxCounters};
use doca_gpunetio::Gpu;
use doca_test_support::require_cuda;

const SAMPLE_KERNELS: &[&str] = &[
    "doca_rs_simple_receive_thread",
    "doca_rs_simple_receive_warp",
    "doca_rs_simple_receive_block",
    "doca_rs_simple_send_shared_thread",
    "doca_rs_simple_send_shared_warp",
    "doca_rs_simple_send_shared_block",
    "doca_rs_simple_send_exclusive",
    "doca_rs_send_wait_time",
];

#[test]
fn exec_scope_follows_the_sample_flag_values() {
    assert_eq!(ExecScope::from_index(0), Some(ExecScope::Thread));
    assert_eq!(ExecScope::from_index(1), Some(ExecScope::Warp));
    assert_eq!(ExecScope::from_index(2), Some(ExecScope::Block));
    assert_eq!(ExecScope::from_index(3), None);
}

#[test]
fn fatbin_names_every_sample_kernel() {
    // The fatbin keeps entry names as plain strings (extern "C": not mangled).
    let text = String::from_utf8_lossy(cuda_kernels::FATBIN);
    for k in SAMPLE_KERNELS {
        assert!(text.contains(k), "{k} missing from the fatbin");
    }
}

fn gpu() -> Option<Gpu> {
    require_cuda("sample kernels on a GPU")
        .then(|| Gpu::by_ordinal(0).expect("CUDA driver present but GPU 0 did not open"))
}

#[test]
fn gpu_every_sample_kernel_loads() {
    let Some(gpu) = gpu() else { return };
    let k = Kernels::load(&gpu).unwrap();
    for name in SAMPLE_KERNELS {
        k.function(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn gpu_exit_flag_round_trips_and_counters_start_at_zero() {
    let Some(gpu) = gpu() else { return };
    let flag = ExitFlag::new(&gpu).unwrap();
    assert!(!flag.is_set());
    flag.set();
    assert!(flag.is_set());
    let c = TxCounters::new(&gpu).unwrap();
    assert_eq!(c.read(), Default::default());
}
