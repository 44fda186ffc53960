/* Everything doca-sys binds: what the safe crates call, from the libraries the sdk backend
 * links (doca_common, doca_gpunetio, doca_eth, doca_flow, doca_urom). doca_argp is left out:
 * no crate here calls it, and its library is not linked. Headers that a backend lacks are
 * skipped, so an SDK without UROM (or Flow) still binds the rest; the crate's tests assert
 * what the soft backend has. */
#define DOCA_ALLOW_EXPERIMENTAL_API 1
#define DOCA_ALLOW_DEPRECATED_API 1
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#define DOCA_SYS_TRY(h) __has_include(h)

#if DOCA_SYS_TRY(<doca_error.h>)
#include <doca_error.h>
#endif
#if DOCA_SYS_TRY(<doca_types.h>)
#include <doca_types.h>
#endif
#if DOCA_SYS_TRY(<doca_version.h>)
#include <doca_version.h>
#endif
#if DOCA_SYS_TRY(<doca_log.h>)
#include <doca_log.h>
#endif
#if DOCA_SYS_TRY(<doca_dev.h>)
#include <doca_dev.h>
#endif
#if DOCA_SYS_TRY(<doca_ctx.h>)
#include <doca_ctx.h>
#endif
#if DOCA_SYS_TRY(<doca_pe.h>)
#include <doca_pe.h>
#endif
#if DOCA_SYS_TRY(<doca_buf.h>)
#include <doca_buf.h>
#endif
#if DOCA_SYS_TRY(<doca_buf_array.h>)
#include <doca_buf_array.h>
#endif
#if DOCA_SYS_TRY(<doca_buf_inventory.h>)
#include <doca_buf_inventory.h>
#endif
#if DOCA_SYS_TRY(<doca_mmap.h>)
#include <doca_mmap.h>
#endif
#if DOCA_SYS_TRY(<doca_gpunetio.h>)
#include <doca_gpunetio.h>
#endif
#if DOCA_SYS_TRY(<doca_gpunetio_eth_def.h>)
#include <doca_gpunetio_eth_def.h>
#endif
#if DOCA_SYS_TRY(<doca_eth_rxq.h>)
#include <doca_eth_rxq.h>
#endif
#if DOCA_SYS_TRY(<doca_eth_rxq_gpu_data_path.h>)
#include <doca_eth_rxq_gpu_data_path.h>
#endif
#if DOCA_SYS_TRY(<doca_eth_txq.h>)
#include <doca_eth_txq.h>
#endif
#if DOCA_SYS_TRY(<doca_eth_txq_gpu_data_path.h>)
#include <doca_eth_txq_gpu_data_path.h>
#endif
#if DOCA_SYS_TRY(<doca_rdma.h>)
#include <doca_rdma.h>
#endif
#if DOCA_SYS_TRY(<doca_dma.h>)
#include <doca_dma.h>
#endif
#if DOCA_SYS_TRY(<doca_flow.h>)
#include <doca_flow.h>
#endif
/* DOCA Verbs, its UAR/umem objects and bridges (GPU verbs: doca_gpu_verbs_* above). */
#if DOCA_SYS_TRY(<doca_verbs.h>)
#include <doca_verbs.h>
#endif
#if DOCA_SYS_TRY(<doca_uar.h>)
#include <doca_uar.h>
#endif
#if DOCA_SYS_TRY(<doca_umem.h>)
#include <doca_umem.h>
#endif
#if DOCA_SYS_TRY(<doca_verbs_bridge.h>)
#include <doca_verbs_bridge.h>
#endif
#if DOCA_SYS_TRY(<doca_rdma_bridge.h>)
#include <doca_rdma_bridge.h>
#endif
#if DOCA_SYS_TRY(<doca_urom.h>) && DOCA_SYS_TRY(<ucs/type/cpu_set.h>)
#include <doca_urom.h>
#endif
/* The plugin ABI (the doca-urom plugin SDK uses it); an SDK's doca_urom.h need not include it. */
#if DOCA_SYS_TRY(<doca_urom_plugin.h>) && DOCA_SYS_TRY(<ucs/datastruct/list.h>)
#include <doca_urom_plugin.h>
#endif
/* Extensions of the software runtime (absent from the SDK). */
#if DOCA_SYS_TRY(<doca_soft_port.h>)
#include <doca_soft_port.h>
#endif
#if DOCA_SYS_TRY(<doca_soft_queue.h>)
#include <doca_soft_queue.h>
#endif
#if DOCA_SYS_TRY(<doca_soft_verbs.h>)
#include <doca_soft_verbs.h>
#endif
