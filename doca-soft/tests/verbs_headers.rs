//! The GPU verbs, legacy RDMA and DMA device headers compile, have DOCA 3.3's layouts and
//! values, and write the mlx5 bytes of reference §3.12.
//!
//! * Each new `.cuh` is compiled alone, in a translation unit that instantiates every
//!   function it declares with every sharing mode, NIC handler, execution scope, MCST and
//!   blocking mode, sync scope, code-opt flag and queue type the facts list, for sm_80 and
//!   sm_90 (nvcc, warnings are errors, host side `-Wall -Wextra -Werror`; device code
//!   unoptimised, `-G`, which keeps nvcc's time reasonable); once more with the rdma-core
//!   compat subset forced. The GPU test kernels (tests/cuda/verbs_kernels.cu), which use
//!   the main paths, are compiled optimised for both architectures.
//! * `doca_gpunetio_verbs_def.h` and the private ring headers compile alone as C and C++
//!   (gcc/g++ `-Wall -Wextra -Werror`), and every public struct offset and size, enum and
//!   macro value is checked against the numbers of the facts, in C and under nvcc.
//! * The WQE builders and CQE accessors run on the CPU (they are `__host__ __device__`):
//!   a program compiled by nvcc prints the bytes they write, which must equal the bytes
//!   computed here from §3.12 (verbs_support).
//!
//! Without nvcc the nvcc parts print "skipped: <test>: no nvcc ..." (scripts/setup installs nvcc).

mod verbs_support;

use std::path::Path;
use verbs_support::*;

const SHARING: [&str; 3] = [
    "DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE",
    "DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA",
    "DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU",
];
const NIC: [&str; 5] = [
    "DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO",
    "DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY",
    "DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB",
    "DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF",
    "DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR",
];
const EXEC: [&str; 2] = [
    "DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD",
    "DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP",
];
const MCST: [&str; 2] = [
    "DOCA_GPUNETIO_VERBS_MCST_DISABLED",
    "DOCA_GPUNETIO_VERBS_MCST_ENABLED",
];
const BLOCKING: [&str; 2] = [
    "DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED",
    "DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED",
];
const SYNC: [&str; 3] = [
    "DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS",
    "DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU",
    "DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA",
];
const CODE_OPT: [&str; 3] = [
    "DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT",
    "DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE",
    "DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_HAS_GDRCOPY",
];
const QP_TYPE: [&str; 2] = ["DOCA_GPUNETIO_VERBS_QP_SQ", "DOCA_GPUNETIO_VERBS_QP_RQ"];
const ADD: &str = "DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD";

/// Kernel preamble: a QP, a companion QP, addresses, a ticket, a CQE pointer, an accumulator.
const PRE: &str = "(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_qp *cqp, uint64_t *out) {\n\
    struct doca_gpu_dev_verbs_addr ra = {out[1], (uint32_t)out[2]}, la = {out[3], (uint32_t)out[4]};\n\
    doca_gpu_dev_verbs_ticket_t t = 0; struct mlx5_cqe64 *cqe = nullptr; uint64_t acc = ra.addr + la.key;\n\
    struct doca_gpu_dev_verbs_cq *sq = &qp->cq_sq, *rq = &qp->cq_rq;\n\
    struct doca_gpu_dev_verbs_wqe *w = (struct doca_gpu_dev_verbs_wqe *)qp->sq_wqe_daddr;\n\
    struct mlx5_wqe_data_seg *r = (struct mlx5_wqe_data_seg *)qp->rq_wqe_daddr;\n\
    __shared__ struct doca_gpu_dev_verbs_wqe smem;\n\
    enum doca_gpu_dev_verbs_wqe_ctrl_flags f = DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE;\n\
    struct doca_gpu_dev_verbs_qp *qps[2] = {qp, cqp}; uint64_t prods[2] = {1, 2};\n\
";
const POST: &str = "out[0] = acc + t + (uint64_t)cqe + (uint64_t)cqp + (uint64_t)sq + (uint64_t)rq + (uint64_t)w + (uint64_t)r\n\
    + (uint64_t)&smem + f + (uint64_t)qps[1] + prods[1];\n}\n";

/// Separates kernels in a generated body: one kernel per group keeps nvcc fast (its time
/// grows faster than linearly with the size of one function).
const BREAK: &str = "\n//BREAK\n";

/// A translation unit including only `header`, with one kernel per BREAK-separated group.
fn kernels(header: &str, name: &str, body: &str) -> String {
    let mut s = format!("#include <{header}>\n");
    for (i, group) in body.split(BREAK).enumerate() {
        if group.trim().is_empty() {
            continue;
        }
        s += &format!("__global__ void {name}_{i}{PRE}{group}{POST}");
    }
    s
}

fn common_tu() -> String {
    let mut s = String::new();
    s += "acc += doca_gpu_dev_verbs_query_globaltimer() + doca_gpu_dev_verbs_get_lane_id();\n\
          acc += doca_gpu_dev_verbs_bswap64(acc) + doca_gpu_dev_verbs_bswap32((uint32_t)acc);\n\
          doca_gpu_dev_verbs_store_relaxed_mmio(out + 5, acc);\n\
          acc += doca_gpu_dev_isaligned(out, 8);\n\
          doca_gpu_dev_verbs_memcpy_aligned_data(out + 6, out + 7, 8);\n\
          doca_gpu_dev_verbs_memcpy_data(out + 6, out + 7, 3);\n\
          doca_gpu_dev_verbs_memcpy_inl_aligned_data<uint32_t>((uint32_t *)(out + 6), (uint32_t *)(out + 7), 8);\n\
          acc += doca_gpu_dev_verbs_load_relaxed_sys_global((uint8_t *)out) + doca_gpu_dev_verbs_load_relaxed_sys_global((uint32_t *)out);\n\
          acc += doca_gpu_dev_verbs_load_relaxed_sys_global(out);\n\
          acc += doca_gpu_dev_verbs_div_ceil_aligned_pow2(acc, 30) + doca_gpu_dev_verbs_div_ceil_aligned_pow2_32bits(acc, 4);\n\
          doca_gpu_dev_verbs_fence_acquire(); doca_gpu_dev_verbs_fence_release();\n";
    for sy in SYNC {
        s += BREAK;
        s += &format!(
            "doca_gpu_dev_verbs_fence_acquire<{sy}>(); doca_gpu_dev_verbs_fence_release<{sy}>();\n\
             doca_gpu_dev_verbs_async_store_release<{sy}>((uint32_t *)(out + 8), (uint32_t)acc);\n\
             doca_gpu_dev_verbs_async_store_release<{sy}>(out + 8, acc);\n"
        );
    }
    for sh in SHARING {
        s += BREAK;
        s += &format!(
            "acc += doca_gpu_dev_verbs_atomic_max<uint64_t, {sh}>(out + 9, acc);\n\
             acc += doca_gpu_dev_verbs_atomic_max<uint64_t, {sh}, true>(out + 9, acc);\n\
             acc += doca_gpu_dev_verbs_atomic_add<uint64_t, {sh}>(out + 9, 1);\n\
             acc += doca_gpu_dev_verbs_atomic_add<uint32_t, {sh}>((uint32_t *)(out + 9), 1);\n\
             acc += doca_gpu_dev_verbs_atomic_read<uint64_t, {sh}>(out + 9);\n\
             doca_gpu_dev_verbs_lock<{sh}>((int *)(out + 10)); doca_gpu_dev_verbs_unlock<{sh}>((int *)(out + 10));\n\
             acc += doca_gpu_dev_verbs_load_relaxed<{sh}>(out + 9);\n"
        );
    }
    kernels("doca_gpunetio_dev_verbs_common.cuh", "k_common", &s)
}

fn cq_tu() -> String {
    let mut s = String::new();
    s += "sq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);\n\
          rq = doca_gpu_dev_verbs_qp_get_cq_rq(qp);\n\
          acc += doca_gpu_dev_verbs_cqe_idx_inc_mask((uint32_t)acc, 3);\n\
          cqe = (struct mlx5_cqe64 *)sq->cqe_daddr;\n\
          acc += doca_gpu_dev_verbs_cqe_is_inline(cqe) + doca_gpu_dev_verbs_cqe_get_bytes(cqe);\n\
          acc += doca_gpu_dev_verbs_cqe_get_inl_data(cqe)[0];\n\
          doca_gpu_dev_verbs_cq_print_cqe_err(cqe);\n\
          acc += doca_gpu_dev_verbs_cq_update_dbrec<true>(sq, 1) + doca_gpu_dev_verbs_cq_update_dbrec<false>(rq, 1);\n\
          acc += doca_gpu_dev_verbs_poll_cq_at(sq, 1) + doca_gpu_dev_verbs_poll_one_cq_at(sq, 1);\n\
          acc += doca_gpu_dev_verbs_poll_cq(sq, acc, &cqe) + doca_gpu_dev_verbs_poll_cq(sq, 2u);\n";
    for sh in SHARING {
        s += BREAK;
        for qt in QP_TYPE {
            s += &format!(
                "acc += doca_gpu_dev_verbs_poll_cq_at<{sh}, {qt}>(sq, acc);\n\
                 acc += doca_gpu_dev_verbs_poll_one_cq_at<{sh}, {qt}>(sq, acc);\n\
                 acc += doca_gpu_dev_verbs_poll_cq<{sh}, {qt}>(rq, (uint32_t)acc);\n\
                 acc += doca_priv_gpu_dev_verbs_poll_cq_at<{sh}, {qt}>(sq, acc);\n\
                 acc += doca_priv_gpu_dev_verbs_poll_one_cq_at<{sh}, {qt}>(sq, acc);\n"
            );
            for b in BLOCKING {
                s += &format!(
                    "acc += doca_gpu_dev_verbs_poll_cq<{sh}, {qt}, {b}>(rq, acc, &cqe);\n"
                );
            }
        }
    }
    kernels("doca_gpunetio_dev_verbs_cq.cuh", "k_cq", &s)
}

fn qp_tu() -> String {
    let mut s = String::new();
    s += "w = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)acc);\n\
          r = doca_gpu_dev_verbs_get_rwqe_ptr(qp, (uint16_t)acc);\n\
          doca_gpu_dev_verbs_store_wqe_seg((uint64_t *)w, out);\n\
          acc += doca_gpu_dev_verbs_wqe_idx_inc_mask((uint32_t)acc, 1) + doca_gpu_dev_verbs_prepare_dbr((uint32_t)acc);\n\
          acc += doca_gpu_dev_verbs_prepare_db(qp, acc);\n\
          doca_gpu_dev_verbs_wqe_prepare_write(qp, w, 1, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE, f, 0, ra.addr, ra.key, la.addr, la.key, 8);\n\
          doca_gpu_dev_verbs_wqe_prepare_write(qp, w, 1, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM, f, 7, ra.addr, ra.key, la.addr, la.key, 8, la.addr, la.key, 8);\n\
          doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp, w, 2, f, ra.addr, ra.key, 8);\n\
          doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint8_t>(qp, w, (uint8_t)1);\n\
          doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint16_t>(qp, w, (uint16_t)1);\n\
          doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint32_t>(qp, w, 1u);\n\
          doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint64_t>(qp, w, 1ull);\n\
          doca_gpu_dev_verbs_wqe_prepare_write_inl(qp, w, 3, f, ra.addr, ra.key, la.addr, 20);\n\
          doca_gpu_dev_verbs_wqe_prepare_read(qp, w, 4, f, ra.addr, ra.key, la.addr, la.key, 8);\n\
          doca_gpu_dev_verbs_wqe_prepare_read(qp, w, 4, f, ra.addr, ra.key, la.addr, la.key, 8, la.addr, la.key, 8);\n\
          doca_gpu_dev_verbs_wqe_prepare_atomic(qp, w, 5, DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA, f, ra.addr, ra.key, la.addr, la.key, 8, 1, 0);\n\
          doca_gpu_dev_verbs_wqe_prepare_wait(qp, w, 6, f, 5, 9);\n\
          doca_gpu_dev_verbs_wqe_prepare_send(qp, w, 7, DOCA_GPUNETIO_MLX5_OPCODE_SEND, f, 0);\n\
          doca_gpu_dev_verbs_wqe_prepare_send(qp, w, 7, DOCA_GPUNETIO_MLX5_OPCODE_SEND, f, 0, la.addr, la.key, 1);\n\
          doca_gpu_dev_verbs_wqe_prepare_send(qp, w, 7, DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM, f, 3, la.addr, la.key, 1, la.addr, la.key, 2);\n\
          doca_gpu_dev_verbs_wqe_prepare_send(qp, w, 7, DOCA_GPUNETIO_MLX5_OPCODE_SEND, f, 0, la.addr, la.key, 1, la.addr, la.key, 2, la.addr, la.key, 3);\n\
          doca_gpu_dev_verbs_wqe_prepare_recv(qp, r, la.addr, la.key, 64);\n\
          doca_gpu_dev_verbs_wqe_prepare_dump(qp, w, 8, f, la.addr, la.key, 1);\n\
          doca_gpu_dev_verbs_wait(qp, &t); doca_gpu_dev_verbs_wait(qp);\n";
    for sy in SYNC {
        s += BREAK;
        s += &format!(
            "doca_gpu_dev_verbs_ring_bf<{sy}>(qp, &smem); doca_gpu_dev_verbs_ring_bf_warp<{sy}>(qp, &smem);\n"
        );
        for co in CODE_OPT {
            s += &format!("doca_gpu_dev_verbs_ring_db<{sy}, {co}>(qp, acc);\n");
            for qt in QP_TYPE {
                s += &format!(
                    "doca_gpu_dev_verbs_update_dbr<{sy}, {co}, {qt}>(qp, (uint32_t)acc);\n"
                );
            }
        }
    }
    for qt in QP_TYPE {
        s += &format!("doca_priv_gpu_dev_verbs_update_dbr<{qt}>(qp, (uint32_t)acc);\n");
    }
    for sh in SHARING {
        s += BREAK;
        s += &format!("doca_gpu_dev_verbs_ring_proxy<{sh}>(qp, acc);\n");
        for nic in NIC {
            s += BREAK;
            s += &format!(
                "doca_gpu_dev_verbs_wait<{sh}, {nic}>(qp, &t); doca_gpu_dev_verbs_wait<{sh}, {nic}>(qp);\n"
            );
        }
        for qt in QP_TYPE {
            s += &format!(
                "doca_gpu_dev_verbs_wait_until_slot_available<{sh}, {qt}>(qp, acc);\n\
                 acc += doca_gpu_dev_verbs_reserve_wq_slots<{sh}, {qt}>(qp, 2);\n\
                 acc += doca_gpu_dev_verbs_reserve_wq_slots<{sh}, {qt}, false>(qp, 2);\n\
                 doca_gpu_dev_verbs_mark_wqes_ready<{sh}, {qt}>(qp, acc, acc + 1);\n"
            );
        }
        for sy in SYNC {
            s += BREAK;
            s += &format!("doca_gpu_dev_verbs_submit_proxy<{sh}, {sy}>(qp, acc);\n");
            for co in CODE_OPT {
                s += &format!(
                    "doca_gpu_dev_verbs_submit_bf<{sh}, {sy}, {co}>(qp, acc, &smem);\n\
                     doca_gpu_dev_verbs_submit_bf_warp<{sh}, {sy}, {co}>(qp, acc, &smem);\n"
                );
                for qt in QP_TYPE {
                    s += &format!(
                        "doca_gpu_dev_verbs_submit_db<{sh}, {sy}, {co}, {qt}>(qp, acc);\n\
                         doca_gpu_dev_verbs_submit_db_no_dbr<{sh}, {sy}, {co}, {qt}>(qp, acc);\n"
                    );
                }
            }
            for nic in NIC {
                s += BREAK;
                for qt in QP_TYPE {
                    s += &format!("doca_gpu_dev_verbs_submit<{sh}, {sy}, {nic}, {qt}>(qp, acc);\n");
                }
            }
        }
    }
    s += "doca_gpu_dev_verbs_submit(qp, acc);\n";
    kernels("doca_gpunetio_dev_verbs_qp.cuh", "k_qp", &s)
}

fn onesided_tu() -> String {
    let mut s = String::new();
    s += "doca_gpu_dev_verbs_put(qp, ra, la, 8, &t); doca_gpu_dev_verbs_put(qp, ra, la, 8);\n\
          doca_gpu_dev_verbs_p(qp, ra, 1u, &t); doca_gpu_dev_verbs_p(qp, ra, (uint8_t)1);\n\
          doca_gpu_dev_verbs_get(qp, ra, la, 8, la, &t); doca_gpu_dev_verbs_get_wait(qp, la, &t); doca_gpu_dev_verbs_get_wait(qp, la);\n\
          doca_gpu_dev_verbs_put_signal(qp, ra, la, 8, ra, la, 1, &t); doca_gpu_dev_verbs_put_signal(qp, ra, la, 8, ra, la, 1);\n\
          doca_gpu_dev_verbs_p_signal(qp, ra, 1ull, ra, la, 1, &t); doca_gpu_dev_verbs_p_signal(qp, ra, 1ull, ra, la, 1);\n\
          doca_gpu_dev_verbs_signal(qp, ra, la, 1, &t); doca_gpu_dev_verbs_signal(qp, ra, la, 1);\n";
    for sh in SHARING {
        s += BREAK;
        for nic in NIC {
            s += &format!(
                "doca_gpu_dev_verbs_put_thread<{sh}, {nic}>(qp, ra, la, 8, &t); doca_gpu_dev_verbs_put_warp<{sh}, {nic}>(qp, ra, la, 8, &t);\n\
                 doca_gpu_dev_verbs_p_thread<uint32_t, {sh}, {nic}>(qp, ra, 1u, &t); doca_gpu_dev_verbs_p_warp<uint64_t, {sh}, {nic}>(qp, ra, 1ull, &t);\n\
                 doca_gpu_dev_verbs_put_signal_thread<{ADD}, {sh}, {nic}>(qp, ra, la, 8, ra, la, 1, &t);\n\
                 doca_gpu_dev_verbs_put_signal_warp<{ADD}, {sh}, {nic}>(qp, ra, la, 8, ra, la, 1, &t);\n\
                 doca_gpu_dev_verbs_p_signal_thread<uint16_t, {ADD}, {sh}, {nic}>(qp, ra, (uint16_t)1, ra, la, 1, &t);\n\
                 doca_gpu_dev_verbs_p_signal_warp<uint16_t, {ADD}, {sh}, {nic}>(qp, ra, (uint16_t)1, ra, la, 1, &t);\n\
                 doca_gpu_dev_verbs_signal<{ADD}, {sh}, {nic}>(qp, ra, la, 1, &t); doca_gpu_dev_verbs_signal<{ADD}, {sh}, {nic}>(qp, ra, la, 1);\n"
            );
            for e in EXEC {
                s += &format!(
                    "doca_gpu_dev_verbs_put<{sh}, {nic}, {e}>(qp, ra, la, 8, &t); doca_gpu_dev_verbs_put<{sh}, {nic}, {e}>(qp, ra, la, 8);\n\
                     doca_gpu_dev_verbs_p<uint32_t, {sh}, {nic}, {e}>(qp, ra, 1u, &t); doca_gpu_dev_verbs_p<uint64_t, {sh}, {nic}, {e}>(qp, ra, 1ull);\n\
                     doca_gpu_dev_verbs_put_signal<{ADD}, {sh}, {nic}, {e}>(qp, ra, la, 8, ra, la, 1, &t);\n\
                     doca_gpu_dev_verbs_put_signal<{ADD}, {sh}, {nic}, {e}>(qp, ra, la, 8, ra, la, 1);\n\
                     doca_gpu_dev_verbs_p_signal<uint32_t, {ADD}, {e}, {sh}, {nic}>(qp, ra, 1u, ra, la, 1, &t);\n\
                     doca_gpu_dev_verbs_p_signal<uint32_t, {ADD}, {e}, {sh}, {nic}>(qp, ra, 1u, ra, la, 1);\n"
                );
                for m in MCST {
                    for b in BLOCKING {
                        s += &format!(
                            "doca_gpu_dev_verbs_get<{sh}, {nic}, {e}, {m}, {b}>(qp, ra, la, 8, la, &t);\n"
                        );
                    }
                }
            }
            for m in MCST {
                s += &format!(
                    "doca_gpu_dev_verbs_get_wait<{sh}, {nic}, {m}>(qp, la, &t); doca_gpu_dev_verbs_get_wait<{sh}, {nic}, {m}>(qp, la);\n"
                );
                for b in BLOCKING {
                    s += &format!(
                        "doca_gpu_dev_verbs_get_thread<{sh}, {nic}, {m}, {b}>(qp, ra, la, 8, la, &t);\n\
                         doca_gpu_dev_verbs_get_warp<{sh}, {nic}, {m}, {b}>(qp, ra, la, 8, la, &t);\n"
                    );
                }
            }
        }
    }
    kernels("doca_gpunetio_dev_verbs_onesided.cuh", "k_onesided", &s)
}

fn twosided_tu() -> String {
    let mut s = String::new();
    s += "doca_gpu_dev_verbs_send(qp, la, 8, &t); doca_gpu_dev_verbs_recv(qp, la, 8, &t);\n\
          doca_gpu_dev_verbs_recv_wait(qp, la, &t, &cqe); doca_gpu_dev_verbs_recv_wait(qp, la, &cqe);\n";
    for sh in SHARING {
        s += BREAK;
        for nic in NIC {
            s += &format!(
                "doca_gpu_dev_verbs_send_thread<{sh}, {nic}>(qp, la, 8, &t); doca_gpu_dev_verbs_send_warp<{sh}, {nic}>(qp, la, 8, &t);\n\
                 doca_gpu_dev_verbs_recv_thread<{sh}, {nic}>(qp, la, 8, &t); doca_gpu_dev_verbs_recv_warp<{sh}, {nic}>(qp, la, 8, &t);\n"
            );
            for e in EXEC {
                s += &format!(
                    "doca_gpu_dev_verbs_send<{sh}, {nic}, {e}>(qp, la, 8, &t); doca_gpu_dev_verbs_recv<{sh}, {nic}, {e}>(qp, la, 8, &t);\n"
                );
            }
            for m in MCST {
                for b in BLOCKING {
                    s += &format!(
                        "doca_gpu_dev_verbs_recv_wait<{sh}, {nic}, {m}, {b}>(qp, la, &t, &cqe);\n\
                         doca_gpu_dev_verbs_recv_wait<{sh}, {nic}, {m}, {b}>(qp, la, &cqe);\n"
                    );
                }
            }
        }
    }
    kernels("doca_gpunetio_dev_verbs_twosided.cuh", "k_twosided", &s)
}

fn counter_tu() -> String {
    let mut s = String::new();
    s += "doca_gpu_dev_verbs_submit_multi_qps<2>(qps, prods);\n\
          doca_gpu_dev_verbs_put_counter(qp, ra, la, 8, cqp, ra, la, 1);\n\
          doca_gpu_dev_verbs_p_counter(qp, ra, 1u, cqp, ra, la, 1);\n\
          doca_gpu_dev_verbs_put_signal_counter(qp, ra, la, 8, ra, la, 1, cqp, ra, la, 1);\n\
          doca_gpu_dev_verbs_signal_counter(qp, ra, la, 1, cqp, ra, la, 1);\n";
    for sh in SHARING {
        s += BREAK;
        for sy in SYNC {
            s +=
                &format!("doca_gpu_dev_verbs_submit_proxy_multi_qps<2, {sh}, {sy}>(qps, prods);\n");
            for co in CODE_OPT {
                s += &format!(
                    "doca_gpu_dev_verbs_submit_db_multi_qps<2, {sh}, {sy}, {co}>(qps, prods);\n\
                     doca_gpu_dev_verbs_submit_db_multi_qps_no_dbr<2, {sh}, {sy}, {co}>(qps, prods);\n"
                );
            }
            for nic in NIC {
                s += BREAK;
                s += &format!(
                    "doca_gpu_dev_verbs_submit_multi_qps<2, {sh}, {sy}, {nic}>(qps, prods);\n"
                );
            }
        }
        for nic in NIC {
            s += BREAK;
            s += &format!(
                "doca_gpu_dev_verbs_put_counter_thread<{sh}, {nic}>(qp, ra, la, 8, cqp, ra, la, 1);\n\
                 doca_gpu_dev_verbs_put_counter_warp<{sh}, {nic}>(qp, ra, la, 8, cqp, ra, la, 1);\n\
                 doca_gpu_dev_verbs_p_counter<uint64_t, {sh}, {nic}>(qp, ra, 1ull, cqp, ra, la, 1);\n\
                 doca_gpu_dev_verbs_put_signal_counter<{ADD}, {sh}, {nic}>(qp, ra, la, 8, ra, la, 1, cqp, ra, la, 1);\n\
                 doca_gpu_dev_verbs_signal_counter<{ADD}, {sh}, {nic}>(qp, ra, la, 1, cqp, ra, la, 1);\n"
            );
            for e in EXEC {
                s += &format!(
                    "doca_gpu_dev_verbs_put_counter<{sh}, {nic}, {e}>(qp, ra, la, 8, cqp, ra, la, 1);\n"
                );
            }
        }
    }
    kernels("doca_gpunetio_dev_verbs_counter.cuh", "k_counter", &s)
}

fn rdma_tu() -> String {
    "#include <doca_gpunetio_dev_rdma.cuh>\n\
     __global__ void k_rdma(struct doca_gpu_dev_rdma *rdma, struct doca_gpu_buf *rb, struct doca_gpu_buf *lb, uint32_t *out) {\n\
     uint32_t acc = 0, pos, mask, n, imm[2], conn[2]; uint8_t inl[4] = {1, 2, 3, 4};\n\
     struct doca_gpu_dev_rdma_r *r;\n\
     acc += doca_gpu_dev_rdma_write_weak(rdma, 0, rb, 0, lb, 0, 128, 7, DOCA_GPU_RDMA_WRITE_FLAG_IMM, 3);\n\
     acc += doca_gpu_dev_rdma_write_strong(rdma, 0, rb, 0, lb, 0, 128, 7, DOCA_GPU_RDMA_WRITE_FLAG_NONE);\n\
     acc += doca_gpu_dev_rdma_write_inline_weak(rdma, 0, rb, 0, inl, 4, 0, DOCA_GPU_RDMA_WRITE_FLAG_NONE, 4);\n\
     acc += doca_gpu_dev_rdma_write_inline_strong(rdma, 0, rb, 0, inl, 4, 0, DOCA_GPU_RDMA_WRITE_FLAG_IMM);\n\
     acc += doca_gpu_dev_rdma_read_weak(rdma, 0, rb, 0, lb, 0, 128, 0, 5);\n\
     acc += doca_gpu_dev_rdma_read_strong(rdma, 0, rb, 0, lb, 0, 128, 0);\n\
     acc += doca_gpu_dev_rdma_send_weak(rdma, 1, lb, 0, 128, 9, DOCA_GPU_RDMA_SEND_FLAG_IMM, 6);\n\
     acc += doca_gpu_dev_rdma_send_strong(rdma, 1, lb, 0, 128, 9, DOCA_GPU_RDMA_SEND_FLAG_NONE);\n\
     acc += doca_gpu_dev_rdma_send_inline_weak(rdma, 1, inl, 4, 9, DOCA_GPU_RDMA_SEND_FLAG_IMM, 7);\n\
     acc += doca_gpu_dev_rdma_send_inline_strong(rdma, 1, inl, 4, 9, DOCA_GPU_RDMA_SEND_FLAG_NONE);\n\
     acc += doca_gpu_dev_rdma_commit_weak(rdma, 0, 2) + doca_gpu_dev_rdma_commit_strong(rdma, 1);\n\
     acc += doca_gpu_dev_rdma_wait_all(rdma, &n) + n;\n\
     acc += doca_gpu_dev_rdma_get_info(rdma, 0, &pos, &mask) + pos + mask;\n\
     acc += doca_gpu_dev_rdma_get_recv(rdma, &r);\n\
     acc += doca_gpu_dev_rdma_recv_weak(r, lb, 128, 0, 0, pos) + doca_gpu_dev_rdma_recv_strong(r, nullptr, 0, 0, 0);\n\
     acc += doca_gpu_dev_rdma_recv_commit_weak(r, 1) + doca_gpu_dev_rdma_recv_commit_strong(r);\n\
     acc += doca_gpu_dev_rdma_recv_wait_all(r, DOCA_GPU_RDMA_RECV_WAIT_FLAG_B, &n, imm, conn) + n + imm[0] + conn[0];\n\
     acc += doca_gpu_dev_rdma_recv_wait_all(r, DOCA_GPU_RDMA_RECV_WAIT_FLAG_NB, &n, nullptr, nullptr);\n\
     acc += doca_gpu_dev_rdma_recv_get_info(r, &pos, &mask) + pos + mask;\n\
     out[0] = acc;\n}\n"
        .to_string()
}

fn dma_tu() -> String {
    "#include <doca_gpunetio_dev_dma.cuh>\n\
     __global__ void k_dma(struct doca_gpu_dma *dma, struct doca_gpu_buf_arr *src, struct doca_gpu_buf_arr *dst, uint32_t *out) {\n\
     struct doca_gpu_buf *s, *d; uintptr_t a; uint32_t mk;\n\
     doca_gpu_dev_buf_get_buf(src, threadIdx.x, &s); doca_gpu_dev_buf_get_buf(dst, threadIdx.x, &d);\n\
     doca_gpu_dev_buf_get_addr(s, &a); doca_gpu_dev_buf_get_mkey(d, &mk);\n\
     uint32_t acc = doca_gpu_dev_dma_memcpy(dma, s, 0, d, 0, 1024);\n\
     if (threadIdx.x == 0) acc += doca_gpu_dev_dma_commit(dma);\n\
     out[threadIdx.x] = acc + (uint32_t)a + mk;\n}\n"
        .to_string()
}

/// Every new device header with the translation unit that includes only it.
fn translation_units() -> Vec<(&'static str, String)> {
    vec![
        ("doca_gpunetio_dev_verbs_common.cuh", common_tu()),
        ("doca_gpunetio_dev_verbs_cq.cuh", cq_tu()),
        ("doca_gpunetio_dev_verbs_qp.cuh", qp_tu()),
        ("doca_gpunetio_dev_verbs_onesided.cuh", onesided_tu()),
        ("doca_gpunetio_dev_verbs_twosided.cuh", twosided_tu()),
        ("doca_gpunetio_dev_verbs_counter.cuh", counter_tu()),
        ("doca_gpunetio_dev_rdma.cuh", rdma_tu()),
        ("doca_gpunetio_dev_dma.cuh", dma_tu()),
    ]
}

/// Compiles `src` with nvcc for sm_80 and sm_90 (warnings are errors); panics with the
/// compiler output on failure.
fn nvcc_compile(nvcc: &Path, dir: &Path, name: &str, src: &str, extra: &[&str]) {
    let args: Vec<String> = [
        "-gencode",
        "arch=compute_80,code=sm_80",
        "-gencode",
        "arch=compute_90,code=sm_90",
    ]
    .iter()
    .chain(extra)
    .map(|a| a.to_string())
    .collect();
    doca_test_support::cc::nvcc_strict(nvcc, dir, name, src, &args);
}

#[test]
fn each_device_header_compiles_alone_with_every_instantiation() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let tus = translation_units();
    for (header, src) in &tus {
        // The unit names only its own header.
        let includes: Vec<&str> = src.lines().filter(|l| l.starts_with("#include")).collect();
        assert_eq!(includes, [format!("#include <{header}>")], "{header}");
        // -G: unoptimised device code; the optimised build of the same functions is the
        // GPU test kernels' (gpu_test_kernels_compile_optimised).
        nvcc_compile(
            nvcc,
            dir.path(),
            header.trim_end_matches(".cuh"),
            src,
            &["-G"],
        );
    }
}

#[test]
fn gpu_test_kernels_compile_optimised() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(verbs_support::src_dir().join("tests/cuda/verbs_kernels.cu"))
        .unwrap();
    nvcc_compile(nvcc, dir.path(), "verbs_kernels", &src, &[]);
}

#[test]
fn device_headers_compile_against_the_rdma_core_compat_subset() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <doca_gpunetio_dev_verbs_counter.cuh>\n\
               #include <doca_gpunetio_dev_verbs_twosided.cuh>\n\
               #include <doca_gpunetio_dev_rdma.cuh>\n\
               #include <doca_gpunetio_dev_dma.cuh>\n\
               #ifndef DOCA_SOFT_COMPAT_INFINIBAND_MLX5DV_H_\n#error compat subset not used\n#endif\n\
               __global__ void k(struct doca_gpu_dev_verbs_qp *qp, uint64_t *out) {\n\
               doca_gpu_dev_verbs_ticket_t t; struct mlx5_cqe64 *c;\n\
               doca_gpu_dev_verbs_put(qp, {out[0], 1}, {out[1], 2}, 8, &t);\n\
               doca_gpu_dev_verbs_recv_wait(qp, {0, 0}, &t, &c); out[2] = t + (uint64_t)c;\n}\n";
    nvcc_compile(
        nvcc,
        dir.path(),
        "compat",
        src,
        &["-DDOCA_SOFT_FORCE_COMPAT_MLX5"],
    );
}

/// (C expression, value from the facts, reference §3.1 / §3.9 / §3.10 or our own layout).
fn facts() -> Vec<(&'static str, u64)> {
    vec![
        // struct doca_gpu_dev_verbs_wqe_ctrl_seg
        ("sizeof(struct doca_gpu_dev_verbs_wqe_ctrl_seg)", 16),
        ("_Alignof(struct doca_gpu_dev_verbs_wqe_ctrl_seg)", 8),
        (
            "offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, opmod_idx_opcode)",
            0,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, qpn_ds)",
            4,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, signature)",
            8,
        ),
        ("offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, rsvd)", 9),
        (
            "offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, fm_ce_se)",
            11,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, signature_fm_ce_se)",
            8,
        ),
        ("offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, imm)", 12),
        // struct doca_gpu_dev_verbs_wqe_wait_seg
        ("sizeof(struct doca_gpu_dev_verbs_wqe_wait_seg)", 16),
        ("_Alignof(struct doca_gpu_dev_verbs_wqe_wait_seg)", 8),
        ("offsetof(struct doca_gpu_dev_verbs_wqe_wait_seg, resv)", 0),
        (
            "offsetof(struct doca_gpu_dev_verbs_wqe_wait_seg, max_index)",
            8,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_wqe_wait_seg, qpn_cqn)",
            12,
        ),
        // struct doca_gpu_dev_verbs_addr
        ("sizeof(struct doca_gpu_dev_verbs_addr)", 16),
        ("offsetof(struct doca_gpu_dev_verbs_addr, addr)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_addr, key)", 8),
        // struct doca_gpu_dev_verbs_wqe
        ("sizeof(struct doca_gpu_dev_verbs_wqe)", 64),
        ("_Alignof(struct doca_gpu_dev_verbs_wqe)", 8),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, inl_data)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, dseg0)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, dseg1)", 16),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, dseg2)", 32),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, dseg3)", 48),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, rw_cseg)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, rw_rseg)", 16),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, rw_dseg0)", 32),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, rw_dseg1)", 48),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, at_cseg)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, at_rseg)", 16),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, at_seg)", 32),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, at_dseg)", 48),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, snd_cseg)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, snd_dseg0)", 16),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, snd_dseg1)", 32),
        ("offsetof(struct doca_gpu_dev_verbs_wqe, snd_dseg2)", 48),
        // struct mlx5_err_cqe_ex
        ("sizeof(struct mlx5_err_cqe_ex)", 64),
        ("_Alignof(struct mlx5_err_cqe_ex)", 4),
        ("offsetof(struct mlx5_err_cqe_ex, rsvd0)", 0),
        ("offsetof(struct mlx5_err_cqe_ex, srqn)", 32),
        ("offsetof(struct mlx5_err_cqe_ex, rsvd1)", 36),
        ("offsetof(struct mlx5_err_cqe_ex, hw_err_synd)", 52),
        ("offsetof(struct mlx5_err_cqe_ex, hw_synd_type)", 53),
        ("offsetof(struct mlx5_err_cqe_ex, vendor_err_synd)", 54),
        ("offsetof(struct mlx5_err_cqe_ex, syndrome)", 55),
        ("offsetof(struct mlx5_err_cqe_ex, s_wqe_opcode_qpn)", 56),
        ("offsetof(struct mlx5_err_cqe_ex, wqe_counter)", 60),
        ("offsetof(struct mlx5_err_cqe_ex, signature)", 62),
        ("offsetof(struct mlx5_err_cqe_ex, op_own)", 63),
        // struct doca_gpu_dev_verbs_cqe64_inline (and the same tail of mlx5_cqe64)
        ("sizeof(struct doca_gpu_dev_verbs_cqe64_inline)", 64),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, inl_data)",
            0,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, srqn_uidx)",
            32,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, imm_inval_pkey)",
            36,
        ),
        ("offsetof(struct doca_gpu_dev_verbs_cqe64_inline, app)", 40),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, app_op)",
            41,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, app_info)",
            42,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, byte_cnt)",
            44,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, timestamp)",
            48,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, sop_drop_qpn)",
            56,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, wqe_counter)",
            60,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, signature)",
            62,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_cqe64_inline, op_own)",
            63,
        ),
        ("offsetof(struct mlx5_cqe64, imm_inval_pkey)", 36),
        ("offsetof(struct mlx5_cqe64, byte_cnt)", 44),
        ("offsetof(struct mlx5_cqe64, wqe_counter)", 60),
        ("offsetof(struct mlx5_cqe64, op_own)", 63),
        // struct doca_gpu_dev_verbs_cq
        ("sizeof(struct doca_gpu_dev_verbs_cq)", 56),
        ("_Alignof(struct doca_gpu_dev_verbs_cq)", 8),
        ("offsetof(struct doca_gpu_dev_verbs_cq, cqe_daddr)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_cq, cq_num)", 8),
        ("offsetof(struct doca_gpu_dev_verbs_cq, cqe_num)", 12),
        ("offsetof(struct doca_gpu_dev_verbs_cq, dbrec)", 16),
        ("offsetof(struct doca_gpu_dev_verbs_cq, cqe_ci)", 24),
        ("offsetof(struct doca_gpu_dev_verbs_cq, cqe_mask)", 32),
        ("offsetof(struct doca_gpu_dev_verbs_cq, cqe_size)", 36),
        ("offsetof(struct doca_gpu_dev_verbs_cq, cqe_rsvd)", 40),
        ("offsetof(struct doca_gpu_dev_verbs_cq, mem_type)", 48),
        // struct doca_gpu_dev_verbs_qp
        ("sizeof(struct doca_gpu_dev_verbs_qp)", 312),
        ("_Alignof(struct doca_gpu_dev_verbs_qp)", 8),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_rsvd_index)", 0),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_ready_index)", 8),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_pi)", 16),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_num)", 24),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8)", 28),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be)",
            32,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_1ds)",
            36,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_2ds)",
            40,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_3ds)",
            44,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_4ds)",
            48,
        ),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_lock)", 52),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_num)", 56),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_mask)", 58),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_daddr)", 64),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_dbrec)", 72),
        ("offsetof(struct doca_gpu_dev_verbs_qp, sq_db)", 80),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_num)", 88),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_pi)", 96),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_num)", 104),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_mask)", 108),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_daddr)", 112),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_dbrec)", 120),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rcv_wqe_size)", 128),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_rsvd_index)", 136),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, rq_ready_index)",
            144,
        ),
        ("offsetof(struct doca_gpu_dev_verbs_qp, rq_lock)", 152),
        ("offsetof(struct doca_gpu_dev_verbs_qp, cq_sq)", 160),
        ("offsetof(struct doca_gpu_dev_verbs_qp, cq_rq)", 216),
        ("offsetof(struct doca_gpu_dev_verbs_qp, nic_handler)", 272),
        ("offsetof(struct doca_gpu_dev_verbs_qp, mem_type)", 276),
        ("offsetof(struct doca_gpu_dev_verbs_qp, need_mcst)", 280),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, last_get_wqe_idx)",
            288,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, last_dump_wqe_idx)",
            296,
        ),
        (
            "offsetof(struct doca_gpu_dev_verbs_qp, last_recv_wqe_idx)",
            304,
        ),
        ("sizeof(doca_gpu_dev_verbs_ticket_t)", 8),
        // Macros and enums.
        ("DOCA_GPUNETIO_VERBS_WARP_SIZE", 32),
        ("DOCA_GPUNETIO_VERBS_WARP_FULL_MASK", 0xffff_ffff),
        ("DOCA_GPUNETIO_VERBS_PAGE_SIZE", 65536),
        ("DOCA_GPUNETIO_VERBS_CQE_CI_MASK", 0xff_ffff),
        ("DOCA_GPUNETIO_VERBS_WQE_PI_MASK", 0xffff),
        ("DOCA_GPUNETIO_MLX5_WQE_SQ_SHIFT", 6),
        ("DOCA_GPUNETIO_MLX5_WQE_RQ_SHIFT", 4),
        ("DOCA_GPUNETIO_VERBS_MKEY_SWAPPED", 1),
        ("DOCA_GPUNETIO_VERBS_ENABLE_DEBUG", 0),
        ("DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE", 28),
        ("DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT", 4),
        ("DOCA_GPUNETIO_VERBS_CQE_SIZE", 64),
        ("DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT", 8),
        ("DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT", 30),
        ("DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE", 1 << 30),
        ("DOCA_GPUNETIO_MLX5_OPCODE_NOP", 0x00),
        ("DOCA_GPUNETIO_MLX5_OPCODE_SEND_INVAL", 0x01),
        ("DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE", 0x08),
        ("DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM", 0x09),
        ("DOCA_GPUNETIO_MLX5_OPCODE_SEND", 0x0a),
        ("DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM", 0x0b),
        ("DOCA_GPUNETIO_MLX5_OPCODE_TSO", 0x0e),
        ("DOCA_GPUNETIO_MLX5_OPCODE_WAIT", 0x0f),
        ("DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ", 0x10),
        ("DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_CS", 0x11),
        ("DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA", 0x12),
        ("DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_MASKED_CS", 0x14),
        ("DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_MASKED_FA", 0x15),
        ("DOCA_GPUNETIO_MLX5_OPCODE_FMR", 0x19),
        ("DOCA_GPUNETIO_MLX5_OPCODE_LOCAL_INVAL", 0x1b),
        ("DOCA_GPUNETIO_MLX5_OPCODE_CONFIG_CMD", 0x1f),
        ("DOCA_GPUNETIO_MLX5_OPCODE_SET_PSV", 0x20),
        ("DOCA_GPUNETIO_MLX5_OPCODE_DUMP", 0x23),
        ("DOCA_GPUNETIO_MLX5_OPCODE_UMR", 0x25),
        ("DOCA_GPUNETIO_MLX5_OPCODE_TAG_MATCHING", 0x28),
        ("DOCA_GPUNETIO_MLX5_OPCODE_FLOW_TBL_ACCESS", 0x2c),
        ("DOCA_GPUNETIO_MLX5_OPCODE_MMO", 0x2f),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR", 0),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR", 1),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ALWAYS", 2),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_AND_EQE", 3),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_NO_FENCE", 0),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE", 1),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE", 2),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_STRONG_ORDERING", 3),
        (
            "DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE_AND_INITIATOR_SMALL_FENCE",
            4,
        ),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_CUSTOM", 0x100),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE", 8),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_ERROR_UPDATE", 0),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_FIRST_CQE_ERROR", 4),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_SOLICITED", 2),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_FENCE", 128),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE", 32),
        ("DOCA_GPUNETIO_MLX5_WQE_CTRL_STRONG_ORDERING", 96),
        ("DOCA_GPUNETIO_MLX5_RCV_DBR", 0),
        ("DOCA_GPUNETIO_MLX5_SND_DBR", 1),
        ("DOCA_GPUNETIO_VERBS_MEM_TYPE_AUTO", 0),
        ("DOCA_GPUNETIO_VERBS_MEM_TYPE_HOST", 1),
        ("DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU", 2),
        ("DOCA_GPUNETIO_VERBS_MEM_TYPE_MAX", 0x7fff_ffff),
        ("DOCA_GPUNETIO_VERBS_QP_SQ", 0),
        ("DOCA_GPUNETIO_VERBS_QP_RQ", 1),
        ("DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD", 0),
        ("DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP", 1),
        ("DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS", 0),
        ("DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU", 1),
        ("DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA", 2),
        ("DOCA_GPUNETIO_VERBS_SYNC_SCOPE_MAX", 0x7fff_ffff),
        ("DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE", 0),
        ("DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA", 1),
        ("DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU", 2),
        ("DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_MAX", 0x7fff_ffff),
        ("DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO", 0),
        ("DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY", 1),
        ("DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB", 2),
        ("DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF", 3),
        ("DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR", 4),
        ("DOCA_GPUNETIO_VERBS_NIC_HANDLER_TYPE_MAX", 5),
        ("DOCA_GPUNETIO_VERBS_MCST_DISABLED", 0),
        ("DOCA_GPUNETIO_VERBS_MCST_ENABLED", 1),
        ("DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT", 0),
        ("DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE", 1),
        ("DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_HAS_GDRCOPY", 2),
        ("DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_MAX", 0x7fff_ffff),
        ("DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD", 0),
        ("DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED", 0),
        ("DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED", 1),
        ("DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MIN", 3),
        ("DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MAX", 4),
        ("DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_ATOMIC_FA_CAS", 4),
        ("DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_WAIT", 2),
        // doca-soft's private handles (doca_soft_dev_rdma_ring.h, doca_soft_dev_dma_ring.h):
        // the layout the Rust mirrors must have.
        ("sizeof(struct doca_gpu_dev_rdma_r)", 64),
        ("offsetof(struct doca_gpu_dev_rdma_r, qp)", 0),
        ("sizeof(struct doca_gpu_dev_rdma)", 128),
        ("offsetof(struct doca_gpu_dev_rdma, version)", 0),
        ("offsetof(struct doca_gpu_dev_rdma, num_connections)", 4),
        ("offsetof(struct doca_gpu_dev_rdma, conn_qps)", 8),
        ("offsetof(struct doca_gpu_dev_rdma, commits)", 16),
        ("offsetof(struct doca_gpu_dev_rdma, recv)", 64),
        ("DOCA_SOFT_DEV_RDMA_VERSION", 1),
        ("DOCA_SOFT_DEV_RDMA_MAX_INLINE_WRITE", 28),
        ("DOCA_SOFT_DEV_RDMA_MAX_INLINE_SEND", 44),
        ("sizeof(struct doca_soft_dma_desc)", 64),
        ("offsetof(struct doca_soft_dma_desc, src)", 0),
        ("offsetof(struct doca_soft_dma_desc, dst)", 8),
        ("offsetof(struct doca_soft_dma_desc, len)", 16),
        ("offsetof(struct doca_soft_dma_desc, src_mkey)", 24),
        ("offsetof(struct doca_soft_dma_desc, dst_mkey)", 28),
        ("offsetof(struct doca_soft_dma_desc, seq)", 32),
        ("sizeof(struct doca_gpu_dma)", 256),
        ("offsetof(struct doca_gpu_dma, version)", 0),
        ("offsetof(struct doca_gpu_dma, desc_num)", 4),
        ("offsetof(struct doca_gpu_dma, desc_mask)", 8),
        ("offsetof(struct doca_gpu_dma, desc_addr)", 16),
        ("offsetof(struct doca_gpu_dma, rsvd_idx)", 64),
        ("offsetof(struct doca_gpu_dma, pi)", 128),
        ("offsetof(struct doca_gpu_dma, done)", 192),
        ("DOCA_SOFT_DMA_RING_VERSION", 1),
    ]
}

/// A C source asserting every fact at compile time.
fn facts_source(cpp: bool) -> String {
    let mut s = String::from(
        "#include <stddef.h>\n#include <doca_gpunetio_verbs_def.h>\n\
         #include <doca_soft_dev_rdma_ring.h>\n#include <doca_soft_dev_dma_ring.h>\n",
    );
    if cpp {
        s += "#define _Alignof alignof\n#define _Static_assert static_assert\n";
    }
    for (i, (expr, v)) in facts().iter().enumerate() {
        s += &format!(
            "_Static_assert((unsigned long long)({expr}) == {v}ULL, \"fact {i}: {expr} == {v}\");\n"
        );
    }
    s
}

#[test]
fn verbs_def_and_ring_headers_compile_alone_in_c_and_cpp() {
    let dir = tempfile::tempdir().unwrap();
    for h in [
        "doca_gpunetio_verbs_def.h",
        "doca_soft_dev_rdma_ring.h",
        "doca_soft_dev_dma_ring.h",
        "doca_soft_mlx5.h",
    ] {
        for force in [false, true] {
            for (cc, std, ext) in [("gcc", "-std=gnu11", "c"), ("g++", "-std=c++17", "cpp")] {
                let src = dir.path().join(format!("t.{ext}"));
                std::fs::write(&src, format!("#include <{h}>\nint doca_soft_probe;\n")).unwrap();
                let mut cmd = doca_test_support::cc::strict(cc, std);
                cmd.arg("-c");
                if force {
                    cmd.arg("-DDOCA_SOFT_FORCE_COMPAT_MLX5");
                }
                doca_test_support::cc::must_succeed(
                    cmd.arg("-o").arg(dir.path().join("t.o")).arg(&src),
                    &format!("{cc} {h} (compat forced: {force})"),
                );
            }
        }
    }
}

#[test]
fn public_layouts_and_values_match_the_facts_in_c_and_cpp() {
    let dir = tempfile::tempdir().unwrap();
    for (cc, std, ext, cpp) in [
        ("gcc", "-std=gnu11", "c", false),
        ("g++", "-std=c++17", "cpp", true),
    ] {
        let f = dir.path().join(format!("facts.{ext}"));
        std::fs::write(&f, facts_source(cpp)).unwrap();
        doca_test_support::cc::must_succeed(
            doca_test_support::cc::strict(cc, std)
                .arg("-fsyntax-only")
                .arg(&f),
            &format!("{cc}: layout/value differs from the facts"),
        );
    }
    assert!(facts().len() > 200);
}

#[test]
fn public_layouts_match_the_facts_under_nvcc() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let dir = tempfile::tempdir().unwrap();
    let src = facts_source(true) + "__global__ void k(int *p) { *p = 0; }\n";
    nvcc_compile(nvcc, dir.path(), "facts", &src, &[]);
}

/// The host program: builds WQEs with the header's builders into a zeroed ring and prints
/// each slot; evaluates CQEs given as bytes.
const QPN: u32 = 0x00ab_cdef & 0xff_ffff;
const REMOTE: Addr = Addr::new(0x1122_3344_5566_7788, 0x0102_0304);
const LOCAL: Addr = Addr::new(0x0000_7f00_dead_b000, 0x0a0b_0c0d);
const LOCAL2: Addr = Addr::new(0x0000_7f00_0000_1000, 0x1a1b_1c1d);

fn encoding_program(cqes: &[(String, [u8; 64], u64, u32)]) -> String {
    // C literals of the test values: keys go to the builders big-endian, as DOCA callers
    // pass htobe32(lkey).
    let (ra, rk) = (REMOTE.addr, REMOTE.key.to_be());
    let (la, lk) = (LOCAL.addr, LOCAL.key.to_be());
    let (la2, lk2) = (LOCAL2.addr, LOCAL2.key.to_be());
    let mut s = format!(
        "#include <stdio.h>\n#include <string.h>\n#include <doca_gpunetio_dev_verbs_qp.cuh>\n\
         #include <doca_gpunetio_dev_rdma.cuh>\n\
         static uint8_t ring[64 * 64] __attribute__((aligned(64)));\n\
         static uint8_t rring[16 * 16] __attribute__((aligned(64)));\n\
         static void dump(const char *name, const void *p, int n) {{\n\
         printf(\"%s:\", name); for (int i = 0; i < n; i++) printf(\" %02x\", ((const uint8_t *)p)[i]); printf(\"\\n\"); }}\n\
         static __be32 be32(uint32_t v) {{ return __builtin_bswap32(v); }}\n\
         int main(void) {{\n\
         struct doca_gpu_dev_verbs_qp qp; memset(&qp, 0, sizeof(qp));\n\
         qp.sq_num = {QPN}u; qp.sq_num_shift8 = {QPN}u << 8; qp.sq_num_shift8_be = be32({QPN}u << 8);\n\
         qp.sq_num_shift8_be_1ds = be32(({QPN}u << 8) | 1); qp.sq_num_shift8_be_2ds = be32(({QPN}u << 8) | 2);\n\
         qp.sq_num_shift8_be_3ds = be32(({QPN}u << 8) | 3); qp.sq_num_shift8_be_4ds = be32(({QPN}u << 8) | 4);\n\
         qp.sq_wqe_num = 64; qp.sq_wqe_mask = 63; qp.sq_wqe_daddr = ring;\n\
         qp.rq_wqe_num = 16; qp.rq_wqe_mask = 15; qp.rq_wqe_daddr = rring;\n\
         enum doca_gpu_dev_verbs_wqe_ctrl_flags f = DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE;\n\
         char name[32];\n\
         #define W(i) doca_gpu_dev_verbs_get_wqe_ptr(&qp, (i))\n\
         doca_gpu_dev_verbs_wqe_prepare_write(&qp, W(65), 65, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE, f, 0, {ra}ull, {rk}u, {la}ull, {lk}u, 4096);\n\
         doca_gpu_dev_verbs_wqe_prepare_write(&qp, W(2), 2, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM, f, 0xcafef00du, {ra}ull, {rk}u, {la}ull, {lk}u, 100, {la2}ull, {lk2}u, 200);\n\
         doca_gpu_dev_verbs_wqe_prepare_read(&qp, W(3), 3, f, {ra}ull, {rk}u, {la}ull, {lk}u, 1u << 30);\n\
         doca_gpu_dev_verbs_wqe_prepare_read(&qp, W(4), 4, f, {ra}ull, {rk}u, {la}ull, {lk}u, 8, {la2}ull, {lk2}u, 16);\n\
         doca_gpu_dev_verbs_wqe_prepare_atomic(&qp, W(5), 5, DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA, f, {ra}ull, {rk}u, {la}ull, {lk}u, 8, 0x0102030405060708ull, 0);\n\
         doca_gpu_dev_verbs_wqe_prepare_send(&qp, W(6), 6, DOCA_GPUNETIO_MLX5_OPCODE_SEND, f, 0, {la}ull, {lk}u, 64);\n\
         doca_gpu_dev_verbs_wqe_prepare_send(&qp, W(7), 7, DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM, f, 0x11223344u);\n\
         doca_gpu_dev_verbs_wqe_prepare_send(&qp, W(8), 8, DOCA_GPUNETIO_MLX5_OPCODE_SEND, f, 0, {la}ull, {lk}u, 1, {la2}ull, {lk2}u, 2, {ra}ull, {rk}u, 3);\n\
         doca_gpu_dev_verbs_wqe_prepare_wait(&qp, W(9), 9, f, 0x12345678u, 0x9abcu);\n\
         doca_gpu_dev_verbs_wqe_prepare_dump(&qp, W(10), 10, f, {la}ull, {lk}u, 1);\n\
         doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(&qp, W(11), 11, f, {ra}ull, {rk}u, 8);\n\
         doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint64_t>(&qp, W(11), 0x8877665544332211ull);\n\
         doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(&qp, W(12), 12, f, {ra}ull, {rk}u, 4);\n\
         doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint32_t>(&qp, W(12), 0xa1b2c3d4u);\n\
         {{ uint8_t src[20]; for (int i = 0; i < 20; i++) src[i] = (uint8_t)(0x40 + i);\n\
         doca_gpu_dev_verbs_wqe_prepare_write_inl(&qp, W(13), 13, f, {ra}ull, {rk}u, (uint64_t)(uintptr_t)src, 20);\n\
         doca_priv_gpu_dev_rdma_prepare_send_inl(&qp, 14, DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM, 0x5a5a5a5au, src, 20);\n\
         doca_priv_gpu_dev_rdma_prepare_write_inl(&qp, 17, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM, 7u, {ra}ull, {rk}u, src, 3); }}\n\
         doca_priv_gpu_dev_rdma_prepare_rw(&qp, 15, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM, 0x01020304u, {ra}ull, {rk}u, {la}ull, {lk}u, 0);\n\
         doca_priv_gpu_dev_rdma_prepare_send(&qp, 16, DOCA_GPUNETIO_MLX5_OPCODE_SEND, 0, {la}ull, {lk}u, 0);\n\
         doca_priv_gpu_dev_verbs_wqe_prepare_nop(&qp, W(18), 18, f);\n\
         for (int i = 0; i < 64; i++) {{ snprintf(name, sizeof(name), \"wqe%d\", i); dump(name, ring + 64 * i, 64); }}\n\
         doca_gpu_dev_verbs_wqe_prepare_recv(&qp, doca_gpu_dev_verbs_get_rwqe_ptr(&qp, 19), {la}ull, {lk}u, 4096);\n\
         dump(\"rwqe3\", rring + 16 * 3, 16);\n\
         {{ __be32 v = doca_gpu_dev_verbs_prepare_dbr(0x12345u); dump(\"dbr\", &v, 4); }}\n\
         {{ __be64 v = doca_gpu_dev_verbs_prepare_db(&qp, 0x12345ull); dump(\"db\", &v, 8); }}\n"
    );
    for (name, bytes, k, num) in cqes {
        let lit: Vec<String> = bytes.iter().map(|b| format!("0x{b:02x}")).collect();
        s += &format!(
            "{{ static uint8_t c[64] __attribute__((aligned(8))) = {{{}}};\n\
             struct mlx5_cqe64 *q = (struct mlx5_cqe64 *)c;\n\
             int st = doca_priv_gpu_dev_verbs_cqe_status(q->op_own, q->wqe_counter, {k}ull, {num}u, false);\n\
             int stc = doca_priv_gpu_dev_verbs_cqe_status(q->op_own, q->wqe_counter, {k}ull, {num}u, true);\n\
             uint32_t r[5] = {{(uint32_t)st, (uint32_t)stc, doca_gpu_dev_verbs_cqe_get_bytes(q), doca_gpu_dev_verbs_cqe_is_inline(q),\n\
             (uint32_t)(doca_gpu_dev_verbs_cqe_get_inl_data(q) == c)}};\n\
             dump(\"{name}\", r, 20); }}\n",
            lit.join(",")
        );
    }
    s += "return 0;\n}\n";
    s
}

/// `-L` for the CUDA runtime next to nvcc when nvcc's profile does not find it (the pip
/// wheel keeps it in `lib`, not `lib64`).
/// The five u32 results of a CQE case: status, status with the counter check, bytes,
/// inline flag, inline data pointer == CQE.
fn results(v: &[u8]) -> [i64; 5] {
    let mut r = [0i64; 5];
    for (i, c) in v.chunks(4).enumerate() {
        r[i] = i64::from(i32::from_ne_bytes(c.try_into().unwrap()));
    }
    r
}

#[test]
fn wqe_builders_and_cqe_readers_write_and_read_the_mlx5_formats() {
    let Some(nvcc) = doca_test_support::require_nvcc() else {
        return;
    };
    let nvcc = nvcc.path();
    let cqe = |k: u64, opcode: u8, counter: u16, inline: Option<Vec<u8>>, bytes: u32| Cqe {
        k,
        cqe_num: 8,
        opcode,
        inline_data: inline,
        wqe_counter: counter,
        byte_cnt: bytes,
        imm: 0,
        qpn: QPN,
    };
    let mut cases: Vec<(String, [u8; 64], u64, u32)> = Vec::new();
    let mut push = |name: &str, c: Cqe, k: u64| cases.push((name.into(), c.bytes(), k, 8));
    // CQE 3 written in pass 0 (owner 0), polled as 3: present.
    push("ok_pass0", cqe(3, 0x0, 3, None, 0), 3);
    // The same slot polled as CQE 11 (pass 1 expects owner 1): not yet.
    push("stale_pass1", cqe(3, 0x0, 3, None, 0), 11);
    // CQE 11 (pass 1, owner 1) polled as 11: present; a receive of 1234 bytes.
    push("ok_pass1_recv", cqe(11, 0x2, 11, None, 1234), 11);
    // Error CQEs: requester 0xD, responder 0xE.
    push("req_err", cqe(4, 0xd, 4, None, 0), 4);
    push("resp_err", cqe(4, 0xe, 4, None, 0), 4);
    // Owner right but wqe_counter wrong: present on sm_90, not on older GPUs.
    push("counter_mismatch", cqe(5, 0x0, 9, None, 0), 5);
    // Inline receive of 5 bytes.
    push(
        "inline_recv",
        cqe(6, 0x2, 6, Some(vec![1, 2, 3, 4, 5]), 5),
        6,
    );
    // The ring's initial value (0xF1: INVALID, owner 1) polled as CQE 8 (pass 1).
    let mut init = [0u8; 64];
    init[63] = 0xf1;
    cases.push(("initial".into(), init, 8, 8));

    let dir = tempfile::tempdir().unwrap();
    let out = doca_test_support::cc::nvcc_run_program(
        nvcc,
        dir.path(),
        "encodings",
        &encoding_program(&cases),
        &["-arch=sm_80".to_string()],
    );
    let got = parse_dump(&out);
    let slot = |i: usize| got[&format!("wqe{i}")].clone();
    let check = |i: usize, want: Wqe| {
        let have = slot(i);
        assert_eq!(
            &have[..want.ds * 16],
            want.used(),
            "WQE slot {i}: want {want:?}"
        );
    };

    // Index 65 lands in slot 1; the control segment carries index 65.
    check(1, rw(65, QPN, OP_WRITE, 0, REMOTE, &[(LOCAL, 4096)]));
    check(
        2,
        rw(
            2,
            QPN,
            OP_WRITE_IMM,
            0xcafe_f00d,
            REMOTE,
            &[(LOCAL, 100), (LOCAL2, 200)],
        ),
    );
    check(3, rw(3, QPN, OP_READ, 0, REMOTE, &[(LOCAL, 1 << 30)]));
    check(
        4,
        rw(4, QPN, OP_READ, 0, REMOTE, &[(LOCAL, 8), (LOCAL2, 16)]),
    );
    check(5, fetch_add(5, QPN, REMOTE, LOCAL, 0x0102_0304_0506_0708));
    check(6, send(6, QPN, OP_SEND, 0, &[(LOCAL, 64)]));
    check(7, send(7, QPN, OP_SEND_IMM, 0x1122_3344, &[]));
    check(
        8,
        send(8, QPN, OP_SEND, 0, &[(LOCAL, 1), (LOCAL2, 2), (REMOTE, 3)]),
    );
    check(9, wait(9, QPN, 0x1234_5678, 0x9abc));
    check(10, dump(10, QPN, LOCAL, 1));
    check(
        11,
        inline_write(
            11,
            QPN,
            OP_WRITE,
            0,
            REMOTE,
            &0x8877_6655_4433_2211u64.to_ne_bytes(),
        ),
    );
    check(
        12,
        inline_write(12, QPN, OP_WRITE, 0, REMOTE, &0xa1b2_c3d4u32.to_ne_bytes()),
    );
    let src: Vec<u8> = (0..20).map(|i| 0x40 + i).collect();
    check(13, inline_write(13, QPN, OP_WRITE, 0, REMOTE, &src));
    check(14, inline_send(14, QPN, OP_SEND_IMM, 0x5a5a_5a5a, &src));
    // Zero-length write-with-immediate and send: no data segment.
    check(15, rw(15, QPN, OP_WRITE_IMM, 0x0102_0304, REMOTE, &[]));
    check(16, send(16, QPN, OP_SEND, 0, &[]));
    check(
        17,
        inline_write(17, QPN, OP_WRITE_IMM, 7, REMOTE, &src[..3]),
    );
    check(18, nop(18, QPN));
    // Builders write nothing beyond their DS.
    assert!(slot(0).iter().all(|&b| b == 0), "slot 0 untouched");
    assert!(slot(7)[16..].iter().all(|&b| b == 0));
    assert_eq!(
        got["rwqe3"],
        recv(LOCAL, 4096),
        "receive WQE 19 in RQ slot 3"
    );
    assert_eq!(got["dbr"], dbr(0x12345), "DBR keeps the low 16 bits");
    assert_eq!(got["db"], db(0x12345, QPN), "doorbell register bytes");

    // CQEs: [status, status with counter check, bytes, inline, inline ptr == cqe].
    let busy = i64::from(libc::EBUSY);
    let eio = -i64::from(libc::EIO);
    assert_eq!(results(&got["ok_pass0"]), [0, 0, 0, 0, 1]);
    assert_eq!(results(&got["stale_pass1"]), [busy, busy, 0, 0, 1]);
    assert_eq!(results(&got["ok_pass1_recv"]), [0, 0, 1234, 0, 1]);
    assert_eq!(results(&got["req_err"]), [eio, eio, 0, 0, 1]);
    assert_eq!(results(&got["resp_err"]), [eio, eio, 0, 0, 1]);
    assert_eq!(results(&got["counter_mismatch"]), [0, busy, 0, 0, 1]);
    assert_eq!(results(&got["inline_recv"]), [0, 0, 5, 4, 1]);
    assert_eq!(results(&got["initial"])[..2], [busy, busy]);
}
