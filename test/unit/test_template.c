/* Unit tests of the template engine: escaping, blocks, errors with locations. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "render/template.h"

static const char *vals[][2] = {
    {"empty", ""},
    {"plain", "hello"},
    {"port", "9168"},
    {"nasty", "a'b\"c$(touch /tmp/x)`id`\\n\nend"},
    {"nl", "x\ny"},
    {"quote", "it's a\\b"},
    {"unicode", "caf\xc3\xa9 \xe2\x80\xa8 \xff"},
};

static const char *get(void *arg, const char *name)
{
	(void)arg;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		if (strcmp(vals[i][0], name) == 0)
			return vals[i][1];
	return NULL;
}

static char *const argv_list[] = {"/bin/echo", "it's", "$HOME", "", NULL};

static char *const *get_list(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "argv") == 0 ? argv_list : NULL;
}

static const struct tpl_vars vars = {.get = get, .get_list = get_list};

/* Render, expecting success; returns a malloc'ed string. */
static char *render_ok(const char *text)
{
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	int rc = tpl_render("t", text, strlen(text), &vars, &out, &d);
	if (rc != 0)
		diags_print(&d, stderr);
	assert_int_equal(rc, 0);
	assert_int_equal(d.nerr, 0);
	diags_free(&d);
	char *s = strdup(out.p ? out.p : "");
	buf_free(&out);
	return s;
}

/* Render, expecting failure whose first message mentions want at line. */
static void render_err(const char *text, int line, const char *want)
{
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	assert_int_equal(tpl_render("tpl/x", text, strlen(text), &vars, &out, &d), -1);
	assert_true(d.nerr >= 1);
	/* Even a failed render leaves the buffer's NUL at len (buf.h). */
	if (out.len > 0)
		assert_int_equal(strlen(out.p), out.len);
	assert_string_equal(d.v[0].file, "tpl/x");
	assert_int_equal(d.v[0].line, line);
	if (strstr(d.v[0].msg, want) == NULL)
		fail_msg("message '%s' lacks '%s'", d.v[0].msg, want);
	diags_free(&d);
	buf_free(&out);
}

static void test_raw(void **state)
{
	(void)state;
	char *s = render_ok("a {{plain}} b {{ port }}\n");
	assert_string_equal(s, "a hello b 9168\n");
	free(s);
}

/* Run the rendered shell text with sh and capture argv as NUL-separated output. */
static size_t sh_eval(const char *script, char *out, size_t outlen)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while ((r = read(p[0], out + n, outlen - n - 1)) > 0)
		n += (size_t)r;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	out[n] = '\0';
	return n;
}

static void test_sh_roundtrip(void **state)
{
	(void)state;
	unlink("/tmp/gitlab-ctl-template-test-x");
	char *s = render_ok("printf '%s\\0' {{sh nasty}} {{sh empty}} {{sh* argv}}");
	char out[512];
	size_t n = sh_eval(s, out, sizeof out);
	const char *want[] = {vals[3][1], "", "/bin/echo", "it's", "$HOME", ""};
	size_t off = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		assert_true(off < n);
		assert_string_equal(out + off, want[i]);
		off += strlen(want[i]) + 1;
	}
	assert_int_equal(off, n);
	assert_int_equal(access("/tmp/gitlab-ctl-template-test-x", F_OK), -1);
	free(s);
}

static void test_sh_quote_text(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	tpl_sh_quote(&b, "it's");
	assert_string_equal(b.p, "'it'\\''s'");
	buf_free(&b);
}

static void test_yaml(void **state)
{
	(void)state;
	char *s = render_ok("k: {{yaml nasty}}\nu: {{yaml unicode}}\ne: {{yaml empty}}\n");
	assert_string_equal(s, "k: \"a'b\\\"c$(touch /tmp/x)`id`\\\\n\\nend\"\n"
	                       "u: \"caf\xc3\xa9 \\L \\uFFFD\"\n"
	                       "e: \"\"\n");
	free(s);
}

static void test_yaml_control(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	tpl_yaml_quote(&b, "\x01\t\r\x7f");
	assert_string_equal(b.p, "\"\\x01\\t\\r\\x7F\"");
	buf_free(&b);
}

static void test_blocks(void **state)
{
	(void)state;
	char *s = render_ok("a\n{{#if plain}}\ns{{plain}}\n{{/if}}\n{{#if empty}}\nn{{empty}}\n"
	                    "{{/if}}\n{{#unless empty}}\nu\n{{/if}}\n{{! comment }}\nz{{#if port}} "
	                    "p{{/if}}{{#if empty}} q{{/if}}\n");
	assert_string_equal(s, "a\nshello\nu\nz p\n");
	free(s);
	/* any of several names */
	s = render_ok("{{#if empty|plain}}\na\n{{/if}}\n{{#if empty|empty}}\nb\n{{/if}}\n"
	              "{{#unless empty|empty}}\nc\n{{/if}}\n{{#unless plain|empty}}\nd\n{{/if}}\n");
	assert_string_equal(s, "a\nc\n");
	free(s);
}

static void test_int(void **state)
{
	(void)state;
	char *s = render_ok("port: {{int port}}\n");
	assert_string_equal(s, "port: 9168\n");
	free(s);
	render_err("x\nport: {{int plain}}\n", 2, "not an integer");
	/* an unset (empty) value is fine where it is not used */
	s = render_ok("{{#if empty}}\ns{{int empty}}\n{{/if}}\n{{#if empty}}{{nl}}{{/if}}x\n");
	assert_string_equal(s, "x\n");
	free(s);
}

static void test_errors(void **state)
{
	(void)state;
	render_err("a\nb {{nosuch}}\n", 2, "unknown placeholder 'nosuch'");
	render_err("{{#if nosuch}}\n{{/if}}\n", 1, "unknown placeholder");
	render_err("{{#if plain|nosuch}}\n{{/if}}\n", 1, "unknown placeholder 'nosuch'");
	render_err("{{#if plain|}}\n{{/if}}\n", 1, "malformed");
	render_err("{{yaml plain|empty}}\n", 1, "malformed");
	render_err("x\n\n{{raw plain\n", 3, "unterminated");
	render_err("{{#if plain}}\nx\n", 1, "not closed");
	render_err("x\n{{/if}}\n", 2, "without an open block");
	render_err("{{sh a b}}", 1, "malformed");
	render_err("l {{nl}}\n", 1, "newline");
	render_err("{{sh* plain}}\n", 1, "unknown list");
	render_err("k: {{yamlv nosuch}}", 1, "unknown data placeholder");
	/* an unknown name inside a false block is still an error */
	render_err("{{#if empty}}\n{{typo}}\n{{/if}}\n", 2, "unknown placeholder 'typo'");
}

/* ---- the shipped templates, rendered with hostile values and then executed/parsed ---- */

struct kvs {
	const char *const (*v)[2];
	size_t n;
	char *const *argv;
};

static const char *kv_lookup(void *arg, const char *name)
{
	const struct kvs *k = arg;
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->v[i][0], name) == 0)
			return k->v[i][1];
	return NULL;
}

static char *const *kv_list(void *arg, const char *name)
{
	const struct kvs *k = arg;
	return strcmp(name, "argv") == 0 ? k->argv : NULL;
}

/* The exporter YAML's one data value, redis_sentinels: unset (null). */
static int kv_data(void *arg, const char *name, bool items, struct buf *out, int indent,
                   struct tpl_spans *secrets)
{
	(void)arg, (void)items, (void)indent, (void)secrets;
	if (strcmp(name, "redis_sentinels") != 0)
		return -1;
	buf_adds(out, " null");
	return 0;
}

static char *render_template(const char *file, const struct kvs *k)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/templates/%s", SRCDIR, file);
	struct tpl_vars v = {
	    .get = kv_lookup, .get_list = kv_list, .put_data = kv_data, .arg = (void *)k};
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	int rc = tpl_render_file(path, &v, &out, &d);
	if (rc != 0)
		diags_print(&d, stderr);
	assert_int_equal(rc, 0);
	diags_free(&d);
	char *s = strdup(out.p);
	buf_free(&out);
	return s;
}

/* The run script passes every value to gitlab-ctl as exactly one argument. */
static void test_run_template(void **state)
{
	(void)state;
	char dir[] = "/tmp/gitlab-ctl-tpl'$(x).XXXXXX";
	assert_non_null(mkdtemp(dir));
	char fake[300], script[300], marker[300];
	snprintf(fake, sizeof fake, "%s/fake ctl", dir);
	snprintf(script, sizeof script, "%s/run", dir);
	snprintf(marker, sizeof marker, "%s/pwned", dir);
	/* a stand-in for gitlab-ctl: prints its arguments NUL-separated */
	tl_put(fake, "#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done\n", 0755);
	char touch[700];
	snprintf(touch, sizeof touch, "$(touch %s)`touch %s`", marker, marker);
	const char *const vals_run[][2] = {
	    {"gitlab_ctl", fake},
	    {"root", "/r o'ot"},
	    {"env_directory", "/e\nnv"},
	    {"user", "g\"it"},
	    {"group", "g$IFS"},
	    {"groups", "r'ed,is"},
	    {"home", touch},
	    {"service", "gitlab-exporter"},
	};
	char *const argv[] = {"/bin/cmd", "it's", "\\", "", "a\nb", NULL};
	struct kvs k = {vals_run, sizeof vals_run / sizeof vals_run[0], argv};
	char *run = render_template("run", &k);
	tl_put(script, run, 0755);
	free(run);

	char out[2048];
	setenv("RUNSCRIPT", script, 1);
	size_t n = sh_eval("exec \"$RUNSCRIPT\"", out, sizeof out);
	const char *want[] = {
	    "--root",  "/r o'ot",  "exec",     "--envdir", "/e\nnv",  "--user", "g\"it",
	    "--group", "g$IFS",    "--groups", "r'ed,is",  "--chdir", touch,    "gitlab-exporter",
	    "--",      "/bin/cmd", "it's",     "\\",       "",        "a\nb"};
	size_t off = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		assert_true(off < n);
		assert_string_equal(out + off, want[i]);
		off += strlen(want[i]) + 1;
	}
	assert_int_equal(off, n);
	assert_int_equal(access(marker, F_OK), -1);

	/* without a root, no --root at all */
	const char *const vals_noroot[][2] = {
	    {"gitlab_ctl", fake}, {"root", ""},   {"env_directory", "/e"}, {"user", "u"},
	    {"group", "g"},       {"groups", ""}, {"home", "/h"},          {"service", "s"},
	};
	struct kvs k2 = {vals_noroot, sizeof vals_noroot / sizeof vals_noroot[0], argv};
	run = render_template("run", &k2);
	tl_put(script, run, 0755);
	free(run);
	sh_eval("exec \"$RUNSCRIPT\"", out, sizeof out);
	assert_string_equal(out, "exec");
	unlink(script);
	unlink(fake);
	rmdir(dir);
}

static void test_log_templates(void **state)
{
	(void)state;
	const char *const full[][2] = {
	    {"log_directory", "/var/log/x y"},
	    {"svlogd_size", "209715200"},
	    {"svlogd_num", "30"},
	    {"svlogd_timeout", "86400"},
	    {"svlogd_filter", "gzip"},
	    {"svlogd_udp", "10.0.0.1:514"},
	    {"svlogd_prefix", "gitlab"},
	};
	struct kvs k = {full, sizeof full / sizeof full[0], NULL};
	char *s = render_template("log-config", &k);
	assert_string_equal(s, "s209715200\nn30\nt86400\n!gzip\nu10.0.0.1:514\npgitlab\n");
	free(s);
	s = render_template("log-run", &k);
	assert_non_null(strstr(s, "exec svlogd -tt '/var/log/x y'\n"));
	free(s);

	/* nil settings leave no line, not even an empty one */
	const char *const some[][2] = {
	    {"svlogd_size", ""},   {"svlogd_num", "5"}, {"svlogd_timeout", ""},
	    {"svlogd_filter", ""}, {"svlogd_udp", ""},  {"svlogd_prefix", ""},
	};
	struct kvs k2 = {some, sizeof some / sizeof some[0], NULL};
	s = render_template("log-config", &k2);
	assert_string_equal(s, "n5\n");
	free(s);
}

/* The exporter config parses back (Ruby's YAML, as the exporter reads it) to the values. */
/* Render the exporter's YAML and read it back with Ruby: prints the fields asked for. */
static void yaml_fields(const struct kvs *k, const char *expr, char *out, size_t len)
{
	char *yml = render_template("gitlab-exporter.yml", k);
	char path[] = "/tmp/gitlab-ctl-tpl-yml.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yml, strlen(yml)), (ssize_t)strlen(yml));
	close(fd);
	free(yml);
	char script[1024];
	snprintf(script, sizeof script,
	         "ruby -ryaml -e 'c = YAML.load_file(ARGV[0], aliases: true); s = c[\"server\"]; "
	         "m = c[\"probes\"][\"metrics\"]; print [%s].join(\"\\0\")' %s",
	         expr, path);
	memset(out, 0, len);
	sh_eval(script, out, len);
	unlink(path);
}

static void expect_fields(const char *out, const char *const *want, size_t n)
{
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(out + off, want[i]);
		off += strlen(want[i]) + 1;
	}
}

/*
 * Hostile values stay values; the database and Sidekiq probes use the
 * connection built from the postgresql and redis settings (anchors and <<
 * merge keys as Omnibus writes them), and are absent for a disabled backend;
 * Sidekiq's with probe_sidekiq off (Redis on); the TLS keys only with tls_enabled.
 */
static void test_yaml_template(void **state)
{
	(void)state;
	const char *addr = "127.0.0.1\" # x\n: y \\ '";
	const char *conn = "dbname=g user=gitlab host=/v/\"x # port=5432";
	const char *url = "unix:/v/redis: \"s\".socket";
	const char *pat = "gitlab-exporter web -c /v/\"x\" # y.yml";
	const char *auth = "Bearer a\"b\\c\n# d";
	const char *cert = "/etc/\"x\": # y.pem";
	const char *const on[][2] = {{"server_name", "webrick"},
	                             {"listen_address", addr},
	                             {"listen_port", "9168"},
	                             {"memory_threshold", "1024"},
	                             {"postgresql.enable", "1"},
	                             {"patroni.enable", ""},
	                             {"db_host", ""},
	                             {"db_connection_string", "dbname=remote"},
	                             {"redis.enable", "1"},
	                             {"redis_sentinels", ""},
	                             {"redis_sentinel_url", "redis://x"},
	                             {"redis_sentinel_password", ""},
	                             {"connection_string", conn},
	                             {"redis_url", url},
	                             {"process_pattern", pat},
	                             {"gitlab_exporter.probe_elasticsearch", "1"},
	                             {"gitlab_exporter.tuple_stats_all_columns", ""},
	                             {"gitlab_exporter.probe_sidekiq", "1"},
	                             {"gitlab_exporter.tls_enabled", "1"},
	                             {"tls_cert_path", cert},
	                             {"tls_key_path", "/k.pem"},
	                             {"elasticsearch_url", "http://e:9200"},
	                             {"elasticsearch_authorization", auth},
	                             {"web_username", "u\": #x"},
	                             {"web_password", "pw\n#y"}};
	struct kvs k = {on, sizeof on / sizeof on[0], NULL};
	char out[2048];
	yaml_fields(
	    &k,
	    "s[\"name\"], s[\"listen_address\"], s[\"listen_port\"].to_s, "
	    "s[\"memory_threshold\"].to_s, m[\"multiple\"].to_s, "
	    "m[\"process\"][\"opts\"][0][\"name\"], "
	    "m[\"process\"][\"opts\"][0][\"pid_or_pattern\"], m[\"rows_count\"][\"class_name\"], "
	    "m[\"rows_count\"][\"opts\"][\"connection_string\"], "
	    "m[\"tuple_stats\"][\"methods\"][0], m[\"sidekiq\"][\"opts\"][\"redis_url\"], "
	    "c[\"probes\"][\"sidekiq\"][\"methods\"].join(\",\"), "
	    "c[\"probes\"][\"ruby\"][\"methods\"][0], "
	    "c[\"probes\"][\"elasticsearch\"][\"opts\"][0][\"options\"][\"headers\"]["
	    "\"Authorization\"], s[\"tls_enabled\"].to_s, s[\"tls_cert_path\"], "
	    "s[\"tls_key_path\"], m[\"elasticsearch\"][\"methods\"].join(\",\"), "
	    "m[\"elasticsearch\"][\"opts\"][0][\"url\"], s[\"basic_auth_users\"].keys.join, "
	    "s[\"basic_auth_users\"].values[0][0, 7]",
	    out, sizeof out);
	const char *want[] = {
	    "webrick",
	    addr,
	    "9168",
	    "1024",
	    "true",
	    "gitlab_exporter",
	    pat,
	    "Database::RowCountProber",
	    conn,
	    "probe_db",
	    url,
	    "probe_stats,probe_queues,probe_workers,probe_retries,probe_future_sets",
	    "probe_gc",
	    auth,
	    "true",
	    cert,
	    "/k.pem",
	    "probe_migrations",
	    "http://e:9200",
	    "u\": #x",
	    "$2b$10$"};
	expect_fields(out, want, sizeof want / sizeof want[0]);

	const char *const off[][2] = {{"server_name", "webrick"},
	                              {"listen_address", "localhost"},
	                              {"listen_port", "9168"},
	                              {"memory_threshold", "1024"},
	                              {"postgresql.enable", ""},
	                              {"patroni.enable", ""},
	                              {"db_host", ""},
	                              {"db_connection_string", "dbname=remote"},
	                              {"redis.enable", "1"},
	                              {"redis_sentinels", ""},
	                              {"redis_sentinel_url", "redis://x"},
	                              {"redis_sentinel_password", ""},
	                              {"redis_sentinels", ""},
	                              {"redis_sentinel_url", "redis://x"},
	                              {"redis_sentinel_password", ""},
	                              {"gitlab_exporter.probe_sidekiq", ""},
	                              {"gitlab_exporter.tls_enabled", ""},
	                              {"tls_cert_path", ""},
	                              {"tls_key_path", ""},
	                              {"connection_string", conn},
	                              {"redis_url", url},
	                              {"process_pattern", pat},
	                              {"gitlab_exporter.probe_elasticsearch", ""},
	                              {"elasticsearch_url", ""},
	                              {"elasticsearch_authorization", ""},
	                              {"gitlab_exporter.tuple_stats_all_columns", ""},
	                              {"web_username", "gitlab-prometheus"},
	                              {"web_password", ""}};
	struct kvs k2 = {off, sizeof off / sizeof off[0], NULL};
	yaml_fields(
	    &k2,
	    "m.key?(\"rows_count\").to_s, m.key?(\"tuple_stats\").to_s, "
	    "m.key?(\"sidekiq\").to_s, c[\"probes\"].keys.sort.join(\",\"), "
	    "m.keys.sort.join(\",\"), s.key?(\"tls_enabled\").to_s, c.key?(\"redis_common\").to_s, "
	    "s.key?(\"basic_auth_users\").to_s",
	    out, sizeof out);
	const char *want2[] = {
	    "false", "false", "false", "metrics,process,ruby", "multiple,process,ruby",
	    "false", "false", "false"};
	expect_fields(out, want2, sizeof want2 / sizeof want2[0]);
}

/* The check script hands every value to `gitlab-ctl probe` as exactly one argument. */
static void test_check_template(void **state)
{
	(void)state;
	char dir[] = "/tmp/gitlab-ctl-tpl-check'$(x).XXXXXX";
	assert_non_null(mkdtemp(dir));
	char fake[300], script[300], out[300], body[700];
	snprintf(fake, sizeof fake, "%s/fake ctl", dir);
	snprintf(script, sizeof script, "%s/check", dir);
	snprintf(out, sizeof out, "%s/argv", dir);
	snprintf(body, sizeof body, "%s",
	         "#!/bin/sh\nprintf '%s\\n' \"$GITLAB_CTL_DATADIR\" \"$@\" >\"$ARGV_OUT\"\n");
	tl_put(fake, body, 0755);
	const char *const v[][2] = {{"service", "svc"},
	                            {"gitlab_ctl", fake},
	                            {"root", "/r o'ot"},
	                            {"config", "/c $(touch x)/gitlab.rb"},
	                            {"datadir", "/d`x`"}};
	struct kvs k = {v, sizeof v / sizeof v[0], NULL};
	char *text = render_template("check", &k);
	tl_put(script, text, 0755);
	free(text);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("ARGV_OUT", out, 1);
		execl("/bin/sh", "sh", script, (char *)NULL);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	FILE *fp = fopen(out, "r");
	assert_non_null(fp);
	char got[1024];
	size_t n = fread(got, 1, sizeof got - 1, fp);
	got[n] = '\0';
	fclose(fp);
	assert_string_equal(got,
	                    "/d`x`\n--root\n/r o'ot\n-c\n/c $(touch x)/gitlab.rb\nprobe\nsvc\n");
	unlink(out);
	unlink(fake);
	unlink(script);
	rmdir(dir);
}

/* Render name from the cache; returns rc and fills out (reset) and d (fresh). */
static int cache_render(struct tpl_cache *c, const char *name, struct buf *out, struct diags *d)
{
	buf_reset(out);
	diags_free(d);
	diags_init(d);
	return tpl_cache_render(c, name, &vars, out, d);
}

/*
 * The cache reads a file once (a later change is not seen within a run) and
 * renders and reports exactly as tpl_render_file, at every render.
 */
static void test_cache(void **state)
{
	(void)state;
	char dir[] = "/tmp/gitlab-ctl-tplcache.XXXXXX", path[128], bad[128];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/good", dir);
	snprintf(bad, sizeof bad, "%s/bad", dir);
	tl_put(path, "a {{sh nasty}}\n{{#if plain}}\n{{port}}\n{{/if}}\nend\n", 0644);
	tl_put(bad, "line 1\n{{#if empty}}{{nosuch}}{{/if}}\n{{/if}}\n{{oops\n", 0644);
	struct tpl_cache *c = tpl_cache_new(dir);
	struct buf out, want;
	struct diags d, dw;
	buf_init(&out);
	buf_init(&want);
	diags_init(&d);
	diags_init(&dw);
	assert_int_equal(tpl_render_file(path, &vars, &want, &dw), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(cache_render(c, "good", &out, &d), 0);
		assert_string_equal(buf_str(&out), buf_str(&want));
		if (i == 0)
			tl_put(path, "changed\n", 0644); /* read once: not seen */
	}
	buf_reset(&want);
	diags_free(&dw);
	diags_init(&dw);
	assert_int_equal(tpl_render_file(bad, &vars, &want, &dw), -1);
	assert_int_equal(dw.nerr, 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(cache_render(c, "bad", &out, &d), -1);
		assert_int_equal(d.nerr, dw.nerr);
		for (size_t k = 0; k < d.n; k++) {
			assert_string_equal(d.v[k].file, dw.v[k].file);
			assert_int_equal(d.v[k].line, dw.v[k].line);
			assert_string_equal(d.v[k].msg, dw.v[k].msg);
		}
		assert_string_equal(buf_str(&out), buf_str(&want));
	}
	for (int i = 0; i < 2; i++) { /* a missing file: the same error each time */
		assert_int_equal(cache_render(c, "missing", &out, &d), -1);
		assert_int_equal(d.nerr, 1);
		assert_non_null(strstr(d.v[0].msg, "cannot read template"));
		assert_non_null(strstr(d.v[0].file, "/missing"));
	}
	tpl_cache_free(c);
	buf_free(&out);
	buf_free(&want);
	diags_free(&d);
	diags_free(&dw);
	unlink(path);
	unlink(bad);
	rmdir(dir);
}

/* {{FORMAT name}}: the value in the format's syntax; a refusal at the template line... */
static void test_filters(void **state)
{
	(void)state;
	char *s =
	    render_ok("a = {{pg_string quote}}; b = '{{pg_part plain}}/x'; c {{redis nasty}}");
	assert_string_equal(
	    s, "a = 'it''s a\\\\b'; b = 'hello/x'; c \"a'b\\\"c$(touch /tmp/x)`id`\\\\n\\nend\"");
	free(s);
	render_err("x\nshared_buffers = {{pg_number plain}}\n", 2,
	           "value of 'plain': not a number");
	render_err("{{#if empty}}{{pg_number plain}}{{/if}}{{pg_token nasty}}", 1,
	           "value of 'nasty'");
	s = render_ok("{{#if empty}}{{pg_number plain}}{{/if}}ok"); /* only where it is used */
	assert_string_equal(s, "ok");
	free(s);
}

static bool origin_of(void *arg, const char *name, struct tpl_origin *o)
{
	(void)arg;
	if (strcmp(name, "plain") != 0)
		return false;
	snprintf(o->file, sizeof o->file, "%s", "/etc/gitlab/gitlab.rb");
	o->line = 7;
	o->col = 31;
	snprintf(o->label, sizeof o->label, "%s", "postgresql['shared_buffers']");
	return true;
}

/* ...or where gitlab.rb set the value, when the variables know; never echoing the value. */
static void test_filter_origin(void **state)
{
	(void)state;
	struct tpl_vars v = {.get = get, .get_list = get_list, .origin = origin_of};
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	const char *text = "x = {{pg_number plain}}\n";
	assert_int_equal(tpl_render("tpl/x", text, strlen(text), &v, &out, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_string_equal(d.v[0].file, "/etc/gitlab/gitlab.rb");
	assert_int_equal(d.v[0].line, 7);
	assert_int_equal(d.v[0].col, 31);
	assert_non_null(strstr(d.v[0].msg, "postgresql['shared_buffers']: not a number"));
	assert_null(strstr(d.v[0].msg, "hello"));
	assert_null(d.v[0].srcline);
	diags_free(&d);
	buf_free(&out);
}

/* A data filter ({{redis_save name}}): whole lines from a data value, refused where it was set. */
static int get_data(void *arg, const char *name, const struct yval **v)
{
	if (strcmp(name, "unset") == 0) {
		*v = NULL;
		return 0;
	}
	if (strcmp(name, "plain") != 0)
		return -1;
	*v = arg;
	return 0;
}

static void test_data_filter(void **state)
{
	(void)state;
	struct yval *save = yval_seq();
	yval_push(save, yval_scalar(YV_STR, "900 1"));
	yval_push(save, yval_scalar(YV_STR, "60 10"));
	struct tpl_vars v = {.get = get, .origin = origin_of, .get_data = get_data, .arg = save};
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	const char *text = "a\n{{redis_save plain}}\n{{redis_save unset}}\n"
	                   "{{#if empty}}{{redis_save plain}}{{/if}}b\n";
	assert_int_equal(tpl_render("t", text, strlen(text), &v, &out, &d), 0);
	assert_string_equal(buf_str(&out), "a\nsave 900 1\nsave 60 10\n\nb\n");
	buf_truncate(&out, 0);
	text = "{{redis_save nosuch}}\n"; /* a typo is an error, even when its block is off */
	assert_int_equal(tpl_render("t", text, strlen(text), &v, &out, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "unknown data placeholder 'nosuch'"));
	diags_free(&d);
	diags_init(&d);
	yval_push(save, yval_scalar(YV_STR, "60 x"));
	buf_truncate(&out, 0);
	text = "a\n{{redis_renames plain}}\n";
	assert_int_equal(tpl_render("t", text, strlen(text), &v, &out, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_string_equal(d.v[0].file, "/etc/gitlab/gitlab.rb");
	assert_int_equal(d.v[0].line, 7);
	assert_non_null(strstr(d.v[0].msg, "not a hash"));
	assert_string_equal(buf_str(&out), "a\n\n");
	diags_free(&d);
	buf_free(&out);
	yval_free(save);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filters),       cmocka_unit_test(test_filter_origin),
	    cmocka_unit_test(test_raw),           cmocka_unit_test(test_sh_roundtrip),
	    cmocka_unit_test(test_sh_quote_text), cmocka_unit_test(test_yaml),
	    cmocka_unit_test(test_yaml_control),  cmocka_unit_test(test_blocks),
	    cmocka_unit_test(test_int),           cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_run_template),  cmocka_unit_test(test_log_templates),
	    cmocka_unit_test(test_yaml_template), cmocka_unit_test(test_check_template),
	    cmocka_unit_test(test_cache),         cmocka_unit_test(test_data_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
