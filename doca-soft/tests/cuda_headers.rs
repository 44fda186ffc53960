//! The Ethernet device headers declare DOCA 3.3's API: a CUDA translation unit that
//! includes every `.cuh`, calls every function and template in every scope/mode, and
//! checks 3.3's exact signatures, macros and WQE segment layouts with static asserts (nvcc
//! for sm_80 and sm_90, warnings are errors; once more on the rdma-core compat subset);
//! the `__host__ __device__` WQE builders run on the CPU and write exactly the bytes the
//! soft NIC (`mlx5` module) builds and parses; the queue C headers compile alone in C and
//! C++ (gcc/g++, `-Wall -Wextra -Werror`), `doca_gpunetio_eth_def.h` includes what 3.3's
//! does, and the public structs have 3.3's sizes and the Rust mirror's offsets.
//! Without nvcc the nvcc parts print "skipped: <test>: no nvcc ...".

use doca_soft::testing::{
    BufDesc, GpuBufEntry, McstQp, RxAttr, RxqHandle, SemHandle, SemPacketInfo, TxqHandle,
};
use doca_test_support::cc;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};

/// doca-soft's source directory (doca-test-support's search).
fn src_dir() -> PathBuf {
    doca_test_support::workspace::doca_soft_src_dir()
}

fn include_dir() -> PathBuf {
    src_dir().join("include")
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
          struct mlx5_cqe64 *cqe = doca_gpu_dev_eth_rxq_get_pkt_cqe(rxq, first);\n\
          acc += doca_gpu_dev_eth_bswap32(cqe->byte_cnt) + doca_gpu_dev_eth_bswap64(cqe->timestamp) + cqe->wqe_counter;\n\
          if (cqe->op_own >> 4 == MLX5_CQE_REQ_ERR) doca_gpu_dev_eth_print_cqe_err(cqe);\n\
          acc += doca_gpu_dev_eth_rxq_mcst<DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>(&rxq->mcst_qp);\n\
          acc += doca_gpu_dev_eth_rxq_mcst<DOCA_GPUNETIO_ETH_NIC_HANDLER_CPU_PROXY>(&rxq->mcst_qp);\n\
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
          acc += doca_gpu_dev_eth_load_relaxed_sys_global((uint8_t *)out) + doca_gpu_dev_eth_load_relaxed_sys_global((uint16_t *)out);\n\
          acc += doca_gpu_dev_eth_load_relaxed_sys_global((uint64_t *)out);\n\
          doca_gpu_dev_eth_store_relaxed_mmio(out + 1, acc);\n\
          uint64_t seg[2] = {acc, acc}; doca_gpu_dev_eth_store_wqe_seg(out + 2, seg);\n\
          acc += doca_gpu_dev_eth_prepare_dbr((uint32_t)acc) + doca_gpu_dev_eth_prepare_cq_dbr((uint32_t)acc);\n\
          acc += DOCA_GPUNETIO_ETH_HAS_STORE_RELAXED_MMIO + DOCA_GPUNETIO_NS_PER_S + DOCA_GPUNETIO_ETH_NS_PER_S;\n\
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
    for sh in SHARING {
        for sy in SYNC {
            s += &format!(
                "doca_gpu_dev_eth_txq_submit_proxy<{sh}, {sy}>(txq, acc);\n\
                 doca_gpu_dev_eth_txq_submit_db<{sh}, {sy}>(txq, acc);\n\
                 doca_gpu_dev_eth_txq_submit_cq_dbr<{sh}, {sy}>(txq, acc);\n"
            );
        }
        s += &format!(
            "acc += doca_gpu_dev_eth_txq_reserve_cq_slots<{sh}>(txq, 2);\n\
             acc += doca_gpu_dev_eth_txq_reserve_wq_slots<{sh}>(txq, 2);\n\
             doca_gpu_dev_eth_txq_mark_wqes_ready<{sh}>(txq, acc, acc + 1);\n\
             acc += doca_gpu_dev_eth_atomic_max<uint64_t, {sh}, true>(out, 3);\n\
             acc += doca_gpu_dev_eth_atomic_add<uint32_t, {sh}>((uint32_t *)out, 1u);\n"
        );
    }
    for sy in SYNC {
        s += &format!(
            "doca_gpu_dev_eth_txq_ring_db<{sy}>(txq, acc); doca_gpu_dev_eth_txq_update_dbr<{sy}>(txq, (uint32_t)acc);\n"
        );
    }
    s += "uint64_t w = 0; acc += doca_gpu_dev_eth_txq_calculate_timestamp(txq, 1234, &w) + w;\n\
          struct doca_gpu_dev_eth_txq_wqe *wqe = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, (uint16_t)acc);\n\
          acc += doca_gpu_dev_eth_txq_wqe_prepare_send(txq, wqe, 1, 0, 0, 64, f);\n\
          acc += doca_gpu_dev_eth_txq_wqe_prepare_send(txq, wqe, 1, 0, 0, 14, 64, 0, 50, f);\n\
          acc += doca_gpu_dev_eth_txq_wqe_prepare_wait_time(txq, wqe, 1, w, DOCA_GPUNETIO_ETH_SEND_FLAG_NONE);\n\
          uint64_t ea[2] = {0, 64}; uint32_t ek[2] = {0, 0}; uint32_t en[2] = {64, 64};\n\
          acc += doca_gpu_dev_eth_txq_wqe_prepare_send_empw(txq, wqe, 1, ea, ek, en, 2, f);\n\
          acc += doca_gpu_dev_eth_txq_reserve_wq_slots(txq, 1) + doca_gpu_dev_eth_txq_reserve_cq_slots(txq, 1);\n\
          doca_gpu_dev_eth_txq_mark_wqes_ready(txq, acc, acc + 1);\n\
          doca_gpu_dev_eth_txq_submit_proxy(txq, acc); doca_gpu_dev_eth_txq_submit_db(txq, acc);\n\
          doca_gpu_dev_eth_txq_submit_cq_dbr(txq, acc); doca_gpu_dev_eth_txq_ring_db(txq, acc);\n\
          doca_gpu_dev_eth_txq_update_dbr(txq, (uint32_t)acc); doca_priv_gpu_dev_eth_txq_update_dbr(txq, (uint32_t)acc);\n\
          acc += doca_gpu_dev_eth_txq_prepare_db(txq, acc);\n\
          struct doca_gpu_buf *b; doca_gpu_dev_buf_get_buf(arr, 3, &b);\n\
          acc += doca_gpu_dev_eth_txq_send_enqueue_strong(txq, b, 64, DOCA_GPU_SEND_FLAG_NOTIFY);\n\
          uint32_t pos, mask; acc += doca_gpu_dev_eth_txq_get_info(txq, &pos, &mask);\n\
          acc += doca_gpu_dev_eth_txq_send_enqueue_weak(txq, b, 64, pos + threadIdx.x, DOCA_GPU_SEND_FLAG_NONE);\n\
          acc += doca_gpu_dev_eth_txq_wait_time_enqueue_strong(txq, w, 0);\n\
          acc += doca_gpu_dev_eth_txq_wait_time_enqueue_weak(txq, w, pos, 0);\n\
          acc += doca_gpu_dev_eth_txq_commit_strong(txq) + doca_gpu_dev_eth_txq_commit_weak(txq, 32);\n\
          acc += doca_gpu_dev_eth_txq_push(txq) + mask;\n\
          acc += doca_gpu_dev_eth_txq_wait_completion(txq, 1, DOCA_GPU_ETH_TXQ_WAIT_FLAG_B, &n) + n;\n\
          acc += doca_gpu_dev_eth_txq_wait_completion(txq, 1, DOCA_GPU_ETH_TXQ_WAIT_FLAG_NB, &n) + n;\n\
          struct doca_gpu_buf nb; struct doca_gpu_buf *nbp = &nb; doca_gpu_dev_buf_create(0x1000, 7, &nbp);\n\
          out[0] = acc + t + t2 + nb.addr + EMPW_CHECK;\n}\n";
    s = s.replace(
        "EMPW_CHECK",
        "DOCA_GPUNETIO_ETH_EMPW_DSEG_NUM + DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM + DOCA_GPUNETIO_ETH_PAGE_SIZE + DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE",
    );
    s += &signature_checks();

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

/// Static checks of DOCA 3.3's signatures (exact function types, template parameters and
/// their defaults) and of the WQE segment layouts, compiled in the device TU.
fn signature_checks() -> String {
    let sigs: &[(&str, &str)] = &[
        // Template defaults and parameter lists as in 3.3.
        (
            "&doca_gpu_dev_eth_txq_mark_wqes_ready<>",
            "void (*)(struct doca_gpu_eth_txq *, uint64_t, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_wqe_prepare_wait_time",
            "doca_error_t (*)(const struct doca_gpu_eth_txq *, struct doca_gpu_dev_eth_txq_wqe *, const uint16_t, const uint64_t, const enum doca_gpu_eth_send_flags)",
        ),
        (
            "&doca_gpu_dev_eth_rxq_mcst<DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>",
            "doca_error_t (*)(struct doca_gpu_eth_mcst_qp *)",
        ),
        (
            "&doca_gpu_dev_eth_atomic_max<uint64_t, DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>",
            "uint64_t (*)(uint64_t *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_atomic_max<uint64_t, DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU, true>",
            "uint64_t (*)(uint64_t *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_atomic_add<uint64_t, DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA>",
            "uint64_t (*)(uint64_t *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_atomic_read<uint64_t, DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>",
            "uint64_t (*)(uint64_t *)",
        ),
        (
            "&doca_gpu_dev_eth_fence_acquire<DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS>",
            "void (*)(void)",
        ),
        (
            "&doca_gpu_dev_eth_lock<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>",
            "void (*)(int *)",
        ),
        ("&doca_gpu_dev_eth_prepare_dbr", "__be32 (*)(uint32_t)"),
        ("&doca_gpu_dev_eth_prepare_cq_dbr", "__be32 (*)(uint32_t)"),
        (
            "&doca_gpu_dev_eth_rxq_get_pkt_cqe",
            "struct mlx5_cqe64 *(*)(const struct doca_gpu_eth_rxq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_print_cqe_err",
            "void (*)(struct mlx5_cqe64 *)",
        ),
        (
            "&doca_gpu_dev_eth_store_wqe_seg",
            "void (*)(uint64_t *, uint64_t *)",
        ),
        (
            "&doca_gpu_dev_eth_txq_submit_proxy<>",
            "void (*)(struct doca_gpu_eth_txq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_submit_db<>",
            "void (*)(struct doca_gpu_eth_txq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_submit_cq_dbr<>",
            "void (*)(struct doca_gpu_eth_txq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_ring_db<>",
            "void (*)(struct doca_gpu_eth_txq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_update_dbr<>",
            "void (*)(struct doca_gpu_eth_txq *, uint32_t)",
        ),
        (
            "&doca_priv_gpu_dev_eth_txq_update_dbr",
            "void (*)(struct doca_gpu_eth_txq *, uint32_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_prepare_db",
            "__be64 (*)(const struct doca_gpu_eth_txq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_reserve_cq_slots<>",
            "uint64_t (*)(struct doca_gpu_eth_txq *, uint32_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_reserve_wq_slots<>",
            "uint64_t (*)(struct doca_gpu_eth_txq *, uint32_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_submit<>",
            "void (*)(struct doca_gpu_eth_txq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_get_wqe_ptr",
            "struct doca_gpu_dev_eth_txq_wqe *(*)(struct doca_gpu_eth_txq *, uint16_t)",
        ),
        (
            "&doca_gpu_dev_eth_txq_poll_completion<>",
            "doca_error_t (*)(struct doca_gpu_eth_txq *, const uint32_t, enum doca_gpu_dev_eth_wait_flags, uint32_t *)",
        ),
        (
            "&doca_gpu_dev_eth_txq_poll_completion_at<>",
            "doca_error_t (*)(struct doca_gpu_eth_txq *, const uint64_t, enum doca_gpu_dev_eth_wait_flags)",
        ),
        (
            "&doca_gpu_dev_eth_txq_send<>",
            "void (*)(struct doca_gpu_eth_txq *, uint64_t, uint32_t, size_t, enum doca_gpu_eth_send_flags, doca_gpu_dev_eth_ticket_t *)",
        ),
        (
            "&doca_gpu_dev_eth_txq_wait_send<>",
            "void (*)(struct doca_gpu_eth_txq *, const uint64_t, uint64_t, uint32_t, size_t, enum doca_gpu_eth_send_flags, doca_gpu_dev_eth_ticket_t *)",
        ),
        (
            "&doca_gpu_dev_eth_rxq_recv<>",
            "doca_error_t (*)(struct doca_gpu_eth_rxq *, uint32_t, uint64_t, uint64_t *, uint32_t *, struct doca_gpu_dev_eth_rxq_attr *)",
        ),
        (
            "&doca_gpu_dev_eth_rxq_submit_dbr<>",
            "void (*)(struct doca_gpu_eth_rxq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_rxq_get_pkt_addr",
            "uint64_t (*)(struct doca_gpu_eth_rxq *, uint64_t)",
        ),
        (
            "&doca_gpu_dev_eth_get_lane_id",
            "unsigned int (*)(void)",
        ),
    ];
    let mut s = String::from("#include <type_traits>\n");
    for (i, (f, t)) in sigs.iter().enumerate() {
        s += &format!(
            "static_assert(std::is_same<decltype({f}), {t}>::value, \"signature {i}: {f}\");\n"
        );
    }
    // Values and layouts.
    let asserts: &[(&str, usize)] = &[
        ("DOCA_GPU_ETH_TXQ_WAIT_FLAG_NB", 0),
        ("DOCA_GPU_ETH_TXQ_WAIT_FLAG_B", 1),
        ("DOCA_GPUNETIO_NS_PER_S", 1_000_000_000),
        ("DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE", 4),
        ("DOCA_GPUNETIO_ETH_EMPW_DSEG_NUM", 4),
        ("DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM", 61),
        ("DOCA_GPUNETIO_ETH_HAS_STORE_RELAXED_MMIO", 1),
        ("DOCA_GPUNETIO_ETH_RX_NO_PKT == 0xFFFFFFFFFFFFFFFFULL", 1),
        ("sizeof(struct doca_gpu_dev_eth_wqe_ctrl_seg)", 16),
        ("alignof(struct doca_gpu_dev_eth_wqe_ctrl_seg)", 8),
        ("offsetof(struct doca_gpu_dev_eth_wqe_ctrl_seg, qpn_ds)", 4),
        (
            "offsetof(struct doca_gpu_dev_eth_wqe_ctrl_seg, fm_ce_se)",
            11,
        ),
        (
            "offsetof(struct doca_gpu_dev_eth_wqe_ctrl_seg, signature_fm_ce_se)",
            8,
        ),
        ("offsetof(struct doca_gpu_dev_eth_wqe_ctrl_seg, imm)", 12),
        ("sizeof(struct doca_gpu_dev_eth_txq_wqe_eth_seg)", 16),
        (
            "offsetof(struct doca_gpu_dev_eth_txq_wqe_eth_seg, cs_flags)",
            4,
        ),
        ("offsetof(struct doca_gpu_dev_eth_txq_wqe_eth_seg, mss)", 6),
        (
            "offsetof(struct doca_gpu_dev_eth_txq_wqe_eth_seg, inline_hdr_sz)",
            12,
        ),
        (
            "offsetof(struct doca_gpu_dev_eth_txq_wqe_eth_seg, inline_hdr)",
            14,
        ),
        ("sizeof(struct doca_gpu_dev_eth_txq_wqe_wait_seg)", 16),
        (
            "offsetof(struct doca_gpu_dev_eth_txq_wqe_wait_seg, wait_on_time)",
            8,
        ),
        ("sizeof(struct doca_gpu_dev_eth_txq_wqe)", 64),
        ("offsetof(struct doca_gpu_dev_eth_txq_wqe, eseg)", 16),
        ("offsetof(struct doca_gpu_dev_eth_txq_wqe, dseg0)", 32),
        ("offsetof(struct doca_gpu_dev_eth_txq_wqe, dseg1)", 48),
        ("offsetof(struct doca_gpu_dev_eth_txq_wqe, wseg)", 16),
        ("sizeof(struct doca_gpu_dev_eth_txq_wqe_empw)", 64),
        ("sizeof(struct doca_gpu_dev_eth_rxq_dump_wqe)", 64),
        ("offsetof(struct doca_gpu_dev_eth_rxq_dump_wqe, dseg)", 16),
        ("sizeof(struct doca_gpu_dev_eth_rxq_attr)", 16),
    ];
    for (i, (e, v)) in asserts.iter().enumerate() {
        s += &format!("static_assert(({e}) == {v}, \"value {i}: {e} == {v}\");\n");
    }
    s
}

/// Compiles `src` with nvcc for `arch` (warnings are errors); panics with nvcc's output.
fn nvcc_compile(nvcc: &Path, dir: &Path, name: &str, src: &str, arch: &str) {
    cc::nvcc_strict(
        nvcc,
        dir,
        &format!("{name}_{arch}"),
        src,
        &[format!("-arch={arch}")],
    );
}

#[test]
fn every_device_header_and_template_compiles_with_nvcc_for_sm80_and_sm90() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let src = device_tu();
    for arch in ["sm_80", "sm_90"] {
        nvcc_compile(nvcc, dir.path(), "all_device_api", &src, arch);
    }
}

#[test]
fn device_headers_compile_against_the_rdma_core_compat_subset() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let src = format!("#define DOCA_SOFT_FORCE_COMPAT_MLX5 1\n{}", device_tu());
    nvcc_compile(nvcc, dir.path(), "all_device_api_compat", &src, "sm_90");
}

/// A host program (nvcc, no GPU needed) that builds WQEs with the headers'
/// `__host__ __device__` builders on a host-memory ring and prints each 64-byte slot as hex,
/// one line per slot: the bytes device code writes.
const WQE_BUILDERS: &str = r#"
#include <stdio.h>
#include <string.h>
#include <doca_gpunetio_dev_eth_txq.cuh>

static uint8_t ring[8 * 64] __attribute__((aligned(64)));

static void dump(int first, int n)
{
	for (int k = first; k < first + n; k++) {
		for (int i = 0; i < 64; i++)
			printf("%02x", ring[k * 64 + i]);
		printf("\n");
	}
}

int main(void)
{
	struct doca_gpu_eth_txq txq;
	memset(&txq, 0, sizeof(txq));
	memset(ring, 0, sizeof(ring));
	txq.sq_wqe_addr = ring;
	txq.sq_wqe_num = 8;
	txq.sq_wqe_mask = 7;
	txq.sq_num = 0xe7e;
	txq.sq_num_shift8_be = __builtin_bswap32(0xe7eu << 8);
	txq.sq_num_shift8_be_2ds = __builtin_bswap32((0xe7eu << 8) | 2);
	txq.sq_num_shift8_be_3ds = __builtin_bswap32((0xe7eu << 8) | 3);
	txq.sq_num_shift8_be_4ds = __builtin_bswap32((0xe7eu << 8) | 4);
	txq.cs_flags = DOCA_GPUNETIO_ETH_WQE_L3_CSUM | DOCA_GPUNETIO_ETH_WQE_L4_CSUM;
	struct doca_gpu_dev_eth_txq_wqe *w = (struct doca_gpu_dev_eth_txq_wqe *)ring;
	uint64_t ts = 0;
	if (doca_gpu_dev_eth_txq_calculate_timestamp(&txq, 1700000000123456789ULL, &ts) != DOCA_SUCCESS)
		return 1;
	if (doca_gpu_dev_eth_txq_wqe_prepare_send(&txq, &w[0], 6, 0x7f0000001000ULL, __builtin_bswap32(0x11223344u), 60,
						  DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY) != DOCA_SUCCESS)
		return 1;
	if (doca_gpu_dev_eth_txq_wqe_prepare_send(&txq, &w[1], 7, 0x2000, __builtin_bswap32(5u), 14, 0x3000,
						  __builtin_bswap32(6u), 50, DOCA_GPUNETIO_ETH_SEND_FLAG_NONE) != DOCA_SUCCESS)
		return 1;
	if (doca_gpu_dev_eth_txq_wqe_prepare_wait_time(&txq, &w[2], 8, ts, DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY) != DOCA_SUCCESS)
		return 1;
	/* Seven frames from index 6 of the ring: slots 6 and 7, then (wrapping) slot 0. */
	uint64_t a[7];
	uint32_t k[7], n[7];
	for (int i = 0; i < 7; i++) {
		a[i] = 0x10000 + 0x100 * i;
		k[i] = __builtin_bswap32(9u);
		n[i] = 64 + i;
	}
	uint8_t save[3 * 64];
	memcpy(save, ring, sizeof(save));
	if (doca_gpu_dev_eth_txq_wqe_prepare_send_empw(&txq, &w[6], 6, a, k, n, 7, DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY) != DOCA_SUCCESS)
		return 1;
	if (doca_gpu_dev_eth_txq_wqe_prepare_send_empw(&txq, &w[6], 6, a, k, n, 0, DOCA_GPUNETIO_ETH_SEND_FLAG_NONE) !=
	    DOCA_ERROR_INVALID_VALUE)
		return 1;
	if (doca_gpu_dev_eth_txq_wqe_prepare_send(NULL, &w[0], 0, 0, 0, 0, DOCA_GPUNETIO_ETH_SEND_FLAG_NONE) != DOCA_ERROR_INVALID_VALUE)
		return 1;
	/* empw wrote slots 6, 7 and 0: print the three sends first (as saved), then the empw. */
	uint8_t empw0[64];
	memcpy(empw0, ring, 64);
	memcpy(ring, save, sizeof(save));
	dump(0, 3);
	memcpy(ring, empw0, 64);
	dump(6, 2);
	dump(0, 1);
	printf("%016llx %08x %08x %016llx\n", (unsigned long long)ts, (unsigned)doca_gpu_dev_eth_prepare_dbr(0x12345),
	       (unsigned)doca_gpu_dev_eth_prepare_cq_dbr(0x1234567), (unsigned long long)doca_gpu_dev_eth_txq_prepare_db(&txq, 0x10203));
	return 0;
}
"#;

/// `-L` for the CUDA runtime next to nvcc when nvcc's profile does not find it (the pip
/// wheel keeps it in `lib`, not `lib64`).
fn hex_bytes(line: &str) -> Vec<u8> {
    (0..line.len() / 2)
        .map(|i| u8::from_str_radix(&line[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[test]
fn device_wqe_builders_write_the_bytes_the_proxy_parses() {
    use doca_soft::testing::mlx5::{self, wqe};
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let text = cc::nvcc_run_program(nvcc, dir.path(), "wqe_builders", WQE_BUILDERS, &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    let qpn = 0xe7e;
    let cs = mlx5::CS_L3 | mlx5::CS_L4;

    // One-segment send, NOTIFY: exactly the Rust builder's bytes, and parsed back.
    let seg = |addr, key: u32, n| wqe::DataSeg {
        byte_count: n,
        lkey_raw: key.to_be(),
        addr,
    };
    let send = hex_bytes(lines[0]);
    let want = wqe::send_wqe(6, qpn, cs, true, &[seg(0x7f00_0000_1000, 0x1122_3344, 60)]);
    assert_eq!(send, want.to_vec(), "prepare_send bytes");
    let c = wqe::Ctrl::decode(&send);
    assert_eq!(
        (c.opcode, c.ds, c.wqe_index, c.qpn),
        (mlx5::opcode::SEND, 3, 6, qpn)
    );
    assert!(c.notify());

    // Two-segment send: DS 4, both segments gathered into one frame.
    let two = hex_bytes(lines[1]);
    let want = wqe::send_wqe(7, qpn, cs, false, &[seg(0x2000, 5, 14), seg(0x3000, 6, 50)]);
    assert_eq!(two, want.to_vec(), "prepare_send (2 segments) bytes");
    match wqe::parse(&wqe::Ctrl::decode(&two), &two).unwrap() {
        wqe::Parsed::Send { segs, .. } => assert_eq!(segs.len(), 2),
        other => panic!("{other:?}"),
    }

    // Wait-on-time: WAIT opmod 1, DS 2, the time calculate_timestamp gave.
    let wait = hex_bytes(lines[2]);
    let t = mlx5::time_to_sec_ns(1_700_000_000_123_456_789);
    assert_eq!(
        wait,
        wqe::wait_wqe(8, qpn, t, true).to_vec(),
        "prepare_wait_time bytes"
    );
    assert_eq!(
        wqe::parse(&wqe::Ctrl::decode(&wait), &wait).unwrap(),
        wqe::Parsed::WaitOnTime(t)
    );

    // Multi-packet send of 7 frames from slot 6: three slots, the last wrapped to slot 0.
    let mut empw = hex_bytes(lines[3]);
    empw.extend(hex_bytes(lines[4]));
    empw.extend(hex_bytes(lines[5]));
    let pkts: Vec<wqe::DataSeg> = (0..7u32)
        .map(|i| seg(0x10000 + 0x100 * u64::from(i), 9, 64 + i))
        .collect();
    let mut want = wqe::empw_wqe(6, qpn, cs, true, &pkts);
    want.resize(3 * 64, 0);
    assert_eq!(empw[..144], want[..144], "prepare_send_empw bytes (DS 9)");
    assert_eq!(
        wqe::parse(&wqe::Ctrl::decode(&empw), &empw).unwrap(),
        wqe::Parsed::MultiPacket { cs_flags: cs, pkts }
    );

    // calculate_timestamp, doorbell record values, doorbell word.
    let f: Vec<&str> = lines[6].split(' ').collect();
    assert_eq!(u64::from_str_radix(f[0], 16).unwrap(), t.to_be());
    assert_eq!(u32::from_str_radix(f[1], 16).unwrap(), 0x2345u32.to_be());
    assert_eq!(u32::from_str_radix(f[2], 16).unwrap(), 0x23_4567u32.to_be());
    let db = u64::from_str_radix(f[3], 16).unwrap().to_le_bytes();
    assert_eq!(
        &db[0..4],
        &(0x10203u32 << 8).to_be_bytes(),
        "doorbell word 0"
    );
    assert_eq!(&db[4..8], &(qpn << 8).to_be_bytes(), "doorbell word 1");
}

/// The headers a C host program includes: each alone, in C and C++, warning-free.
#[test]
fn queue_c_headers_compile_alone_in_c_and_cpp() {
    let headers = [
        "doca_eth_rxq.h",
        "doca_eth_rxq_gpu_data_path.h",
        "doca_eth_txq.h",
        "doca_eth_txq_gpu_data_path.h",
        "doca_gpunetio_eth_def.h",
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
                    "#include <{h}>\n#include <doca_gpunetio_eth_def.h>\n#include <limits.h>\n\
                     int check[(DOCA_GPUNETIO_ETH_SYNC_SCOPE_MAX == INT_MAX && \
                     DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_MAX == INT_MAX && \
                     DOCA_GPUNETIO_ETH_NIC_HANDLER_TYPE_MAX == 3 && \
                     DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK == 2 && DOCA_GPUNETIO_ETH_WARP_SIZE == 32) ? 1 : -1];\n"
                ),
            )
            .unwrap();
            cc::must_succeed(
                cc::strict(cc, std)
                    .args(["-DDOCA_ALLOW_EXPERIMENTAL_API", "-c", "-o"])
                    .arg(dir.path().join("t.o"))
                    .arg(&src),
                &format!("{cc} {h}"),
            );
        }
    }
}

/// `doca_gpunetio_eth_def.h` includes what DOCA 3.3's does (<assert.h>, <stdio.h>, <stdint.h>,
/// rdma-core's <infiniband/mlx5dv.h> through doca_soft_mlx5.h, and <inttypes.h>, which 3.3
/// programs get through rdma-core's header but not every rdma-core includes), no doca-soft
/// header; a program that includes only it gets `assert`, `struct mlx5_cqe64`, `__be32`,
/// `bool`, `PRIu64` and `FILE`.
#[test]
fn eth_def_includes_what_3_3_includes() {
    let text = std::fs::read_to_string(include_dir().join("doca_gpunetio_eth_def.h")).unwrap();
    let incs: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#include"))
        .map(str::trim)
        .collect();
    assert_eq!(
        incs,
        [
            "<assert.h>",
            "<stdio.h>",
            "<stdint.h>",
            "\"doca_soft_mlx5.h\"",
            "<inttypes.h>"
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    for force in [false, true] {
        let src = dir.path().join("t.c");
        std::fs::write(
            &src,
            format!(
                "{}#include <doca_gpunetio_eth_def.h>\n\
                 int f(FILE *o, struct mlx5_cqe64 *c) {{ assert(c != NULL); bool b = c->op_own != 0; __be32 n = c->byte_cnt; \
                 return fprintf(o, \"%\" PRIu64 \" %d\", (uint64_t)n, (int)b); }}\n",
                if force { "#define DOCA_SOFT_FORCE_COMPAT_MLX5 1\n" } else { "" }
            ),
        )
        .unwrap();
        cc::must_succeed(
            cc::strict("gcc", "-std=gnu11")
                .args(["-c", "-o"])
                .arg(dir.path().join("t.o"))
                .arg(&src),
            &format!("compat={force}"),
        );
    }
}

/// The public structs: DOCA 3.3's sizes (facts), and every field where the Rust mirror
/// has it, checked in C (gcc and the compat subset alike).
#[test]
fn c_ring_layout_matches_the_facts_and_the_rust_mirror() {
    macro_rules! off {
        ($t:ty, $c:literal, $($f:ident),*) => {
            vec![$((format!("offsetof(struct {}, {})", $c, stringify!($f)), offset_of!($t, $f))),*]
        };
    }
    let mut checks: Vec<(String, usize)> = vec![
        ("sizeof(struct doca_gpu_eth_rxq)".into(), 232),
        ("sizeof(struct doca_gpu_eth_txq)".into(), 176),
        ("sizeof(struct doca_gpu_eth_mcst_qp)".into(), 112),
        (
            "sizeof(struct doca_gpu_eth_rxq)".into(),
            size_of::<RxqHandle>(),
        ),
        (
            "sizeof(struct doca_gpu_eth_txq)".into(),
            size_of::<TxqHandle>(),
        ),
        (
            "sizeof(struct doca_gpu_eth_mcst_qp)".into(),
            size_of::<McstQp>(),
        ),
        ("_Alignof(struct doca_gpu_eth_rxq)".into(), 8),
        ("_Alignof(struct doca_gpu_eth_txq)".into(), 8),
    ];
    checks.extend(off!(
        RxqHandle,
        "doca_gpu_eth_rxq",
        pkt_addr,
        pkt_mkey,
        pkt_num,
        max_pkt_sz,
        striding_rq,
        need_mcst,
        wqe_addr,
        wqe_db_rec,
        wqe_pi,
        wqe_num,
        wqe_mask,
        stride_num,
        stride_sz,
        cqe_ci,
        cqe_num,
        cqe_mask,
        cqe_addr,
        cq_db_rec,
        mcst_qp,
        buf_addr
    ));
    checks.extend(off!(
        TxqHandle,
        "doca_gpu_eth_txq",
        sq_rsvd_index,
        sq_ready_index,
        sq_wqe_pi,
        sq_wqe_addr,
        sq_db_rec,
        sq_db,
        sq_num,
        sq_num_shift8_be,
        sq_num_shift8_be_2ds,
        sq_num_shift8_be_3ds,
        sq_num_shift8_be_4ds,
        sq_wqe_num,
        sq_wqe_mask,
        sq_lock,
        cs_flags,
        wait_on_time,
        completion_on_gpu,
        cqe_addr,
        cq_db_rec,
        cqe_ci,
        cqe_rsvd,
        cqe_num,
        cqe_mask,
        cpu_proxy_pi,
        cpu_proxy_ci,
        nic_handler
    ));
    checks.extend(off!(
        McstQp,
        "doca_gpu_eth_mcst_qp",
        sq_rsvd_index,
        sq_ready_index,
        sq_wqe_pi,
        sq_wqe_addr,
        sq_db_rec,
        sq_db,
        sq_num,
        sq_num_shift8_be,
        sq_wqe_num,
        sq_wqe_mask,
        sq_lock,
        cqe_addr,
        cq_db_rec,
        cqe_ci,
        cqe_num,
        cqe_mask,
        dump_mkey,
        dump_addr
    ));
    let mut src = String::from("#include <stddef.h>\n#include <doca_gpunetio_eth_def.h>\n");
    for (i, (expr, v)) in checks.iter().enumerate() {
        src += &format!("_Static_assert({expr} == {v}, \"check {i}: {expr} == {v}\");\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("layout.c");
    for force in ["-DDOCA_SOFT_NO_FORCE", "-DDOCA_SOFT_FORCE_COMPAT_MLX5"] {
        std::fs::write(&c, &src).unwrap();
        cc::must_succeed(
            cc::strict("gcc", "-std=gnu11")
                .args(["-fsyntax-only", force])
                .arg(&c),
            &format!("C layout differs ({force})"),
        );
    }
}

/// The GPU tests' kernels (tests/cuda/eth_kernels.cu, run by eth_gpu.rs on a GPU machine)
/// compile for sm_80 and sm_90 here, so a header change that breaks them fails in CI.
#[test]
fn gpu_test_kernels_compile_for_sm80_and_sm90() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(src_dir().join("tests/cuda/eth_kernels.cu")).unwrap();
    for arch in ["sm_80", "sm_90"] {
        nvcc_compile(nvcc, dir.path(), "eth_kernels", &src, arch);
    }
}
