/*
 * gitlab-ctl: an Omnibus-style service launcher on runit.
 * main() only parses the global options and dispatches to commands.c.
 */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "commands.h"
#include "ctl.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: gitlab-ctl [--root DIR] [-c FILE] [-v] COMMAND [ARGS]\n"
	            "       gitlab-ctl help [COMMAND]\n\ncommands:\n");
	for (const struct command *c = commands; c->name; c++)
		if (c->summary != NULL)
			fprintf(fp, "  %-14s %s\n", c->name, c->summary);
}

static void command_usage(FILE *fp, const struct command *c)
{
	fprintf(fp, "usage: gitlab-ctl [--root DIR] [-c FILE] %s %s\n  %s\n", c->name, c->usage,
	        c->summary ? c->summary : "(internal)");
}

static int help(const char *name)
{
	if (name == NULL) {
		usage(stdout);
		return 0;
	}
	const struct command *c = command_find(name);
	if (c == NULL) {
		warnx("unknown command '%s'", name);
		return 1;
	}
	command_usage(stdout, c);
	return 0;
}

/* "--help" anywhere before "--" asks for the command's usage. */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"root", required_argument, NULL, 'r'}, {"config", required_argument, NULL, 'c'},
	    {"verbose", no_argument, NULL, 'v'},    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
	};
	const char *root = NULL, *config = NULL;
	bool verbose = false;
	int ch;

	while ((ch = getopt_long(argc, argv, "+c:vh", opts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			root = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'V':
			printf("gitlab-ctl %s\n", GITLAB_CTL_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[0], "help") == 0)
		return help(argc > 1 ? argv[1] : NULL);

	const struct command *c = command_find(argv[0]);
	if (c == NULL) {
		warnx("unknown command '%s' (see gitlab-ctl help)", argv[0]);
		return 2;
	}
	if (wants_help(argc, argv)) {
		command_usage(stdout, c);
		return 0;
	}

	struct ctl ctl;
	if (root == NULL)
		root = getenv("GITLAB_CTL_ROOT");
	if (ctl_init(&ctl, root, config) == -1) {
		if (root != NULL && root[0] != '\0')
			err(1, "root %s", root);
		err(1, "cannot set up paths");
	}
	ctl.verbose = verbose;
	optind = 0; /* commands parse their own options from argv[0] on */
	return c->fn(&ctl, argc, argv);
}
