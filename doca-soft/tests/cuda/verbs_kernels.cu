// Kernels for doca-soft/tests/verbs_gpu.rs: post one of each GPU verbs operation on a QP
// whose rings, doorbell records and doorbell slot live in device memory (no NIC, no proxy:
// nothing is ever completed, so no call here waits), so that the host can compare the
// bytes the device code wrote with the encodings of reference section 3.12. extern "C"
// names so that the test loads them by name. Also compiled (optimised, sm_80 and sm_90)
// by doca-soft/tests/verbs_headers.rs.
#include <doca_gpunetio_dev_verbs_counter.cuh>
#include <doca_gpunetio_dev_verbs_twosided.cuh>

// The operands; verbs_gpu.rs uses the same values. Keys are logical: DOCA callers pass
// them big-endian (htobe32), as below.
#define T_RADDR 0x1122334455667788ull
#define T_RKEY 0x01020304u
#define T_RADDR2 0x2122232425262728ull
#define T_LADDR 0x00007f00deadb000ull
#define T_LKEY 0x0a0b0c0du
#define T_DADDR 0x00007f00000d0000ull
#define T_DKEY 0x0d0d0d0du
#define T_SIG_RADDR 0x3132333435363738ull
#define T_SIG_RKEY 0x05060708u
#define T_SIG_LADDR 0x00007f0000051000ull
#define T_SIG_LKEY 0x0e0f1011u
#define T_CNT_RADDR 0x4142434445464748ull
#define T_CNT_RKEY 0x090a0b0cu
#define T_CNT_LADDR 0x00007f00000c1000ull
#define T_CNT_LKEY 0x12131415u
#define T_VALUE 0x8877665544332211ull
#define T_VALUE32 0x0000abcdu

__device__ static inline struct doca_gpu_dev_verbs_addr t_addr(uint64_t addr, uint32_t key)
{
	struct doca_gpu_dev_verbs_addr a = {addr, doca_gpu_dev_verbs_bswap32(key)};
	return a;
}

// One thread posts, in this order (SQ WQE index: operation):
//   0 put 100 B | 1 p (8-byte inline) | 2 get 200 B, 3 its DUMP | 4 put_signal 300 B, 5 its
//   fetch-add 5 | 6 signal 6 | 7 p_signal (4-byte inline), 8 its fetch-add 7 | 9 send 64 B |
//   RQ 0: recv 128 B | 10 put_counter 400 B (companion 0 WAIT for 10, 1 fetch-add 1) |
//   11 zero-byte put (NOP).
// tickets[0..9] = the tickets returned, in call order (put_counter returns none).
extern "C" __global__ void verbs_post_each(uint64_t qp_addr, uint64_t companion_addr, uint64_t tickets_addr)
{
	struct doca_gpu_dev_verbs_qp *qp = (struct doca_gpu_dev_verbs_qp *)qp_addr;
	struct doca_gpu_dev_verbs_qp *companion = (struct doca_gpu_dev_verbs_qp *)companion_addr;
	uint64_t *tickets = (uint64_t *)tickets_addr;
	if (threadIdx.x != 0)
		return;
	struct doca_gpu_dev_verbs_addr r = t_addr(T_RADDR, T_RKEY);
	struct doca_gpu_dev_verbs_addr r2 = t_addr(T_RADDR2, T_RKEY);
	struct doca_gpu_dev_verbs_addr l = t_addr(T_LADDR, T_LKEY);
	struct doca_gpu_dev_verbs_addr d = t_addr(T_DADDR, T_DKEY);
	struct doca_gpu_dev_verbs_addr sr = t_addr(T_SIG_RADDR, T_SIG_RKEY);
	struct doca_gpu_dev_verbs_addr sl = t_addr(T_SIG_LADDR, T_SIG_LKEY);
	struct doca_gpu_dev_verbs_addr cr = t_addr(T_CNT_RADDR, T_CNT_RKEY);
	struct doca_gpu_dev_verbs_addr cl = t_addr(T_CNT_LADDR, T_CNT_LKEY);
	doca_gpu_dev_verbs_ticket_t t[9];

	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
			       DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
			       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, r, l, 100, &t[0]);
	doca_gpu_dev_verbs_p<uint64_t>(qp, r2, T_VALUE, &t[1]);
	doca_gpu_dev_verbs_get<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
			       DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
			       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
			       DOCA_GPUNETIO_VERBS_MCST_ENABLED,
			       DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>(qp, r, l, 200, d, &t[2]);
	doca_gpu_dev_verbs_put_signal<DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
				      DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
				      DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				      DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, r, l, 300, sr, sl, 5, &t[3]);
	doca_gpu_dev_verbs_signal<DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD>(qp, sr, sl, 6, &t[4]);
	doca_gpu_dev_verbs_p_signal<uint32_t, DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD>(qp, r, T_VALUE32, sr, sl, 7, &t[5]);
	doca_gpu_dev_verbs_send<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
				DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, l, 64, &t[6]);
	doca_gpu_dev_verbs_recv<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
				DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, l, 128, &t[7]);
	doca_gpu_dev_verbs_put_counter<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
				       DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, r, l, 400, companion, cr, cl, 1);
	doca_gpu_dev_verbs_put(qp, r, l, 0, &t[8]);
	for (int i = 0; i < 9; i++)
		tickets[i] = t[i];
}

// A warp puts: lane i writes 64 bytes from T_LADDR + 64 i to T_RADDR + 64 i with WQE i;
// tickets[i] = lane i's ticket.
extern "C" __global__ void verbs_put_warp(uint64_t qp_addr, uint64_t tickets_addr)
{
	struct doca_gpu_dev_verbs_qp *qp = (struct doca_gpu_dev_verbs_qp *)qp_addr;
	uint64_t *tickets = (uint64_t *)tickets_addr;
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	doca_gpu_dev_verbs_ticket_t t;
	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
			       DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
			       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp,
								     t_addr(T_RADDR + 64ull * lane, T_RKEY),
								     t_addr(T_LADDR + 64ull * lane, T_LKEY),
								     64,
								     &t);
	tickets[lane] = t;
}
