/* attrs: catalog defaults merged with gitlab.rb, env computation, and located errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/attrs.h"
#include "build_config.h"

static struct catalog cat;
static struct ctl ctl;

static int setup(void **state)
{
	(void)state;
	struct diags d;
	diags_init(&d);
	if (catalog_load(SRCDIR "/sv", &cat, &d) == -1) {
		diags_print(&d, stderr);
		return -1;
	}
	diags_free(&d);
	return ctl_init(&ctl, NULL, "/nonexistent/gitlab.rb");
}

static int teardown(void **state)
{
	(void)state;
	catalog_free(&cat);
	return 0;
}

/* Parse text as gitlab.rb and build; returns attrs_build's result. */
static int build_with(const struct ctl *c, const char *text, struct attrs *a, struct diags *d)
{
	struct rb_file f;
	memset(&f, 0, sizeof f);
	diags_init(d);
	if (rb_parse("gitlab.rb", text, strlen(text), &f, d) == -1) {
		diags_print(d, stderr);
		fail_msg("parse error in test input");
	}
	int rc = attrs_build(c, &cat, &f, a, d);
	rb_free(&f);
	return rc;
}

static int build(const char *text, struct attrs *a, struct diags *d)
{
	return build_with(&ctl, text, a, d);
}

/* The one diagnostic whose message contains needle; fails when absent. */
static const struct diag *find(const struct diags *d, enum diag_sev sev, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].sev == sev && strstr(d->v[i].msg, needle))
			return &d->v[i];
	diags_print(d, stderr);
	fail_msg("no %s mentioning '%s'", sev == DIAG_ERR ? "error" : "warning", needle);
	return NULL;
}

static void expect_at(const char *text, const char *needle, int line, int col)
{
	struct attrs a;
	struct diags d;
	assert_int_equal(build(text, &a, &d), -1);
	const struct diag *g = find(&d, DIAG_ERR, needle);
	assert_string_equal(g->file, "gitlab.rb");
	assert_int_equal(g->line, line);
	assert_int_equal(g->col, col);
	attrs_free(&a);
	diags_free(&d);
}

/* The warning whose message is exactly msg, at line:col. */
static void warn_at(const struct diags *d, const char *msg, int line, int col)
{
	const struct diag *g = find(d, DIAG_WARN, msg);
	assert_string_equal(g->msg, msg);
	assert_int_equal(g->line, line);
	assert_int_equal(g->col, col);
}

static const struct svc *svc(const struct attrs *a, const char *name)
{
	const struct svc *s = attrs_svc(a, name);
	assert_non_null(s);
	return s;
}

static bool has_arg(const struct svc *s, const char *arg)
{
	for (size_t i = 0; i < s->argc; i++)
		if (strcmp(s->argv[i], arg) == 0)
			return true;
	return false;
}

static void test_defaults(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("", &a, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(a.nsvcs, 14);
	const struct svc *s = svc(&a, "gitlab-exporter");
	assert_ptr_equal(s, svc(&a, "gitlab_exporter"));
	assert_true(s->enabled);
	assert_string_equal(s->home, "/var/opt/gitlab/gitlab-exporter");
	assert_string_equal(s->log_dir, "/var/log/gitlab/gitlab-exporter");
	assert_string_equal(s->env_dir, "/opt/gitlab/etc/gitlab-exporter/env");
	assert_string_equal(s->listen_host, "localhost");
	assert_int_equal(s->listen_port, 9168);
	assert_int_equal(s->env.n, 5);
	assert_string_equal(kv_get(&s->env, "LD_PRELOAD"), GITLAB_CTL_JEMALLOC);
	assert_string_equal(
	    kv_get(&s->env, "MALLOC_CONF"),
	    "narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0,background_thread:true,tcache:false");
	assert_string_equal(kv_get(&s->env, "RUBY_GC_HEAP_INIT_SLOTS"), "80000");
	assert_string_equal(kv_get(&s->env, "RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO"), "0.055");
	assert_string_equal(kv_get(&s->env, "RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO"), "0.111");
	for (size_t i = 1; i < s->env.n; i++) /* sorted */
		assert_true(strcmp(s->env.v[i - 1].name, s->env.v[i].name) < 0);
	assert_string_equal(kv_get(&s->base_env, "HOME"), "/var/opt/gitlab/gitlab-exporter");
	assert_string_equal(kv_get(&s->base_env, "LANG"), "C.UTF-8");
	assert_int_equal(s->argc, 4);
	assert_string_equal(s->argv[0], "/opt/gitlab/embedded/bin/gitlab-exporter");
	assert_string_equal(s->argv[1], "web");
	assert_string_equal(s->argv[2], "-c");
	assert_string_equal(s->argv[3], "/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml");
	assert_null(s->argv[4]);
	assert_string_equal(svc_var(s, "service"), "gitlab-exporter");
	assert_string_equal(svc_var(s, "listen_port"), "9168");
	assert_string_equal(svc_var(s, "server_name"), "webrick");
	assert_string_equal(svc_var(s, "elasticsearch_url"), ""); /* nil */
	assert_string_equal(svc_var(s, "sv_dir"), "/opt/gitlab/sv/gitlab-exporter");
	assert_int_equal(svc_int(s, "memory_budget", 0), 96);
	assert_int_equal(svc_int(s, "server_name", 7), 7); /* not a number */
	assert_int_equal(svc_int(s, "nonesuch", 7), 7);
	assert_string_equal(svc_var(s, "gitlab_ctl"), ctl.self);
	assert_string_equal(svc_var(s, "jemalloc"), GITLAB_CTL_JEMALLOC);
	char *dest = svc_expand(s, "{{home}}/gitlab-exporter.yml");
	assert_string_equal(dest, "/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml");
	free(dest);
	assert_null(svc_expand(s, "{{nope}}"));

	const struct svc *n = svc(&a, "node-exporter");
	assert_true(n->enabled); /* Omnibus' defaults: see test_omnibus_defaults */
	/* no jemalloc, no Ruby GC: the Go runtime's settings (bench/stack) */
	assert_int_equal(n->env.n, 2);
	assert_string_equal(kv_get(&n->env, "GOGC"), "75");
	assert_string_equal(kv_get(&n->env, "GOMAXPROCS"), "1");
	assert_null(kv_get(&n->env, "GOMEMLIMIT"));
	assert_string_equal(n->listen_host, "localhost");
	assert_int_equal(n->listen_port, 9100);
	assert_string_equal(n->argv[0], "/usr/bin/prometheus-node-exporter");
	assert_string_equal(n->argv[1], "--web.listen-address=localhost:9100");
	assert_true(has_arg(n, "--collector.textfile.directory="
	                       "/var/opt/gitlab/node-exporter/textfile_collector"));
	/* Its runit collector watches our services. */
	assert_true(has_arg(n, "--collector.runit.servicedir=/opt/gitlab/service"));
	if (geteuid() == 0) /* not root: every service runs as the invoking user */
		assert_string_equal(n->user, "gitlab-prometheus");
	attrs_free(&a);
	diags_free(&d);
}

static void test_root_prefix(void **state)
{
	(void)state;
	struct ctl rc;
	struct attrs a;
	struct diags d;
	assert_int_equal(ctl_init(&rc, "/tmp", "/nonexistent/gitlab.rb"), 0);
	assert_int_equal(build_with(&rc, "gitlab_exporter['log_directory'] = '/srv/log'\n", &a, &d),
	                 0);
	const struct svc *s = svc(&a, "gitlab-exporter");
	assert_string_equal(s->home, "/tmp/var/opt/gitlab/gitlab-exporter"); /* default: prefixed */
	assert_string_equal(s->log_dir, "/tmp/srv/log"); /* user's: kept inside the root */
	assert_string_equal(s->argv[0], "/tmp/opt/gitlab/embedded/bin/gitlab-exporter");
	assert_string_equal(svc_var(s, "root"), "/tmp");
	assert_string_equal(kv_get(&s->env, "LD_PRELOAD"), GITLAB_CTL_JEMALLOC); /* not prefixed */
	attrs_free(&a);
	diags_free(&d);
}

static void test_settings(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("gitlab_exporter['listen_port'] = '9999'\n"
	                       "gitlab_exporter['listen_address'] = '0.0.0.0'\n"
	                       "gitlab_exporter['enable'] = false\n"
	                       "gitlab_exporter['enable'] = true\n" /* later wins */
	                       "gitlab_exporter['home'] = '/srv/ge'\n"
	                       "gitlab_exporter['command'] = '/usr/local/bin/gitlab-exporter'\n"
	                       "gitlab_exporter['elasticsearch_url'] = 'http://es:9200'\n"
	                       "gitlab_exporter['server_name'] = :puma\n"
	                       "node_exporter['enable'] = true\n"
	                       "node_exporter['listen_address'] = '[::1]:9101'\n",
	                       &a, &d),
	                 0);
	const struct svc *s = svc(&a, "gitlab-exporter");
	assert_true(s->enabled);
	assert_int_equal(s->listen_port, 9999);
	assert_string_equal(s->listen_host, "0.0.0.0");
	assert_string_equal(s->home, "/srv/ge");
	assert_string_equal(s->argv[0], "/usr/local/bin/gitlab-exporter");
	assert_string_equal(s->argv[3], "/srv/ge/gitlab-exporter.yml"); /* follows home */
	assert_string_equal(kv_get(&s->base_env, "HOME"), "/srv/ge");
	assert_string_equal(svc_var(s, "elasticsearch_url"), "http://es:9200");
	assert_string_equal(svc_var(s, "server_name"), "puma");
	/* show-config's origin comments: what gitlab.rb set, and where */
	assert_string_equal(kv_get(&s->origin, "listen_port"), "gitlab.rb:1");
	assert_string_equal(kv_get(&s->origin, "enable"), "gitlab.rb:4");
	assert_null(kv_get(&s->origin, "log_directory"));
	const struct svc *n = svc(&a, "node-exporter");
	assert_true(n->enabled);
	assert_string_equal(n->listen_host, "::1");
	assert_int_equal(n->listen_port, 9101);
	assert_string_equal(n->argv[1], "--web.listen-address=[::1]:9101");
	attrs_free(&a);

	/* nil restores the default */
	assert_int_equal(build("gitlab_exporter['listen_port'] = 1234\n"
	                       "gitlab_exporter['listen_port'] = nil\n",
	                       &a, &d),
	                 0);
	assert_int_equal(svc(&a, "gitlab-exporter")->listen_port, 9168);
	attrs_free(&a);
	diags_free(&d);
}

static void test_ports(void **state)
{
	(void)state;
	static const char *const good[] = {"1", "65535", "'9168'", "'1'"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		char text[128];
		struct attrs a;
		struct diags d;
		snprintf(text, sizeof text, "gitlab_exporter['listen_port'] = %s\n", good[i]);
		assert_int_equal(build(text, &a, &d), 0);
		attrs_free(&a);
		diags_free(&d);
	}
	expect_at("gitlab_exporter['listen_port'] = [9168]\n",
	          "gitlab_exporter['listen_port'] must be an integer or numeric string, not array",
	          1, 34);
	expect_at("gitlab_exporter['listen_port'] = 0\n", "between 1 and 65535, not 0", 1, 34);
	expect_at("gitlab_exporter['listen_port'] = 65536\n", "between 1 and 65535", 1, 34);
	expect_at("\n  gitlab_exporter['listen_port'] = '91x'\n", "must be an integer, not \"91x\"",
	          2, 36);
	expect_at("gitlab_exporter['listen_port'] = 9168.0\n", "not float", 1, 34);
	expect_at("gitlab_exporter['listen_port'] = true\n", "not boolean", 1, 34);
	expect_at("node_exporter['listen_address'] = 'localhost'\n", "host:port", 1, 35);
	expect_at("node_exporter['listen_address'] = 'h:0'\n", "host:port", 1, 35);
	expect_at("node_exporter['listen_address'] = '::1:9100'\n", "host:port", 1, 35);
}

static void test_types(void **state)
{
	(void)state;
	expect_at("gitlab_exporter['enable'] = 'true'\n", "must be true or false, not string", 1,
	          29);
	expect_at("gitlab_exporter['home'] = 'var/opt'\n", "must be an absolute path", 1, 27);
	expect_at("gitlab_exporter['home'] = 5\n", "must be a string, not integer", 1, 27);
	expect_at("gitlab_exporter['env'] = 'X=1'\n", "must be a hash, not string", 1, 26);
	expect_at("gitlab_exporter['env'] = { 'A' => [1] }\n",
	          "gitlab_exporter['env']['A'] must be a string, number or boolean, not array", 1,
	          35);
	expect_at("gitlab_exporter['env']['A'] = { 'b' => 1 }\n", "not hash", 1, 31);
	expect_at("gitlab_exporter['env']['A']['B'] = 1\n", "cannot be nested", 1, 29);
	expect_at("gitlab_exporter['listen_port']['x'] = 1\n", "is port, not a hash", 1, 32);
	expect_at("gitlab_exporter 'x'\n", "managed by gitlab-ctl", 1, 1);
	expect_at("user['username'] = 42\n", "must be a string", 1, 20);
	expect_at("user['group'] = 'a:b'\n", "user or group name", 1, 17);
	/* useradd would refuse these later, far from the line that set them */
	expect_at("user['username'] = 'git lab'\n", "user or group name", 1, 20);
	expect_at("user['username'] = \"git\\tlab\"\n", "user or group name", 1, 20);
	expect_at("user['group'] = '-g'\n", "user or group name", 1, 17);
	expect_at("manage_accounts['enable'] = 'no'\n", "must be true or false", 1, 29);
	expect_at("logging['svlogd_num'] = -1\n", "must be 0 or greater, not -1", 1, 25);
	expect_at("logging['svlogd_filter'] = 1\n", "must be a string", 1, 28);
}

static void test_opaque(void **state)
{
	(void)state;
	/* the whole message: what is wrong and what to write instead */
	const char *msg = "gitlab_exporter['env'] uses Ruby that gitlab-ctl cannot evaluate: write "
	                  "a literal value (a string, number, true/false, array or hash)";
	expect_at("gitlab_exporter['env'] = { 'X' => ENV['Y'] }\n", msg, 1, 35);
	expect_at("# comment\ngitlab_exporter['env'] = {\n  'A' => 'b',\n  'X' => "
	          "\"#{node['fqdn']}\"\n}\n",
	          msg, 4, 10);
	expect_at("gitlab_exporter['env']['X'] = ENV['Y']\n",
	          "gitlab_exporter['env']['X'] uses Ruby", 1, 31);
	expect_at("gitlab_exporter['listen_address'] = node['ip']\n", "uses Ruby", 1, 37);
	expect_at("user['username'] = \"#{x}\"\n", "user['username'] uses Ruby", 1, 20);
	expect_at("logging['svlogd_size'] = 200.megabytes\n", "uses Ruby", 1, 26);

	/* the same Ruby under names this build does not manage is fine */
	struct attrs a;
	struct diags d;
	assert_int_equal(build("gitlab_rails['env'] = { 'X' => ENV['Y'] }\n"
	                       "nginx['listen_addresses'] = [\"#{node['ip']}\"]\n"
	                       "gitlab_exporter['consul_service_meta'] = ENV['X']\n"
	                       "gitlab_exporter['no_such_setting'] = ENV['X']\n",
	                       &a, &d),
	                 0);
	/* an Omnibus key of a managed service warns at its line, an unknown one too */
	find(&d, DIAG_WARN, "gitlab_rails, nginx (-v: each one)");
	const struct diag *w = find(&d, DIAG_WARN,
	                            "gitlab_exporter['consul_service_meta'] is an Omnibus setting "
	                            "this build does not apply to gitlab-exporter; ignored");
	assert_int_equal(w->line, 3);
	assert_int_equal(w->col, 17);
	w = find(&d, DIAG_WARN, "gitlab_exporter['no_such_setting']");
	assert_int_equal(w->line, 4);
	assert_int_equal(w->col, 17);
	attrs_free(&a);
	diags_free(&d);
}

static void test_env_merge(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	/* a hash merges over the catalog defaults; a nil value removes one */
	assert_int_equal(build("gitlab_exporter['env'] = {\n"
	                       "  'MALLOC_CONF' => 'narenas:2',\n"
	                       "  'FOO' => 'bar',\n"
	                       "  'RUBY_GC_HEAP_INIT_SLOTS' => nil,\n"
	                       "}\n",
	                       &a, &d),
	                 0);
	const struct svc *s = svc(&a, "gitlab-exporter");
	assert_string_equal(kv_get(&s->env, "MALLOC_CONF"), "narenas:2");
	assert_string_equal(kv_get(&s->env, "FOO"), "bar");
	assert_null(kv_get(&s->env, "RUBY_GC_HEAP_INIT_SLOTS"));
	assert_string_equal(kv_get(&s->origin, "env:FOO"), "gitlab.rb:3");
	assert_null(kv_get(&s->origin, "env:RUBY_GC_HEAP_INIT_SLOTS"));
	assert_null(kv_get(&s->origin, "env:LD_PRELOAD"));
	assert_string_equal(kv_get(&s->env, "LD_PRELOAD"), GITLAB_CTL_JEMALLOC);
	assert_int_equal(s->env.n, 5);
	for (size_t i = 1; i < s->env.n; i++)
		assert_true(strcmp(s->env.v[i - 1].name, s->env.v[i].name) < 0);
	attrs_free(&a);
	diags_free(&d);

	/* the Go services' runtime defaults are overridden the same way (doc/monitoring.md) */
	assert_int_equal(build("node_exporter['env'] = { 'GOGC' => nil, 'GOMAXPROCS' => 2,\n"
	                       "  'GOMEMLIMIT' => '32MiB' }\n"
	                       "prometheus['env']['GOGC'] = 'off'\n",
	                       &a, &d),
	                 0);
	s = svc(&a, "node-exporter");
	assert_null(kv_get(&s->env, "GOGC"));
	assert_string_equal(kv_get(&s->env, "GOMAXPROCS"), "2");
	assert_string_equal(kv_get(&s->env, "GOMEMLIMIT"), "32MiB");
	s = svc(&a, "prometheus");
	assert_string_equal(kv_get(&s->env, "GOGC"), "off");
	assert_string_equal(kv_get(&s->env, "GOMAXPROCS"), "1"); /* the catalog's, kept */
	attrs_free(&a);
	diags_free(&d);

	/* ['env']['X'] sets one key; a later whole hash replaces the user's earlier keys */
	assert_int_equal(build("gitlab_exporter['env']['A'] = 'one'\n"
	                       "gitlab_exporter['env']['LD_PRELOAD'] = nil\n"
	                       "gitlab_exporter['env'] = { 'B' => 'two' }\n"
	                       "gitlab_exporter['env']['C'] = 'three'\n"
	                       "gitlab_exporter['env']['C'] = 'four'\n",
	                       &a, &d),
	                 0);
	s = svc(&a, "gitlab-exporter");
	assert_null(kv_get(&s->env, "A"));
	assert_string_equal(kv_get(&s->env, "B"), "two");
	assert_string_equal(kv_get(&s->env, "C"), "four");
	assert_string_equal(kv_get(&s->env, "LD_PRELOAD"), GITLAB_CTL_JEMALLOC); /* nil dropped */
	attrs_free(&a);
	diags_free(&d);

	/* symbols keys, and numbers and booleans written as Ruby's to_s would */
	assert_int_equal(build("gitlab_exporter['env'] = { RUBY_GC_HEAP_INIT_SLOTS: 100_000,\n"
	                       "  'RUBY_GC_HEAP_GROWTH_FACTOR' => 1.25, 'T' => true, 'F' => 1e20,\n"
	                       "  'G' => 0.0001, 'H' => 3.0, 'I' => -7 }\n"
	                       "gitlab_exporter['env']['LD_PRELOAD'] = nil\n"
	                       "gitlab_exporter['env'] = nil\n" /* back to the defaults */
	                       "gitlab_exporter['env']['K'] = 2 * 1024\n",
	                       &a, &d),
	                 0);
	s = svc(&a, "gitlab-exporter");
	assert_string_equal(kv_get(&s->env, "K"), "2048");
	assert_string_equal(kv_get(&s->env, "RUBY_GC_HEAP_INIT_SLOTS"), "80000");
	assert_non_null(kv_get(&s->env, "LD_PRELOAD"));
	attrs_free(&a);
	assert_int_equal(build("gitlab_exporter['env'] = { RUBY_GC_HEAP_INIT_SLOTS: 100_000,\n"
	                       "  'RUBY_GC_HEAP_GROWTH_FACTOR' => 1.25, 'T' => true, 'F' => 1e20,\n"
	                       "  'G' => 0.0001, 'H' => 3.0, 'I' => -7, 'J' => :sym }\n",
	                       &a, &d),
	                 0);
	s = svc(&a, "gitlab-exporter");
	assert_string_equal(kv_get(&s->env, "RUBY_GC_HEAP_INIT_SLOTS"), "100000");
	assert_string_equal(kv_get(&s->env, "RUBY_GC_HEAP_GROWTH_FACTOR"), "1.25");
	assert_string_equal(kv_get(&s->env, "T"), "true");
	assert_string_equal(kv_get(&s->env, "F"), "1.0e+20");
	assert_string_equal(kv_get(&s->env, "G"), "0.0001");
	assert_string_equal(kv_get(&s->env, "H"), "3.0");
	assert_string_equal(kv_get(&s->env, "I"), "-7");
	assert_string_equal(kv_get(&s->env, "J"), "sym");
	attrs_free(&a);
	diags_free(&d);
	/* Float#to_s: shortest round-trip digits, exponent form outside 1e-4...1e15 */
	assert_int_equal(build("gitlab_exporter['env'] = { 'A' => 0.055, 'B' => 1.0e-5,\n"
	                       "  'C' => 123456789012345680.0, 'D' => 1e15, 'E' => -0.5 }\n",
	                       &a, &d),
	                 0);
	s = svc(&a, "gitlab-exporter");
	assert_string_equal(kv_get(&s->env, "A"), "0.055");
	assert_string_equal(kv_get(&s->env, "B"), "1.0e-05");
	assert_string_equal(kv_get(&s->env, "C"), "1.2345678901234568e+17");
	assert_string_equal(kv_get(&s->env, "D"), "1.0e+15");
	assert_string_equal(kv_get(&s->env, "E"), "-0.5");
	attrs_free(&a);
	diags_free(&d);
}

static void test_env_validation_located(void **state)
{
	(void)state;
	expect_at("gitlab_exporter['env'] = {\n  'RUBY_GC_HEAP_INIT_SLOTS' => '80_000'\n}\n",
	          "RUBY_GC_HEAP_INIT_SLOTS=80_000 is not an integer", 2, 32);
	expect_at("gitlab_exporter['env']['MALLOC_CONF'] = 'dirty_decay_ms:0,bogus:1'\n",
	          "unknown jemalloc option 'bogus'", 1, 41);
	expect_at("gitlab_exporter['env']['LD_PRELOAD'] = '/nonexistent/libjemalloc.so.2'\n",
	          "/nonexistent/libjemalloc.so.2", 1, 40);
	expect_at("gitlab_exporter['env']['BAD-NAME'] = 'x'\n", "not a valid environment variable",
	          1, 38);
	/* cross rule: reported at the MAX value the user wrote */
	expect_at("gitlab_exporter['env']['RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO'] = 0.3\n"
	          "gitlab_exporter['env']['RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO'] = 0.2\n",
	          "RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO=0.2 must be greater", 2, 63);
	/* the catalog default MAX (0.111) is below the user's MIN: the user's MIN is blamed */
	expect_at("gitlab_exporter['env']['RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO'] = 0.5\n",
	          "RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO=0.5 must be less than "
	          "RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO, which is 0.111 here by default",
	          1, 63);
}

static void test_flags(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("node_exporter['flags'] = { 'web.telemetry-path' => '/m' }\n"
	                       "node_exporter['flags']['collector.textfile.directory'] = nil\n"
	                       "node_exporter['flags']['collector.wifi'] = false\n"
	                       "node_exporter['flags']['a.first'] = 3\n",
	                       &a, &d),
	                 0);
	const struct svc *n = svc(&a, "node-exporter");
	/* Sorted by flag name: the user's among the catalog's collector.* defaults. */
	assert_string_equal(n->argv[2], "--a.first=3");
	assert_string_equal(n->argv[n->argc - 4],
	                    "--no-collector.systemd"); /* "!collector.systemd" */
	assert_string_equal(n->argv[n->argc - 3], "--no-collector.wifi");
	assert_string_equal(n->argv[n->argc - 2], "--web.telemetry-path=/m");
	assert_string_equal(n->argv[n->argc - 1],
	                    "--web.config.file=/opt/gitlab/etc/node-exporter/web.yml");
	for (size_t i = 0; i < n->argc; i++)
		assert_null(strstr(n->argv[i], "collector.textfile"));
	assert_non_null(strstr(svc_var(n, "flags"), "--a.first=3 --collector."));
	assert_non_null(
	    strstr(svc_var(n, "flags"), " --no-collector.wifi --web.telemetry-path=/m"));
	attrs_free(&a);
	diags_free(&d);
}

/* Omnibus' two flag spellings: prometheus --k=v (empty skipped), alertmanager kingpin. */
static void test_flag_styles(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("prometheus['flags'] = { 'a.empty' => '', 'b.bool' => true,"
	                       " 'config.file' => nil }\n"
	                       "alertmanager['flags'] = { 'a.on' => true, 'b.off' => false,"
	                       " 'c.empty' => '', 'd.text' => 'true' }\n",
	                       &a, &d),
	                 0);
	const struct svc *p = svc(&a, "prometheus"), *am = svc(&a, "alertmanager");
	assert_string_equal(svc_var(p, "flags"),
	                    "--b.bool=true --storage.tsdb.path=/var/opt/gitlab/prometheus/data "
	                    "--web.config.file=/opt/gitlab/etc/prometheus/web.yml "
	                    "--web.listen-address=localhost:9090");
	assert_string_equal(am->argv[1], "--a.on");
	assert_string_equal(am->argv[2], "--no-b.off");
	/* "cluster.listen-address=" in the catalog: an explicitly empty value, kept. */
	assert_string_equal(am->argv[3], "--cluster.listen-address=");
	assert_string_equal(am->argv[5], "--d.text=true"); /* a string, not a boolean */
	attrs_free(&a);
	diags_free(&d);
	assert_int_equal(
	    build("alertmanager['flags']['cluster.listen-address'] = '0.0.0.0:9094'\n", &a, &d), 0);
	assert_non_null(strstr(svc_var(svc(&a, "alertmanager"), "flags"),
	                       "--cluster.listen-address=0.0.0.0:9094 "));
	attrs_free(&a);
	diags_free(&d);
}

static bool on(const struct attrs *a, const char *name)
{
	return svc(a, name)->enabled;
}

/*
 * Omnibus' single node: with nothing in gitlab.rb every service runs; the monitoring switch
 * turns off the monitoring set and the exporters, never the databases; an exporter follows
 * its backend.
 */
static void test_omnibus_defaults(void **state)
{
	(void)state;
	static const char *const all[] = {
	    "alertmanager", "gitlab-exporter", "node-exporter", "postgres-exporter",
	    "postgresql",   "prometheus",      "redis",         "redis-exporter"};
	struct attrs a;
	struct diags d;
	assert_int_equal(build("", &a, &d), 0);
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		assert_true(on(&a, all[i]));
	attrs_free(&a);
	diags_free(&d);
	assert_int_equal(build("prometheus_monitoring['enable'] = false\n", &a, &d), 0);
	assert_true(on(&a, "postgresql") && on(&a, "redis"));
	assert_false(on(&a, "prometheus") || on(&a, "alertmanager") || on(&a, "node-exporter") ||
	             on(&a, "gitlab-exporter") || on(&a, "postgres-exporter") ||
	             on(&a, "redis-exporter"));
	attrs_free(&a);
	diags_free(&d);
	assert_int_equal(build("postgresql['enable'] = false\n", &a, &d), 0);
	assert_false(on(&a, "postgresql") || on(&a, "postgres-exporter"));
	assert_true(on(&a, "redis") && on(&a, "redis-exporter") && on(&a, "prometheus"));
	attrs_free(&a);
	diags_free(&d);
}

/* roles([...]) turns on what names the role and off what does not; the switch wins. */
static void test_roles_and_switch(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("roles(['monitoring_role'])\n", &a, &d), 0);
	assert_true(on(&a, "prometheus") && on(&a, "alertmanager") && on(&a, "node-exporter"));
	assert_false(on(&a, "gitlab-exporter") || on(&a, "postgresql") || on(&a, "redis"));
	attrs_free(&a);
	diags_free(&d);
	assert_int_equal(build("roles ['monitoring_role', 'redis_role']\n"
	                       "gitlab_exporter['enable'] = true\n",
	                       &a, &d),
	                 0);
	assert_true(on(&a, "gitlab-exporter") && on(&a, "prometheus"));
	find(&d, DIAG_WARN, "role 'redis_role' enables no service");
	attrs_free(&a);
	diags_free(&d);
	assert_int_equal(build("prometheus['enable'] = true\ngitlab_exporter['enable'] = true\n"
	                       "prometheus_monitoring['enable'] = false\n",
	                       &a, &d),
	                 0);
	assert_false(on(&a, "prometheus") || on(&a, "gitlab-exporter"));
	attrs_free(&a);
	diags_free(&d);
	/* Patroni runs PostgreSQL: with it on, the plain service stays off unless named */
	const char *patroni_on[] = {"roles(['patroni_role', 'postgres_role'])\n",
	                            "roles(['postgres_role'])\npatroni['enable'] = true\n",
	                            "patroni['enable'] = true\n"};
	for (size_t i = 0; i < sizeof patroni_on / sizeof patroni_on[0]; i++) {
		assert_int_equal(build(patroni_on[i], &a, &d), 0);
		assert_true(on(&a, "patroni"));
		assert_false(on(&a, "postgresql"));
		attrs_free(&a);
		diags_free(&d);
	}
	/* patroni['username'] is the REST API's user, as Omnibus: never the account */
	assert_int_equal(
	    build("roles(['patroni_role'])\npatroni['username'] = 'api-user'\n", &a, &d), 0);
	assert_string_equal(svc_var(svc(&a, "patroni"), "rest_username"), "api-user");
	assert_string_equal(svc(&a, "patroni")->user, svc_var(svc(&a, "postgresql"), "username"));
	attrs_free(&a);
	diags_free(&d);
	expect_at("roles 'monitoring_role'\n", "roles takes an array", 1, 7);
	expect_at("prometheus_monitoring['enable'] = 'no'\n", "must be true or false", 1, 35);
}

static const char *job_name(const struct yval *jobs, size_t i)
{
	assert_true(i < jobs->n);
	const struct yval *n = yval_get(jobs->items[i], "job_name");
	assert_non_null(n);
	return n->text;
}

/* prometheus' scrape_jobs: ours by catalog order, then the user's; a same name replaces. */
static void test_scrape_jobs(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(
	    build(
	        "prometheus['enable'] = true\nnode_exporter['enable'] = true\n"
	        "node_exporter['listen_address'] = '0.0.0.0:9101'\n"
	        "postgresql['enable'] = true\n"
	        "prometheus['scrape_configs'] = [ { 'job_name' => 'app', 'x' => [1, 2.5, nil] },\n"
	        "  { 'job_name' => 'node', 'static_configs' => [] } ]\n"
	        "redis['enable'] = false\n",
	        &a, &d),
	    0);
	const struct yval *jobs = svc_data(svc(&a, "prometheus"), "scrape_jobs");
	assert_non_null(jobs);
	assert_int_equal(jobs->n, 7);
	assert_string_equal(job_name(jobs, 0), "prometheus");
	assert_string_equal(job_name(jobs, 1),
	                    "postgres");                /* postgres-exporter: postgresql is on */
	assert_string_equal(job_name(jobs, 2), "node"); /* the user's, in our place */
	assert_null(yval_get(jobs->items[2], "metrics_path"));
	assert_string_equal(job_name(jobs, 3), "gitlab_exporter_database"); /* needs postgresql */
	assert_string_equal(job_name(jobs, 4), "gitlab_exporter_ruby"); /* no redis: no sidekiq */
	assert_string_equal(job_name(jobs, 5), "gitlab_exporter_process");
	assert_string_equal(job_name(jobs, 6), "app");
	const struct diag *w =
	    find(&d, DIAG_WARN, "scrape job 'node' of prometheus['scrape_configs']");
	assert_int_equal(w->line, 6);
	assert_string_equal(svc_var(svc(&a, "node-exporter"), "scrape_target"), "localhost:9101");
	attrs_free(&a);
	diags_free(&d);
	assert_int_equal(build("prometheus['enable'] = true\nnode_exporter['enable'] = true\n"
	                       "postgresql['enable'] = false\nredis['enable'] = false\n",
	                       &a, &d),
	                 0);
	jobs = svc_data(svc(&a, "prometheus"), "scrape_jobs");
	assert_string_equal(job_name(jobs, 1), "node");
	const struct yval *t = yval_get(jobs->items[1], "static_configs")->items[0];
	assert_string_equal(yval_get(t, "targets")->items[0]->text, "localhost:9100");
	attrs_free(&a);
	diags_free(&d);
	expect_at("prometheus['scrape_configs'] = [ { 'static_configs' => [] } ]\n",
	          "needs a string 'job_name'", 1, 34);
	expect_at("prometheus['scrape_configs'] = [ { 1 => 2 } ]\n",
	          "cannot evaluate: write a literal value (a string, number, true/false, array or "
	          "hash)",
	          1, 34);
}

/* An argument execve would refuse is reported where the flag was written, not at the catalog. */
static void test_argv_located(void **state)
{
	(void)state;
	size_t n = 140000;
	char *big = malloc(n + 1), *text = malloc(n + 128);
	assert_non_null(big);
	assert_non_null(text);
	memset(big, 'a', n);
	big[n] = '\0';
	snprintf(text, n + 128,
	         "node_exporter['enable'] = true\nnode_exporter['flags']['a'] = '%s'\n", big);
	expect_at(text, "argument 2 of the command", 2, 31); /* --a= sorts first */
	free(big);
	free(text);
}

static void test_user_group(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("", &a, &d), 0);
	assert_string_equal(a.user, "git");
	assert_string_equal(a.group, "git");
	assert_true(a.manage_accounts);
	attrs_free(&a);
	diags_free(&d);

	assert_int_equal(build("user['username'] = 'gitlab'\nuser['group'] = 'gitlab'\n"
	                       "manage_accounts['enable'] = false\nuser['uid'] = 998\n",
	                       &a, &d),
	                 0);
	assert_string_equal(a.user, "gitlab");
	assert_string_equal(a.group, "gitlab");
	assert_false(a.manage_accounts);
	/* Omnibus' user['uid']: in the summary, not a warning of its own */
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "ignoring 1 Omnibus setting this build does not manage: "
	                                "user['uid'] (-v: each one)");
	const struct svc *s = svc(&a, "gitlab-exporter");
	if (geteuid() == 0) {
		assert_string_equal(s->user, "gitlab");
		assert_string_equal(s->group, "gitlab");
	} else { /* not root: the invoking user and its primary group */
		const struct passwd *pw = getpwuid(geteuid());
		assert_non_null(pw);
		assert_string_equal(s->user, pw->pw_name);
		const struct group *gr = getgrgid(pw->pw_gid);
		assert_string_equal(s->group, gr->gr_name);
	}
	assert_string_equal(svc_var(s, "user"), s->user);
	attrs_free(&a);
	diags_free(&d);
}

static void test_logging(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("", &a, &d), 0);
	assert_int_equal(a.logging.size, 200 * 1024 * 1024);
	assert_int_equal(a.logging.num, 30);
	assert_int_equal(a.logging.timeout, 86400);
	assert_string_equal(a.logging.filter, "gzip");
	assert_null(a.logging.udp);
	assert_null(a.logging.prefix);
	const struct svc *s = svc(&a, "gitlab-exporter");
	assert_int_equal(s->log.num, 30);
	assert_string_equal(svc_var(s, "svlogd_size"), "209715200");
	assert_string_equal(svc_var(s, "svlogd_udp"), "");
	attrs_free(&a);
	diags_free(&d);

	assert_int_equal(build("logging['svlogd_size'] = 10 * 1024 * 1024\n"
	                       "logging['svlogd_num'] = '5'\n"
	                       "logging['svlogd_timeout'] = nil\n"
	                       "logging['svlogd_filter'] = nil\n"
	                       "logging['svlogd_udp'] = '127.0.0.1:514'\n"
	                       "logging['svlogd_prefix'] = 'gl:'\n"
	                       "gitlab_exporter['svlogd_num'] = 3\n"
	                       "gitlab_exporter['svlogd_prefix'] = 'ge:'\n"
	                       "logging['logrotate_frequency'] = 'daily'\n",
	                       &a, &d),
	                 0);
	assert_int_equal(a.logging.size, 10 * 1024 * 1024);
	assert_int_equal(a.logging.num, 5);
	assert_int_equal(a.logging.timeout, -1);
	assert_null(a.logging.filter);
	assert_string_equal(a.logging.udp, "127.0.0.1:514");
	s = svc(&a, "gitlab-exporter");
	assert_int_equal(s->log.size, 10 * 1024 * 1024);
	assert_int_equal(s->log.num, 3);
	assert_string_equal(s->log.prefix, "ge:");
	assert_string_equal(s->log.udp, "127.0.0.1:514");
	assert_string_equal(svc_var(s, "svlogd_timeout"), "");
	const struct svc *n = svc(&a, "node-exporter");
	assert_int_equal(n->log.num, 5);
	assert_string_equal(n->log.prefix, "gl:");
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "ignoring 1 Omnibus setting this build does not manage: "
	                                "logging['logrotate_frequency'] (-v: each one)");
	attrs_free(&a);
	diags_free(&d);
}

/*
 * Under user[...] and logging[...], which gitlab-ctl reads itself, Omnibus' other keys join
 * the summary (omnibus-names.list); a key near one gitlab-ctl reads is a typo, warned with
 * the key it meant; any other key is warned too.
 */
static void test_global_omnibus_keys(void **state)
{
	(void)state;
	const char *text = "user['uid'] = 998\n"
	                   "user['usernme'] = 'git'\n"
	                   "logging['udp_log_shipping_port'] = 514\n"
	                   "logging['svlogd_sise'] = 1\n"
	                   "logging['colour'] = 1\n"
	                   "manage_accounts['uid'] = 1\n";
	struct attrs a;
	struct diags d;
	assert_int_equal(build(text, &a, &d), 0);
	assert_int_equal(d.n, 5);
	assert_int_equal(d.nerr, 0);
	warn_at(&d,
	        "user['usernme'] is not a setting gitlab-ctl knows; ignored (did you mean "
	        "'username'?)",
	        2, 6);
	warn_at(&d,
	        "logging['svlogd_sise'] is not a setting gitlab-ctl knows; ignored (did you mean "
	        "'svlogd_size'?)",
	        4, 9);
	warn_at(&d, "logging['colour'] is not a setting gitlab-ctl knows; ignored", 5, 9);
	warn_at(&d, "manage_accounts['uid'] is not a setting gitlab-ctl knows; ignored", 6, 17);
	const struct diag *w = find(&d, DIAG_WARN, "Omnibus");
	assert_string_equal(w->msg, "ignoring 2 Omnibus settings this build does not manage: "
	                            "user['uid'], logging['udp_log_shipping_port'] (-v: each one)");
	attrs_free(&a);
	diags_free(&d);
}

/* The summary names 8 settings and counts the rest; -v still notes each one. */
static void test_summary_capped(void **state)
{
	(void)state;
	const char *text = "consul['enable'] = true\n"
	                   "crond['enable'] = true\n"
	                   "external_url 'https://gitlab.example.com'\n"
	                   "gitaly['enable'] = true\n"
	                   "gitlab_rails['time_zone'] = 'UTC'\n"
	                   "mattermost['enable'] = false\n"
	                   "nginx['enable'] = false\n"
	                   "puma['worker_processes'] = 2\n"
	                   "sidekiq['concurrency'] = 10\n"
	                   "logging['udp_log_shipping_port'] = 514\n"
	                   "user['shell'] = '/bin/sh'\n";
	struct attrs a;
	struct diags d;
	assert_int_equal(build(text, &a, &d), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(
	    d.v[0].msg, "ignoring 11 Omnibus settings this build does not manage: consul, crond, "
	                "external_url, gitaly, gitlab_rails, mattermost, nginx, puma, ... and 3 "
	                "more (-v: each one)");
	attrs_free(&a);
	diags_free(&d);

	struct ctl v = ctl;
	v.verbose = true;
	assert_int_equal(build_with(&v, text, &a, &d), 0);
	assert_int_equal(d.nnote, 11);
	find(&d, DIAG_WARN, "nginx, puma, ... and 3 more");
	assert_null(strstr(find(&d, DIAG_WARN, "Omnibus")->msg, "(-v"));
	const struct diag *n = find(&d, DIAG_NOTE, "ignoring user['shell']");
	assert_int_equal(n->line, 11);
	attrs_free(&a);
	diags_free(&d);
}

/* Found by test/fuzz/fuzz_attrs.c: each input must fail at its gitlab.rb line. */
static void test_fuzz_regressions(void **state)
{
	(void)state;
	/* a NUL in a hash key silently set MALLOC_CONF */
	expect_at("gitlab_exporter['env'] = { \"MALLOC_CONF\\0y\" => 'junk:true' }\n",
	          "a key of gitlab_exporter['env'] contains a NUL byte", 1, 28);
	/* svlogd settings with a control character were refused only when log/config rendered */
	expect_at("logging['svlogd_filter'] = \"g\\001zi\"\n",
	          "logging['svlogd_filter'] must not contain a newline", 1, 28);
	expect_at("\ngitlab_exporter['svlogd_prefix'] = \"a\\nb\"\n",
	          "gitlab_exporter['svlogd_prefix'] must not contain a newline", 2, 36);
}

static void test_unknown_names(void **state)
{
	(void)state;
	const char *text = "external_url 'https://gitlab.example.com'\n"
	                   "gitlab_rails['time_zone'] = 'UTC'\n"
	                   "nginx['enable'] = false\n"
	                   "gitlab_rails['ldap_enabled'] = true\n";
	struct attrs a;
	struct diags d;
	assert_int_equal(build(text, &a, &d), 0);
	assert_int_equal(d.n, 1); /* one summary line */
	const struct diag *w = find(&d, DIAG_WARN,
	                            "ignoring 3 Omnibus settings this build does not manage: "
	                            "external_url, gitlab_rails, nginx (-v: each one)");
	assert_string_equal(w->file, "gitlab.rb");
	assert_int_equal(a.unknown_names.n, 3);
	assert_string_equal(kv_get(&a.unknown_names, "gitlab_rails"), "gitlab.rb:2");
	assert_string_equal(kv_get(&a.unknown_names, "nginx"), "gitlab.rb:3");
	attrs_free(&a);
	diags_free(&d);

	/* --verbose: a note per name at its first use, not counted as a warning */
	struct ctl v = ctl;
	v.verbose = true;
	assert_int_equal(build_with(&v, text, &a, &d), 0);
	assert_int_equal(d.n, 4);
	assert_int_equal(d.nnote, 3);
	w = find(&d, DIAG_NOTE, "ignoring nginx");
	assert_int_equal(w->line, 3);
	assert_int_equal(w->col, 1);
	attrs_free(&a);
	diags_free(&d);
}

/* Settings inside conditions: ignored ones join the summary; a managed one is refused there. */
static void test_conditions(void **state)
{
	(void)state;
	const char *text = "if ENV['GITLAB_HOST'] == 'a'\n"
	                   "  gitlab_rails['smtp_enable'] = true\n"
	                   "elsif node['fqdn'].nil?\n"
	                   "  user['uid'] = 998\n"
	                   "end\n"
	                   "gitlab_rails['ldap_enabled'] = true unless node['fqdn'].nil?\n"
	                   "case node['hostname']\n"
	                   "when 'x' then nginx['listen_port'] = 81\n"
	                   "else\n"
	                   "  nginx['listen_port'] = 80\n"
	                   "end\n";
	struct attrs a;
	struct diags d;
	assert_int_equal(build(text, &a, &d), 0);
	assert_int_equal(d.n, 1);
	find(&d, DIAG_WARN,
	     "ignoring 3 Omnibus settings this build does not manage: gitlab_rails, nginx, "
	     "user['uid'] (-v: each one)");
	attrs_free(&a);
	diags_free(&d);

	struct ctl v = ctl;
	v.verbose = true;
	assert_int_equal(build_with(&v, text, &a, &d), 0);
	assert_int_equal(d.nnote, 3);
	const struct diag *n = find(&d, DIAG_NOTE, "ignoring nginx: not managed by this build");
	assert_int_equal(n->line, 8);
	assert_int_equal(n->col, 15);
	attrs_free(&a);
	diags_free(&d);

	/* a managed setting: the error is at the condition, naming the setting and its line */
	struct diags e;
	assert_int_equal(build("gitlab_rails['x'] = 1\n"
	                       "if node['fqdn'] == 'db1'\n"
	                       "  gitlab_rails['smtp_enable'] = true\n"
	                       "  gitlab_exporter['listen_port'] = 9200\n"
	                       "end\n",
	                       &a, &e),
	                 -1);
	assert_int_equal(e.nerr, 1);
	const struct diag *g =
	    find(&e, DIAG_ERR,
	         "gitlab-ctl does not evaluate conditions: gitlab_exporter['listen_port'] (line 4) "
	         "is set inside 'if': write the value this host needs as a plain assignment, "
	         "outside any condition");
	assert_int_equal(g->line, 2);
	assert_int_equal(g->col, 1);
	attrs_free(&a);
	diags_free(&e);
	expect_at("node_exporter['enable'] = true unless ENV['X']\n",
	          "node_exporter['enable'] (line 1) is set inside 'unless'", 1, 32);
	expect_at("case a\nwhen 1\n  if b\n    logging['svlogd_num'] = 3\n  end\nend\n",
	          "logging['svlogd_num'] (line 4) is set inside 'case'", 1, 1);
	expect_at("if a\n  user['username'] = 'gl'\nend\n", "user['username'] (line 2)", 1, 1);
	expect_at("if a\n  manage_accounts['enable'] = false\nend\n",
	          "manage_accounts['enable'] (line 2)", 1, 1);
	expect_at("if a\n  roles ['monitoring_role']\nend\n", "roles (line 2)", 1, 1);
	expect_at("if a\n  prometheus_monitoring['enable'] = false\nend\n",
	          "prometheus_monitoring['enable'] (line 2)", 1, 1);
	expect_at("if a\n  gitlab_exporter['env']['LANG'] = 'C'\nend\n",
	          "gitlab_exporter['env']['LANG'] (line 2)", 1, 1);
	/* an unknown name is the same error as outside a condition, at the name */
	expect_at("if a\n  postgres['enable'] = true\nend\n",
	          "postgres is not a name gitlab-ctl or Omnibus knows; did you mean 'postgresql'?",
	          2, 3);
	/* a misspelt key is ignored, with the same warning as outside */
	assert_int_equal(build("if a\n  postgresql['prot'] = 1\nend\n", &a, &d), 0);
	n = find(&d, DIAG_WARN, "postgresql['prot'] is not a setting gitlab-ctl knows; ignored");
	assert_int_equal(n->line, 2);
	attrs_free(&a);
	diags_free(&d);
}

/* A catalog default that does not validate is reported at its .conf line. */
static void test_catalog_default_located(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_attrs.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/x.conf", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("name = \"x\";\nconfig_name = \"x\";\nsettings = (\n"
	      "  { name = \"enable\"; type = \"bool\"; default = true; },\n"
	      "  { name = \"home\"; type = \"path\"; default = \"/h\"; },\n"
	      "  { name = \"log_directory\"; type = \"path\"; default = \"/l\"; },\n"
	      "  { name = \"env_directory\"; type = \"path\"; default = \"{{nowhere}}/e\"; },\n"
	      "  { name = \"env\"; type = \"env\"; }\n);\n"
	      "env = {\n  MALLOC_CONF = \"bogus:1\";\n};\n"
	      "command = [ \"/bin/true\" ];\n",
	      fp);
	assert_int_equal(fclose(fp), 0);
	struct catalog c;
	struct diags d;
	struct attrs a;
	diags_init(&d);
	assert_int_equal(catalog_load(dir, &c, &d), 0);
	assert_int_equal(attrs_build(&ctl, &c, NULL, &a, &d), -1);
	const struct diag *g = find(&d, DIAG_ERR, "unknown placeholder {{nowhere}}");
	assert_string_equal(g->file, path);
	assert_int_equal(g->line, 7);
	attrs_free(&a);
	diags_free(&d);

	/* fix the placeholder: now the env default is checked, at its line */
	fp = fopen(path, "r+");
	assert_non_null(fp);
	char buf[2048];
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	buf[n] = '\0';
	char *p = strstr(buf, "{{nowhere}}");
	memcpy(p, "/tmp/nowher", 11);
	rewind(fp);
	fputs(buf, fp);
	assert_int_equal(fclose(fp), 0);
	catalog_free(&c);
	diags_init(&d);
	assert_int_equal(catalog_load(dir, &c, &d), 0);
	assert_int_equal(attrs_build(&ctl, &c, NULL, &a, &d), -1);
	g = find(&d, DIAG_ERR, "unknown jemalloc option 'bogus'");
	assert_string_equal(g->file, path);
	assert_int_equal(g->line, 11);
	attrs_free(&a);
	diags_free(&d);
	catalog_free(&c);
	unlink(path);
	rmdir(dir);
}

/* Per-service accounts: postgresql and redis as their own users when root; names checked. */
static void test_service_accounts(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(
	    build("user['username'] = 'gitlab'\npostgresql['group'] = 'pg-grp'\n", &a, &d), 0);
	const struct svc *pg = svc(&a, "postgresql"), *rd = svc(&a, "redis");
	const struct svc *ge = svc(&a, "gitlab-exporter");
	if (geteuid() == 0) {
		assert_string_equal(pg->user, "gitlab-psql");
		assert_string_equal(pg->group, "pg-grp");
		assert_string_equal(rd->user, "gitlab-redis");
		assert_string_equal(rd->group, "gitlab-redis");
		assert_string_equal(ge->user, "gitlab");
	} else { /* not root: everything runs as the invoking user */
		assert_string_equal(pg->user, ge->user);
		assert_string_equal(pg->group, ge->group);
	}
	/* The exporter's account is what pg_ident.conf maps to the role gitlab. */
	assert_string_equal(svc_var(pg, "gitlab_user"), ge->user);
	attrs_free(&a);
	diags_free(&d);
	expect_at("postgresql['username'] = '-oops'\n", "must be a user or group name", 1, 26);
	expect_at("\nredis['group'] = 'a b'\n", "must be a user or group name", 2, 18);
}

/* {{svc.setting}}: the exporter's connection follows the postgresql and redis settings. */
static void test_cross_service(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("", &a, &d), 0);
	const struct svc *ge = svc(&a, "gitlab-exporter"), *pg = svc(&a, "postgresql");
	assert_string_equal(
	    svc_var(ge, "connection_string"),
	    "dbname=gitlabhq_production user=gitlab host=/var/opt/gitlab/postgresql "
	    "port=5432");
	assert_string_equal(svc_var(ge, "redis_url"), "unix:/var/opt/gitlab/redis/redis.socket");
	/* postgresql['data_dir'] is a setting; the directory builtin is gitlab_data_dir. */
	assert_string_equal(svc_var(pg, "data_dir"), "/var/opt/gitlab/postgresql/data");
	assert_string_equal(svc_var(pg, "gitlab_data_dir"), "/var/opt/gitlab");
	assert_string_equal(svc_var(ge, "data_dir"), "/var/opt/gitlab");
	assert_null(pg->listen_host); /* listen_address unset: no TCP */
	assert_string_equal(attrs_var(&a, ge, "postgresql.port"), "5432");
	assert_string_equal(attrs_var(&a, ge, "redis.enable"), "true");
	assert_null(attrs_var(&a, ge, "nosuch.port"));
	char *x = attrs_expand(&a, pg, "{{redis.unixsocket}} {{port}}");
	assert_string_equal(x, "/var/opt/gitlab/redis/redis.socket 5432");
	free(x);
	assert_null(attrs_expand(&a, pg, "{{redis.nosuch}}"));
	char *const tmpl[] = {"{{port}}", "--config={{file}}", "{{nosuch}}"};
	size_t bad = 9;
	char **v = attrs_expand_argv(&a, pg, tmpl, 2, "file", "/dev/stdin", &bad);
	assert_string_equal(v[0], "5432");
	assert_string_equal(v[1], "--config=/dev/stdin");
	assert_null(v[2]);
	argv_free(v);
	assert_null(
	    attrs_expand_argv(&a, pg, tmpl, 2, "file", NULL, &bad)); /* {{file}} only when given */
	assert_int_equal(bad, 1);
	assert_null(attrs_expand_argv(&a, pg, tmpl, 3, "file", "/dev/stdin", &bad));
	assert_int_equal(bad, 2);
	attrs_free(&a);
	diags_free(&d);

	assert_int_equal(build("postgresql['port'] = 5433\n"
	                       "postgresql['data_dir'] = '/srv/pg'\n"
	                       "redis['unixsocket'] = '/run/r.sock'\n",
	                       &a, &d),
	                 0);
	ge = svc(&a, "gitlab-exporter");
	assert_non_null(strstr(svc_var(ge, "connection_string"), " port=5433"));
	assert_string_equal(svc_var(ge, "redis_url"), "unix:/run/r.sock");
	assert_string_equal(svc_var(svc(&a, "postgresql"), "data_dir"), "/srv/pg");
	attrs_free(&a);
	diags_free(&d);

	/* Omnibus' gitlab_rails keys of a database elsewhere are the exporter's. */
	assert_int_equal(build("gitlab_rails['db_host'] = '10.0.0.1,10.0.0.2'\n"
	                       "gitlab_rails['db_port'] = 6432\n"
	                       "gitlab_rails['db_password'] = \"it's\"\n",
	                       &a, &d),
	                 0);
	ge = svc(&a, "gitlab-exporter");
	assert_string_equal(
	    svc_var(ge, "db_connection_string"),
	    "dbname=gitlabhq_production user=gitlab host=10.0.0.1,10.0.0.2 port=6432 "
	    "password='it\\'s' target_session_attrs=read-write");
	attrs_free(&a);
	diags_free(&d);
}

/* A catalog of two services x and y whose strings refer to each other. */
static void cross_catalog(const char *xdefault, const char *ydefault, const char *needle)
{
	char dir[] = "/tmp/test_attrs.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	const char *names[] = {"x", "y"}, *defs[] = {xdefault, ydefault};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s.conf", dir, names[i]);
		FILE *fp = fopen(path, "w");
		assert_non_null(fp);
		fprintf(fp,
		        "name = \"%s\";\nconfig_name = \"%s\";\nsettings = (\n"
		        "  { name = \"enable\"; type = \"bool\"; default = true; },\n"
		        "  { name = \"home\"; type = \"path\"; default = \"/h\"; },\n"
		        "  { name = \"log_directory\"; type = \"path\"; default = \"/l\"; },\n"
		        "  { name = \"env_directory\"; type = \"path\"; default = \"/e\"; },\n"
		        "  { name = \"v\"; type = \"string\"; default = \"%s\"; }\n);\n"
		        "command = [ \"/bin/true\" ];\n",
		        names[i], names[i], defs[i]);
		assert_int_equal(fclose(fp), 0);
	}
	struct catalog c;
	struct diags d;
	struct attrs a;
	diags_init(&d);
	assert_int_equal(catalog_load(dir, &c, &d), 0);
	assert_int_equal(attrs_build(&ctl, &c, NULL, &a, &d), needle ? -1 : 0);
	if (needle) {
		const struct diag *g = find(&d, DIAG_ERR, needle);
		assert_int_equal(g->line, 8);
	} else {
		assert_string_equal(svc_var(attrs_svc(&a, "x"), "v"), "y:/h");
	}
	attrs_free(&a);
	catalog_free(&c);
	diags_free(&d);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s.conf", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void test_cross_service_errors(void **state)
{
	(void)state;
	cross_catalog("{{y.service}}:{{y.home}}", "plain", NULL);
	cross_catalog("{{z.v}}", "plain",
	              "unknown placeholder {{z.v}} in service x: no such service");
	cross_catalog("{{y.nope}}", "plain", "no such setting");
	cross_catalog("{{y.v}}", "{{x.v}}", "refer to each other");
}

/* A catalog of one service x whose extra settings are `extra`; build it without gitlab.rb
 * and expect an error mentioning needle at catalog line `line` (0: expect success). */
static void one_service(const char *extra, const char *needle, int line)
{
	char dir[] = "/tmp/test_attrs.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/x.conf", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp,
	        "name = \"x\";\nconfig_name = \"x\";\nsettings = (\n"
	        "  { name = \"enable\"; type = \"bool\"; default = true; },\n"
	        "  { name = \"home\"; type = \"path\"; default = \"/h\"; },\n"
	        "  { name = \"log_directory\"; type = \"path\"; default = \"/l\"; },\n"
	        "  { name = \"env_directory\"; type = \"path\"; default = \"/e\"; },\n"
	        "  %s\n);\n"
	        "command = [ \"/bin/true\" ];\n",
	        extra);
	assert_int_equal(fclose(fp), 0);
	struct catalog c;
	struct diags d;
	struct attrs a;
	diags_init(&d);
	assert_int_equal(catalog_load(dir, &c, &d), 0);
	assert_int_equal(attrs_build(&ctl, &c, NULL, &a, &d), needle ? -1 : 0);
	if (needle) {
		const struct diag *g = find(&d, DIAG_ERR, needle);
		assert_string_equal(g->file, path);
		assert_int_equal(g->line, line);
	}
	attrs_free(&a);
	catalog_free(&c);
	diags_free(&d);
	unlink(path);
	rmdir(dir);
}

/* Catalog settings the effective settings cannot use, each named at its catalog line. */
static void test_catalog_setting_errors(void **state)
{
	(void)state;
	one_service("{ name = \"v\"; type = \"string\"; default = \"plain\"; }", NULL, 0);
	one_service("{ name = \"user\"; type = \"string\"; default = \"u\"; }",
	            "setting 'user' clashes with a built-in placeholder", 8);
	one_service("{ name = \"svlogd_size\"; type = \"int\"; default = 1; }",
	            "setting 'svlogd_size' clashes with a built-in placeholder", 8);
	one_service("{ name = \"v\"; type = \"string\"; default = \"a{{v}}\"; }",
	            "the default of 'v' refers to itself", 8);
	one_service("{ name = \"listen\"; type = \"address\"; default = \"host:port\"; }",
	            "x['listen'] = \"host:port\" is not host:port", 8);
	/* A bool default may be one placeholder; it must still come out true or false. */
	one_service("{ name = \"b\"; type = \"bool\"; default = \"{{enable}}\"; }", NULL, 0);
	one_service("{ name = \"s\"; type = \"string\"; default = \"yes\"; },\n"
	            "  { name = \"b\"; type = \"bool\"; default = \"{{s}}\"; }",
	            "default of setting 'b' (bool) is \"yes\", not true or false", 9);
}

/* nil puts the account settings back to their defaults. */
static void test_nil_defaults(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("user['username'] = 'other'\nuser['username'] = nil\n"
	                       "user['group'] = nil\nmanage_accounts['enable'] = false\n"
	                       "manage_accounts['enable'] = nil\n",
	                       &a, &d),
	                 0);
	assert_string_equal(a.user, "git");
	assert_string_equal(a.group, "git");
	assert_true(a.manage_accounts);
	attrs_free(&a);
	diags_free(&d);
}

static void test_secret_names(void **state)
{
	(void)state;
	assert_true(env_is_secret("SECRET_TOKEN"));
	assert_true(env_is_secret("DB_PASSWORD"));
	assert_true(env_is_secret("AWS_ACCESS_KEY_ID"));
	assert_true(env_is_secret("github_token"));
	assert_false(env_is_secret("MALLOC_CONF"));
	assert_false(env_is_secret("LD_PRELOAD"));
}

/* Values composed for another format are quoted for it; a value the catalog refuses is named. */
static void test_formats_and_refusals(void **state)
{
	(void)state;
	struct attrs a;
	struct diags d;
	assert_int_equal(build("postgresql['database'] = \"it's db\"\n"
	                       "postgresql['unix_socket_directory'] = '/run/pg sock'\n"
	                       "redis['password'] = 'p@ss word/%'\n",
	                       &a, &d),
	                 0);
	const struct svc *ge = svc(&a, "gitlab-exporter");
	assert_string_equal(svc_var(ge, "connection_string"),
	                    "dbname='it\\'s db' user=gitlab host='/run/pg sock' port=5432");
	assert_string_equal(svc_var(ge, "redis_url"),
	                    "unix://:p%40ss%20word%2F%25@/var/opt/gitlab/redis/redis.socket");
	attrs_free(&a);
	diags_free(&d);

	expect_at("x = 1\npostgresql['sql_user'] = 'gitlab-psql'\n", "a superuser role", 2, 26);
	expect_at("postgresql['sql_user'] = 'postgres'\n", "postgresql['sql_user'] = 'postgres'", 1,
	          26);
	/* The superuser is whatever account runs the cluster. */
	expect_at("postgresql['username'] = 'pgadmin'\npostgresql['sql_user'] = 'pgadmin'\n",
	          "is refused", 2, 26);
	expect_at("user['username'] = 'gitlab'\npostgresql['username'] = 'gitlab'\n",
	          "would own the cluster", 2, 26);
	assert_int_equal(build("postgresql['sql_user'] = 'gitlab-psql2'\n", &a, &d), 0);
	attrs_free(&a);
	diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_root_prefix),
	    cmocka_unit_test(test_settings),
	    cmocka_unit_test(test_ports),
	    cmocka_unit_test(test_types),
	    cmocka_unit_test(test_opaque),
	    cmocka_unit_test(test_env_merge),
	    cmocka_unit_test(test_env_validation_located),
	    cmocka_unit_test(test_flags),
	    cmocka_unit_test(test_flag_styles),
	    cmocka_unit_test(test_omnibus_defaults),
	    cmocka_unit_test(test_roles_and_switch),
	    cmocka_unit_test(test_scrape_jobs),
	    cmocka_unit_test(test_argv_located),
	    cmocka_unit_test(test_user_group),
	    cmocka_unit_test(test_logging),
	    cmocka_unit_test(test_unknown_names),
	    cmocka_unit_test(test_catalog_default_located),
	    cmocka_unit_test(test_secret_names),
	    cmocka_unit_test(test_service_accounts),
	    cmocka_unit_test(test_cross_service),
	    cmocka_unit_test(test_formats_and_refusals),
	    cmocka_unit_test(test_cross_service_errors),
	    cmocka_unit_test(test_catalog_setting_errors),
	    cmocka_unit_test(test_nil_defaults),
	    cmocka_unit_test(test_fuzz_regressions),
	    cmocka_unit_test(test_conditions),
	    cmocka_unit_test(test_global_omnibus_keys),
	    cmocka_unit_test(test_summary_capped),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
