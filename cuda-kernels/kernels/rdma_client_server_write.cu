// The kernels of the GPUNetIO sample gpunetio_rdma_client_server_write
// (examples/gpunetio_rdma_client_server_write.rs), written against the legacy GPU RDMA
// device API (doca_gpunetio_dev_rdma.cuh). Both run as one block of two threads.
//
// Per buffer i of RDMA_CS_BUFS: the server posts two receives (even i: receives that only
// absorb a write-with-immediate; odd i: receives of 128 B into its buffer A[i] at tid*128),
// then tells the client it may go by writing the byte 1 inline at offset i of the client's
// flag buffer F (even i with a strong write and commit, odd i with a weak write at position
// i), and waits for both receives. The client waits for F[i] == 1, then each thread writes
// (even i: RDMA write with immediate i+tid into A[i] at tid*128) or sends (odd i: send with
// immediate i+tid) 128 B of its own buffer (B for thread 0, C for thread 1).
//
// Besides the sample's printf lines, each kernel records what the host asserts in `report`
// (CPU-visible memory): report[0] the first failing doca_error_t (0 = none), then per
// buffer i at 1 + 5*i: the server's completed receives, the two immediates and the two
// connection indices; the client's report[1] is the number of commits wait_all returned.
// The server stops after a round whose receives failed (a peer gone flushes them).
#include <doca_gpunetio_dev_buf.cuh>
#include <doca_gpunetio_dev_rdma.cuh>

#define RDMA_CS_BUFS 4
#define RDMA_CS_HALF 128

// The first error wins; later ones are already explained by it.
__device__ static void rdma_cs_fail(uint32_t *report, doca_error_t err)
{
	if (err != DOCA_SUCCESS)
		atomicCAS(report, 0u, (uint32_t)err);
}

extern "C" __global__ void doca_rs_rdma_cs_server(struct doca_gpu_dev_rdma *rdma,
						  uint32_t connection_index,
						  struct doca_gpu_buf_arr *local_a,
						  struct doca_gpu_buf_arr *remote_f,
						  uint32_t *report)
{
	struct doca_gpu_dev_rdma_r *rdma_r;
	struct doca_gpu_buf *a;
	struct doca_gpu_buf *f;
	uint32_t num_ops;
	uint32_t imm[2];
	uint32_t conn[2];
	uint8_t flag = 1;
	doca_error_t err;
	// Set by thread 0 when a round's receives failed: later rounds would wait on a queue
	// that completes nothing more, so the kernel ends instead.
	__shared__ bool failed;

	if (threadIdx.x == 0)
		failed = false;
	__syncthreads();

	err = doca_gpu_dev_rdma_get_recv(rdma, &rdma_r);
	if (err != DOCA_SUCCESS) {
		printf("Error %d doca_gpu_dev_rdma_get_recv\n", err);
		rdma_cs_fail(report, err);
		return;
	}
	doca_gpu_dev_buf_get_buf(remote_f, 0, &f);

	for (int i = 0; i < RDMA_CS_BUFS; i++) {
		doca_gpu_dev_buf_get_buf(local_a, i, &a);
		if (i % 2 == 0)
			err = doca_gpu_dev_rdma_recv_strong(rdma_r, nullptr, 0, 0, 0);
		else
			err = doca_gpu_dev_rdma_recv_strong(rdma_r, a, RDMA_CS_HALF, threadIdx.x * RDMA_CS_HALF, 0);
		if (err != DOCA_SUCCESS) {
			printf("Error %d doca_gpu_dev_rdma_recv_strong thread %d\n", err, threadIdx.x);
			rdma_cs_fail(report, err);
		}
		__syncthreads();

		if (threadIdx.x == 0) {
			err = doca_gpu_dev_rdma_recv_commit_strong(rdma_r);
			rdma_cs_fail(report, err);
			// The client may post once our receives are there.
			if (i % 2 == 0) {
				err = doca_gpu_dev_rdma_write_inline_strong(rdma,
									    connection_index,
									    f,
									    i,
									    &flag,
									    1,
									    0,
									    DOCA_GPU_RDMA_WRITE_FLAG_NONE);
				rdma_cs_fail(report, err);
				rdma_cs_fail(report, doca_gpu_dev_rdma_commit_strong(rdma, connection_index));
			} else {
				err = doca_gpu_dev_rdma_write_inline_weak(rdma,
									  connection_index,
									  f,
									  i,
									  &flag,
									  1,
									  0,
									  DOCA_GPU_RDMA_WRITE_FLAG_NONE,
									  i);
				rdma_cs_fail(report, err);
				rdma_cs_fail(report, doca_gpu_dev_rdma_commit_weak(rdma, connection_index, 1));
			}

			imm[0] = imm[1] = conn[0] = conn[1] = UINT32_MAX;
			err = doca_gpu_dev_rdma_recv_wait_all(rdma_r, DOCA_GPU_RDMA_RECV_WAIT_FLAG_B, &num_ops, imm, conn);
			if (err != DOCA_SUCCESS) {
				printf("Error %d doca_gpu_dev_rdma_recv_wait_all\n", err);
				rdma_cs_fail(report, err);
				failed = true;
			}
			printf("RDMA Recv %d ops completed with immediate values %d and %d! Connections %d and %d\n",
			       num_ops,
			       imm[0],
			       imm[1],
			       conn[0],
			       conn[1]);
			uint32_t *row = report + 1 + 5 * i;
			row[0] = num_ops;
			row[1] = imm[0];
			row[2] = imm[1];
			row[3] = conn[0];
			row[4] = conn[1];
		}
		__syncthreads();
		if (failed)
			break;
	}
	__threadfence_system();
}

extern "C" __global__ void doca_rs_rdma_cs_client(struct doca_gpu_dev_rdma *rdma,
						  uint32_t connection_index,
						  struct doca_gpu_buf_arr *remote_a,
						  struct doca_gpu_buf_arr *local_b,
						  struct doca_gpu_buf_arr *local_c,
						  struct doca_gpu_buf_arr *local_f,
						  const uint32_t *exit_flag,
						  uint32_t *report)
{
	struct doca_gpu_buf *a;
	struct doca_gpu_buf *src;
	struct doca_gpu_buf *f;
	uintptr_t f_addr;
	uint32_t num_commits = 0;
	doca_error_t err;

	doca_gpu_dev_buf_get_buf(local_f, 0, &f);
	doca_gpu_dev_buf_get_addr(f, &f_addr);
	volatile uint8_t *flags = (volatile uint8_t *)f_addr;

	for (int i = 0; i < RDMA_CS_BUFS; i++) {
		if (threadIdx.x == 0) {
			printf("Client waiting on flag %lx for server to post RDMA Recvs\n", (unsigned long)(f_addr + i));
			while (flags[i] != 1)
				;
		}
		__syncthreads();

		doca_gpu_dev_buf_get_buf(remote_a, i, &a);
		doca_gpu_dev_buf_get_buf(threadIdx.x == 0 ? local_b : local_c, i, &src);
		if (i % 2 == 0) {
			printf("Thread %d post rdma write imm %d\n", threadIdx.x, i + threadIdx.x);
			err = doca_gpu_dev_rdma_write_strong(rdma,
							     connection_index,
							     a,
							     threadIdx.x == 0 ? 0 : RDMA_CS_HALF,
							     src,
							     0,
							     RDMA_CS_HALF,
							     i + threadIdx.x,
							     DOCA_GPU_RDMA_WRITE_FLAG_IMM);
		} else {
			printf("Thread %d post rdma send imm %d\n", threadIdx.x, i + threadIdx.x);
			err = doca_gpu_dev_rdma_send_strong(rdma,
							    connection_index,
							    src,
							    0,
							    RDMA_CS_HALF,
							    i + threadIdx.x,
							    DOCA_GPU_RDMA_SEND_FLAG_IMM);
		}
		if (err != DOCA_SUCCESS) {
			printf("Error %d posting buffer %d thread %d\n", err, i, threadIdx.x);
			rdma_cs_fail(report, err);
		}
		__syncthreads();

		if (threadIdx.x == 0)
			rdma_cs_fail(report, doca_gpu_dev_rdma_commit_strong(rdma, connection_index));
		__syncthreads();
	}

	if (threadIdx.x == 0) {
		err = doca_gpu_dev_rdma_wait_all(rdma, &num_commits);
		if (err != DOCA_SUCCESS) {
			printf("Error %d doca_gpu_dev_rdma_wait_all\n", err);
			rdma_cs_fail(report, err);
		}
		report[1] = num_commits;
		__threadfence_system();
		printf("Client posted and completed %d RDMA commits on connection %d. Waiting on the exit flag.\n",
		       num_commits,
		       connection_index);
		while (*(volatile const uint32_t *)exit_flag == 0)
			;
	}
}
