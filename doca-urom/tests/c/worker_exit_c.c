/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The exiting variant of worker_crash_c.c (its constructor calls exit(0)). */
#include "worker_crash_c.c"
