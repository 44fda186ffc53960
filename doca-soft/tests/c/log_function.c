/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca_log is a library function, as in DOCA 3.3: called through a pointer, with more
 * integer and floating-point arguments than registers hold (so that some come from the
 * stack), with a message longer than DOCA_LOG_MAX_MSG_SIZE, and with a NULL format.
 * Prints "ok: <check>" lines to stdout; tests/log_macros.rs reads them and the messages.
 */
#include <stdio.h>
#include <string.h>

#include <doca_log.h>

DOCA_LOG_REGISTER(LOG_FUNCTION_TEST);

typedef doca_error_t (*log_fn_t)(uint32_t, int, const char *, int, const char *, const char *, ...);

int main(void)
{
	static char long_text[3 * DOCA_LOG_MAX_MSG_SIZE];
	log_fn_t log_fn = doca_log;
	doca_error_t ret;

	if (doca_log_backend_create_standard() != DOCA_SUCCESS)
		return 2;

	ret = log_fn(DOCA_LOG_LEVEL_WARNING, log_source, __FILE__, __LINE__, __func__,
		     "ints %d %ld %u %c %s %d %d %d %d %d %d %d %d", -1, 123456789012L, 7u, 'x', "text", 1, 2, 3, 4, 5,
		     6, 7, 8);
	if (ret != DOCA_SUCCESS)
		return 3;
	printf("ok: through a pointer\n");

	DOCA_LOG_WARN("doubles %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %g %d", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0,
		      8.0, 9.0, 10.0, 2.5e10, 99);
	printf("ok: doubles\n");

	memset(long_text, 'L', sizeof(long_text) - 1);
	DOCA_LOG_WARN("long <%s>", long_text);
	printf("ok: long message\n");

	if (doca_log(DOCA_LOG_LEVEL_WARNING, log_source, __FILE__, __LINE__, __func__, NULL) !=
	    DOCA_ERROR_INVALID_VALUE)
		return 4;
	printf("ok: null format\n");
	return 0;
}
