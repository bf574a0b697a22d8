/* render/yaml: plain data written as block YAML that no value can restructure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/yval.h"
#include "render/redact.h"
#include "render/template.h"
#include "render/yaml.h"

static struct yval *str(const char *s)
{
	return yval_scalar(YV_STR, s);
}

static void expect_yaml(const struct yval *v, int indent, const char *want)
{
	struct buf b;
	buf_init(&b);
	yaml_emit_value(&b, v, indent, NULL, NULL);
	buf_addc(&b, '\0');
	assert_string_equal(b.p, want);
	buf_free(&b);
}

static void test_scalars(void **state)
{
	(void)state;
	struct yval *v = str("a\"b\nc: d");
	expect_yaml(v, 0, " \"a\\\"b\\nc: d\"");
	yval_free(v);
	v = yval_scalar(YV_INT, "15");
	expect_yaml(v, 0, " 15");
	yval_free(v);
	v = yval_null();
	expect_yaml(v, 0, " null");
	yval_free(v);
	v = yval_seq();
	expect_yaml(v, 4, " []");
	yval_free(v);
	v = yval_map();
	expect_yaml(v, 4, " {}");
	yval_free(v);
}

static void test_nested(void **state)
{
	(void)state;
	struct yval *job = yval_map(), *sc = yval_seq(), *st = yval_map(), *tg = yval_seq();
	yval_push(tg, str("localhost:9100"));
	yval_put(st, "targets", tg);
	yval_put(st, "yes", yval_scalar(YV_BOOL, "true")); /* a YAML 1.1 boolean as a key */
	yval_push(sc, st);
	yval_put(job, "job_name", str("node"));
	yval_put(job, "static_configs", sc);
	yval_put(job, "a key: x", yval_seq());
	struct yval *jobs = yval_seq();
	yval_push(jobs, job);
	expect_yaml(jobs, 0,
	            "\n  - job_name: \"node\"\n"
	            "    static_configs:\n"
	            "      - targets:\n"
	            "          - \"localhost:9100\"\n"
	            "        \"yes\": true\n"
	            "    \"a key: x\": []");
	struct buf b;
	buf_init(&b);
	buf_adds(&b, "  ");
	yaml_emit_items(&b, jobs, 2, NULL, NULL);
	buf_addc(&b, '\0');
	assert_non_null(strstr(b.p, "  - job_name: \"node\"\n    static_configs:\n"));
	buf_free(&b);
	yval_free(jobs);
}

/* Each output line a gitlab.rb value starts on maps back to that gitlab.rb line. */
static void test_srcmap(void **state)
{
	(void)state;
	struct yval *m = yval_map(), *a = str("x"), *b = yval_seq();
	a->line = 7;
	b->line = 9;
	struct yval *e = str("y");
	e->line = 10;
	yval_push(b, e);
	yval_put(m, "a", a);
	yval_put(m, "b", b);
	m->line = 6;
	struct yaml_srcmap map = {0};
	struct buf out;
	buf_init(&out);
	buf_adds(&out, "# header\nkey:");
	yaml_emit_value(&out, m, 0, &map, NULL);
	buf_adds(&out, "\nafter: 1\n");
	/* line 2 key:, 3 a: "x", 4 b:, 5 - "y", 6 after: 1 */
	assert_int_equal(yaml_srcmap_find(&map, 1), 0);
	assert_int_equal(yaml_srcmap_find(&map, 2), 6);
	assert_int_equal(yaml_srcmap_find(&map, 3), 7);
	assert_int_equal(yaml_srcmap_find(&map, 4), 9);
	assert_int_equal(yaml_srcmap_find(&map, 5), 10);
	assert_int_equal(yaml_srcmap_find(&map, 6), 0);
	free(map.v);
	buf_free(&out);
	yval_free(m);
}

/* {{yamlv}} nests under the line it is on; {{yamlitems}} continues a list. */
static const char *get(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "x") == 0 ? "1" : NULL;
}

static int put(void *arg, const char *name, bool items, struct buf *out, int indent,
               struct tpl_spans *secrets)
{
	(void)secrets;
	const struct yval *v = arg;
	if (strcmp(name, "data") != 0)
		return -1;
	if (items)
		yaml_emit_items(out, v, indent, NULL, NULL);
	else
		yaml_emit_value(out, v, indent, NULL, NULL);
	return 0;
}

/* --diff's spans: credential keys and URL userinfo, one span per secret value, none nested. */
static void test_secret_spans(void **state)
{
	(void)state;
	struct yval *job = yval_map(), *ba = yval_map(), *rw = yval_map();
	yval_put(job, "job_name", str("app"));
	yval_put(ba, "username", str("u"));
	yval_put(ba, "password", str("hunter2"));
	yval_put(job, "basic_auth", ba);
	yval_put(job, "bearer_token", str("tok3n"));
	yval_put(rw, "url", str("https://me:pa%40ss@remote.example/api"));
	yval_put(rw, "plain", str("https://remote.example/a@b"));
	yval_put(job, "remote", rw);
	struct buf b, red;
	struct tpl_spans sp = {0};
	buf_init(&b);
	buf_init(&red);
	buf_adds(&b, "x:");
	yaml_emit_value(&b, job, 0, NULL, &sp);
	assert_int_equal(sp.n, 3);
	for (size_t i = 1; i < sp.n; i++)
		assert_true(sp.v[i].off >= sp.v[i - 1].off + sp.v[i - 1].len);
	redact_new(b.p, b.len, sp.v, sp.n, &red);
	buf_addc(&red, '\0');
	assert_null(strstr(red.p, "hunter2"));
	assert_null(strstr(red.p, "username"));
	assert_null(strstr(red.p, "tok3n"));
	assert_null(strstr(red.p, "pa%40ss"));
	assert_non_null(strstr(red.p, "job_name: \"app\""));
	assert_non_null(strstr(red.p, "https://remote.example/a@b"));
	tpl_spans_free(&sp);
	buf_free(&b);
	buf_free(&red);
	yval_free(job);
}

static void test_template_tags(void **state)
{
	(void)state;
	struct yval *v = yval_seq();
	yval_push(v, str("a"));
	yval_push(v, str("b"));
	struct tpl_vars vars = {.get = get, .arg = v, .put_data = put};
	const char *t = "top:\n  key: {{yamlv data}}\nlist:\n  - first\n  {{yamlitems data}}\n";
	struct buf out;
	struct diags d;
	buf_init(&out);
	diags_init(&d);
	assert_int_equal(tpl_render("t", t, strlen(t), &vars, &out, &d), 0);
	buf_addc(&out, '\0');
	assert_string_equal(out.p, "top:\n  key:\n    - \"a\"\n    - \"b\"\nlist:\n  - first\n"
	                           "  - \"a\"\n  - \"b\"\n");
	buf_reset(&out);
	const char *bad = "k: {{yamlv nosuch}}\n";
	assert_int_equal(tpl_render("t", bad, strlen(bad), &vars, &out, &d), -1);
	buf_free(&out);
	diags_free(&d);
	yval_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scalars),      cmocka_unit_test(test_nested),
	    cmocka_unit_test(test_srcmap),       cmocka_unit_test(test_template_tags),
	    cmocka_unit_test(test_secret_spans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
