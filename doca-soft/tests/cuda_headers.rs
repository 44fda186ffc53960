//! The device headers compile: a CUDA translation unit that includes every `.cuh` and calls
//! every template in every scope/mode (nvcc, `-arch=sm_90 -std=c++17`, warnings are errors),
//! and the queue C headers in C and C++ (gcc/g++, `-Wall -Wextra -Werror`).

use doca_soft::testing::{
    BufDesc, GpuBufEntry, RxAttr, RxCqe, RxqHandle, SemHandle, SemPacketInfo, TxCqe, TxDesc,
    TxqHandle,
};
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

/// doca-soft's source directory: `DOCA_SOFT_SRC_DIR`, else where it was built, else
/// `./doca-soft` (a built test binary run from the repository root on another machine).
fn src_dir() -> PathBuf {
    let mut candidates = Vec::new();
    if let Ok(d) = std::env::var("DOCA_SOFT_SRC_DIR") {
        candidates.push(PathBuf::from(d));
    }
    candidates.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    candidates.push(PathBuf::from("doca-soft"));
    candidates
        .iter()
        .find(|d| d.join("include/doca_gpunetio_eth_def.h").exists())
        .cloned()
        .unwrap_or_else(|| candidates[0].clone())
}

fn include_dir() -> PathBuf {
    src_dir().join("include")
}

fn nvcc() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NVCC") {
        if Path::new(&p).exists() {
            return Some(p.into());
        }
    }
    let out = Command::new("sh")
        .args(["-c", "command -v nvcc"])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !p.is_empty() {
        return Some(p.into());
    }
    let cuda = Path::new("/usr/local/cuda/bin/nvcc");
    cuda.exists().then(|| cuda.to_path_buf())
}

const EXEC: [&str; 3] = [
    "DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD",
    "DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP",
    "DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK",
];
const MCST: [&str; 3] = [
    "DOCA_GPUNETIO_ETH_MCST_DISABLED",
    "DOCA_GPUNETIO_ETH_MCST_ENABLED",
    "DOCA_GPUNETIO_ETH_MCST_AUTO",
];
const NIC: [&str; 3] = [
    "DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO",
    "DOCA_GPUNETIO_ETH_NIC_HANDLER_CPU_PROXY",
    "DOCA_GPUNETIO_ETH_NIC_HANDLER_GPU_SM_DB",
];
const ATTR: [&str; 3] = [
    "DOCA_GPUNETIO_ETH_RX_ATTR_NONE",
    "DOCA_GPUNETIO_ETH_RX_ATTR_TS",
    "DOCA_GPUNETIO_ETH_RX_ATTR_ALL",
];
const SHARING: [&str; 3] = [
    "DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE",
    "DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA",
    "DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU",
];
const SYNC: [&str; 3] = [
    "DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS",
    "DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU",
    "DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA",
];
const POLL: [&str; 2] = [
    "DOCA_GPUNETIO_ETH_CQ_POLL_ALL",
    "DOCA_GPUNETIO_ETH_CQ_POLL_LAST",
];

/// A TU with one call of every template instantiation and of every plain device function.
fn device_tu() -> String {
    let mut s = String::from(
        "#include <doca_gpunetio_dev_eth_common.cuh>\n\
         #include <doca_gpunetio_dev_eth_rxq.cuh>\n\
         #include <doca_gpunetio_dev_eth_txq.cuh>\n\
         #include <doca_gpunetio_dev_sem.cuh>\n\
         #include <doca_gpunetio_dev_buf.cuh>\n\
         #include <doca_gpunetio_eth_def.h>\n\
         #include <doca_eth_rxq_gpu_data_path.h>\n\
         #include <doca_eth_txq_gpu_data_path.h>\n\
         __global__ void all_rx(struct doca_gpu_eth_rxq *rxq, uint64_t *out) {\n\
         __shared__ uint64_t first; __shared__ uint32_t num;\n\
         __shared__ struct doca_gpu_dev_eth_rxq_attr attr[64];\n\
         uint64_t acc = 0;\n",
    );
    for e in EXEC {
        for m in MCST {
            for n in NIC {
                for a in ATTR {
                    s += &format!(
                        "acc += doca_gpu_dev_eth_rxq_recv<{e}, {m}, {n}, {a}>(rxq, 64, 1000, &first, &num, attr);\n"
                    );
                }
            }
        }
    }
    for m in MCST.iter().take(1) {
        for n in NIC {
            for a in ATTR {
                for f in ["thread", "warp", "block"] {
                    s += &format!(
                        "acc += doca_gpu_dev_eth_rxq_recv_{f}<{m}, {n}, {a}>(rxq, 8, 10, &first, &num, attr);\n"
                    );
                }
            }
        }
    }
    s += "acc += doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first) + doca_gpu_dev_eth_rxq_get_pkt_mkey(rxq);\n\
          acc += doca_gpu_dev_eth_rxq_get_pkt_ts(rxq, first) + doca_gpu_dev_eth_rxq_get_pkt_bytes(rxq, first);\n\
          doca_gpu_dev_eth_rxq_mcst<DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>(&rxq->mcst_qp);\n\
          doca_gpu_dev_eth_rxq_submit_dbr<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>(rxq, 1);\n\
          doca_gpu_dev_eth_rxq_submit_cq_dbr<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA, DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(rxq, 1);\n\
          uint32_t n32; uint64_t idx; struct doca_gpu_buf *buf; uintptr_t a; uint32_t mk; uint64_t ts;\n\
          acc += doca_gpu_dev_eth_rxq_receive_thread(rxq, 4, 10, &n32, &idx);\n\
          acc += doca_gpu_dev_eth_rxq_receive_warp(rxq, 4, 10, &num, &first);\n\
          acc += doca_gpu_dev_eth_rxq_receive_block(rxq, 4, 10, &num, &first);\n\
          doca_gpu_dev_eth_rxq_get_buf(rxq, idx, &buf); doca_gpu_dev_buf_get_addr(buf, &a);\n\
          doca_gpu_dev_buf_get_mkey(buf, &mk);\n\
          doca_gpu_dev_eth_rxq_get_buf_timestamp(rxq, idx, &ts); doca_gpu_dev_eth_rxq_get_buf_bytes(rxq, idx, &n32);\n\
          acc += a + mk + ts + n32 + doca_gpu_dev_eth_get_lane_id() + doca_gpu_dev_eth_query_globaltimer();\n\
          acc += doca_gpu_dev_eth_bswap64(acc) + doca_gpu_dev_eth_bswap32((uint32_t)acc) + DOCA_GPUNETIO_ETH_BSWAP16(acc);\n\
          acc += doca_gpu_dev_eth_load_relaxed_sys_global((const uint8_t *)out) + doca_gpu_dev_eth_load_relaxed_sys_global((const uint16_t *)out);\n\
          acc += doca_gpu_dev_eth_load_relaxed_sys_global((const uint64_t *)out);\n\
          doca_gpu_dev_eth_store_relaxed_mmio(out + 1, acc);\n\
          acc += doca_gpu_dev_eth_prepare_dbr((uint32_t)acc) + doca_gpu_dev_eth_prepare_cq_dbr((uint32_t)acc);\n\
          out[0] = acc;\n}\n";

    s += "__global__ void all_tx(struct doca_gpu_eth_txq *txq, struct doca_gpu_buf_arr *arr, uint64_t *out) {\n\
          doca_gpu_dev_eth_ticket_t t = 0; doca_gpu_dev_eth_txq_ticket_t t2 = 0; uint32_t n = 0; uint64_t acc = 0;\n\
          enum doca_gpu_eth_send_flags f = DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY;\n";
    for sh in SHARING {
        for sy in SYNC {
            for ni in NIC {
                for e in EXEC {
                    s += &format!(
                        "doca_gpu_dev_eth_txq_send<{sh}, {sy}, {ni}, {e}>(txq, 0, 0, 64, f, &t); acc += t;\n\
                         doca_gpu_dev_eth_txq_wait_send<{sh}, {sy}, {ni}, {e}>(txq, 1, 0, 0, 64, f, &t); acc += t;\n"
                    );
                }
                s += &format!("doca_gpu_dev_eth_txq_submit<{sh}, {sy}, {ni}>(txq, acc);\n");
            }
            for p in POLL {
                s += &format!(
                    "acc += doca_gpu_dev_eth_txq_poll_completion<{p}, {sh}, {sy}>(txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &n) + n;\n\
                     acc += doca_gpu_dev_eth_txq_poll_completion<{p}, {sh}, {sy}>(txq, 2, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB, &n) + n;\n"
                );
            }
            s += &format!(
                "acc += doca_gpu_dev_eth_txq_poll_completion_at<{sh}, {sy}>(txq, acc, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB);\n\
                 doca_gpu_dev_eth_fence_acquire<{sy}>(); doca_gpu_dev_eth_fence_release<{sy}>();\n"
            );
        }
        s += &format!(
            "acc += doca_gpu_dev_eth_atomic_add<uint64_t, {sh}>(out, 1) + doca_gpu_dev_eth_atomic_max<uint64_t, {sh}>(out, 2);\n\
             acc += doca_gpu_dev_eth_atomic_read<uint64_t, {sh}>(out);\n\
             doca_gpu_dev_eth_lock<{sh}>((int *)(out + 2)); doca_gpu_dev_eth_unlock<{sh}>((int *)(out + 2));\n"
        );
    }
    for f in ["thread", "warp", "block"] {
        s += &format!(
            "doca_gpu_dev_eth_txq_send_{f}(txq, 0, 0, 64, f, &t);\n\
             doca_gpu_dev_eth_txq_wait_send_{f}(txq, 1, 0, 0, 64, f, &t);\n"
        );
    }
    s += "uint64_t w = 0; acc += doca_gpu_dev_eth_txq_calculate_timestamp(txq, 1234, &w) + w;\n\
          struct doca_gpu_dev_eth_txq_wqe *wqe = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, (uint16_t)acc);\n\
          acc += doca_gpu_dev_eth_txq_wqe_prepare_send(txq, wqe, 1, 0, 0, 64, f);\n\
          acc += doca_gpu_dev_eth_txq_wqe_prepare_send(txq, wqe, 1, 0, 0, 14, 64, 0, 50, f);\n\
          acc += doca_gpu_dev_eth_txq_wqe_prepare_wait_time(txq, wqe, 1, w);\n\
          acc += doca_gpu_dev_eth_txq_reserve_wq_slots(txq, 1);\n\
          doca_gpu_dev_eth_txq_mark_wqes_ready(txq, acc, 1);\n\
          struct doca_gpu_buf *b; doca_gpu_dev_buf_get_buf(arr, 3, &b);\n\
          acc += doca_gpu_dev_eth_txq_send_enqueue_strong(txq, b, 64, DOCA_GPU_SEND_FLAG_NOTIFY);\n\
          uint32_t pos, mask; acc += doca_gpu_dev_eth_txq_get_info(txq, &pos, &mask);\n\
          acc += doca_gpu_dev_eth_txq_send_enqueue_weak(txq, b, 64, pos + threadIdx.x, DOCA_GPU_SEND_FLAG_NONE);\n\
          acc += doca_gpu_dev_eth_txq_wait_time_enqueue_strong(txq, w, 0);\n\
          acc += doca_gpu_dev_eth_txq_wait_time_enqueue_weak(txq, w, pos, 0);\n\
          acc += doca_gpu_dev_eth_txq_commit_strong(txq) + doca_gpu_dev_eth_txq_commit_weak(txq, 32);\n\
          acc += doca_gpu_dev_eth_txq_push(txq) + mask;\n\
          acc += doca_gpu_dev_eth_txq_wait_completion(txq, 1, DOCA_GPU_DEV_ETH_TXQ_WAIT_FLAG_B, &n) + n;\n\
          struct doca_gpu_buf nb; struct doca_gpu_buf *nbp = &nb; doca_gpu_dev_buf_create(0x1000, 7, &nbp);\n\
          out[0] = acc + t + t2 + nb.addr + EMPW_CHECK;\n}\n";
    s = s.replace(
        "EMPW_CHECK",
        "DOCA_GPUNETIO_ETH_EMPW_DSEG_NUM + DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM + DOCA_GPUNETIO_ETH_PAGE_SIZE",
    );

    // The device-only structs have the layout of their Rust mirrors.
    s += &format!(
        "static_assert(sizeof(struct doca_gpu_semaphore_gpu) == {}, \"sem\");\n\
         static_assert(offsetof(struct doca_gpu_semaphore_gpu, custom_nbytes) == {}, \"sem nbytes\");\n\
         static_assert(sizeof(struct doca_soft_sem_packet_info) == {}, \"sem info\");\n\
         static_assert(sizeof(struct doca_gpu_buf) == {}, \"buf\");\n\
         static_assert(offsetof(struct doca_gpu_buf, mkey) == {}, \"buf mkey\");\n\
         static_assert(sizeof(struct doca_gpu_buf) == {}, \"buf arr entry\");\n\
         static_assert(offsetof(struct doca_gpu_buf, mkey) == {}, \"buf arr entry mkey\");\n\
         static_assert(sizeof(struct doca_gpu_dev_eth_rxq_attr) == {}, \"attr\");\n\
         static_assert(offsetof(struct doca_gpu_dev_eth_rxq_attr, bytes) == {}, \"attr bytes\");\n",
        size_of::<SemHandle>(),
        offset_of!(SemHandle, custom_nbytes),
        size_of::<SemPacketInfo>(),
        size_of::<BufDesc>(),
        offset_of!(BufDesc, mkey),
        size_of::<GpuBufEntry>(),
        offset_of!(GpuBufEntry, mkey_be),
        size_of::<RxAttr>(),
        offset_of!(RxAttr, bytes),
    );
    s += "__global__ void all_sem(struct doca_gpu_semaphore_gpu *sem, uint64_t *out) {\n\
          enum doca_gpu_semaphore_status st; uint32_t n; uint64_t i; void *info; uint64_t acc = 0;\n\
          acc += doca_gpu_dev_semaphore_set_status(sem, 0, DOCA_GPU_SEMAPHORE_STATUS_READY);\n\
          acc += doca_gpu_dev_semaphore_set_status_cas(sem, 0, DOCA_GPU_SEMAPHORE_STATUS_READY, DOCA_GPU_SEMAPHORE_STATUS_HOLD);\n\
          acc += doca_gpu_dev_semaphore_get_status(sem, 0, &st);\n\
          acc += doca_gpu_dev_semaphore_set_packet_info(sem, 1, DOCA_GPU_SEMAPHORE_STATUS_READY, 5, 9);\n\
          acc += doca_gpu_dev_semaphore_get_packet_info(sem, 1, &st, &n, &i);\n\
          acc += doca_gpu_dev_semaphore_get_packet_info_status(sem, 1, DOCA_GPU_SEMAPHORE_STATUS_READY, &n, &i);\n\
          acc += doca_gpu_dev_semaphore_get_custom_info_addr(sem, 1, &info);\n\
          out[0] = acc + st + n + i + (uint64_t)info;\n}\n";
    s
}

#[test]
fn every_device_header_and_template_compiles_with_nvcc() {
    let Some(nvcc) = nvcc() else {
        {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: no nvcc (set NVCC or put nvcc on PATH; scripts/setup installs it)"
            );
        };
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cu = dir.path().join("all_device_api.cu");
    std::fs::write(&cu, device_tu()).unwrap();
    let out = Command::new(&nvcc)
        .args(["-arch=sm_90", "-std=c++17", "-c", "-Werror", "all-warnings"])
        .args(["-Xcompiler", "-Wall,-Wextra,-Werror"])
        .arg("-I")
        .arg(include_dir())
        .arg(&cu)
        .arg("-o")
        .arg(dir.path().join("all_device_api.o"))
        .output()
        .expect("running nvcc");
    assert!(
        out.status.success(),
        "nvcc failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("all_device_api.o").exists());
}

#[test]
fn queue_c_headers_compile_alone_in_c_and_cpp() {
    let headers = [
        "doca_eth_rxq.h",
        "doca_eth_rxq_gpu_data_path.h",
        "doca_eth_txq.h",
        "doca_eth_txq_gpu_data_path.h",
        "doca_gpunetio_eth_def.h",
        "doca_soft_ring.h",
        "doca_soft_queue.h",
    ];
    let dir = tempfile::tempdir().unwrap();
    for h in headers {
        for (cc, std, ext) in [("gcc", "-std=gnu11", "c"), ("g++", "-std=c++17", "cpp")] {
            let src = dir.path().join(format!("t.{ext}"));
            // Also checks the values host programs rely on.
            std::fs::write(
                &src,
                format!(
                    "#include <{h}>\n#include <doca_gpunetio_eth_def.h>\n\
                     int check[(DOCA_GPUNETIO_ETH_SYNC_SCOPE_MAX == INT_MAX && \
                     DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_MAX == INT_MAX && \
                     DOCA_GPUNETIO_ETH_NIC_HANDLER_TYPE_MAX == 3 && \
                     DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK == 2 && DOCA_GPUNETIO_ETH_WARP_SIZE == 32) ? 1 : -1];\n"
                ),
            )
            .unwrap();
            let out = Command::new(cc)
                .args([
                    std,
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-DDOCA_ALLOW_EXPERIMENTAL_API",
                ])
                .arg("-I")
                .arg(include_dir())
                .args(["-c", "-o"])
                .arg(dir.path().join("t.o"))
                .arg(&src)
                .output()
                .expect("running the C compiler");
            assert!(
                out.status.success(),
                "{cc} {h}:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn c_ring_layout_matches_the_rust_mirror() {
    let checks = [
        ("sizeof(struct doca_gpu_eth_rxq)", size_of::<RxqHandle>()),
        (
            "offsetof(struct doca_gpu_eth_rxq, cqe_addr)",
            offset_of!(RxqHandle, cqe_addr),
        ),
        (
            "offsetof(struct doca_gpu_eth_rxq, pkt_mkey)",
            offset_of!(RxqHandle, pkt_mkey),
        ),
        (
            "offsetof(struct doca_gpu_eth_rxq, pkt_num)",
            offset_of!(RxqHandle, pkt_num),
        ),
        (
            "offsetof(struct doca_gpu_eth_rxq, max_pkt_sz)",
            offset_of!(RxqHandle, max_pkt_sz),
        ),
        (
            "offsetof(struct doca_gpu_eth_rxq, cqe_num)",
            offset_of!(RxqHandle, cqe_num),
        ),
        (
            "offsetof(struct doca_gpu_eth_rxq, buf_addr)",
            offset_of!(RxqHandle, buf_addr),
        ),
        (
            "offsetof(struct doca_gpu_eth_rxq, cqe_pi)",
            offset_of!(RxqHandle, cqe_pi),
        ),
        (
            "offsetof(struct doca_gpu_eth_rxq, cqe_ci)",
            offset_of!(RxqHandle, cqe_ci),
        ),
        ("sizeof(struct doca_gpu_eth_txq)", size_of::<TxqHandle>()),
        (
            "offsetof(struct doca_gpu_eth_txq, desc_num)",
            offset_of!(TxqHandle, desc_num),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, cq_mask)",
            offset_of!(TxqHandle, cq_mask),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, l4_csum)",
            offset_of!(TxqHandle, l4_csum),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, wait_on_time)",
            offset_of!(TxqHandle, wait_on_time),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, nic_handler)",
            offset_of!(TxqHandle, nic_handler),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, sq_rsvd)",
            offset_of!(TxqHandle, sq_rsvd),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, sq_ready)",
            offset_of!(TxqHandle, sq_ready),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, sq_done)",
            offset_of!(TxqHandle, sq_done),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, cq_pi)",
            offset_of!(TxqHandle, cq_pi),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, cq_rsvd)",
            offset_of!(TxqHandle, cq_rsvd),
        ),
        (
            "offsetof(struct doca_gpu_eth_txq, cq_ci)",
            offset_of!(TxqHandle, cq_ci),
        ),
        ("sizeof(struct doca_soft_rx_cqe)", size_of::<RxCqe>()),
        (
            "offsetof(struct doca_soft_rx_cqe, timestamp_ns)",
            offset_of!(RxCqe, timestamp_ns),
        ),
        ("sizeof(struct doca_soft_tx_desc)", size_of::<TxDesc>()),
        (
            "offsetof(struct doca_soft_tx_desc, wait_on_time)",
            offset_of!(TxDesc, wait_on_time),
        ),
        (
            "offsetof(struct doca_soft_tx_desc, mkey2)",
            offset_of!(TxDesc, mkey2),
        ),
        (
            "offsetof(struct doca_soft_tx_desc, wqe_index)",
            offset_of!(TxDesc, wqe_index),
        ),
        ("sizeof(struct doca_soft_tx_cqe)", size_of::<TxCqe>()),
        (
            "offsetof(struct doca_soft_tx_cqe, status)",
            offset_of!(TxCqe, status),
        ),
        (
            "DOCA_SOFT_TX_FLAG_NOTIFY",
            doca_soft::testing::TX_FLAG_NOTIFY as usize,
        ),
        (
            "DOCA_SOFT_TX_FLAG_L3_CSUM",
            doca_soft::testing::TX_FLAG_L3_CSUM as usize,
        ),
        (
            "DOCA_SOFT_TX_FLAG_L4_CSUM",
            doca_soft::testing::TX_FLAG_L4_CSUM as usize,
        ),
        (
            "DOCA_SOFT_TX_OP_SEND",
            doca_soft::testing::TX_OP_SEND as usize,
        ),
        (
            "DOCA_SOFT_TX_OP_WAIT",
            doca_soft::testing::TX_OP_WAIT as usize,
        ),
        (
            "DOCA_SOFT_RING_VERSION",
            doca_soft::testing::RING_VERSION as usize,
        ),
    ];
    let mut src = String::from("#include <stddef.h>\n#include <doca_gpunetio_eth_def.h>\n");
    for (i, (expr, v)) in checks.iter().enumerate() {
        src += &format!("_Static_assert({expr} == {v}, \"check {i}: {expr} == {v}\");\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("layout.c");
    std::fs::write(&c, src).unwrap();
    let out = Command::new("gcc")
        .args([
            "-std=gnu11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(include_dir())
        .arg(&c)
        .output()
        .expect("running gcc");
    assert!(
        out.status.success(),
        "C layout differs from the Rust mirror:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
