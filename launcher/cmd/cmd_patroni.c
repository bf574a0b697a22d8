/*
 * patroni SUBCOMMAND: Omnibus' `gitlab-ctl patroni` verbs. check-leader /
 * check-replica ask the local REST API for GET /leader or /replica (Patroni
 * answers 200 or 503); only the status line is read. Over TLS (the API takes
 * only client certificates) Debian's python3 asks, as Patroni's account, which
 * reads the client certificate patronictl presents. Exit (Omnibus'): 0 the
 * answer was 200; 1 another answer; 3 no answer; 2 usage. members is
 * `patronictl list` on the rendered patroni.yml, run as Patroni's account in a
 * session of its own (validate_run); what it prints reaches root's terminal
 * with its control bytes made visible. Exit: patronictl's.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/load.h"
#include "lib/clock.h"
#include "proc/httpprobe.h"
#include "proc/validate.h"

#define PATRONI_TIMEOUT_MS  5000
#define PATRONICTL_DEADLINE 60000 /* patronictl's own DCS retries stay well within it */
#define PATRONICTL          "/usr/bin/patronictl"
#define PYTHON3             "/usr/bin/python3"

/*
 * GET argv[6] of https://argv[1]:argv[2] trusting argv[3], presenting argv[4]/argv[5]; prints
 * the status. Patroni's own interpreter and ssl module: gitlab-ctl links no TLS library. Every
 * value is an argument, never program text.
 */
static const char tls_get_py[] =
    "import http.client, ssl, sys\n"
    "c = ssl.create_default_context(cafile=sys.argv[3])\n"
    "c.load_cert_chain(sys.argv[4], sys.argv[5])\n"
    "h = http.client.HTTPSConnection(sys.argv[1], int(sys.argv[2]), context=c, timeout=5)\n"
    "h.request('GET', sys.argv[6])\n"
    "print(h.getresponse().status)\n";

int patroni_check_exit(int status)
{
	if (status < 0)
		return 3;
	return status == 200 ? 0 : 1;
}

/*
 * The status of GET path on s's REST API over TLS, at its connect_address (the name its
 * certificate is for: the members reach it there); -1 with why when nothing answered.
 */
static int tls_status(const struct attrs *a, const struct svc *s, const char *path, char *why,
                      size_t len)
{
	char port[16];
	snprintf(port, sizeof port, "%lld", svc_int(s, "port", 8008));
	const char *host = attrs_var(a, s, "connect_address"), *ca = attrs_var(a, s, "tls_ca_file"),
	           *cert = attrs_var(a, s, "tls_client_certificate_file"),
	           *key = attrs_var(a, s, "tls_client_key_file");
	char *argv[] = {PYTHON3,
	                "-I", /* none of the account's site or environment */
	                "-c",
	                (char *)tls_get_py,
	                (char *)(host != NULL ? host : "127.0.0.1"),
	                port,
	                (char *)(ca != NULL ? ca : ""),
	                (char *)(cert != NULL ? cert : ""),
	                (char *)(key != NULL ? key : ""),
	                (char *)path,
	                NULL};
	struct buf out;
	buf_init(&out);
	int st =
	    validate_run(argv, "", 0, s->user, s->group, mono_ms() + PATRONI_TIMEOUT_MS * 2, &out);
	int status = -1;
	const char *e = NULL;
	if (st == 0 && out.len > 0 && out.len < 8 && out.p[out.len - 1] == '\n') {
		out.p[out.len - 1] = '\0';
		status = (int)strtonum(out.p, 100, 599, &e);
		if (e != NULL)
			status = -1;
	}
	if (status < 0) {
		/* python's last line names the failure (refused, certificate, timeout) */
		size_t n = out.len;
		while (n > 0 && (out.p[n - 1] == '\n' || out.p[n - 1] == '\r'))
			n--;
		size_t b = n;
		while (b > 0 && out.p[b - 1] != '\n')
			b--;
		if (st < 0)
			snprintf(why, len, "%s: %s", PYTHON3, strerror(errno));
		else
			snprintf(why, len, "%.*s", (int)(n - b), out.p + b);
	}
	buf_free(&out);
	return status;
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
	else if (tls != NULL && tls[0] != '\0') {
		int st = tls_status(&l.a, s, path, why, sizeof why);
		if (st < 0)
			fprintf(stderr, "gitlab-ctl patroni %s: %s\n", verb, why);
		rc = patroni_check_exit(st);
	} else {
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

/* patronictl -c patroni.yml ARGS as s's account, its output (both streams) in out; {scope}
 * and {name} become the node's. validate_run's result: the exit status, -1 (errno) when it
 * could not run. */
static int run_patronictl(const struct ctl *ctl, const struct attrs *a, const struct svc *s,
                          const char *const *args, struct buf *out)
{
	char dir[PATH_MAX], yml[PATH_MAX];
	if (ctl_sv_dir(ctl, dir, sizeof dir, s->def->name) == -1 ||
	    snprintf(yml, sizeof yml, "%s/patroni.yml", dir) >= (int)sizeof yml) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char *argv[12];
	size_t n = 0;
	argv[n++] = PATRONICTL;
	argv[n++] = "-c";
	argv[n++] = yml;
	for (; *args != NULL && n < sizeof argv / sizeof argv[0] - 1; args++) {
		const char *v = *args;
		if (strcmp(v, "{scope}") == 0)
			v = attrs_var(a, s, "scope");
		else if (strcmp(v, "{name}") == 0)
			v = attrs_var(a, s, "name");
		argv[n++] = (char *)(v != NULL ? v : "");
	}
	argv[n] = NULL;
	return validate_run(argv, "", 0, s->user, s->group, mono_ms() + PATRONICTL_DEADLINE, out);
}

/* The enabled patroni service, or NULL after saying why (as `gitlab-ctl WHAT`). */
static const struct svc *patroni_on(const struct attrs *a, const char *what)
{
	const struct svc *s = attrs_svc(a, "patroni");
	if (s == NULL || !s->enabled) {
		fprintf(stderr,
		        "gitlab-ctl %s: patroni is not enabled: set "
		        "patroni['enable'] = true and run gitlab-ctl reconfigure\n",
		        what);
		return NULL;
	}
	return s;
}

/* patronictl -c patroni.yml VERB [ARGS] as Patroni's account, its output on stdout; exit:
 * patronictl's, 1 when it could not run. */
static int patronictl(const struct ctl *ctl, const char *verb, const char *const *args)
{
	struct loaded l;
	char what[64];
	int rc = 1;

	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, "patroni", stderr) == -1) {
		cmd_unload(&l);
		return 1;
	}
	snprintf(what, sizeof what, "patroni %s", verb);
	const struct svc *s = patroni_on(&l.a, what);
	if (s != NULL) {
		struct buf out;
		buf_init(&out);
		int st = run_patronictl(ctl, &l.a, s, args, &out);
		if (st < 0)
			fprintf(stderr, "gitlab-ctl patroni %s: patronictl: %s\n", verb,
			        strerror(errno));
		else if (out.len > 0 && fwrite(out.p, 1, out.len, stdout) != out.len)
			st = 1;
		buf_free(&out);
		rc = st < 0 ? 1 : st;
	}
	cmd_unload(&l);
	return rc;
}

/*
 * In patronictl list's tsv (Cluster, Member, Host, Role, State, ...), the running member
 * whose Role is role: its Host, "host" or "host:port" (patronictl adds the port only when
 * some member is not on 5432), as host:port in hp. 0, or -1 when none.
 */
static int member_of_role(const char *tsv, const char *role, char *hp, size_t len)
{
	for (const char *line = tsv; *line != '\0';) {
		const char *end = strchr(line, '\n');
		size_t n = end != NULL ? (size_t)(end - line) : strlen(line);
		const char *col[5];
		size_t cl[5], k = 0;
		for (const char *p = line; k < 5 && p <= line + n;) {
			const char *tab = memchr(p, '\t', (size_t)(line + n - p));
			col[k] = p;
			cl[k++] = tab != NULL ? (size_t)(tab - p) : (size_t)(line + n - p);
			if (tab == NULL)
				break;
			p = tab + 1;
		}
		if (k == 5 && cl[3] == strlen(role) && memcmp(col[3], role, cl[3]) == 0 &&
		    cl[4] == 7 && memcmp(col[4], "running", 7) == 0 && cl[2] > 0) {
			bool port = memchr(col[2], ':', cl[2]) != NULL;
			int w =
			    snprintf(hp, len, "%.*s%s", (int)cl[2], col[2], port ? "" : ":5432");
			return w > 0 && (size_t)w < len ? 0 : -1;
		}
		line += n + (end != NULL);
	}
	return -1;
}

int patroni_leader(const char *yml, const char *user, const char *group, char *hp, size_t len)
{
	char *argv[] = {PATRONICTL, "-c", (char *)yml, "list", "-f", "tsv", NULL};
	struct buf out;
	buf_init(&out);
	int st = validate_run(argv, "", 0, user, group, mono_ms() + PATRONICTL_DEADLINE, &out);
	int rc = st == 0 && (member_of_role(buf_str(&out), "Leader", hp, len) == 0 ||
	                     member_of_role(buf_str(&out), "Standby Leader", hp, len) == 0)
	             ? 0
	             : -1;
	buf_free(&out);
	return rc;
}

/*
 * get-postgresql-primary: the current primary as host:port, from `patronictl list` as
 * Patroni's account (the DCS's view, as Omnibus' Consul lookup of master.<scope>); a standby
 * cluster's leader when there is no primary, as Omnibus. Exit: 0 printed; 1 none, or
 * patronictl failed; 2 usage.
 */
int cmd_get_postgresql_primary(const struct ctl *ctl, int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: gitlab-ctl get-postgresql-primary\n");
		return 2;
	}
	struct loaded l;
	int rc = 1;
	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, "get-postgresql-primary", stderr) == -1) {
		cmd_unload(&l);
		return 1;
	}
	const struct svc *s = patroni_on(&l.a, "get-postgresql-primary");
	if (s != NULL) {
		struct buf out;
		buf_init(&out);
		char hp[300];
		int st = run_patronictl(ctl, &l.a, s,
		                        (const char *const[]){"list", "-f", "tsv", "{scope}", NULL},
		                        &out);
		if (st != 0)
			fprintf(stderr, "gitlab-ctl get-postgresql-primary: patronictl list: %s\n",
			        st < 0 ? strerror(errno) : "failed");
		else if (member_of_role(buf_str(&out), "Leader", hp, sizeof hp) == 0 ||
		         member_of_role(buf_str(&out), "Standby Leader", hp, sizeof hp) == 0)
			rc = printf("%s\n", hp) < 0;
		else
			fprintf(stderr,
			        "gitlab-ctl get-postgresql-primary: no running leader in %s\n",
			        attrs_var(&l.a, s, "scope"));
		buf_free(&out);
	}
	cmd_unload(&l);
	return rc;
}

/*
 * switchover / failover [--master X] [--candidate Y] [--scheduled T] (switchover only),
 * reinitialize-replica [--member X] [--wait]: Omnibus' options, each value one argv entry
 * for patronictl (never an option of its own), --force added as Omnibus does. -1: usage.
 */
static int leader_change(const struct ctl *ctl, int argc, char **argv)
{
	const char *args[12];
	size_t n = 0;
	bool sw = strcmp(argv[0], "switchover") == 0,
	     re = strcmp(argv[0], "reinitialize-replica") == 0;
	const char *member = NULL;
	bool wait = false;

	args[n++] = re ? "reinit" : argv[0];
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char *to = NULL;
		if (!re && strcmp(o, "--master") == 0)
			to = "--master";
		else if (!re && strcmp(o, "--candidate") == 0)
			to = "--candidate";
		else if (sw && strcmp(o, "--scheduled") == 0)
			to = "--scheduled";
		else if (re && strcmp(o, "--member") == 0) {
			if (v == NULL || v[0] == '-' || v[0] == '\0')
				return -1;
			member = v;
			i++;
			continue;
		} else if (re && strcmp(o, "--wait") == 0) {
			wait = true;
			continue;
		} else
			return -1;
		if (v == NULL || v[0] == '-' || v[0] == '\0')
			return -1;
		args[n++] = to;
		args[n++] = v;
		i++;
	}
	args[n++] = "--force";
	if (wait)
		args[n++] = "--wait";
	args[n++] = "{scope}";
	if (re)
		args[n++] = member != NULL ? member : "{name}";
	args[n] = NULL;
	return patronictl(ctl, argv[0], args);
}

int cmd_patroni(const struct ctl *ctl, int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "check-leader") == 0)
		return check(ctl, argv[1], "/leader");
	if (argc == 2 && strcmp(argv[1], "check-replica") == 0)
		return check(ctl, argv[1], "/replica");
	if (argc == 2 && strcmp(argv[1], "members") == 0)
		return patronictl(ctl, argv[1], (const char *const[]){"list", NULL});
	/* Omnibus' -w/--wait: until the cluster is (un)paused */
	bool wait = argc == 3 && (strcmp(argv[2], "-w") == 0 || strcmp(argv[2], "--wait") == 0);
	if ((argc == 2 || wait) && strcmp(argv[1], "pause") == 0)
		return wait ? patronictl(ctl, argv[1],
		                         (const char *const[]){"pause", "--wait", "{scope}", NULL})
		            : patronictl(ctl, argv[1],
		                         (const char *const[]){"pause", "{scope}", NULL});
	if ((argc == 2 || wait) && strcmp(argv[1], "resume") == 0)
		return wait ? patronictl(ctl, argv[1],
		                         (const char *const[]){"resume", "--wait", "{scope}", NULL})
		            : patronictl(ctl, argv[1],
		                         (const char *const[]){"resume", "{scope}", NULL});
	/* this node only, without patronictl's question */
	if (argc == 2 && strcmp(argv[1], "reload") == 0)
		return patronictl(
		    ctl, argv[1],
		    (const char *const[]){"reload", "--force", "{scope}", "{name}", NULL});
	if (argc == 2 && strcmp(argv[1], "restart") == 0)
		return patronictl(
		    ctl, argv[1],
		    (const char *const[]){"restart", "--force", "{scope}", "{name}", NULL});
	if (argc >= 2 && (strcmp(argv[1], "switchover") == 0 || strcmp(argv[1], "failover") == 0 ||
	                  strcmp(argv[1], "reinitialize-replica") == 0)) {
		int rc = leader_change(ctl, argc - 1, argv + 1);
		if (rc != -1)
			return rc;
	}
	fprintf(stderr, "usage: gitlab-ctl patroni members|pause [-w]|resume [-w]|reload|restart|"
	                "check-leader|check-replica|failover [--master X] [--candidate Y]|"
	                "switchover [--master X] [--candidate Y] [--scheduled T]|"
	                "reinitialize-replica [--member X] [--wait]\n");
	return 2;
}
