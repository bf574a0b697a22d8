/*
 * patroni SUBCOMMAND: Omnibus' `gitlab-ctl patroni` verbs. So far the two
 * health checks: check-leader / check-replica ask the local REST API for
 * GET /leader or /replica (Patroni answers 200 or 503). Only the status line
 * is read, so nothing the patroni account wrote reaches root's terminal.
 * Exit (Omnibus'): 0 the answer was 200; 1 another answer; 3 no answer;
 * 2 usage.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/load.h"
#include "proc/httpprobe.h"

#define PATRONI_TIMEOUT_MS 5000

int patroni_check_exit(int status)
{
	if (status < 0)
		return 3;
	return status == 200 ? 0 : 1;
}

static int check(const struct ctl *ctl, const char *verb, const char *path)
{
	struct loaded l;
	char why[256];
	int rc = 3;

	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, "patroni", stderr) == -1) {
		cmd_unload(&l);
		return 3;
	}
	const struct svc *s = attrs_svc(&l.a, "patroni");
	const char *tls = s != NULL ? attrs_var(&l.a, s, "tls_certificate_file") : NULL;
	if (s == NULL || !s->enabled)
		fprintf(stderr,
		        "gitlab-ctl patroni %s: patroni is not enabled: set "
		        "patroni['enable'] = true and run gitlab-ctl reconfigure\n",
		        verb);
	else if (tls != NULL && tls[0] != '\0')
		/* http_probe speaks plain HTTP only */
		fprintf(stderr,
		        "gitlab-ctl patroni %s: the REST API serves TLS: not supported yet\n",
		        verb);
	else {
		const char *host = attrs_var(&l.a, s, "listen_address");
		int port = (int)svc_int(s, "port", 8008);
		int st = http_probe(host != NULL ? host : "127.0.0.1", port, path, NULL,
		                    PATRONI_TIMEOUT_MS, why, sizeof why);
		if (st < 0)
			fprintf(stderr, "gitlab-ctl patroni %s: port %d: %s\n", verb, port, why);
		rc = patroni_check_exit(st);
	}
	cmd_unload(&l);
	return rc;
}

int cmd_patroni(const struct ctl *ctl, int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "check-leader") == 0)
		return check(ctl, argv[1], "/leader");
	if (argc == 2 && strcmp(argv[1], "check-replica") == 0)
		return check(ctl, argv[1], "/replica");
	fprintf(stderr, "usage: gitlab-ctl patroni check-leader|check-replica\n");
	return 2;
}
