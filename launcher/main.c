/*
 * gitlab-ctl: an Omnibus-style service launcher on runit.
 * main() only parses the global options and dispatches to commands.c.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "cmd/commands.h"
#include "lib/ctl.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: gitlab-ctl [--root DIR] [-c FILE] [-v] COMMAND [ARGS]\n"
	            "       gitlab-ctl help [COMMAND]\n\ncommands:\n");
	for (const struct command *c = commands; c->name; c++)
		if (c->summary != NULL)
			fprintf(fp, "  %-15s %s\n", c->name, c->summary);
}

static void command_usage(FILE *fp, const struct command *c)
{
	fprintf(fp, "usage: gitlab-ctl [--root DIR] [-c FILE] %s %s\n  %s\n", c->name, c->usage,
	        c->summary ? c->summary : "(internal)");
	if (c->details != NULL)
		fprintf(fp, "%s\n", c->details);
	else
		fprintf(fp, "exit: 0 success; 1 failure; 2 usage\nexample: gitlab-ctl %s\n",
		        c->name);
}

static int help(const char *name)
{
	if (name == NULL) {
		usage(stdout);
		return 0;
	}
	const struct command *c = command_find(name);
	if (c == NULL) {
		command_unknown(name, stderr);
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

struct globals {
	const char *root, *config;
	bool verbose;
};

/*
 * Global options after the command (`gitlab-ctl status --root X`), up to "--": taken out of
 * argv; -c/--config only when take_config (not a CMD_OWN_CONFIG command's).
 */
static int trailing_globals(int *argc, char **argv, struct globals *g, bool take_config)
{
	for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0;) {
		const char *a = argv[i], **dst = NULL;
		int used = 1;
		if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			g->verbose = true;
		} else if (strncmp(a, "--root=", 7) == 0) {
			g->root = a + 7;
		} else if (take_config && strncmp(a, "--config=", 9) == 0) {
			g->config = a + 9;
		} else if (strcmp(a, "--root") == 0) {
			dst = &g->root;
		} else if (take_config && (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0)) {
			dst = &g->config;
		} else {
			i++;
			continue;
		}
		if (dst != NULL) {
			if (i + 1 >= *argc) {
				warnx("option '%s' needs an argument", a);
				return -1;
			}
			*dst = argv[i + 1];
			used = 2;
		}
		memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof *argv);
		*argc -= used;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"root", required_argument, NULL, 'r'}, {"config", required_argument, NULL, 'c'},
	    {"verbose", no_argument, NULL, 'v'},    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
	};
	struct globals g = {NULL, NULL, false};
	int ch;

	while ((ch = command_getopt_global(argc, argv, "+c:vh", opts)) != -1) {
		switch (ch) {
		case 'r':
			g.root = optarg;
			break;
		case 'c':
			g.config = optarg;
			break;
		case 'v':
			g.verbose = true;
			break;
		case 'V':
			printf("gitlab-ctl %s\n", GITLAB_CTL_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return 2; /* said by command_getopt_global */
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
		command_unknown(argv[0], stderr);
		return 1; /* as Omnibus' gitlab-ctl */
	}
	/* err(3)/warn(3) then say which command speaks: "gitlab-ctl tail: ...". A command name
	 * is short; a longer one would only be cut in messages. */
	char progname[64];
	(void)snprintf(progname, sizeof progname, "gitlab-ctl %s", c->name);
	program_invocation_short_name = progname;
	if (wants_help(argc, argv)) {
		command_usage(stdout, c);
		return 0;
	}
	if (trailing_globals(&argc, argv, &g, !(c->flags & CMD_OWN_CONFIG)) == -1)
		return 2;

	/*
	 * Static, so zero without being touched: a CMD_ROOT_ONLY command skips locating the
	 * binary and the catalog (ctl_init_root), and the pages of the paths it leaves "" are
	 * never faulted in (on the stack or from calloc, each 4 KiB path is a page fault). main
	 * runs once: this is the one ctl, the parsed options, handed down like any other.
	 */
	static struct ctl ctl_storage;
	struct ctl *ctl = &ctl_storage;
	if (g.root == NULL)
		g.root = getenv("GITLAB_CTL_ROOT");
	int r = c->flags & CMD_ROOT_ONLY ? ctl_init_root(ctl, g.root, g.config)
	                                 : ctl_init(ctl, g.root, g.config);
	if (r == -1) {
		if (g.root != NULL && g.root[0] != '\0')
			err(1, "root %s", g.root);
		err(1, "cannot set up paths");
	}
	ctl->verbose = g.verbose;
	optind = 0; /* commands parse their own options from argv[0] on */
	return c->fn(ctl, argc, argv);
}
