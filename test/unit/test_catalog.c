/* catalog: the shipped service definitions, and malformed ones reported with file:line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "config/catalog.h"

static const char *kv(const struct cat_kv *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].value;
	return NULL;
}

static void expect_setting(const struct cat_service *s, const char *name, enum stype type,
                           const char *def)
{
	const struct cat_setting *cs = cat_setting_find(s, name);
	assert_non_null(cs);
	assert_int_equal(cs->type, type);
	if (def == NULL)
		assert_null(cs->def);
	else
		assert_string_equal(cs->def, def);
	assert_true(cs->line > 0);
}

static void test_shipped_catalog(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	diags_init(&d);
	assert_int_equal(catalog_load(SRCDIR "/sv", &c, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(c.n, 14);
	assert_string_equal(c.v[0].name, "alertmanager"); /* sorted by name */
	assert_string_equal(c.v[1].name, "etcd");
	assert_string_equal(c.v[2].name, "gitlab-exporter");
	assert_string_equal(c.v[3].name, "node-exporter");
	assert_string_equal(c.v[4].name, "patroni");
	assert_string_equal(c.v[5].name, "pgbouncer");
	assert_string_equal(c.v[6].name, "pgbouncer-watcher");
	assert_string_equal(c.v[7].name, "postgres-exporter");
	assert_string_equal(c.v[8].name, "postgresql");
	assert_string_equal(c.v[9].name, "prometheus");
	assert_string_equal(c.v[10].name, "redis");
	assert_string_equal(c.v[11].name, "redis-exporter");
	assert_string_equal(c.v[12].name, "sentinel");
	assert_string_equal(c.v[13].name, "sentinel-exporter");
	/* An exporter is on by default exactly where its backend is. */
	expect_setting(catalog_find(&c, "redis_exporter"), "enable", ST_BOOL, "{{redis.enable}}");

	const struct cat_service *ge = catalog_find(&c, "gitlab_exporter");
	assert_ptr_equal(ge, catalog_find(&c, "gitlab-exporter"));
	assert_string_equal(ge->config_name, "gitlab_exporter");
	assert_true(ge->enable_default);
	assert_true(ge->jemalloc);
	expect_setting(ge, "enable", ST_BOOL, "true");
	expect_setting(ge, "home", ST_PATH, "{{gitlab_data_dir}}/gitlab-exporter");
	expect_setting(ge, "log_directory", ST_PATH, "{{gitlab_log_dir}}/gitlab-exporter");
	expect_setting(ge, "env_directory", ST_PATH,
	               "{{gitlab_install_dir}}/etc/gitlab-exporter/env");
	expect_setting(ge, "listen_address", ST_STRING, "localhost");
	expect_setting(ge, "listen_port", ST_PORT, "9168");
	expect_setting(ge, "env", ST_ENV, NULL);
	expect_setting(ge, "command", ST_PATH,
	               "{{gitlab_install_dir}}/embedded/bin/gitlab-exporter");
	expect_setting(ge, "elasticsearch_url", ST_STRING, NULL);
	assert_int_equal(ge->nenv, 5);
	assert_string_equal(kv(ge->env, ge->nenv, "LD_PRELOAD"), "@JEMALLOC@");
	assert_string_equal(
	    kv(ge->env, ge->nenv, "MALLOC_CONF"),
	    "narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0,background_thread:true,tcache:false");
	assert_string_equal(kv(ge->env, ge->nenv, "RUBY_GC_HEAP_INIT_SLOTS"), "80000");
	assert_string_equal(kv(ge->env, ge->nenv, "RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO"), "0.055");
	assert_string_equal(kv(ge->env, ge->nenv, "RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO"), "0.111");
	assert_string_equal(kv(ge->base_env, ge->nbase_env, "HOME"), "{{home}}");
	assert_string_equal(kv(ge->base_env, ge->nbase_env, "LANG"), "C.UTF-8");
	assert_non_null(kv(ge->base_env, ge->nbase_env, "PATH"));
	assert_int_equal(ge->ncommand, 4);
	assert_string_equal(ge->command[0], "{{command}}");
	assert_string_equal(ge->command[1], "web");
	assert_string_equal(ge->command[2], "-c");
	assert_string_equal(ge->command[3], "{{home}}/gitlab-exporter.yml");
	assert_int_equal(ge->ntemplates, 1);
	assert_string_equal(ge->templates[0].src, "gitlab-exporter.yml");
	assert_string_equal(ge->templates[0].dest, "{{home}}/gitlab-exporter.yml");
	assert_int_equal(ge->templates[0].mode, 0600);
	assert_true(ge->templates[0].service_owned);
	assert_string_equal(ge->check, "http:/metrics");

	const struct cat_service *ne = catalog_find(&c, "node_exporter");
	assert_non_null(ne);
	assert_string_equal(ne->name, "node-exporter");
	assert_true(ne->enable_default); /* Omnibus' single node runs the monitoring set */
	assert_false(ne->jemalloc);
	expect_setting(ne, "enable", ST_BOOL, "true");
	expect_setting(ne, "listen_address", ST_ADDRESS, "localhost:9100");
	expect_setting(ne, "flags", ST_FLAGS, NULL);
	const struct cat_setting *fl = cat_setting_find(ne, "flags");
	bool textfile = false;
	for (size_t i = 0; i < fl->ndefs; i++)
		textfile |= strcmp(fl->defs[i].name, "collector.textfile.directory") == 0 &&
		            strcmp(fl->defs[i].value, "{{home}}/textfile_collector") == 0;
	assert_true(textfile);
	for (size_t i = 0; i < ne->nenv; i++) /* a Go binary: no jemalloc, no Ruby GC */
		assert_true(strncmp(ne->env[i].name, "RUBY_GC_", 8) != 0 &&
		            strcmp(ne->env[i].name, "LD_PRELOAD") != 0);
	assert_string_equal(ne->command[0], "/usr/bin/prometheus-node-exporter");
	assert_string_equal(ne->command[1], "--web.listen-address={{listen_address}}");
	assert_string_equal(ne->command[2], "{{flags}}");
	assert_string_equal(ne->check, "http:/metrics");
	assert_null(catalog_find(&c, "gitlab_rails"));
	assert_null(cat_setting_find(ge, "nope"));
	catalog_free(&c);
	diags_free(&d);
}

/* PostgreSQL and Redis come before the exporter; steps, checks and accounts as shipped. */
static void test_shipped_payload(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	diags_init(&d);
	assert_int_equal(catalog_load(SRCDIR "/sv", &c, &d), 0);
	const struct cat_service *pg = catalog_find(&c, "postgresql");
	const struct cat_service *rd = catalog_find(&c, "redis");
	const struct cat_service *ge = catalog_find(&c, "gitlab-exporter");
	assert_non_null(pg);
	assert_non_null(rd);
	/* On by default, as in Omnibus; their data stays where a disable leaves it. */
	assert_true(pg->enable_default);
	assert_true(rd->enable_default);
	expect_setting(pg, "enable", ST_BOOL, "true");
	expect_setting(rd, "enable", ST_BOOL, "true");
	assert_true(cat_setting_find(pg, "data_dir")->data);
	assert_true(cat_setting_find(rd, "dir")->data);
	assert_false(cat_setting_find(pg, "home")->data);
	assert_int_equal(ge->nafter, 3);
	assert_string_equal(ge->after[0], "postgresql");
	assert_string_equal(ge->after[1], "patroni");
	assert_string_equal(ge->after[2], "redis");
	expect_setting(pg, "username", ST_STRING, "gitlab-psql");
	expect_setting(rd, "username", ST_STRING, "gitlab-redis");
	assert_null(cat_setting_find(ge, "username")); /* the exporter runs as user['username'] */
	expect_setting(pg, "data_dir", ST_PATH, "{{home}}/data");
	assert_int_equal(pg->home_mode, 0755);
	assert_int_equal(ge->home_mode, 0750);
	assert_string_equal(pg->stop_signal, "INT");
	assert_null(ge->stop_signal);
	assert_int_equal(pg->nsetup, 3);
	assert_string_equal(pg->setup[0].name, "initdb");
	assert_int_equal(pg->setup[0].when, STEP_BEFORE_START);
	assert_string_equal(pg->setup[0].creates, "{{data_dir}}");
	assert_true(pg->setup[0].staged); /* built beside data_dir, renamed once initdb exited 0 */
	assert_non_null(pg->setup[0].verify);
	assert_int_equal(pg->setup[1].when, STEP_AFTER_READY);
	assert_null(pg->setup[1].creates);
	assert_string_equal(pg->setup[2].name, "reachable"); /* ready: gitlab's database answers */
	assert_null(pg->check);
	assert_true(pg->ncheck_command > 0);
	assert_string_equal(rd->check, "unix:{{unixsocket}}");
	assert_string_equal(rd->check_send,
	                    "*2\r\n$4\r\nAUTH\r\n{{resp password}}*1\r\n$4\r\nPING\r\n");
	assert_string_equal(rd->check_expect, "+PONG");

	size_t order[14], pos[14];
	assert_true(c.n <= 14);
	catalog_order(&c, order);
	for (size_t i = 0; i < c.n; i++)
		pos[order[i]] = i;
	assert_true(pos[pg - c.v] < pos[ge - c.v]);
	assert_true(pos[rd - c.v] < pos[ge - c.v]);
	catalog_free(&c);
	diags_free(&d);
}

/* ---- malformed definitions ------------------------------------------------ */

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strlcpy(tmpdir, "/tmp/test_catalog.XXXXXX", sizeof tmpdir);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof path, "%s/x.conf", tmpdir);
	unlink(path);
	snprintf(path, sizeof path, "%s/y.conf", tmpdir);
	unlink(path);
	return rmdir(tmpdir);
}

static void write_file(const char *name, const char *text)
{
	char path[128];
	tl_path(path, sizeof path, tmpdir, name);
	tl_put(path, text, 0644);
}

/* A valid service; BAD_* variants replace one line of it. */
#define HEAD "name = \"x\";\nconfig_name = \"x_svc\";\n" /* lines 1-2 */
#define SETTINGS                                                                                   \
	"settings = (\n"                                                                           \
	"  { name = \"enable\"; type = \"bool\"; default = true; },\n"                             \
	"  { name = \"home\"; type = \"path\"; default = \"{{data_dir}}/x\"; },\n"                 \
	"  { name = \"log_directory\"; type = \"path\"; default = \"{{log_dir}}/x\"; },\n"         \
	"  { name = \"env_directory\"; type = \"path\"; default = \"/e\"; }\n"                     \
	");\n"                                   /* lines 3-8 */
#define COMMAND "command = [ \"/bin/true\" ];\n" /* line 9 */

/* Load the directory; expect failure with a diagnostic at file:line mentioning needle. */
static void expect_error(const char *text, int line, const char *needle)
{
	struct catalog c;
	struct diags d;
	char path[128];
	write_file("x.conf", text);
	snprintf(path, sizeof path, "%s/x.conf", tmpdir);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), -1);
	bool found = false;
	for (size_t i = 0; i < d.n; i++) {
		if (d.v[i].sev == DIAG_ERR && d.v[i].file && strcmp(d.v[i].file, path) == 0 &&
		    d.v[i].line == line && strstr(d.v[i].msg, needle))
			found = true;
	}
	if (!found) {
		diags_print(&d, stderr);
		fail_msg("no error at %s:%d mentioning '%s'", path, line, needle);
	}
	assert_int_equal(c.n, 0);
	catalog_free(&c);
	diags_free(&d);
}

static void test_valid_minimal(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	write_file("x.conf", HEAD SETTINGS COMMAND);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), 0);
	assert_int_equal(c.n, 1);
	assert_false(c.v[0].enable_default); /* optional keys default to false / none */
	assert_null(c.v[0].check);
	assert_int_equal(c.v[0].command_line, 9);
	catalog_free(&c);
	diags_free(&d);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_error(HEAD SETTINGS COMMAND "colour = \"blue\";\n", 10, "unknown key 'colour'");
	/* the known keys listed come from the loaders' table, all of them */
	expect_error(HEAD SETTINGS COMMAND "colour = \"blue\";\n", 10,
	             "(one of: name, config_name, description,");
	expect_error(HEAD SETTINGS COMMAND "colour = \"blue\";\n", 10,
	             "roles, roles_exclusive, off_switch, off_with)");
	/* the list of keys comes from the loader table: first to last, none left out */
	expect_error(HEAD SETTINGS COMMAND "colour = 1;\n", 10, "(one of: name, config_name, ");
	expect_error(HEAD SETTINGS COMMAND "colour = 1;\n", 10, ", omnibus_keys, ");
	expect_error(HEAD SETTINGS COMMAND "colour = 1;\n", 10,
	             ", roles, roles_exclusive, off_switch, off_with)");
	expect_error(HEAD SETTINGS COMMAND "jemalloc = \"yes\";\n", 10, "must be true or false");
	expect_error(HEAD SETTINGS COMMAND "enable_default = 1;\n", 10, "must be true or false");
	expect_error(HEAD SETTINGS COMMAND "description = 5;\n", 10, "must be a string");
	expect_error("name = 42;\n"
	             "config_name = \"x\";\n" SETTINGS COMMAND,
	             1, "must be a string");
	expect_error("name = \"Bad/Name\";\n"
	             "config_name = \"x\";\n" SETTINGS COMMAND,
	             1, "service name");
	expect_error("name = \"x\";\n"
	             "config_name = \"x-y\";\n" SETTINGS COMMAND,
	             2, "config_name");
	/* syntax error: libconfig's message at its line */
	expect_error(HEAD SETTINGS COMMAND "check = \"tcp\"\nbogus = ;\n", 11, "syntax error");
	/* settings entries */
	expect_error(HEAD
	             "settings = (\n  { name = \"enable\"; type = \"boolean\"; }\n);\n" COMMAND,
	             4, "unknown setting type");
	expect_error(
	    HEAD
	    "settings = (\n  { name = \"enable\"; type = \"bool\"; colour = 1; }\n);\n" COMMAND,
	    4,
	    "unknown key 'colour' in a setting (name, type, default, secret, host, data, refuse, "
	    "refuse_because, values, required_by, gitlab_key, gitlab_rails)");
	expect_error(
	    HEAD
	    "settings = (\n  { name = \"enable\"; type = \"bool\"; data = true; }\n);\n" COMMAND,
	    4, "data = true is for path settings only ('enable')");
	expect_error(HEAD
	             "settings = (\n  { name = \"enable\"; type = \"port\"; default = 70000; }\n"
	             ");\n" COMMAND,
	             4, "must be a port");
	expect_error(HEAD
	             "settings = (\n  { name = \"home\"; type = \"path\"; default = \"rel\"; }\n"
	             ");\n" COMMAND,
	             4, "absolute path");
	expect_error(HEAD "settings = (\n  { name = \"Home\"; type = \"path\"; }\n);\n" COMMAND, 4,
	             "setting name");
	expect_error(HEAD "settings = \"none\";\n" COMMAND, 3, "settings must be a list");
	/* a required setting is missing: reported at the service name */
	expect_error(HEAD
	             "settings = (\n  { name = \"enable\"; type = \"bool\"; default = true; }\n"
	             ");\n" COMMAND,
	             1, "must declare setting 'home'");
	/* env, command, templates, check */
	expect_error(HEAD SETTINGS COMMAND "env = { my-var = \"x\"; };\n", 10,
	             "not a valid environment variable name");
	expect_error(HEAD SETTINGS COMMAND "env = { A = [ 1 ]; };\n", 10, "not array");
	expect_error(HEAD SETTINGS "command = [ ];\n", 9, "non-empty array");
	expect_error(HEAD SETTINGS "command = \"/bin/true\";\n", 9, "non-empty array");
	expect_error(HEAD SETTINGS "command = [ \"{{home}\" ];\n", 9, "malformed placeholder");
	expect_error(HEAD SETTINGS COMMAND
	             "templates = ( { src = \"a\"; dest = \"/b\"; mode = \"0999\"; } );\n",
	             10, "octal");
	expect_error(HEAD SETTINGS COMMAND
	             "templates = ( { src = \"a\"; dest = \"/b\"; owner = \"nobody\"; } );\n",
	             10, "owner");
	expect_error(HEAD SETTINGS COMMAND "templates = ( { src = \"../a\"; dest = \"/b\"; } );\n",
	             10, "file name under templates");
	expect_error(HEAD SETTINGS COMMAND "check = \"udp\";\n", 10, "check must be");
	/* whole-file rules */
	expect_error(HEAD SETTINGS, 0, "needs name, config_name and command");
}

/*
 * libconfig parses the text as a string; a NUL byte (where a string would end)
 * still goes through its file reader, and a directory is an I/O error naming why.
 */
static void test_read_edges(void **state)
{
	(void)state;
	static const char nul[] = HEAD "\0" SETTINGS COMMAND;
	char path[128];
	snprintf(path, sizeof path, "%s/x.conf", tmpdir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(nul, 1, sizeof nul - 1, fp), sizeof nul - 1);
	assert_int_equal(fclose(fp), 0);
	struct catalog c;
	struct diags d;
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_int_equal(d.v[0].line, 3); /* not cut at the NUL: the file reader saw it */
	assert_non_null(strstr(d.v[0].msg, "syntax error"));
	catalog_free(&c);
	diags_free(&d);
	unlink(path);

	assert_int_equal(mkdir(path, 0755), 0);
	write_file("y.conf", "name = \"y\";\nconfig_name = \"y_svc\";\n" SETTINGS COMMAND);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_string_equal(d.v[0].file, path);
	assert_string_equal(d.v[0].msg, "cannot read: Is a directory");
	assert_int_equal(c.n, 1); /* the readable one still loads */
	catalog_free(&c);
	diags_free(&d);
	rmdir(path);
	snprintf(path, sizeof path, "%s/y.conf", tmpdir);
	unlink(path);
}

#define SVC(n, c) "name = \"" n "\";\nconfig_name = \"" c "\";\n" SETTINGS COMMAND

/* Every clashing pair once (two keys alike are one clash), in catalog order, as pairwise. */
static void test_clashes(void **state)
{
	(void)state;
	static const char *const files[][3] = {
	    {"p.conf", "p", "q"}, {"q.conf", "q", "r"}, {"r.conf", "s", "r"},
	    {"t.conf", "t", "p"}, {"v.conf", "v", "w"}, {"w.conf", "w", "v"},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text, SVC("%s", "%s"), files[i][1], files[i][2]);
		write_file(files[i][0], text);
	}
	static const char *const want[][2] = {
	    {"service q (r) clashes with p (q)", "p.conf"},
	    {"service s (r) clashes with q (r)", "q.conf"},
	    {"service t (p) clashes with p (q)", "p.conf"},
	    {"service w (v) clashes with v (w)", "v.conf"},
	};
	struct catalog c;
	struct diags d;
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), -1);
	assert_int_equal(d.nerr, 4);
	for (size_t i = 0; i < 4; i++) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s in %s/%s", want[i][0], tmpdir, want[i][1]);
		assert_string_equal(d.v[i].msg, msg);
	}
	catalog_free(&c);
	diags_free(&d);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/%s", tmpdir, files[i][0]);
		unlink(path);
	}
}

/* More malformed entries, each reported at its line: types of every kind named, flags
 * defaults, setting groups, env groups, templates, setup steps, after and the scalar keys. */
static void test_malformed_more(void **state)
{
	(void)state;
#define S1(x) HEAD "settings = (\n  " x "\n);\n" COMMAND /* the entry on line 4 */
	expect_error(S1("{ name = \"enable\"; type = \"bool\"; default = \"maybe\"; }"), 4,
	             "true or false");
	expect_error(S1("{ name = \"n\"; type = \"int\"; default = \"12x\"; }"), 4, "an integer");
	expect_error(S1("{ name = \"a\"; type = \"address\"; default = \"nohost\"; }"), 4,
	             "host:port");
	expect_error(S1("{ name = \"f\"; type = \"flags\"; default = \"x=1\"; }"), 4,
	             "must be an array of \"key=value\" strings");
	expect_error(S1("{ name = \"f\"; type = \"flags\"; default = [ \"=novalue\" ]; }"), 4,
	             "must be \"key=value\"");
	expect_error(S1("{ name = \"f\"; type = \"flags\"; default = [ 1 ]; }"), 4,
	             "must be a string");
	expect_error(S1("{ name = \"f\"; type = \"flags\"; default = [ \"a={{x}\" ]; }"), 4,
	             "malformed placeholder");
	/* libconfig places a bare scalar of a list on the line after it */
	expect_error(S1("\"enable\""), 5, "each entry of settings must be a group");
	expect_error(S1("{ name = 1; type = \"bool\"; }"), 4, "must be a string");
	expect_error(S1("{ name = \"e\"; type = 1; }"), 4, "must be a string");
	expect_error(S1("{ name = \"e\"; type = \"bool\"; secret = 1; }"), 4,
	             "secret must be true or false");
	expect_error(S1("{ type = \"bool\"; }"), 4, "a setting needs a name and a type");
	expect_error(S1("{ name = \"e\"; type = \"env\"; default = \"A=1\"; }"), 4,
	             "takes its defaults from the top-level env group");
	expect_error(S1("{ name = \"e\"; type = \"string\"; default = { a = 1; }; }"), 4, "group");
	expect_error(S1("{ name = \"e\"; type = \"string\"; default = [ 1 ]; }"), 4, "array");
	expect_error(S1("{ name = \"e\"; type = \"string\"; default = ( 1 ); }"), 4, "list");
	expect_error(HEAD "settings = (\n  { name = \"enable\"; type = \"bool\"; },\n"
	                  "  { name = \"enable\"; type = \"bool\"; }\n);\n" COMMAND,
	             5, "setting 'enable' is declared twice");
#undef S1
	expect_error(HEAD SETTINGS COMMAND "env = \"A=1\";\n", 10, "must be a group");
	expect_error(HEAD SETTINGS COMMAND "env = { A = \"{{x}\"; };\n", 10,
	             "malformed placeholder");
	expect_error(HEAD SETTINGS COMMAND "templates = ( \"a\" );\n", 10,
	             "each template must be a group");
	expect_error(HEAD SETTINGS COMMAND
	             "templates = ( { src = \"a\"; dest = \"/b\"; size = \"1\"; } );\n",
	             10, "unknown key 'size' in a template");
	expect_error(HEAD SETTINGS COMMAND "templates = ( { src = 1; dest = \"/b\"; } );\n", 10,
	             "must be a string");
	expect_error(HEAD SETTINGS COMMAND "templates = ( { src = \"a\"; dest = \"/{{b}\"; } );\n",
	             10, "malformed placeholder");
	expect_error(HEAD SETTINGS COMMAND "templates = ( { src = \"a\"; } );\n", 10,
	             "a template needs dest");
	expect_error(HEAD SETTINGS COMMAND "templates = { src = \"a\"; };\n", 10,
	             "templates must be a list");
	expect_error(HEAD SETTINGS COMMAND "check = 1;\n", 10, "must be a string");
	expect_error(HEAD SETTINGS COMMAND "check_command = [ 1 ];\n", 10, "must be a string");
	expect_error(HEAD SETTINGS COMMAND "after = [ 1 ];\n", 10, "must be a string");
	expect_error(HEAD SETTINGS COMMAND "setup = ( { name = 1; } );\n", 10, "must be a string");
	expect_error(HEAD SETTINGS COMMAND
	             "setup = ( { name = \"Bad Name\"; when = \"before_start\"; "
	             "command = [ \"/bin/true\" ]; } );\n",
	             10, "must match [a-z0-9][a-z0-9._-]*");
	expect_error(HEAD SETTINGS COMMAND
	             "setup = ( { name = \"s\"; when = \"after_ready\"; creates = \"/{{x}\"; "
	             "command = [ \"/bin/true\" ]; } );\n",
	             10, "malformed placeholder");
	expect_error(HEAD SETTINGS COMMAND "setup = ( \"s\" );\n", 10,
	             "each setup step must be a group");
	expect_error(HEAD SETTINGS COMMAND "setup = { name = \"s\"; };\n", 10,
	             "setup must be a list");
	expect_error(HEAD SETTINGS COMMAND "stop_signal = 2;\n", 10, "must be a string");
	expect_error(HEAD SETTINGS COMMAND "home_mode = 750;\n", 10, "must be a string");
	expect_error("name = \"x\";\nconfig_name = 7;\n" SETTINGS COMMAND, 2, "must be a string");
}

/* Numbers are defaults too: written back as text, a float with all its digits. */
static void test_scalar_defaults(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	write_file("x.conf",
	           HEAD "settings = (\n"
	                "  { name = \"enable\"; type = \"bool\"; default = false; },\n"
	                "  { name = \"home\"; type = \"path\"; default = \"/h\"; },\n"
	                "  { name = \"log_directory\"; type = \"path\"; default = \"/l\"; },\n"
	                "  { name = \"env_directory\"; type = \"path\"; default = \"/e\"; },\n"
	                "  { name = \"ratio\"; type = \"string\"; default = 0.25; },\n"
	                "  { name = \"big\"; type = \"int\"; default = 10000000000L; }\n"
	                ");\n" COMMAND);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), 0);
	expect_setting(&c.v[0], "enable", ST_BOOL, "false");
	expect_setting(&c.v[0], "ratio", ST_STRING, "0.25");
	expect_setting(&c.v[0], "big", ST_INT, "10000000000");
	catalog_free(&c);
	diags_free(&d);
}

static void test_duplicate_and_empty(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	write_file("x.conf", HEAD SETTINGS COMMAND);
	write_file("y.conf", HEAD SETTINGS COMMAND);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_non_null(strstr(d.v[0].msg, "clashes"));
	catalog_free(&c);
	diags_free(&d);

	char path[128];
	snprintf(path, sizeof path, "%s/x.conf", tmpdir);
	unlink(path);
	snprintf(path, sizeof path, "%s/y.conf", tmpdir);
	unlink(path);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "no service definitions"));
	catalog_free(&c);
	diags_free(&d);

	diags_init(&d);
	assert_int_equal(catalog_load("/nonexistent/sv", &c, &d), -1);
	assert_string_equal(d.v[0].file, "/nonexistent/sv");
	catalog_free(&c);
	diags_free(&d);
}

/* Load two services x and y; expect an error at x.conf:line mentioning needle. */
static void expect_pair_error(const char *x, const char *y, int line, const char *needle)
{
	struct catalog c;
	struct diags d;
	char path[128];
	write_file("x.conf", x);
	write_file("y.conf", y);
	snprintf(path, sizeof path, "%s/x.conf", tmpdir);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), -1);
	bool found = false;
	for (size_t i = 0; i < d.n; i++)
		found |= d.v[i].sev == DIAG_ERR && d.v[i].file && strcmp(d.v[i].file, path) == 0 &&
		         d.v[i].line == line && strstr(d.v[i].msg, needle) != NULL;
	if (!found) {
		diags_print(&d, stderr);
		fail_msg("no error at %s:%d mentioning '%s'", path, line, needle);
	}
	catalog_free(&c);
	diags_free(&d);
}

#define HEAD_Y "name = \"y\";\nconfig_name = \"y_svc\";\n"

static void test_after(void **state)
{
	(void)state;
	const char *y = HEAD_Y SETTINGS COMMAND;
	expect_pair_error(HEAD SETTINGS COMMAND "after = [ \"nosuch\" ];\n", y, 10,
	                  "unknown service 'nosuch'");
	expect_pair_error(HEAD SETTINGS COMMAND "after = [ \"x\" ];\n", y, 10,
	                  "cannot depend on itself");
	expect_pair_error(HEAD SETTINGS COMMAND "after = \"y\";\n", y, 10,
	                  "array of service names");
	expect_pair_error(HEAD SETTINGS COMMAND "after = [ \"Y/\" ];\n", y, 10,
	                  "not a service name");
	expect_pair_error(HEAD SETTINGS COMMAND "after = [ \"y\" ];\n",
	                  HEAD_Y SETTINGS COMMAND "after = [ \"x_svc\" ];\n", 10,
	                  "dependency cycle x -> y -> x");
	/* off_with names another service, one that is not itself off with a third */
	expect_pair_error(HEAD SETTINGS COMMAND "off_with = \"nosuch\";\n", y, 10,
	                  "off_with: 'nosuch' is not another catalog service");
	expect_pair_error(HEAD SETTINGS COMMAND "off_with = \"x\";\n", y, 10,
	                  "off_with: 'x' is not another");
	expect_pair_error(HEAD SETTINGS COMMAND "off_with = \"y\";\n",
	                  HEAD_Y SETTINGS COMMAND "off_with = \"x\";\n", 10,
	                  "off_with: 'y' is not another");

	/* y after x: x comes first whatever the names; config names count too. */
	struct catalog c;
	struct diags d;
	size_t order[2];
	write_file("x.conf", HEAD SETTINGS COMMAND "after = [ \"y_svc\" ];\n");
	write_file("y.conf", HEAD_Y SETTINGS COMMAND);
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), 0);
	catalog_order(&c, order);
	assert_string_equal(c.v[order[0]].name, "y");
	assert_string_equal(c.v[order[1]].name, "x");
	catalog_free(&c);
	diags_free(&d);
}

#define STEP(body) HEAD SETTINGS COMMAND "setup = (\n  { " body " }\n);\n" /* step: line 11 */

static void test_setup_steps(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	write_file("x.conf",
	           STEP("name = \"init\"; when = \"before_start\"; creates = \"{{home}}/v\"; "
	                "command = [ \"/bin/true\", \"{{home}}\" ];"));
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), 0);
	assert_int_equal(c.v[0].nsetup, 1);
	assert_int_equal(c.v[0].setup[0].line, 11);
	assert_int_equal(c.v[0].setup[0].argc, 2);
	assert_string_equal(c.v[0].setup[0].argv[1], "{{home}}");
	assert_int_equal(c.v[0].setup[0].timeout, STEP_TIMEOUT_DEFAULT);
	assert_false(c.v[0].setup[0].staged);
	catalog_free(&c);
	diags_free(&d);

	expect_error(STEP("name = \"i\"; when = \"before_start\"; creates = \"/x\"; timeout = 0; "
	                  "command = [ \"/bin/true\" ];"),
	             11, "number of seconds");
	expect_error(STEP("name = \"i\"; when = \"before_start\"; creates = \"/x\"; staged = true; "
	                  "command = [ \"/bin/true\" ];"),
	             11, "never names {{staging_dir}}");
	expect_error(STEP("name = \"i\"; when = \"before_start\"; creates = \"/x\"; "
	                  "command = [ \"/bin/true\", \"{{staging_dir}}\" ];"),
	             11, "only for a staged step");
	expect_error(STEP("name = \"i\"; when = \"after_ready\"; verify = [ \"/bin/true\" ]; "
	                  "command = [ \"/bin/true\" ];"),
	             11, "only for before_start");

	expect_error(STEP("name = \"i\"; when = \"before_start\"; command = [ \"/bin/true\" ];"),
	             11, "needs 'creates'");
	expect_error(STEP("name = \"i\"; when = \"after_ready\"; creates = \"/x\"; "
	                  "command = [ \"/bin/true\" ];"),
	             11, "only for before_start");
	expect_error(STEP("name = \"i\"; when = \"sometimes\"; command = [ \"/bin/true\" ];"), 11,
	             "\"before_start\" or \"after_ready\"");
	expect_error(STEP("name = \"i\"; when = \"after_ready\";"), 11,
	             "needs name, when and command");
	expect_error(STEP("name = \"i\"; when = \"after_ready\"; command = [ ]; "), 11,
	             "non-empty array");
	expect_error(STEP("name = \"i\"; when = \"after_ready\"; shell = true; "
	                  "command = [ \"/bin/true\" ];"),
	             11, "unknown key 'shell'");
	expect_error(STEP("name = \"i\"; when = \"after_ready\"; command = [ \"{{a b}}\" ];"), 11,
	             "malformed placeholder");
	expect_error(
	    HEAD SETTINGS COMMAND
	    "setup = (\n { name = \"a\"; when = \"after_ready\"; command = [ \"/x\" ]; },\n"
	    " { name = \"a\"; when = \"after_ready\"; command = [ \"/y\" ]; }\n);\n",
	    12, "declared twice");
}

static void test_checks_and_accounts(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	write_file("x.conf", HEAD SETTINGS COMMAND
	           "check = \"unix:{{home}}/s.sock\";\ncheck_send = \"PING\\r\\n\";\n"
	           "check_expect = \"+PONG\";\ncheck_command = [ \"/bin/true\", "
	           "\"{{y_svc.home}}\" ];\n"
	           "home_mode = \"0755\";\nstop_signal = \"INT\";\n");
	diags_init(&d);
	assert_int_equal(catalog_load(tmpdir, &c, &d), 0);
	assert_string_equal(c.v[0].check, "unix:{{home}}/s.sock");
	assert_string_equal(c.v[0].check_send, "PING\r\n");
	assert_int_equal(c.v[0].ncheck_command, 2);
	assert_int_equal(c.v[0].check_line, 10);
	catalog_free(&c);
	diags_free(&d);

	expect_error(HEAD SETTINGS COMMAND "check = \"ftp:/x\";\n", 10, "check must be");
	expect_error(HEAD SETTINGS COMMAND "check = \"http:/metrics\";\ncheck_send = \"x\";\n", 10,
	             "need check = \"tcp\"");
	expect_error(HEAD SETTINGS COMMAND "check_expect = \"\";\n", 10, "must not be empty");
	expect_error(HEAD SETTINGS COMMAND "check_command = \"/bin/true\";\n", 10,
	             "non-empty array");
	expect_error(HEAD SETTINGS COMMAND "home_mode = \"0777\";\n", 10, "home_mode must be");
	expect_error(HEAD SETTINGS COMMAND "stop_signal = \"KILL\";\n", 10, "stop_signal must be");
	expect_error(HEAD SETTINGS COMMAND "check = \"unix:{{a.b.c}}\";\n", 10,
	             "malformed placeholder");
	/* A service's own account must be a name useradd takes. */
	expect_error(HEAD "settings = (\n"
	                  "  { name = \"enable\"; type = \"bool\"; default = true; },\n"
	                  "  { name = \"home\"; type = \"path\"; default = \"/h\"; },\n"
	                  "  { name = \"log_directory\"; type = \"path\"; default = \"/l\"; },\n"
	                  "  { name = \"env_directory\"; type = \"path\"; default = \"/e\"; },\n"
	                  "  { name = \"username\"; type = \"string\"; default = \"-rf\"; }\n"
	                  ");\n" COMMAND,
	             8, "a user or group name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shipped_catalog),
	    cmocka_unit_test_setup_teardown(test_valid_minimal, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed_more, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_scalar_defaults, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_duplicate_and_empty, setup, teardown),
	    cmocka_unit_test(test_shipped_payload),
	    cmocka_unit_test_setup_teardown(test_after, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_clashes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_edges, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_setup_steps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_checks_and_accounts, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
