/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * DOCA_LOG takes a level value and DOCA_LOG_TRC exists only when the program defines
 * DOCA_LOGGING_ALLOW_TRACE. Built twice by tests/log_macros.rs, with and without that
 * macro; the test reads which lines reach stdout.
 */
#include <doca_log.h>

DOCA_LOG_REGISTER(LOG_TRACE_TEST);

static int traced;

/* Counts how often a trace message's arguments were evaluated (not static: without the
 * opt-in nothing calls it). */
int note_trace(void);
int note_trace(void)
{
	return ++traced;
}

int main(void)
{
	if (doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE) != DOCA_SUCCESS)
		return 2;
	if (doca_log_backend_create_standard() != DOCA_SUCCESS)
		return 3;
	DOCA_LOG(DOCA_LOG_LEVEL_WARNING, "level-value line %d", 2);
	DOCA_LOG_TRC("trace line %d", note_trace());
	DOCA_LOG_RATE_LIMIT_TRC("rate-limited trace line %d", note_trace());
	DOCA_LOG_INFO("info line, trace arguments evaluated %d times", traced);
	return 0;
}
