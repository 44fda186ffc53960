/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: which version of DOCA Flow's versioned names a program gets.
 *
 * DOCA_CTSD_COMPAT_VERSION defaults to 1 and selects LIB_FLOW_VERSION; version 1 is the only
 * one there is, so LIB_FLOW_VERSION is always LIB_FLOW_VERSION_1 (a value set by the program
 * before including doca_flow.h is replaced).
 */
#ifndef DOCA_CTSD_COMPAT_VERSIONS_H
#define DOCA_CTSD_COMPAT_VERSIONS_H

#define DOCA_CTSD_COMPAT_VERSION_1 1

#ifndef DOCA_CTSD_COMPAT_VERSION
#define DOCA_CTSD_COMPAT_VERSION DOCA_CTSD_COMPAT_VERSION_1
#endif

#undef LIB_FLOW_VERSION
#if DOCA_CTSD_COMPAT_VERSION == DOCA_CTSD_COMPAT_VERSION_1
#define LIB_FLOW_VERSION LIB_FLOW_VERSION_1
#endif

#endif /* DOCA_CTSD_COMPAT_VERSIONS_H */
