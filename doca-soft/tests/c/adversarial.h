/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Harness of the adversarial C programs (tests/c/adversarial_*.c, run by
 * tests/adversarial.rs): each case is a function returning 0 when every call in it gave the
 * documented code. Each case runs in a forked child with a time bound, so a crash (a
 * signal), an abort (a panic crossing the C boundary) or a hang (SIGALRM) fails that case
 * and not the others. The program prints one "PASS <case>" or "FAIL <case>: <why>" line
 * per case and "cases: <n> failed: <f>", and exits 1 when any case failed.
 */
#ifndef ADVERSARIAL_H_
#define ADVERSARIAL_H_

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_dev.h>
#include <doca_error.h>

/* Seconds a case may take before it counts as a hang. */
#define ADV_TIMEOUT_S 20

struct adv_case {
	const char *name;
	int (*run)(void);
};

#define ADV_CASE(fn) {#fn, fn}

/* Fails the case unless call returns expected. */
#define ADV_EXPECT(call, expected)                                                                 \
	do {                                                                                       \
		doca_error_t got_ = (call);                                                        \
		if (got_ != (expected)) {                                                          \
			printf("  %s:%d: %s returned %s, expected %s\n", __func__, __LINE__, #call, \
			       doca_error_get_name(got_), doca_error_get_name(expected));          \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

/* Fails the case unless cond holds. */
#define ADV_CHECK(cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  %s:%d: %s does not hold\n", __func__, __LINE__, #cond);          \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

/* A pointer that is no object of the runtime: never dereferenced by a correct runtime
 * where the API can tell (NULL-like checks), used only where the runtime keeps a table. */
#define ADV_BOGUS ((void *)(uintptr_t)0x10)

/* The device whose interface is iface (opened), or NULL. */
static inline struct doca_dev *adv_open_iface(const char *iface)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	char name[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t n = 0, i;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, iface) == 0 && doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	doca_devinfo_destroy_list(list);
	return dev;
}

static int adv_run_all(const struct adv_case *cases, size_t n)
{
	size_t i, failed = 0;

	for (i = 0; i < n; i++) {
		int status = 0;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			printf("FAIL %s: fork failed\n", cases[i].name);
			failed++;
			continue;
		}
		if (pid == 0) {
			alarm(ADV_TIMEOUT_S);
			int r = cases[i].run();
			fflush(stdout);
			_exit(r == 0 ? 0 : 1);
		}
		if (waitpid(pid, &status, 0) != pid) {
			printf("FAIL %s: waitpid failed\n", cases[i].name);
			failed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("PASS %s\n", cases[i].name);
		} else if (WIFSIGNALED(status)) {
			int sig = WTERMSIG(status);
			printf("FAIL %s: %s (signal %d)\n", cases[i].name,
			       sig == SIGALRM ? "hang" : (sig == SIGABRT ? "abort" : "crash"), sig);
			failed++;
		} else {
			printf("FAIL %s: wrong code (exit %d)\n", cases[i].name, WEXITSTATUS(status));
			failed++;
		}
	}
	printf("cases: %zu failed: %zu\n", n, failed);
	return failed == 0 ? 0 : 1;
}

#define ADV_MAIN(table)                                                                            \
	int main(void)                                                                             \
	{                                                                                          \
		return adv_run_all(table, sizeof(table) / sizeof(table[0]));                       \
	}

#endif /* ADVERSARIAL_H_ */
