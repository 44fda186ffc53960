/*
 * A program written as DOCA 3.3 programs are: doca_argp_init with a NULL program name, one
 * mandatory flag with a callback. The usage text must name the program after argv[0].
 * Usage: argp_null_name [-h] [-p PORT]; prints "port N" after a successful parse.
 */
#include <stdio.h>
#include <stdlib.h>

#include <doca_argp.h>
#include <doca_error.h>

struct cfg {
	int port;
};

static doca_error_t port_cb(void *param, void *config)
{
	((struct cfg *)config)->port = *(int *)param;
	return DOCA_SUCCESS;
}

int main(int argc, char **argv)
{
	struct cfg cfg = {0};
	struct doca_argp_param *p = NULL;
	doca_error_t r = doca_argp_init(NULL, &cfg);
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "doca_argp_init(NULL): %s\n", doca_error_get_descr(r));
		return 1;
	}
	if (doca_argp_param_create(&p) != DOCA_SUCCESS)
		return 1;
	doca_argp_param_set_short_name(p, "p");
	doca_argp_param_set_long_name(p, "port");
	doca_argp_param_set_arguments(p, "<num>");
	doca_argp_param_set_description(p, "a port number");
	doca_argp_param_set_callback(p, port_cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_INT);
	doca_argp_param_set_mandatory(p);
	if (doca_argp_register_param(p) != DOCA_SUCCESS)
		return 1;
	r = doca_argp_start(argc, argv);
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "doca_argp_start: %s\n", doca_error_get_name(r));
		doca_argp_destroy();
		return 3;
	}
	printf("port %d\n", cfg.port);
	doca_argp_destroy();
	return 0;
}
