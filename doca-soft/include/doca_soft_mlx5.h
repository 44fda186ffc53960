/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: where the rdma-core mlx5 definitions come from. DOCA 3.3's GPU headers
 * include <infiniband/mlx5dv.h>; doca-soft's include this file instead, which picks the
 * real rdma-core header whenever the compiler can find one (system directories, -I,
 * -isystem or -idirafter), and doca-soft's compat subset (compat/infiniband/mlx5dv.h,
 * identical layouts and values) otherwise. No include flag is needed either way; see
 * doca-soft/include/README.md ("rdma-core headers").
 *
 * DOCA_SOFT_FORCE_COMPAT_MLX5 (defined before including) forces the compat subset; the
 * tests use it to compare the two.
 */
#ifndef DOCA_SOFT_MLX5_H_
#define DOCA_SOFT_MLX5_H_

#if defined(DOCA_SOFT_FORCE_COMPAT_MLX5)
#include "compat/infiniband/mlx5dv.h"
#elif defined(__has_include)
#if __has_include(<infiniband/mlx5dv.h>)
#include <infiniband/mlx5dv.h>
#else
#include "compat/infiniband/mlx5dv.h"
#endif
#else
#include <infiniband/mlx5dv.h>
#endif

#endif /* DOCA_SOFT_MLX5_H_ */
