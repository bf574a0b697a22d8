/*
 * Secrets as spans: the template engine records the bytes each secret
 * value's quoting produced; attrs marks what is built from a secret; the
 * diff redaction shows nothing of a secret, old or new; diagnostics keep a
 * line that may hold one to themselves.
 */
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

#include "config/attrs.h"
#include "config/rbconf.h"
#include "config/secret.h"
#include "lib/diag.h"
#include "render/redact.h"
#include "render/template.h"

/* ---- template spans ------------------------------------------------------------------- */

static const char *vals[][2] = {{"pw", "a\"b'c"}, {"plain", "hello"}, {"none", ""}, {"gone", ""}};

static const char *get(void *arg, const char *name)
{
	(void)arg;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		if (strcmp(vals[i][0], name) == 0)
			return vals[i][1];
	return NULL;
}

static char *const argv_list[] = {"/bin/x", "--pw=s3cr'et", NULL};

static char *const *get_list(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "argv") == 0 ? argv_list : NULL;
}

static int secret(void *arg, const char *name, size_t elem)
{
	(void)arg;
	if (strcmp(name, "pw") == 0)
		return TPL_SECRET_HOLDS;
	if (strcmp(name, "gone") == 0)
		return TPL_SECRET_MAY;
	if (strcmp(name, "argv") == 0)
		return elem == 1 || elem == (size_t)-1 ? TPL_SECRET_HOLDS : 0;
	return 0;
}

static char *render_spans(const char *text, struct tpl_spans *sp)
{
	struct tpl_vars v = {.get = get, .get_list = get_list, .secret = secret, .spans = sp};
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	memset(sp, 0, sizeof *sp);
	assert_int_equal(tpl_render("t", text, strlen(text), &v, &out, &d), 0);
	diags_free(&d);
	return buf_take(&out);
}

static char *span_text(const char *s, const struct tpl_span *sp)
{
	return strndup(s + sp->off, sp->len);
}

static void test_span_covers_escaped_bytes(void **state)
{
	(void)state;
	struct tpl_spans sp;
	char *s = render_spans("a: {{yaml plain}}\nauth: {{yaml pw}}\nsh {{sh pw}}\n", &sp);
	assert_int_equal(sp.n, 2);
	assert_true(sp.may);
	char *y = span_text(s, &sp.v[0]), *q = span_text(s, &sp.v[1]);
	assert_string_equal(y, "\"a\\\"b'c\""); /* YAML's escaping, quotes included */
	assert_string_equal(q, "'a\"b'\\''c'"); /* the shell's */
	struct buf r;
	buf_init(&r);
	redact_new(s, strlen(s), sp.v, sp.n, &r);
	assert_string_equal(buf_str(&r), "a: \"hello\"\nauth: " REDACTED "\nsh " REDACTED "\n");
	buf_free(&r);
	free(y);
	free(q);
	free(s);
	tpl_spans_free(&sp);
}

static void test_list_element_span(void **state)
{
	(void)state;
	struct tpl_spans sp;
	char *s = render_spans("exec {{sh* argv}}\n", &sp);
	assert_int_equal(sp.n, 1);
	char *e = span_text(s, &sp.v[0]);
	assert_string_equal(e, "'--pw=s3cr'\\''et'");
	free(e);
	free(s);
	tpl_spans_free(&sp);
}

/* A template naming a secret that is empty now, even in a block that is off: the file may have held
 * one. */
static void test_may_without_bytes(void **state)
{
	(void)state;
	struct tpl_spans sp;
	char *s = render_spans("x\n{{#if none}}auth: {{gone}}{{/if}}\n", &sp);
	assert_int_equal(sp.n, 0);
	assert_true(sp.may);
	free(s);
	tpl_spans_free(&sp);
	s = render_spans("x: {{plain}}\n", &sp);
	assert_false(sp.may);
	free(s);
	tpl_spans_free(&sp);
}

/* ---- the old side --------------------------------------------------------------------- */

static char *old_redacted(const char *old, const char *new, const struct tpl_span *sp, size_t n)
{
	struct buf b;
	buf_init(&b);
	redact_old(old, strlen(old), new, strlen(new), sp, n, &b);
	return buf_take(&b);
}

static void test_old_lines(void **state)
{
	(void)state;
	const char *new = "port: 1\n  auth: \"NEW\"\ntail\n";
	struct tpl_span sp = {16, 5}; /* "NEW" and its quotes */
	assert_int_equal(memcmp(new + sp.off, "\"NEW\"", 5), 0);
	/* Public lines stay, the secret line keeps its shape, anything else is hidden. */
	char *o = old_redacted("port: 2\n  auth: \"OLD\"\ntail\nold-line OLD2\n", new, &sp, 1);
	assert_string_equal(o, REDACTED "\n  auth: " REDACTED "\ntail\n" REDACTED "\n");
	free(o);
	/* A rotated secret alone: both sides redact to the same bytes. */
	o = old_redacted("port: 1\n  auth: \"OLD\"\ntail\n", new, &sp, 1);
	struct buf b;
	buf_init(&b);
	redact_new(new, strlen(new), &sp, 1, &b);
	assert_string_equal(o, buf_str(&b));
	buf_free(&b);
	free(o);
	/* A removed secret: no span in the new file, the old line is hidden. */
	o = old_redacted("port: 1\n  auth: \"OLD\"\n", "port: 1\n", NULL, 0);
	assert_string_equal(o, "port: 1\n" REDACTED "\n");
	free(o);
}

/* ---- attrs: what is built from a secret ------------------------------------------------- */

static const char demo_conf[] =
    "name = \"demo\";\nconfig_name = \"demo\";\nenable_default = true;\n"
    "settings = (\n"
    "  { name = \"enable\"; type = \"bool\"; default = true; },\n"
    "  { name = \"home\"; type = \"path\"; default = \"{{gitlab_data_dir}}/demo\"; },\n"
    "  { name = \"log_directory\"; type = \"path\"; default = \"{{gitlab_log_dir}}/demo\"; },\n"
    "  { name = \"env_directory\"; type = \"path\"; default = \"/e\"; },\n"
    "  { name = \"data\"; type = \"path\"; default = \"{{home}}/data\"; },\n"
    "  { name = \"bin\"; type = \"path\"; host = true; default = \"/usr/bin\"; },\n"
    "  { name = \"sock\"; type = \"path\"; default = \"/var/opt/demo/s\"; },\n"
    "  { name = \"password\"; type = \"string\"; secret = true; },\n"
    "  { name = \"url\"; type = \"string\"; default = \"redis://:{{password}}@h\"; },\n"
    "  { name = \"flags\"; type = \"flags\"; default = [ \"pw={{password}}\", \"v=1\" ]; },\n"
    "  { name = \"env\"; type = \"env\"; }\n"
    ");\n"
    "env = { URL = \"{{url}}\"; PLAIN = \"x\"; };\n"
    "base_env = { PATH = \"/bin\"; };\n"
    "command = [ \"/bin/true\", \"--url={{url}}\", \"--home={{home}}\", \"{{flags}}\" ];\n";

static int build_demo(const char *root, const char *rb, struct catalog *cat, struct attrs *a)
{
	char dir[] = "/tmp/test_secret_spans.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof path, "%s/demo.conf", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(demo_conf, fp);
	assert_int_equal(fclose(fp), 0);
	struct diags d;
	diags_init(&d);
	int rc = catalog_load(dir, cat, &d);
	unlink(path);
	rmdir(dir);
	if (rc == -1)
		diags_print(&d, stderr);
	assert_int_equal(rc, 0);
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, root, "/nonexistent/gitlab.rb"), 0);
	struct rb_file f;
	assert_int_equal(rb_parse("gitlab.rb", rb, strlen(rb), &f, &d), 0);
	rc = attrs_build(&ctl, cat, &f, a, &d);
	if (rc == -1)
		diags_print(&d, stderr);
	rb_free(&f);
	diags_free(&d);
	return rc;
}

static void test_taint(void **state)
{
	(void)state;
	struct catalog cat;
	struct attrs a;
	assert_int_equal(build_demo(NULL, "demo['password'] = 'pw'\n", &cat, &a), 0);
	const struct svc *s = attrs_svc(&a, "demo");
	assert_int_equal(svc_var_secret(s, "password"), SECRET_HOLDS);
	assert_int_equal(svc_var_secret(s, "url"), SECRET_HOLDS);
	assert_int_equal(svc_var_secret(s, "home"), SECRET_NONE);
	assert_int_equal(svc_env_secret(s, "URL"), SECRET_HOLDS);
	assert_int_equal(svc_env_secret(s, "PLAIN"), SECRET_NONE);
	assert_int_equal(svc_env_secret(s, "X_TOKEN"), SECRET_HOLDS); /* by name */
	assert_int_equal(s->argc, 5);
	assert_int_equal(s->argv_secret[1], SECRET_HOLDS);
	assert_int_equal(s->argv_secret[2], SECRET_NONE);
	assert_string_equal(s->argv[3], "--pw=pw");
	assert_int_equal(s->argv_secret[3], SECRET_HOLDS); /* a flag built from a secret */
	assert_int_equal(svc_var_secret(s, "flags"), SECRET_HOLDS);
	attrs_free(&a);
	catalog_free(&cat);
	/* Unset: built from a secret that is empty now. */
	assert_int_equal(build_demo(NULL, "", &cat, &a), 0);
	s = attrs_svc(&a, "demo");
	assert_int_equal(svc_var_secret(s, "url"), SECRET_MAY);
	assert_int_equal(svc_env_secret(s, "URL"), SECRET_MAY);
	attrs_free(&a);
	catalog_free(&cat);
}

/* Under --root every path setting but a host one stays inside the root. */
static void test_paths_under_root(void **state)
{
	(void)state;
	struct catalog cat;
	struct attrs a;
	char root[] = "/tmp/test_secret_root.XXXXXX";
	assert_non_null(mkdtemp(root));
	assert_int_equal(
	    build_demo(root, "demo['data'] = '/var/opt/x'\ndemo['bin'] = '/opt/bin'\n", &cat, &a),
	    0);
	const struct svc *s = attrs_svc(&a, "demo");
	char want[64];
	snprintf(want, sizeof want, "%s/var/opt/x", root);
	assert_string_equal(svc_var(s, "data"), want);
	assert_string_equal(svc_var(s, "bin"), "/opt/bin");
	snprintf(want, sizeof want, "%s/var/opt/demo/s", root); /* a catalog default too */
	assert_string_equal(svc_var(s, "sock"), want);
	attrs_free(&a);
	catalog_free(&cat);
	assert_int_equal(rmdir(root), 0);
}

/* ---- diagnostics ---------------------------------------------------------------------- */

static void test_guess_lines(void **state)
{
	(void)state;
	const char *t = "a = 1\nx['API_TOKEN'] =>\n  'v'\nb = 2\nredis['password'] = 'p'\n";
	unsigned char h[8] = {0};
	secret_guess_lines(t, strlen(t), h, sizeof h);
	assert_int_equal(h[1], 0);
	assert_int_equal(h[2], 1);
	assert_int_equal(h[3], 1); /* the value below its key */
	assert_int_equal(h[4], 0);
	assert_int_equal(h[5], 1);
}

static void test_hidden_line_not_printed(void **state)
{
	(void)state;
	const char *t = "gitlab_exporter['env'] = { 'API_TOKEN' => 'VALUE1', 'BAD NAME' => 1 }\n";
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	assert_int_equal(rb_parse("gitlab.rb", t, strlen(t), &f, &d), 0);
	diag_at(&d, DIAG_ERR, f.v[0].value->loc, "something about it");
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	diags_print(&d, fp);
	assert_int_equal(fclose(fp), 0);
	assert_null(strstr(buf, "VALUE1"));
	assert_non_null(strstr(buf, "gitlab.rb:1:26: error: something about it"));
	assert_non_null(strstr(buf, "line not shown"));
	free(buf);
	diags_free(&d);
	rb_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_span_covers_escaped_bytes),
	    cmocka_unit_test(test_list_element_span),
	    cmocka_unit_test(test_may_without_bytes),
	    cmocka_unit_test(test_old_lines),
	    cmocka_unit_test(test_taint),
	    cmocka_unit_test(test_paths_under_root),
	    cmocka_unit_test(test_guess_lines),
	    cmocka_unit_test(test_hidden_line_not_printed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
