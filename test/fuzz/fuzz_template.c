/*
 * libFuzzer harness for the template engine (launcher/template.c). The first
 * input byte picks what is fuzzed:
 *   0  the template text itself, with a fixed set of (hostile) values;
 *   1  the values of templates/run, log-run and check: the rest of the input
 *      is NUL-separated fields (gitlab_ctl, root, env_directory, user,
 *      group, home, service, then argv); each value must reach the shell as
 *      exactly one unchanged word;
 *   2  the values of log-config and gitlab-exporter.yml: a value can never
 *      add a line or break out of its YAML scalar.
 * Every mode also checks: no crash, leak or undefined behaviour, and -1
 * exactly when an error was recorded. Build and run: see README.md here.
 *
 * The shipped templates are read from env GITLAB_CTL_SRCDIR, else from
 * SRCDIR given at compile time.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shwords.h"
#include "slurp.h"
#include "render/template.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { T_RUN, T_LOGRUN, T_CHECK, T_LOGCONF, T_YAML, NTPL };
static const char *const tpl_names[NTPL] = {"run", "log-run", "check", "log-config",
                                            "gitlab-exporter.yml"};
static char *tpl_text[NTPL];
static size_t tpl_len[NTPL];
static size_t yaml_lines; /* lines of gitlab-exporter.yml rendered with plain values */
static FILE *devnull;

#define MAXF 40

/* Values by name; argv is a NULL-terminated list. */
struct vals {
	const char *name[MAXF];
	const char *val[MAXF];
	size_t n;
	char *argv[MAXF + 1];
};

static const char *get(void *arg, const char *name)
{
	const struct vals *v = arg;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->name[i], name) == 0)
			return v->val[i];
	return NULL;
}

static char *const *get_list(void *arg, const char *name)
{
	struct vals *v = arg;
	return strcmp(name, "argv") == 0 ? v->argv : NULL;
}

static void set(struct vals *v, const char *name, const char *val)
{
	v->name[v->n] = name;
	v->val[v->n++] = val;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* The exporter YAML's one data value, redis_sentinels: unset (null). */
static int put_data(void *arg, const char *name, bool items, struct buf *out, int indent,
                    struct tpl_spans *secrets)
{
	(void)arg, (void)items, (void)indent, (void)secrets;
	if (strcmp(name, "redis_sentinels") != 0)
		return -1;
	buf_adds(out, " null");
	return 0;
}

/* Render template t; returns rc, and checks the rc/diagnostics contract. */
static int render(int t, struct vals *v, struct buf *out)
{
	struct tpl_vars vars = {.get = get, .get_list = get_list, .put_data = put_data, .arg = v};
	struct diags d;
	diags_init(&d);
	buf_init(out);
	int rc = tpl_render(tpl_names[t], tpl_text[t], tpl_len[t], &vars, out, &d);
	/* An empty render leaves out->p NULL (lib/buf.h): read it through buf_str(). */
	if ((rc == -1) != (d.nerr > 0) || (out->p == NULL && out->len != 0))
		abort();
	diags_print(&d, devnull);
	diags_free(&d);
	return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *src = getenv("GITLAB_CTL_SRCDIR");
	if (src == NULL || *src == '\0')
		src = SRCDIR;
	for (int i = 0; i < NTPL; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/templates/%s", src, tpl_names[i]);
		tpl_text[i] = slurp(path, &tpl_len[i]);
		if (tpl_text[i] == NULL) {
			perror(path);
			abort();
		}
	}
	devnull = fopen("/dev/null", "w");
	if (devnull == NULL)
		abort();
	struct vals v = {.n = 0};
	set(&v, "server_name", "webrick");
	set(&v, "listen_address", "localhost");
	set(&v, "listen_port", "9168");
	set(&v, "memory_threshold", "1024");
	set(&v, "connection_string", "dbname=x");
	set(&v, "redis_url", "unix:/s");
	set(&v, "process_pattern", "gitlab-exporter web");
	set(&v, "postgresql.enable", "1");
	set(&v, "patroni.enable", "");
	set(&v, "db_host", "");
	set(&v, "db_connection_string", "dbname=y");
	set(&v, "redis.enable", "1");
	set(&v, "redis_sentinels", "");
	set(&v, "redis_sentinel_url", "redis://x");
	set(&v, "redis_sentinel_password", "");
	set(&v, "gitlab_exporter.tuple_stats_all_columns", "");
	set(&v, "gitlab_exporter.probe_elasticsearch", "");
	set(&v, "gitlab_exporter.probe_sidekiq", "1");
	set(&v, "gitlab_exporter.tls_enabled", "");
	set(&v, "tls_cert_path", "");
	set(&v, "tls_key_path", "");
	set(&v, "elasticsearch_url", "");
	set(&v, "elasticsearch_authorization", "");
	set(&v, "web_username", "gitlab-prometheus");
	set(&v, "web_password", ""); /* loopback only: no basic_auth_users */
	struct buf out;
	if (render(T_YAML, &v, &out) != 0)
		abort();
	yaml_lines = count_lines(buf_str(&out));
	buf_free(&out);
	return 0;
}

/* Mode 0: any template text, hostile values. */
static void fuzz_text(const char *text, size_t len)
{
	struct vals v = {.n = 0};
	set(&v, "plain", "value");
	set(&v, "empty", "");
	set(&v, "nl", "a\nb");
	set(&v, "quote", "it's \"q\" \\ $HOME `x`");
	set(&v, "num", "-123");
	set(&v, "big", "99999999999999999999");
	set(&v, "utf8", "\xc3\xa9\xc2\x85\xe2\x80\xa8\xff\xed\xa0\x80");
	set(&v, "ctl", "\x01\x7f");
	v.argv[0] = "/bin/x";
	v.argv[1] = "it's";
	v.argv[2] = "";
	v.argv[3] = NULL;
	struct tpl_vars vars = {.get = get, .get_list = get_list, .arg = &v};
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	int rc = tpl_render("fuzz.tpl", text, len, &vars, &out, &d);
	if ((rc == -1) != (d.nerr > 0))
		abort();
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].file == NULL || strcmp(d.v[i].file, "fuzz.tpl") != 0 || d.v[i].line < 0)
			abort();
	if (out.len > 0 && (out.p == NULL || strlen(out.p) > out.len))
		abort();
	diags_print(&d, devnull);
	diags_free(&d);
	buf_free(&out);
}

/* Mode 1: values of the shell templates. f[] are the NUL-separated fields. */
static void fuzz_shell(char **f, size_t nf)
{
	static const char *const names[] = {"gitlab_ctl", "root", "env_directory", "user",
	                                    "group",      "home", "service"};
	static const char *const defaults[] = {"/usr/bin/gitlab-ctl", "", "/e", "git", "git", "/h",
	                                       "gitlab-exporter"};
	const size_t nn = sizeof names / sizeof names[0];
	struct vals v = {.n = 0};
	for (size_t i = 0; i < nn; i++)
		set(&v, names[i], i < nf ? f[i] : defaults[i]);
	set(&v, "groups", ""); /* no --groups */
	size_t na = 0;
	for (size_t i = nn; i < nf && na < MAXF - 20; i++)
		v.argv[na++] = f[i];
	v.argv[na] = NULL;

	/* run: gitlab-ctl [--root R] exec --envdir E --user U --group G --chdir H SVC -- argv */
	const char *want[MAXF + 16];
	size_t n = 0;
	const char *root = get(&v, "root");
	want[n++] = get(&v, "gitlab_ctl");
	if (root[0] != '\0') {
		want[n++] = "--root";
		want[n++] = root;
	}
	want[n++] = "exec";
	want[n++] = "--envdir";
	want[n++] = get(&v, "env_directory");
	want[n++] = "--user";
	want[n++] = get(&v, "user");
	want[n++] = "--group";
	want[n++] = get(&v, "group");
	want[n++] = "--chdir";
	want[n++] = get(&v, "home");
	want[n++] = get(&v, "service");
	want[n++] = "--";
	for (size_t i = 0; i < na; i++)
		want[n++] = v.argv[i];
	struct buf out;
	if (render(T_RUN, &v, &out) != 0 || !sh_run_ok(buf_str(&out), want, n))
		abort();
	buf_free(&out);

	/* log-run: exec svlogd -tt DIR */
	set(&v, "log_directory", get(&v, "home"));
	if (render(T_LOGRUN, &v, &out) != 0)
		abort();
	const char *e = strstr(buf_str(&out), "\nexec svlogd");
	struct shwords w;
	if (e == NULL || sh_split(e + 1, &w) == -1 || w.n != 4 || *w.rest != '\0' ||
	    strcmp(sh_word(&w, 3), get(&v, "home")) != 0)
		abort();
	free(w.buf);
	buf_free(&out);

	/* check: GITLAB_CTL_DATADIR=D, then exec gitlab-ctl [--root R] -c CONFIG probe SVC */
	set(&v, "datadir", get(&v, "home"));
	set(&v, "config", get(&v, "env_directory"));
	if (render(T_CHECK, &v, &out) != 0) {
		/* only the raw {{service}} of its comment line may refuse a value */
		if (!has_control(get(&v, "service")))
			abort();
		buf_free(&out);
		return;
	}
	/* The comment lines above cannot hold a newline (raw values refuse it): the first
	 * "\nGITLAB_CTL_DATADIR=" starts the script, then each command is split in turn. */
	e = strstr(buf_str(&out), "\nGITLAB_CTL_DATADIR=");
	if (e == NULL || sh_split(e + 20, &w) == -1 || w.n != 1 ||
	    strcmp(sh_word(&w, 0), get(&v, "home")) != 0)
		abort();
	e = w.rest;
	free(w.buf);
	if (sh_split(e, &w) == -1 || w.n != 2 || strcmp(sh_word(&w, 0), "export") != 0)
		abort();
	e = w.rest;
	free(w.buf);
	n = 0;
	want[n++] = "exec";
	want[n++] = get(&v, "gitlab_ctl");
	if (root[0] != '\0') {
		want[n++] = "--root";
		want[n++] = root;
	}
	want[n++] = "-c";
	want[n++] = get(&v, "env_directory");
	want[n++] = "probe";
	want[n++] = get(&v, "service");
	if (sh_split(e, &w) == -1 || w.n != n || *w.rest != '\0')
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(sh_word(&w, i), want[i]) != 0)
			abort();
	free(w.buf);
	buf_free(&out);
}

/* A YAML double-quoted scalar from s[0] == '"' to the end of its line, with no bare quote. */
static bool yaml_scalar_ok(const char *s)
{
	if (*s++ != '"')
		return false;
	for (; *s && *s != '\n'; s++) {
		if (*s == '\\') {
			if (s[1] == '\0' || s[1] == '\n')
				return false;
			s++;
		} else if (*s == '"') {
			return s[1] == '\n' || s[1] == '\0';
		} else if ((unsigned char)*s < 0x20) {
			return false;
		}
	}
	return false;
}

/* Mode 2: values of log-config and the exporter's YAML. */
static void fuzz_lines(char **f, size_t nf)
{
	static const char *const names[] = {
	    "svlogd_size",    "svlogd_num",       "svlogd_timeout",    "svlogd_filter",
	    "svlogd_udp",     "svlogd_prefix",    "server_name",       "listen_address",
	    "listen_port",    "memory_threshold", "connection_string", "redis_url",
	    "process_pattern"};
	static const char *const defaults[] = {"",
	                                       "",
	                                       "",
	                                       "",
	                                       "",
	                                       "",
	                                       "webrick",
	                                       "::",
	                                       "9168",
	                                       "1024",
	                                       "dbname=x",
	                                       "unix:/s",
	                                       "gitlab-exporter web"};
	const size_t nn = sizeof names / sizeof names[0];
	struct vals v = {.n = 0};
	size_t nset = 0;
	for (size_t i = 0; i < nn; i++) {
		set(&v, names[i], i < nf ? f[i] : defaults[i]);
		nset += i < 6 && v.val[i][0] != '\0';
	}
	set(&v, "postgresql.enable", "1"); /* every optional probe block present */
	set(&v, "patroni.enable", "");
	set(&v, "db_host", "");
	set(&v, "db_connection_string", "dbname=y");
	set(&v, "redis.enable", "1");
	set(&v, "redis_sentinels", "");
	set(&v, "redis_sentinel_url", "redis://x");
	set(&v, "redis_sentinel_password", "");
	set(&v, "gitlab_exporter.tuple_stats_all_columns", "");
	set(&v, "gitlab_exporter.probe_elasticsearch", "");
	set(&v, "elasticsearch_url", "");
	set(&v, "elasticsearch_authorization", "");
	set(&v, "web_username", "gitlab-prometheus");
	set(&v, "web_password", "");
	struct buf out;
	if (render(T_LOGCONF, &v, &out) == 0) {
		/* one directive per set value, nothing else */
		if (count_lines(buf_str(&out)) != nset)
			abort();
		for (const char *p = buf_str(&out); *p; p = strchr(p, '\n') + 1)
			if (strchr("sntup!", *p) == NULL || strchr(p, '\n') == NULL)
				abort();
	}
	buf_free(&out);
	if (render(T_YAML, &v, &out) == 0) {
		if (count_lines(buf_str(&out)) != yaml_lines)
			abort();
		const char *keys[] = {"\n  name: ", "\n  listen_address: ",
		                      "\n    connection_string: ", "\n    redis_url: "};
		for (size_t i = 0; i < 4; i++) {
			const char *k = strstr(buf_str(&out), keys[i]);
			if (k == NULL || !yaml_scalar_ok(k + strlen(keys[i])))
				abort();
		}
	}
	buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 1 << 16)
		return 0;
	char *text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	int mode = (unsigned char)text[0] % 3;
	if (mode == 0) {
		fuzz_text(text + 1, size - 1);
	} else {
		char *f[MAXF];
		size_t nf = 0;
		for (char *p = text + 1; nf < MAXF && p <= text + size; p += strlen(p) + 1)
			f[nf++] = p;
		if (mode == 1)
			fuzz_shell(f, nf);
		else
			fuzz_lines(f, nf);
	}
	free(text);
	return 0;
}
