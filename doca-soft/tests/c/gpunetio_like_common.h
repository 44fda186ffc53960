/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * What the GPUNetIO test programs (gpunetio_send_like.c, gpunetio_receive_like.c) share:
 * the -g/-n flags and their checks, the NIC opened by PCI address through the devinfo
 * list, the log backends and argp start, GPU memory registered in an mmap (dmabuf, else a
 * plain memory range) and the TRY macro. Included after DOCA_LOG_REGISTER and the DOCA
 * headers, whose includes it relies on (memcpy, strnlen, bool); builds as C and C++.
 */
#ifndef GPUNETIO_LIKE_COMMON_H
#define GPUNETIO_LIKE_COMMON_H

#define LIKE_NAME_MAX 256

/* The first member of each program's configuration: argp hands the callbacks the whole
 * configuration, and the shared ones cast it to this. */
struct like_names {
	char gpu_pci[LIKE_NAME_MAX];
	char nic_pci[LIKE_NAME_MAX];
};

/* Runs `call`; on failure logs it with DOCA's description and jumps to `out` (the caller
 * declares `doca_error_t r` and the label). */
#define TRY(call)                                                                                  \
	do {                                                                                       \
		r = (call);                                                                        \
		if (r != DOCA_SUCCESS) {                                                           \
			DOCA_LOG_ERR("%s: %s", #call, doca_error_get_descr(r));                    \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

static inline doca_error_t like_copy_name(char *dst, const char *src)
{
	size_t len = strnlen(src, LIKE_NAME_MAX);
	if (len == 0 || len == LIKE_NAME_MAX) {
		DOCA_LOG_ERR("name must have 1 to %d characters", LIKE_NAME_MAX - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(dst, src, len + 1);
	return DOCA_SUCCESS;
}

/* Stores `v` in `*out` when positive; `what` names it in the error. */
static inline doca_error_t like_positive(int v, int *out, const char *what)
{
	if (v <= 0) {
		DOCA_LOG_ERR("%s must be positive, not %d", what, v);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*out = v;
	return DOCA_SUCCESS;
}

static inline doca_error_t like_gpu_cb(void *param, void *config)
{
	return like_copy_name(((struct like_names *)config)->gpu_pci, (const char *)param);
}

static inline doca_error_t like_nic_cb(void *param, void *config)
{
	return like_copy_name(((struct like_names *)config)->nic_pci, (const char *)param);
}

/* Registers one argp flag. */
static inline doca_error_t like_add_param(const char *short_name,
					  const char *long_name,
					  const char *arguments,
					  const char *description,
					  doca_argp_param_cb_t cb,
					  enum doca_argp_type type,
					  bool mandatory)
{
	struct doca_argp_param *p = NULL;
	doca_error_t r = doca_argp_param_create(&p);
	if (r != DOCA_SUCCESS)
		return r;
	doca_argp_param_set_short_name(p, short_name);
	doca_argp_param_set_long_name(p, long_name);
	doca_argp_param_set_arguments(p, arguments);
	doca_argp_param_set_description(p, description);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	if (mandatory)
		doca_argp_param_set_mandatory(p);
	return doca_argp_register_param(p);
}

/* Registers the mandatory -g (GPU) and -n (NIC) flags. */
static inline doca_error_t like_register_gpu_nic(void)
{
	doca_error_t r =
		like_add_param("g", "gpu", "<PCI>", "GPU PCIe address", like_gpu_cb, DOCA_ARGP_TYPE_STRING, true);
	if (r == DOCA_SUCCESS)
		r = like_add_param("n", "nic", "<PCI>", "NIC PCIe address or interface", like_nic_cb, DOCA_ARGP_TYPE_STRING, true);
	return r;
}

/* The standard log backend, SDK warnings on stderr, and argp over `cfg` with a NULL
 * program name; false (logged where possible) when any step fails. */
static inline bool like_start(void *cfg)
{
	struct doca_log_backend *sdk_log = NULL;
	doca_error_t r;
	if (doca_log_backend_create_standard() != DOCA_SUCCESS ||
	    doca_log_backend_create_with_file_sdk(stderr, &sdk_log) != DOCA_SUCCESS ||
	    doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING) != DOCA_SUCCESS)
		return false;
	r = doca_argp_init(NULL, cfg);
	if (r != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_argp_init: %s", doca_error_get_descr(r));
		return false;
	}
	return true;
}

/* Opens the device whose PCI address (or interface name) is `pci`. */
static inline doca_error_t like_open_nic(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t r = doca_devinfo_create_list(&list, &n);
	if (r != DOCA_SUCCESS)
		return r;
	r = DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t equal = 0;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &equal) == DOCA_SUCCESS && equal) {
			r = doca_dev_open(list[i], dev);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	return r;
}

/* Sets the range of `mmap` to `len` bytes of GPU memory at `mem`: by dmabuf where the GPU
 * exports one, else as a plain memory range. */
static inline doca_error_t like_set_gpu_range(struct doca_mmap *mmap, struct doca_gpu *gpu, void *mem, size_t len)
{
	int dmabuf_fd = -1;
	if (doca_gpu_dmabuf_fd(gpu, mem, len, &dmabuf_fd) == DOCA_SUCCESS)
		return doca_mmap_set_dmabuf_memrange(mmap, dmabuf_fd, mem, 0, len);
	return doca_mmap_set_memrange(mmap, mem, len);
}

#endif /* GPUNETIO_LIKE_COMMON_H */
