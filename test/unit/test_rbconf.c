/* rbconf: every statement form and value kind, opaque extents, exact error locations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/rbconf.h"

/* Parsed files live until the test's teardown, so values can be inspected freely. */
#define POOL 128
static struct rb_file pool[POOL];
static size_t npool;

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < npool; i++)
		rb_free(&pool[i]);
	npool = 0;
	return 0;
}

static const struct rb_file *parse_ok(const char *text)
{
	assert_true(npool < POOL);
	struct rb_file *f = &pool[npool++];
	struct diags d;
	diags_init(&d);
	int rc = rb_parse("t.rb", text, strlen(text), f, &d);
	if (rc != 0 || d.n != 0) {
		diags_print(&d, stderr);
		fprintf(stderr, "input: %s\n", text);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(d.n, 0);
	diags_free(&d);
	return f;
}

/* The value of "x = EXPR". */
static const struct rb_value *val(const char *expr)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "x = %s\n", expr);
	const struct rb_file *f = parse_ok(buf);
	assert_int_equal(f->n, 1);
	assert_string_equal(f->v[0].name, "x");
	assert_int_equal(f->v[0].nkeys, 0);
	assert_false(f->v[0].call);
	return f->v[0].value;
}

static void assert_loc(struct loc l, int line, int col)
{
	if (l.line != line || l.col != col)
		fprintf(stderr, "location %d:%d, expected %d:%d\n", l.line, l.col, line, col);
	assert_int_equal(l.line, line);
	assert_int_equal(l.col, col);
}

static void assert_str(const struct rb_value *v, enum rb_kind kind, const char *s)
{
	assert_non_null(v);
	if (v->kind != kind)
		fprintf(stderr, "kind %s, expected %s\n", rb_kind_name(v->kind),
		        rb_kind_name(kind));
	assert_int_equal(v->kind, kind);
	assert_string_equal(v->u.s.ptr, s);
	assert_int_equal(v->u.s.len, strlen(s));
}

static void assert_int_val(const struct rb_value *v, long long i)
{
	assert_int_equal(v->kind, RB_INT);
	if (v->u.i != i)
		fprintf(stderr, "got %lld, expected %lld\n", v->u.i, i);
	assert_true(v->u.i == i);
}

/* ------------------------------------------------------------ statements */

static void test_statement_forms(void **state)
{
	(void)state;
	const struct rb_file *f = parse_ok("# a comment\n"
	                                   "\n"
	                                   "external_url 'https://gitlab.example.com'\n"
	                                   "roles ['a_role', 'b_role']\n"
	                                   "gitlab_rails['time_zone'] = 'UTC'\n"
	                                   "gitlab_rails['a']['b'] = 1 # trailing comment\n"
	                                   "  nginx[:listen_port] = 80;\n"
	                                   "x = nil; y = true\n"
	                                   "pages_external_url(\"http://p\")\n"
	                                   "redis[ \"bind\" ]\t=\t'127.0.0.1'\n");
	assert_int_equal(f->n, 9);

	assert_string_equal(f->v[0].name, "external_url");
	assert_true(f->v[0].call);
	assert_int_equal(f->v[0].nkeys, 0);
	assert_loc(f->v[0].loc, 3, 1);
	assert_str(f->v[0].value, RB_STR, "https://gitlab.example.com");
	assert_loc(f->v[0].value->loc, 3, 14);

	assert_string_equal(f->v[1].name, "roles");
	assert_true(f->v[1].call);
	assert_int_equal(f->v[1].value->kind, RB_ARRAY);
	assert_int_equal(f->v[1].value->u.a.n, 2);
	assert_str(f->v[1].value->u.a.v[1], RB_STR, "b_role");

	assert_false(f->v[2].call);
	assert_int_equal(f->v[2].nkeys, 1);
	assert_string_equal(f->v[2].keys[0], "time_zone");
	assert_loc(f->v[2].key_locs[0], 5, 14);
	assert_loc(f->v[2].value->loc, 5, 29);

	assert_int_equal(f->v[3].nkeys, 2);
	assert_string_equal(f->v[3].keys[0], "a");
	assert_string_equal(f->v[3].keys[1], "b");
	assert_loc(f->v[3].key_locs[1], 6, 19);
	assert_int_val(f->v[3].value, 1);

	assert_string_equal(f->v[4].name, "nginx");
	assert_loc(f->v[4].loc, 7, 3);
	assert_string_equal(f->v[4].keys[0], "listen_port");
	assert_loc(f->v[4].key_locs[0], 7, 9);

	assert_string_equal(f->v[5].name, "x");
	assert_int_equal(f->v[5].nkeys, 0);
	assert_false(f->v[5].call);
	assert_int_equal(f->v[5].value->kind, RB_NIL);
	assert_string_equal(f->v[6].name, "y");
	assert_loc(f->v[6].loc, 8, 10);

	assert_true(f->v[7].call);
	assert_str(f->v[7].value, RB_STR, "http://p");

	assert_string_equal(f->v[8].keys[0], "bind");
	assert_str(f->v[8].value, RB_STR, "127.0.0.1");
}

static void test_statements_in_order(void **state)
{
	(void)state;
	const struct rb_file *f = parse_ok("a['k'] = 1\na['k'] = 2\r\nb = 3\r\n");
	assert_int_equal(f->n, 3);
	assert_int_val(f->v[0].value, 1);
	assert_int_val(f->v[1].value, 2);
	assert_int_val(f->v[2].value, 3);
	assert_loc(f->v[2].loc, 3, 1);
}

static void test_empty_and_comment_files(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("")->n, 0);
	assert_int_equal(parse_ok("\n\n  \t\n")->n, 0);
	assert_int_equal(parse_ok("# only\n  # comments")->n, 0);
	assert_int_equal(parse_ok("x = 1")->n, 1); /* no final newline */
	/* =begin/=end block comments and __END__ */
	const struct rb_file *f = parse_ok("=begin\nif anything (\n=end\nx = 1\n__END__\nif ((\n");
	assert_int_equal(f->n, 1);
	assert_loc(f->v[0].loc, 4, 1);
}

static void test_value_on_next_line(void **state)
{
	(void)state;
	/* Ruby reads the value from the next line when '=' ends a line */
	const struct rb_file *f = parse_ok("x =\n  # why\n  [1, 2]\ny = 3\n");
	assert_int_equal(f->n, 2);
	assert_int_equal(f->v[0].value->kind, RB_ARRAY);
	assert_loc(f->v[0].value->loc, 3, 3);
}

/* ---------------------------------------------------------------- scalars */

static void test_scalars(void **state)
{
	(void)state;
	assert_int_equal(val("nil")->kind, RB_NIL);
	assert_int_equal(val("true")->kind, RB_BOOL);
	assert_true(val("true")->u.b);
	assert_false(val("false")->u.b);
	assert_int_val(val("42"), 42);
	assert_int_val(val("-42"), -42);
	assert_int_val(val("+7"), 7);
	assert_int_val(val("1_000_000"), 1000000);
	assert_int_val(val("0x1F"), 31);
	assert_int_val(val("0b101"), 5);
	assert_int_val(val("0o17"), 15);
	assert_int_val(val("0755"), 493); /* leading 0 is octal, as in Ruby */
	assert_int_val(val("0d99"), 99);
	assert_int_val(val("0"), 0);
	assert_int_val(val("9223372036854775807"), LLONG_MAX);
	assert_int_val(val("-9223372036854775808"), LLONG_MIN);
	assert_int_val(val("- 5"), -5);
	assert_int_val(val("--5"), 5);

	const struct rb_value *v = val("1.5");
	assert_int_equal(v->kind, RB_FLOAT);
	assert_true(v->u.f == 1.5);
	assert_true(val("-0.25")->u.f == -0.25);
	assert_true(val("1e3")->u.f == 1000.0);
	assert_true(val("2.5E-1")->u.f == 0.25);
	assert_true(val("1_000.5")->u.f == 1000.5);
	assert_int_equal(val("-1.5")->kind, RB_FLOAT);
	assert_loc(val("-1.5")->loc, 1, 5);
	/* unary signs before a float with a space: the parser's own, not the literal's */
	assert_true(val("- 1.5")->u.f == -1.5);
	assert_true(val("+ 2.5")->u.f == 2.5);
	/* a sign before a non-number is Ruby, not a literal */
	assert_int_equal(val("-'a'")->kind, RB_OPAQUE);
}

static void test_strings(void **state)
{
	(void)state;
	assert_str(val("'plain'"), RB_STR, "plain");
	assert_str(val("''"), RB_STR, "");
	assert_str(val("'it\\'s \\\\ \\n'"), RB_STR, "it's \\ \\n");
	assert_str(val("'multi\nline'"), RB_STR, "multi\nline");
	assert_str(val("\"a\\nb\\tc\\rd\\\\e\\\"f\""), RB_STR, "a\nb\tc\rd\\e\"f");
	assert_str(val("\"\\e\\s\\a\\b\\f\\v\""), RB_STR, "\x1b \a\b\f\v");
	assert_str(val("\"\\x41\\x7e\\101\\60\""), RB_STR, "A~A0");
	assert_str(val("\"\\u00e9\\u{1F600}\\u{41 42}\""), RB_STR,
	           "\xc3\xa9\xf0\x9f\x98\x80"
	           "AB");
	assert_str(val("\"a\\u{}b\\u{ 43  44 }\""), RB_STR, "abCD");
	assert_str(val("\"\\u20ac\""), RB_STR, "\xe2\x82\xac"); /* three bytes in UTF-8 */
	assert_str(val("\"\\q\\#{not}\""), RB_STR, "q#{not}");
	assert_str(val("\"%{issue_ref} #no\""), RB_STR, "%{issue_ref} #no");
	assert_str(val("\"line\\\ncontinued\""), RB_STR, "linecontinued");

	/* Ruby interpolates after '#' only "{", "@ivar", "@@cvar" and "$global" */
	assert_str(val("\"#@#\""), RB_STR, "#@#");
	assert_str(val("\"#@1x\""), RB_STR, "#@1x");
	assert_str(val("\"#@@\""), RB_STR, "#@@");
	assert_str(val("\"#@@.\""), RB_STR, "#@@.");
	assert_str(val("\"#$-\""), RB_STR, "#$-");
	assert_str(val("\"# #a\""), RB_STR, "# #a");
	assert_str(val("\"#@x\""), RB_OPAQUE, "\"#@x\"");
	assert_str(val("\"#@@x\""), RB_OPAQUE, "\"#@@x\"");
	assert_str(val("\"#$1\""), RB_OPAQUE, "\"#$1\"");
	assert_str(val("\"#$!\""), RB_OPAQUE, "\"#$!\"");
	assert_str(val("\"#$-w\""), RB_OPAQUE, "\"#$-w\"");
	assert_str(val("\"#$stdout\""), RB_OPAQUE, "\"#$stdout\"");

	/* "\0" is a NUL inside the string: len counts it */
	const struct rb_value *v = val("\"a\\0b\"");
	assert_int_equal(v->kind, RB_STR);
	assert_int_equal(v->u.s.len, 3);
	assert_memory_equal(v->u.s.ptr, "a\0b", 4);

	assert_str(val(":sym"), RB_SYM, "sym");
	assert_str(val(":enabled?"), RB_SYM, "enabled?");
	assert_str(val(":\"quoted sym\""), RB_SYM, "quoted sym");
	assert_str(val(":'single'"), RB_SYM, "single");
	assert_loc(val(":sym")->loc, 1, 5);
}

/* ------------------------------------------------------------- containers */

static void test_arrays(void **state)
{
	(void)state;
	const struct rb_value *v = val("[]");
	assert_int_equal(v->kind, RB_ARRAY);
	assert_int_equal(v->u.a.n, 0);

	v = val("[1, 'two', :three, nil, [4, [5]], { 'k' => 6 },]");
	assert_int_equal(v->u.a.n, 6);
	assert_int_val(v->u.a.v[0], 1);
	assert_str(v->u.a.v[1], RB_STR, "two");
	assert_str(v->u.a.v[2], RB_SYM, "three");
	assert_int_equal(v->u.a.v[3]->kind, RB_NIL);
	assert_int_equal(v->u.a.v[4]->kind, RB_ARRAY);
	assert_int_val(v->u.a.v[4]->u.a.v[1]->u.a.v[0], 5);
	assert_int_equal(v->u.a.v[5]->kind, RB_HASH);
	assert_loc(v->u.a.v[1]->loc, 1, 9);

	const struct rb_file *f = parse_ok("x = [\n  1, # one\n\n  2\n  ,3\n]\ny = 4\n");
	assert_int_equal(f->n, 2);
	v = f->v[0].value;
	assert_int_equal(v->u.a.n, 3);
	assert_loc(v->u.a.v[1]->loc, 4, 3);
	assert_loc(v->u.a.v[2]->loc, 5, 4);
	assert_loc(f->v[1].loc, 7, 1);

	/* %w and %i word lists, as GitLab's gitlab.rb template writes addresses */
	v = val("%w(127.0.0.1/32 ::1/128)");
	assert_int_equal(v->kind, RB_ARRAY);
	assert_int_equal(v->u.a.n, 2);
	assert_str(v->u.a.v[1], RB_STR, "::1/128");
	assert_loc(v->u.a.v[1]->loc, 1, 21);
	v = val("%w[a\\ b\n  c]");
	assert_int_equal(v->u.a.n, 2);
	assert_str(v->u.a.v[0], RB_STR, "a b");
	v = val("%i<x y>");
	assert_str(v->u.a.v[1], RB_SYM, "y");
	assert_int_equal(val("%w{}")->u.a.n, 0);
}

static void test_hashes(void **state)
{
	(void)state;
	const struct rb_value *v = val("{}");
	assert_int_equal(v->kind, RB_HASH);
	assert_int_equal(v->u.h.n, 0);

	v = val("{ 'a' => 1, \"b\" => 2, :c => 3, d: 4, \"e\": 5, 'f': 6, :'g' => 7, }");
	assert_int_equal(v->u.h.n, 7);
	assert_str(v->u.h.v[0].key, RB_STR, "a");
	assert_str(v->u.h.v[1].key, RB_STR, "b");
	assert_str(v->u.h.v[2].key, RB_SYM, "c");
	assert_str(v->u.h.v[3].key, RB_SYM, "d");
	assert_str(v->u.h.v[4].key, RB_SYM, "e");
	assert_str(v->u.h.v[5].key, RB_SYM, "f");
	assert_str(v->u.h.v[6].key, RB_SYM, "g");
	for (size_t i = 0; i < 7; i++)
		assert_int_val(v->u.h.v[i].val, (long long)i + 1);
	assert_loc(v->u.h.v[3].key->loc, 1, 36);
	assert_loc(v->u.h.v[3].val->loc, 1, 39);

	v = val("{\n  'outer' => {\n    'inner' => [1, 2],\n  },\n  x: nil\n}");
	assert_int_equal(v->u.h.n, 2);
	const struct rb_value *in = v->u.h.v[0].val;
	assert_int_equal(in->kind, RB_HASH);
	assert_str(in->u.h.v[0].key, RB_STR, "inner");
	assert_loc(in->u.h.v[0].key->loc, 3, 5);
	assert_int_equal(v->u.h.v[1].val->kind, RB_NIL);

	/* pairs ending an array literal are one hash, as Ruby reads [1, 'a' => 2, b: 3] */
	v = val("[1, 'a' => 2, b: 3,\n :c => 4]");
	assert_int_equal(v->kind, RB_ARRAY);
	assert_int_equal(v->u.a.n, 2);
	in = v->u.a.v[1];
	assert_int_equal(in->kind, RB_HASH);
	assert_int_equal(in->u.h.n, 3);
	assert_str(in->u.h.v[0].key, RB_STR, "a");
	assert_str(in->u.h.v[1].key, RB_SYM, "b");
	assert_str(in->u.h.v[2].key, RB_SYM, "c");
	assert_loc(in->loc, 1, 9);
	v = val("[ 'targets' => ['h:1'], ]");
	assert_int_equal(v->u.a.n, 1);
	assert_str(v->u.a.v[0]->u.h.v[0].key, RB_STR, "targets");
	v = val("['a', \"b\"]"); /* strings alone stay strings */
	assert_str(v->u.a.v[1], RB_STR, "b");

	/* a Ruby symbol key with a Ruby keyword's name */
	v = val("{ if: 1, end: 2 }");
	assert_str(v->u.h.v[0].key, RB_SYM, "if");
	assert_str(v->u.h.v[1].key, RB_SYM, "end");
}

/* -------------------------------------------------------------- arithmetic */

static void test_arithmetic(void **state)
{
	(void)state;
	assert_int_val(val("200 * 1024 * 1024"), 209715200);
	assert_int_val(val("24 * 60 * 60"), 86400);
	assert_int_val(val("1 + 2 * 3"), 7);
	assert_int_val(val("(1 + 2) * 3"), 9);
	assert_int_val(val("10 - 4 - 3"), 3);
	assert_int_val(val("100 / 10 / 5"), 2);
	assert_int_val(val("2 * -3"), -6);
	assert_int_val(val("-(2 + 3) * 2"), -10);
	assert_int_val(val("((((7))))"), 7);
	assert_int_val(val("7 / 2"), 3);
	assert_int_val(val("-7 / 2"), -4); /* Ruby rounds toward -infinity */
	assert_int_val(val("7 / -2"), -4);
	assert_int_val(val("-7 / -2"), 3);
	assert_int_val(val("1_000 * 1_000"), 1000000);
	assert_int_val(val("0x10 + 0b1 + 010"), 25);
	assert_int_val(val("9223372036854775807 - 1 + 1"), LLONG_MAX);
	assert_int_val(val("-9223372036854775807 - 1"), LLONG_MIN);
	assert_int_val(val("1 +\n  2 *\n  3"), 7); /* continued after an operator */
	assert_loc(val("2 * 3")->loc, 1, 5);

	/* floats and strings in arithmetic are Ruby we leave alone */
	assert_str(val("1.5 * 2"), RB_OPAQUE, "1.5 * 2");
	assert_str(val("'a' + 'b'"), RB_OPAQUE, "'a' + 'b'");
	assert_str(val("2 ** 10"), RB_OPAQUE, "2 ** 10");
	assert_str(val("7 % 3"), RB_OPAQUE, "7 % 3");
}

/* ------------------------------------------------------------------ opaque */

static const struct {
	const char *expr, *text;
} opaque_cases[] = {
    {"ENV['X']", "ENV['X']"},
    {"ENV.fetch('X', 'y')", "ENV.fetch('X', 'y')"},
    {"File.read('/etc/x').strip # comment", "File.read('/etc/x').strip"},
    {"\"http://#{node['fqdn']}:8080\"", "\"http://#{node['fqdn']}:8080\""},
    {"\"a #{ {'b' => \"}\"}['b'] } c\"", "\"a #{ {'b' => \"}\"}['b'] } c\""},
    {"\"#@ivar\"", "\"#@ivar\""},
    {"%w(a (b) c)", "%w(a (b) c)"},
    {"%Q|#{a}|", "%Q|#{a}|"},
    {"%(x)", "%(x)"},
    {"1..5", "1..5"},
    {"cond ? 1 : 2", "cond ? 1 : 2"},
    {"'a' 'b'", "'a' 'b'"},
    {"[1, 2].first", "[1, 2].first"},
    {"{ 'a' => 1 }.merge(b)", "{ 'a' => 1 }.merge(b)"},
    {"/ab+c/i", "/ab+c/i"},
    {"`hostname`.chomp", "`hostname`.chomp"},
    {"Gitlab::Foo::BAR", "Gitlab::Foo::BAR"},
    {"::Foo", "::Foo"},
    {"$stdin", "$stdin"},
    {"node['a']['b'] || 'x'", "node['a']['b'] || 'x'"},
    {"a and b", "a and b"},
    {"!true", "!true"},
    {"->(x) { x }", "->(x) { x }"},
    {"?a", "?a"},
    {"foo 'x', 'y'", "foo 'x', 'y'"},
    {"'x'.\n  strip", "'x'.\n  strip"},
    {"'x'\n  .strip\n  &.chomp", "'x'\n  .strip\n  &.chomp"},
    {"1 +\\\n 2.0", "1 +\\\n 2.0"},
    {"\"\\M-a\"", "\"\\M-a\""},
    {"<<~EOS.strip\n  body\n  EOS", "<<~EOS.strip\n  body\n  EOS"},
    {"foo(:\"a b\", :'c d', :e?)", "foo(:\"a b\", :'c d', :e?)"},
    {"foo(@ivar, @@cvar)", "foo(@ivar, @@cvar)"},
    {"[?\xc3\xa9, ?\\n].join", "[?\xc3\xa9, ?\\n].join"},
    {"foo(\"a\\\"b\")", "foo(\"a\\\"b\")"},
    {"foo(a; b)", "foo(a; b)"},
    {"cond ? :a : :b", "cond ? :a : :b"},
    {"$~", "$~"},
};

static void test_opaque_extents(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof opaque_cases / sizeof *opaque_cases; i++) {
		char buf[512];
		snprintf(buf, sizeof buf, "x = %s\ny = 1\n", opaque_cases[i].expr);
		const struct rb_file *f = parse_ok(buf);
		if (f->n != 2 || f->v[0].value->kind != RB_OPAQUE ||
		    strcmp(f->v[0].value->u.s.ptr, opaque_cases[i].text) != 0)
			fprintf(stderr, "case %zu: %s -> %s [%s]\n", i, opaque_cases[i].expr,
			        rb_kind_name(f->v[0].value->kind),
			        f->v[0].value->kind == RB_OPAQUE ? f->v[0].value->u.s.ptr : "");
		assert_int_equal(f->n, 2);
		assert_str(f->v[0].value, RB_OPAQUE, opaque_cases[i].text);
		assert_loc(f->v[0].value->loc, 1, 5);
		assert_string_equal(f->v[1].name, "y");
	}
}

static void test_opaque_inside_literals(void **state)
{
	(void)state;
	const struct rb_file *f =
	    parse_ok("gitlab_exporter['env'] = {\n  'A' => 'literal',\n  'X' => ENV['Y'],\n  "
	             "'Z' => \"#{x}\" }\n");
	const struct rb_value *h = f->v[0].value, *where = NULL;
	assert_int_equal(h->kind, RB_HASH);
	assert_int_equal(h->u.h.n, 3);
	assert_str(h->u.h.v[0].val, RB_STR, "literal");
	assert_str(h->u.h.v[1].val, RB_OPAQUE, "ENV['Y']");
	assert_loc(h->u.h.v[1].val->loc, 3, 10);
	assert_str(h->u.h.v[2].val, RB_OPAQUE, "\"#{x}\"");
	assert_true(rb_has_opaque(h, &where));
	assert_ptr_equal(where, h->u.h.v[1].val);
	assert_false(rb_has_opaque(h->u.h.v[0].val, NULL));

	const struct rb_value *a = val("[1, ENV['A'], [File.read('x')], 'b']");
	assert_int_equal(a->kind, RB_ARRAY);
	assert_int_equal(a->u.a.n, 4);
	assert_str(a->u.a.v[1], RB_OPAQUE, "ENV['A']");
	assert_loc(a->u.a.v[1]->loc, 1, 9);
	assert_str(a->u.a.v[2]->u.a.v[0], RB_OPAQUE, "File.read('x')");
	assert_true(rb_has_opaque(a, &where));
	assert_ptr_equal(where, a->u.a.v[1]);

	/* a hash whose keys are not literal is opaque as a whole */
	assert_str(val("{ ENV['K'] => 1 }"), RB_OPAQUE, "{ ENV['K'] => 1 }");
	/* a literal followed by more Ruby is opaque as a whole */
	assert_str(val("{ 'a' => [1, ENV['B']] }.to_a"), RB_OPAQUE,
	           "{ 'a' => [1, ENV['B']] }.to_a");
	assert_false(rb_has_opaque(val("[1, {'a' => [nil]}]"), NULL));
}

/* ---------------------------------------------------------------- heredocs */

static void test_heredocs(void **state)
{
	(void)state;
	const struct rb_file *f = parse_ok("gitlab_rails['ldap_servers'] = YAML.load <<-'EOS'\n"
	                                   "  main: # 'main' is the provider ID\n"
	                                   "    label: 'LDAP'\n"
	                                   "    password: \"unbalanced ' quote ( [\"\n"
	                                   "  EOS\n"
	                                   "gitlab_rails['ldap_enabled'] = true\n");
	assert_int_equal(f->n, 2);
	assert_str(f->v[0].value, RB_OPAQUE,
	           "YAML.load <<-'EOS'\n  main: # 'main' is the provider ID\n    label: 'LDAP'\n"
	           "    password: \"unbalanced ' quote ( [\"\n  EOS");
	assert_loc(f->v[0].value->loc, 1, 32);
	assert_loc(f->v[1].loc, 6, 1);
	assert_true(f->v[1].value->u.b);

	/* each flavour: <<~ and <<- allow an indented terminator, << wants column 1 */
	static const struct {
		const char *src, *text;
	} cases[] = {
	    {"x = <<~EOS\n  a\n  EOS\ny = 1\n", "<<~EOS\n  a\n  EOS"},
	    {"x = <<-EOS\n  a\n\tEOS\ny = 1\n", "<<-EOS\n  a\n\tEOS"},
	    {"x = <<EOS\n  EOS\nEOS\ny = 1\n", "<<EOS\n  EOS\nEOS"},
	    {"x = <<'EOS'\n#{not interpolated}\nEOS\ny = 1\n", "<<'EOS'\n#{not interpolated}\nEOS"},
	    {"x = <<~\"EOS\"\n  #{a}\n  EOS\ny = 1\n", "<<~\"EOS\"\n  #{a}\n  EOS"},
	    {"x = f(<<A, <<B)\na\nA\nb\nB\ny = 1\n", "f(<<A, <<B)\na\nA\nb\nB"},
	    {"x = <<~EOS # comment\n  a\nEOS\ny = 1\n", "<<~EOS # comment\n  a\nEOS"},
	    {"x = <<EOS\r\nbody\r\nEOS\r\ny = 1\n", "<<EOS\r\nbody\r\nEOS"},
	    {"x = <<EOS\nEOSX\nEOS\ny = 1\n", "<<EOS\nEOSX\nEOS"},
	    {"x = <<EOS; y = 1\nbody\nEOS\n", "<<EOS"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		f = parse_ok(cases[i].src);
		assert_int_equal(f->n, 2);
		assert_str(f->v[0].value, RB_OPAQUE, cases[i].text);
		assert_string_equal(f->v[1].name, "y");
	}

	/* a heredoc element inside a literal array: the body follows the line */
	f = parse_ok("x = [<<~A, 2,\n  body ]\n  A\n  3]\ny = 1\n");
	assert_int_equal(f->n, 2);
	assert_int_equal(f->v[0].value->u.a.n, 3);
	assert_str(f->v[0].value->u.a.v[0], RB_OPAQUE, "<<~A");
	assert_int_val(f->v[0].value->u.a.v[2], 3);
	assert_loc(f->v[0].value->u.a.v[2]->loc, 4, 3);

	/* a shift operator is not a heredoc */
	assert_str(val("a << b"), RB_OPAQUE, "a << b");
	assert_str(val("[1] << 2"), RB_OPAQUE, "[1] << 2");
	assert_str(val("1 << 2"), RB_OPAQUE, "1 << 2");
}

/* --------------------------------------------------------------- malformed */

static const struct bad {
	const char *src;
	int line, col;
	const char *msg;
} bad_cases[] = {
    {"x = [1, 2\ny = 3\n", 1, 10, "expected ',' or ']' after the array element at 1:9, found 'y'"},
    {"x = [1, 2\n", 2, 1, "expected ']' to close '[' at 1:5"},
    {"x = [1, 2}\n", 1, 10, "expected ']' to close '[' at 1:5"},
    {"x = {'a' => 1\n", 2, 1, "expected '}' to close '{' at 1:5"},
    {"x = (1 + 2\n", 2, 1, "expected ')' to close '(' at 1:5"},
    {"x = ENV['a'\n", 2, 1, "expected ']' to close '[' at 1:8"},
    {"x = foo(]\n", 1, 9, "expected ')' to close '(' at 1:8"},
    {"x = ]\n", 1, 5, "expected a value, found ']'"},
    {"x = 1)\n", 1, 6, "unexpected ')'"},
    {"a = 1\nx = 'abc\n", 2, 5, "unterminated string opened here"},
    {"x = \"abc\n\n", 1, 5, "unterminated string opened here"},
    {"x = \"a#{b\n", 1, 5, "unterminated string opened here"},
    {"x = `ls\n", 1, 5, "unterminated string opened here"},
    {"x = %w[a b\n", 1, 5, "unterminated %-literal"},
    {"y = 1\nx = YAML.load <<-'EOS'\n  a\n", 2, 15, "unterminated heredoc"},
    {"x = <<EOS\n  EOS\n", 1, 5, "unterminated heredoc: no line 'EOS'"},
    {"x = <<EOS", 1, 5, "unterminated heredoc"},
    {"if foo\n  x = 1\n", 1, 1, "'if' has no matching 'end'"},
    {"unless foo\n  x = 1\nelse\n", 1, 1, "'unless' has no matching 'end'"},
    {"x = 1 if\n", 1, 7, "expected a condition after 'if'"},
    {"x = 1\nx = 2 while y\n", 2, 7, "'while' modifiers are not supported"},
    {"x = 1 rescue nil\n", 1, 7, "'rescue' modifiers are not supported"},
    {"if\n  x = 1\nend\n", 1, 1, "expected a condition after 'if'"},
    {"if a then\n", 1, 1, "'if' has no matching 'end'"},
    {"if a\n  case b\n  when 1\n    x = 1\nend\n", 1, 1, "'if' has no matching 'end'"},
    {"if a\nend\nend\n", 3, 1, "unexpected 'end'"},
    {"else\n  x = 1\nend\n", 1, 1, "unexpected 'else'"},
    {"x = 1\nelsif y\n", 2, 1, "unexpected 'elsif'"},
    {"if a\nelse\nelsif b\nend\n", 3, 1, "unexpected 'elsif'"},
    {"if a\nelse\nelse\nend\n", 3, 1, "unexpected 'else'"},
    {"unless a\nelsif b\nend\n", 2, 1, "unexpected 'elsif'"},
    {"if a\nwhen 1\nend\n", 2, 1, "unexpected 'when'"},
    {"case x\nwhen 1\nelse\nwhen 2\nend\n", 4, 1, "unexpected 'when'"},
    {"case x\n  y = 1\nend\n", 2, 3, "expected 'when' after 'case', found 'y'"},
    {"case x\nin 1\nend\n", 2, 1, "expected 'when' after 'case', found 'in'"},
    {"case x\nwhen\nend\n", 2, 1, "expected a condition after 'when'"},
    {"if a\n  x = 1\nthen\nend\n", 3, 1, "unexpected 'then'"},
    {"x = 1 then\n", 1, 7, "unexpected 'then'"},
    {"if a x = 1 end\n", 1, 12, "unexpected 'end' after the condition of 'if'"},
    {"if a\n  x = 1\nend while b\n", 3, 5, "'while' is not supported"},
    {"if a\n  x = 1\nend.foo\n", 3, 4, "unexpected '.' after value"},
    {"x = if a then 1 else 2 end\n", 1, 5, "'if' cannot be used inside a value"},
    {"x = (1 if a)\n", 1, 8, "'if' cannot be used inside a value"},
    {"x = \"#{1 if a}\"\n", 1, 10, "'if' cannot be used inside a value"},
    {"if a\n  x = [1].each do |y|\n  end\nend\n", 2, 16, "blocks ('do ... end')"},
    {"if a\n  while b\n  end\nend\n", 2, 3, "'while' is not supported"},
    {"unless a\n  def f\n  end\nend\n", 2, 3, "'def' definitions are not supported"},
    {"case a\nwhen 1\n  require 'x'\nend\n", 3, 3, "'require' is not supported"},
    {"if a\n  begin\n  end\nend\n", 2, 3, "'begin' is not supported"},
    {"if a\n  x = 1\n__END__\nend\n", 1, 1, "'if' has no matching 'end'"},
    {"if a\n  x = 'end\nend\n", 2, 7, "unterminated string opened here"},
    {"x = [1].each do |y|\nend\n", 1, 14, "blocks ('do ... end')"},
    {"x = [1].map { |y| y }\n", 1, 13, "blocks ('{ |...| ... }')"},
    {"x = foo(a) do\nend\n", 1, 12, "blocks ('do"},
    {"require 'yaml'\n", 1, 1, "'require' is not supported"},
    {"x = 1\n  require_relative 'x'\n", 2, 3, "'require_relative' is not supported"},
    {"def foo\nend\n", 1, 1, "'def' definitions are not supported"},
    {"while true\nend\n", 1, 1, "'while' is not supported"},
    {"begin\n  x = 1\nend\n", 1, 1, "'begin' is not supported"},
    {"x = begin 1 end\n", 1, 5, "'begin' is not supported"},
    {"x = 1\nend\n", 2, 1, "unexpected 'end'"},
    {"x =\n", 1, 4, "missing value after '='"},
    {"x = # nothing\n", 1, 5, "missing value after '='"},
    {"x = ", 1, 5, "missing value after '='"},
    {"x =\ny = 1\n", 1, 4, "missing value after '='"},
    {"x = 1 2\n", 1, 7, "unexpected '2' after value"},
    {"x = 'a' foo\n", 1, 9, "unexpected 'foo' after value"},
    {"x = [1] 2\n", 1, 9, "unexpected '2' after value"},
    {"x = foo(1) 'a'\n", 1, 12, "unexpected \"'\" after value"},
    {"x = [1 2]\n", 1, 8, "expected ',' or ']' after the array element at 1:6, found '2'"},
    {"x = { 'a' 1 }\n", 1, 11, "expected '=>' after hash key"},
    {"x = {'a' => 1 'b' => 2}\n", 1, 15, "expected ',' or '}' after the hash entry at 1:6"},
    {"x = [1, , 2]\n", 1, 9, "expected a value, found ','"},
    {"x = 1 +\n", 2, 1, "expected a value, found end of file"},
    {"x = [1 +]\n", 1, 9, "expected a value, found ']'"},
    {"x = < 1\n", 1, 5, "expected a value, found '<'"},
    {"x = \x01\n", 1, 5, "unexpected control character 0x01"},
    {"Foo = 1\n", 1, 1, "expected a setting name, found 'Foo'"},
    {"@x = 1\n", 1, 1, "expected a setting name, found '@'"},
    {"  [1, 2]\n", 1, 3, "expected a setting name, found '['"},
    {"name\n", 1, 5, "expected '=' or a value after 'name', found end of line"},
    {"node.default['x'] = 1\n", 1, 5, "expected '=' or a value after 'node', found '.'"},
    {"x == 1\n", 1, 3, "expected '=' or a value after 'x', found '='"},
    {"gitlab_rails['a'] 1\n", 1, 19, "expected '=' after 'gitlab_rails[...]', found '1'"},
    {"gitlab_rails['a'].merge!(b)\n", 1, 18, "expected '=' after 'gitlab_rails[...]'"},
    {"gitlab_rails[1] = 2\n", 1, 14, "expected a literal string or symbol key"},
    {"gitlab_rails[\"#{x}\"] = 2\n", 1, 14, "expected a literal string or symbol key"},
    {"gitlab_rails['a' = 2\n", 1, 18, "expected ']' to close '[' at 1:13"},
    {"x += 1\n", 1, 3, "only '=' assignments"},
    {"gitlab_rails['a'] ||= 1\n", 1, 19, "only '=' assignments"},
    {"x = 9223372036854775807 + 1\n", 1, 25, "integer overflow in '+'"},
    {"x = -9223372036854775807 - 2\n", 1, 26, "integer overflow in '-'"},
    {"x = 4611686018427387904 * 2\n", 1, 25, "integer overflow in '*'"},
    {"x = (-9223372036854775807 - 1) / -1\n", 1, 32, "integer overflow in '/'"},
    {"x = -(-9223372036854775807 - 1)\n", 1, 5, "integer overflow"},
    {"x = 1 / 0\n", 1, 7, "division by zero"},
    {"x = [1,\n  2 / (3 - 3)]\n", 2, 5, "division by zero"},
    {"x = 99999999999999999999\n", 1, 5, "integer literal out of range"},
    {"x = -9223372036854775809\n", 1, 5, "integer literal out of range"},
    {"x = 1e400\n", 1, 5, "float literal out of range"},
    {"x = 1_\n", 1, 6, "misplaced '_'"},
    {"x = 1__0\n", 1, 6, "misplaced '_'"},
    {"x = 0x\n", 1, 7, "malformed number"},
    {"x = 08\n", 1, 6, "malformed number"},
    {"x = 12abc\n", 1, 5, "12abc is not a number: quote it: '12abc'"},
    {"x = \"\\xZZ\"\n", 1, 6, "invalid hex escape"},
    {"x = \"ab\\u12\"\n", 1, 8, "invalid Unicode escape"},
    {"x = \"\\u{110000}\"\n", 1, 6, "invalid Unicode escape"},
    {"x = \"\\uD800\"\n", 1, 6, "invalid Unicode escape"},
    {"x = \"\\u{0000041}\"\n", 1, 6, "invalid Unicode escape"},
    {"x = \"\\u{41\"\n", 1, 6, "invalid Unicode escape"},
    {"=begin\nnever closed\n", 1, 1, "unterminated '=begin' comment"},
    {"x = 1 \\ 2\n", 1, 7, "unexpected '\\'"},
    {"\tx = [1,\n\t\t2\n", 3, 1, "expected ']' to close '[' at 1:6"},
    {"x = {a: 1 if}\n", 1, 11, "'if' cannot be used inside a value"},
    {"x = [1 unless a]\n", 1, 8, "'unless' cannot be used inside a value"},
    {"x = 1; y = ; z = 2\n", 1, 12, "missing value after '='"},
    /* fuzz_attrs: a NUL in a subscript silently named another setting */
    {"x[\"MALLOC_CONF\\0y\"] = 1\n", 1, 3, "a subscript key cannot contain a NUL byte"},
    {"x = 1.5abc\n", 1, 5, "1.5abc is not a number: quote it: '1.5abc'"},
    {"x = 1 'a'\n", 1, 7, "unexpected \"'\" after value"},
};

static void check_bad(const struct bad *b)
{
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	int rc = rb_parse("bad.rb", b->src, strlen(b->src), &f, &d);
	if (rc != -1 || d.nerr != 1 || d.v[0].line != b->line || d.v[0].col != b->col ||
	    strstr(d.v[0].msg, b->msg) == NULL) {
		fprintf(stderr, "input: ");
		for (const char *s = b->src; *s; s++)
			fprintf(stderr, *s == '\n' ? "\\n" : "%c", *s);
		fprintf(stderr, "\nexpected %d:%d %s, got:\n", b->line, b->col, b->msg);
		diags_print(&d, stderr);
	}
	assert_int_equal(rc, -1);
	assert_int_equal(d.nerr, 1);
	assert_string_equal(d.v[0].file, "bad.rb");
	assert_int_equal(d.v[0].line, b->line);
	assert_int_equal(d.v[0].col, b->col);
	assert_non_null(strstr(d.v[0].msg, b->msg));
	assert_int_equal(f.n, 0);
	rb_free(&f);
	diags_free(&d);
}

static void test_malformed(void **state)
{
	(void)state;
	size_t n = sizeof bad_cases / sizeof *bad_cases;
	assert_true(n >= 30);
	for (size_t i = 0; i < n; i++)
		check_bad(&bad_cases[i]);
}

/* Operators' common mistakes: the whole message, golden, says what to write instead. */
static const struct bad golden_cases[] = {
    {"redis['port'] = \xe2\x80\x98"
     "6379\xe2\x80\x99\n",
     1, 17, "typographic quote U+2018 LEFT SINGLE QUOTATION MARK: use '"},
    {"x = ['a', \xe2\x80\x99"
     "b']\n",
     1, 11, "typographic quote U+2019 RIGHT SINGLE QUOTATION MARK: use '"},
    {"x = {'a' => \xe2\x80\x9c"
     "b\xe2\x80\x9d}\n",
     1, 13, "typographic quote U+201C LEFT DOUBLE QUOTATION MARK: use \""},
    {"x = ENV[\xe2\x80\x9d"
     "a\xe2\x80\x9d]\n",
     1, 9, "typographic quote U+201D RIGHT DOUBLE QUOTATION MARK: use \""},
    {"redis[\xe2\x80\x98port\xe2\x80\x99] = 1\n", 1, 7,
     "typographic quote U+2018 LEFT SINGLE QUOTATION MARK: use '"},
    {"gitlab_exporter['enable'] => true\n", 1, 27, "use '=' to assign; '=>' is for hash entries"},
    {"external_url => 'x'\n", 1, 14, "use '=' to assign; '=>' is for hash entries"},
    {"redis['maxmemory'] = 512mb\n", 1, 22, "512mb is not a number: quote it: '512mb'"},
    {"x = [-1GB]\n", 1, 6, "-1GB is not a number: quote it: '-1GB'"},
    {"external_url 'http://x\ngitlab_rails['time_zone'] = 'UTC'\n", 1, 14,
     "unterminated string opened here: the quote at 2:14 closes it, and what follows does not "
     "parse"},
    {"x = \"a\ny = \"b\"\n", 1, 5,
     "unterminated string opened here: the quote at 2:5 closes it, and what follows does not "
     "parse"},
    {"x = ENV['a\ny = 'b']\n", 1, 9,
     "unterminated string opened here: the quote at 2:5 closes it, and what follows does not "
     "parse"},
    {"x = 'a\n", 1, 5, "unterminated string opened here"},
    {"x = '9168\xe2\x80\x99\n", 1, 5,
     "unterminated string opened here: U+2019 RIGHT SINGLE QUOTATION MARK at 1:10 does not "
     "close it: use '"},
    {"x = '9168\xe2\x80\x99\ny = 'a'\n", 1, 5,
     "unterminated string opened here: U+2019 RIGHT SINGLE QUOTATION MARK at 1:10 does not "
     "close it: use '"},
    {"x = \"a\xe2\x80\x9d\n", 1, 5,
     "unterminated string opened here: U+201D RIGHT DOUBLE QUOTATION MARK at 1:7 does not "
     "close it: use \""},
    {"x = {'a' => 'b'\n  'c' => 'd'}\n", 1, 16,
     "expected ',' or '}' after the hash entry at 1:6, found \"'\""},
    {"x = {'a' => 'b' 'c' => 'd'}\n", 1, 17,
     "expected ',' or '}' after the hash entry at 1:6, found \"'\""},
    {"x = {'a' => 'b'\ny = 1\n", 1, 16,
     "expected ',' or '}' after the hash entry at 1:6, found 'y'"},
    {"x = {'a' => [1, 2]\n  'b' => 1}\n", 1, 19,
     "expected ',' or '}' after the hash entry at 1:6, found \"'\""},
    {"x = ['a'\n  'b']\n", 1, 9, "expected ',' or ']' after the array element at 1:6, found \"'\""},
    {"x = ['a' => 1\n  'b' => 2]\n", 1, 14,
     "expected ',' or ']' after the hash entry at 1:6, found \"'\""},
};

/* Conditions are skipped, never evaluated: what the parser cannot skip says why. */
static const struct bad golden_conditions[] = {
    {"if node['fqdn'] == 'a'\n  gitlab_rails['x'] = 1\n", 1, 1,
     "'if' has no matching 'end': add 'end' after its last statement"},
    {"gitlab_rails['x'] = 1\nend\n", 2, 1, "unexpected 'end'"},
    {"gitlab_rails['x'] = 1 while ENV['Y']\n", 1, 23,
     "'while' modifiers are not supported in gitlab.rb: conditions are not evaluated; write "
     "the setting this host needs without it"},
    {"gitlab_rails['x'] = if ENV['Y'] then 1 else 2 end\n", 1, 21,
     "'if' cannot be used inside a value in gitlab.rb: conditions are not evaluated; write the "
     "value this host needs"},
    {"case node['fqdn']\ngitlab_rails['x'] = 1\nend\n", 2, 1,
     "expected 'when' after 'case', found 'gitlab_rails'"},
    {"gitlab_rails['x'] = 1 if\n", 1, 23, "expected a condition after 'if'"},
};

static void check_golden(const struct bad *b)
{
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	int rc = rb_parse("bad.rb", b->src, strlen(b->src), &f, &d);
	if (rc != -1 || d.nerr != 1 || strcmp(d.v[0].msg, b->msg) != 0) {
		fprintf(stderr, "input: %s\nexpected %d:%d %s, got:\n", b->src, b->line, b->col,
		        b->msg);
		diags_print(&d, stderr);
	}
	assert_int_equal(rc, -1);
	assert_int_equal(d.nerr, 1);
	assert_string_equal(d.v[0].msg, b->msg);
	assert_int_equal(d.v[0].line, b->line);
	assert_int_equal(d.v[0].col, b->col);
	rb_free(&f);
	diags_free(&d);
}

static void test_operator_mistakes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof golden_cases / sizeof *golden_cases; i++)
		check_golden(&golden_cases[i]);
	for (size_t i = 0; i < sizeof golden_conditions / sizeof *golden_conditions; i++)
		check_golden(&golden_conditions[i]);
}

static void test_nul_byte_inside(void **state)
{
	(void)state;
	/* strlen() cannot express this one: a NUL in the middle of the buffer */
	static const char src[] = "x = 1\ny = 'a\0b'\n";
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	assert_int_equal(rb_parse("n.rb", src, sizeof src - 1, &f, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, 7);
	assert_string_equal(d.v[0].msg, "NUL byte in file");
	rb_free(&f);
	diags_free(&d);
}

static void test_diag_caret(void **state)
{
	(void)state;
	const char *src = "external_url 'x'\n\tgitlab_rails['a'] = [1,\n  2 3]\n";
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	assert_int_equal(rb_parse("etc/gitlab.rb", src, strlen(src), &f, &d), -1);
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	assert_non_null(fp);
	diags_print(&d, fp);
	fclose(fp);
	assert_string_equal(out, "etc/gitlab.rb:3:5: error: expected ',' or ']' after the array "
	                         "element at 3:3, found '3'\n"
	                         "    2 3]\n"
	                         "      ^\n");
	free(out);
	diags_free(&d);
	rb_free(&f);

	/* a tab-indented line keeps its tab under the caret */
	src = "\tx = 'open\n";
	diags_init(&d);
	assert_int_equal(rb_parse("g.rb", src, strlen(src), &f, &d), -1);
	fp = open_memstream(&out, &len);
	diags_print(&d, fp);
	fclose(fp);
	assert_string_equal(out, "g.rb:1:6: error: unterminated string opened here\n"
	                         "  \tx = 'open\n"
	                         "  \t    ^\n");
	free(out);
	diags_free(&d);
	rb_free(&f);
}

/* ------------------------------------------------------------------ limits */

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t len = strlen(head) + strlen(unit) * n + strlen(tail) + 1;
	char *s = malloc(len);
	assert_non_null(s);
	strcpy(s, head);
	for (size_t i = 0; i < n; i++)
		strcat(s, unit);
	strcat(s, tail);
	return s;
}

/* ------------------------------------------------------------- conditions */

static void assert_cond(const struct rb_stmt *st, const char *word, int line, int col)
{
	if (word == NULL) {
		assert_null(st->cond.word);
		return;
	}
	assert_non_null(st->cond.word);
	assert_string_equal(st->cond.word, word);
	assert_loc(st->cond.loc, line, col);
}

/* Blocks and modifiers are skipped; each statement inside one names the outermost keyword. */
static void test_conditions(void **state)
{
	(void)state;
	const struct rb_file *f = parse_ok("if ENV['GITLAB_HOST'] == 'a'\n"
	                                   "  gitlab_rails['smtp_enable'] = true\n"
	                                   "end\n"
	                                   "gitlab_rails['ldap_enabled'] = true unless "
	                                   "node['fqdn'].nil?\n"
	                                   "case node['hostname']\n"
	                                   "when 'x' then nginx['listen_port'] = 81\n"
	                                   "else\n"
	                                   "  nginx['listen_port'] = 80\n"
	                                   "end\n"
	                                   "nginx['enable'] = true\n");
	assert_int_equal(f->n, 5);
	assert_cond(&f->v[0], "if", 1, 1);
	assert_loc(f->v[0].loc, 2, 3);
	assert_true(f->v[0].value->u.b);
	assert_cond(&f->v[1], "unless", 4, 37);
	assert_cond(&f->v[2], "case", 5, 1);
	assert_loc(f->v[2].loc, 6, 15);
	assert_int_val(f->v[2].value, 81);
	assert_cond(&f->v[3], "case", 5, 1);
	assert_int_val(f->v[3].value, 80);
	assert_cond(&f->v[4], NULL, 0, 0);

	/* nested blocks, elsif/else branches, a modifier inside a block: the outermost keyword */
	f = parse_ok("unless a\n  if b\n    x = 1\n  elsif c then x = 2\n  else x = 3 if d\n  end\n"
	             "end\ny = 4 if e unless f\n");
	assert_int_equal(f->n, 4);
	for (size_t i = 0; i < 3; i++)
		assert_cond(&f->v[i], "unless", 1, 1);
	assert_int_val(f->v[2].value, 3);
	assert_cond(&f->v[3], "if", 8, 7);

	/* one-line forms, ';', comments, a case without subject */
	f = parse_ok("if a then x = 1 else x = 2 end; y = 3\ncase a when 1 then x = 4 end\n"
	             "case # c\nwhen a; x = 5 # c\nend # c\nif a; end\n");
	assert_int_equal(f->n, 5);
	assert_cond(&f->v[1], "if", 1, 1);
	assert_cond(&f->v[2], NULL, 0, 0);
	assert_cond(&f->v[3], "case", 2, 1);
	assert_cond(&f->v[4], "case", 3, 1);
	/* 'then' on a line of its own */
	f = parse_ok("if a;\n  # c\nthen x = 1\nend\ncase b\nwhen 1\nthen\n  x = 2\nend\n");
	assert_int_equal(f->n, 2);
	assert_cond(&f->v[1], "case", 5, 1);

	/* keywords in strings, heredocs, symbols, regexps, method names and labels */
	f = parse_ok(
	    "if a == 'end' || b == %w[if end] || c == :end || d.end || {end: 1}[:else] ||\n"
	    "   e =~ /end/\n"
	    "  x = <<~EOS\n    end\n  EOS\n  y = \"else #{z}\"\n  z = {if: 'end'}\n"
	    "end\nw = 1\n");
	assert_int_equal(f->n, 4);
	assert_str(f->v[0].value, RB_OPAQUE, "<<~EOS\n    end\n  EOS");
	assert_loc(f->v[1].loc, 6, 3);
	assert_cond(&f->v[2], "if", 1, 1);
	assert_cond(&f->v[3], NULL, 0, 0);

	/* a heredoc in a condition: its body is skipped with it */
	f = parse_ok("if a == <<~E\n  end\nE\n  x = 1\nend\nx = 2 if b == <<~E\n  end\nE\ny = 3\n");
	assert_int_equal(f->n, 3);
	assert_loc(f->v[0].loc, 4, 3);
	assert_cond(&f->v[1], "if", 6, 7);
	assert_int_val(f->v[1].value, 2);
	assert_loc(f->v[2].loc, 9, 1);
	assert_cond(&f->v[2], NULL, 0, 0);

	/* `end if c`, a condition over lines, a value over lines before a modifier */
	f = parse_ok("if a &&\n   b\n  x = 1\nend unless c\nx = [1,\n  2] if d\n");
	assert_int_equal(f->n, 2);
	assert_cond(&f->v[0], "if", 1, 1);
	assert_cond(&f->v[1], "if", 6, 6);
	assert_int_equal(f->v[1].value->u.a.n, 2);

	/* many modifiers on one statement: a loop, not a recursion */
	char *mods = repeat("x = 1", " if a", 20000, "\n");
	f = parse_ok(mods);
	assert_cond(&f->v[0], "if", 1, 7);
	free(mods);
}

/* Blocks count toward the nesting limit: the one past it is the error. */
static void test_condition_depth(void **state)
{
	(void)state;
	char *head = repeat("", "if a\n", RB_MAX_DEPTH, "  x = 1\n");
	char *ok = repeat(head, "end\n", RB_MAX_DEPTH, "");
	const struct rb_file *f = parse_ok(ok);
	assert_int_equal(f->n, 1);
	assert_cond(&f->v[0], "if", 1, 1);
	free(ok);
	free(head);
	char *deep = repeat("", "if a\n", RB_MAX_DEPTH + 1, "");
	struct rb_file bf;
	struct diags d;
	diags_init(&d);
	assert_int_equal(rb_parse("deep.rb", deep, strlen(deep), &bf, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_int_equal(d.v[0].line, RB_MAX_DEPTH + 1);
	assert_int_equal(d.v[0].col, 1);
	assert_non_null(strstr(d.v[0].msg, "nesting deeper than"));
	diags_free(&d);
	rb_free(&bf);
	free(deep);
}

static void test_depth_limit(void **state)
{
	(void)state;
	/* subscripts of a setting: RB_MAX_DEPTH keys, one more is an error at its '[' */
	char *keys = repeat("x", "['k']", RB_MAX_DEPTH + 1, " = 1\n");
	struct rb_file kf;
	struct diags kd;
	diags_init(&kd);
	assert_int_equal(rb_parse("keys.rb", keys, strlen(keys), &kf, &kd), -1);
	assert_int_equal(kd.nerr, 1);
	assert_int_equal(kd.v[0].col, 2 + 5 * RB_MAX_DEPTH);
	assert_non_null(strstr(kd.v[0].msg, "subscripts"));
	diags_free(&kd);
	rb_free(&kf);
	free(keys);
	/* RB_MAX_DEPTH levels parse; one more is a located error */
	char *open = repeat("x = ", "[", RB_MAX_DEPTH, "");
	char *ok = repeat(open, "]", RB_MAX_DEPTH, "\n");
	const struct rb_file *f = parse_ok(ok);
	const struct rb_value *v = f->v[0].value;
	for (int i = 1; i < RB_MAX_DEPTH; i++)
		v = v->u.a.v[0];
	assert_int_equal(v->u.a.n, 0);
	free(ok);
	free(open);

	static const char *units[] = {"[", "{'a' => ", "(", "-", "ENV[", "\"#{", "[ENV["};
	for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
		char *deep = repeat("x = ", units[u], RB_MAX_DEPTH * 2 + 1, "");
		struct rb_file bf;
		struct diags d;
		diags_init(&d);
		assert_int_equal(rb_parse("deep.rb", deep, strlen(deep), &bf, &d), -1);
		assert_int_equal(d.nerr, 1);
		assert_int_equal(d.v[0].line, 1);
		assert_non_null(strstr(d.v[0].msg, "nesting deeper than 64 levels"));
		rb_free(&bf);
		diags_free(&d);
		free(deep);
	}
}

static void test_size_limit(void **state)
{
	(void)state;
	size_t len = (size_t)RB_MAX_FILE + 1;
	char *big = malloc(len);
	assert_non_null(big);
	memset(big, '#', len);
	big[0] = '\n';
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	assert_int_equal(rb_parse("big.rb", big, len, &f, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, RB_MAX_FILE);
	assert_non_null(strstr(d.v[0].msg, "file larger than"));
	rb_free(&f);
	diags_free(&d);
	/* exactly the limit is fine */
	diags_init(&d);
	assert_int_equal(rb_parse("big.rb", big, len - 1, &f, &d), 0);
	rb_free(&f);
	diags_free(&d);
	free(big);
}

/* -------------------------------------------------------------------- load */

static void test_fixture(void **state)
{
	(void)state;
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	int rc = rb_load(SRCDIR "/test/fixtures/omnibus-gitlab.rb", &f, &d);
	diags_print(&d, stderr);
	assert_int_equal(rc, 0);
	assert_int_equal(d.n, 0);
	assert_true(f.n > 100);

	bool seen_ldap = false, seen_svlogd = false, seen_port = false, seen_node = false;
	for (size_t i = 0; i < f.n; i++) {
		const struct rb_stmt *s = &f.v[i];
		if (s->nkeys == 1 && strcmp(s->keys[0], "ldap_servers") == 0) {
			assert_int_equal(s->value->kind, RB_OPAQUE);
			assert_true(strncmp(s->value->u.s.ptr, "YAML.load <<-'EOS'\n", 19) == 0);
			assert_non_null(strstr(s->value->u.s.ptr, "\n  EOS"));
			seen_ldap = true;
		}
		if (strcmp(s->name, "logging") == 0 && strcmp(s->keys[0], "svlogd_size") == 0) {
			assert_int_val(s->value, 200LL * 1024 * 1024);
			seen_svlogd = true;
		}
		if (strcmp(s->name, "gitlab_exporter") == 0 &&
		    strcmp(s->keys[0], "listen_port") == 0) {
			assert_str(s->value, RB_STR, "9168");
			seen_port = true;
		}
		if (strcmp(s->name, "node_exporter") == 0) {
			assert_int_equal(s->value->kind, RB_BOOL);
			assert_false(s->value->u.b);
			seen_node = true;
		}
		/* the settings gitlab-ctl manages are all literal in the fixture (Omnibus' own
		 * user['git_user_email'] is Ruby, as in its template) */
		if (strcmp(s->name, "gitlab_exporter") == 0 ||
		    strcmp(s->name, "node_exporter") == 0 ||
		    (strcmp(s->name, "user") == 0 && strcmp(s->keys[0], "git_user_email") != 0) ||
		    strcmp(s->name, "logging") == 0 || strcmp(s->name, "manage_accounts") == 0)
			assert_false(rb_has_opaque(s->value, NULL));
	}
	assert_true(seen_ldap && seen_svlogd && seen_port && seen_node);
	assert_string_equal(f.src.name, SRCDIR "/test/fixtures/omnibus-gitlab.rb");
	rb_free(&f);
	diags_free(&d);
}

static void test_load_errors(void **state)
{
	(void)state;
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	assert_int_equal(rb_load("/nonexistent/gitlab.rb", &f, &d), -1);
	assert_int_equal(d.nerr, 1);
	assert_string_equal(d.v[0].file, "/nonexistent/gitlab.rb");
	assert_int_equal(d.v[0].line, 0);
	assert_non_null(strstr(d.v[0].msg, "No such file"));
	rb_free(&f);
	rb_free(&f); /* twice is fine */
	diags_free(&d);

	struct rb_file zero;
	memset(&zero, 0, sizeof zero);
	rb_free(&zero);
	rb_free(NULL);
}

static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(rb_kind_name(RB_NIL), "nil");
	assert_string_equal(rb_kind_name(RB_BOOL), "boolean");
	assert_string_equal(rb_kind_name(RB_INT), "integer");
	assert_string_equal(rb_kind_name(RB_FLOAT), "float");
	assert_string_equal(rb_kind_name(RB_STR), "string");
	assert_string_equal(rb_kind_name(RB_SYM), "symbol");
	assert_string_equal(rb_kind_name(RB_ARRAY), "array");
	assert_string_equal(rb_kind_name(RB_HASH), "hash");
	assert_string_equal(rb_kind_name(RB_OPAQUE), "Ruby expression");
}

/* Truncated tokens of every kind at the end of the input: located errors, no overrun. */
static const struct bad eof_cases[] = {
    {"x = ?", 1, 5, "expected a value, found '?'"},
    {"x = %", 1, 5, "expected a value, found '%'"},
    {"x = %w", 1, 5, "expected a value, found '%'"},
    {"x = :\"", 1, 6, "unterminated string"},
    {"x = :", 1, 6, "expected a value, found end of file"},
    {"x = \"#{", 1, 5, "unterminated string"},
    {"x = %Q(#{", 1, 10, "expected '}' to close '{' at 1:9"},
    {"x = /", 1, 5, "unterminated regexp"},
    {"x = <<", 1, 5, "expected a value, found '<'"},
    {"x = <<~'", 1, 5, "expected a value, found '<'"},
    {"x = \"\\", 1, 5, "unterminated string"},
    {"x = '\\", 1, 5, "unterminated string"},
    {"x = %q(\\", 1, 5, "unterminated %-literal"},
    {"x = `a", 1, 5, "unterminated string"},
    {"x = 1.", 1, 7, "expected a value, found end of file"},
    {"x = 1e", 1, 5, "1e is not a number: quote it: '1e'"},
    {"x = 0b", 1, 7, "malformed number"},
    {"x = -", 1, 6, "expected a value, found end of file"},
    {"x = {a:", 1, 8, "expected a value, found end of file"},
    {"x = {'a' =>", 1, 12, "expected a value, found end of file"},
    {"x = a ?", 1, 8, "expected a value, found end of file"},
    {"x = \\", 1, 5, "unexpected '\\'"},
    {"gitlab_rails[", 1, 14, "expected a literal string or symbol key"},
    {"gitlab_rails['a']", 1, 18, "expected '=' after 'gitlab_rails[...]', found end of file"},
    {"x = f(<<A, <<B, <<C, <<D, <<E, <<F, <<G, <<H, <<I, <<J, <<K, <<L, <<M, <<N, <<O, <<P, "
     "<<Q)\n",
     1, 87, "more than 16 heredocs on one line"},
    {"x = <<A\nbody\nA\ny = <<B", 4, 5, "unterminated heredoc: no line 'B'"},
    {"x = 1 +\\\n", 2, 1, "expected a value, found end of file"},
    {"x = [\n=begin\n]\n", 2, 1, "expected a value, found '='"},
};

/* Inputs at the edges of the lexer (and any the fuzzer finds: add them here). */
static void test_edge_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof eof_cases / sizeof *eof_cases; i++)
		check_bad(&eof_cases[i]);
	/* CRLF line ends everywhere, a final line without newline, UTF-8 text */
	const struct rb_file *f =
	    parse_ok("x = [1,\r\n  2]\r\ny = <<~EOS\r\n  a\r\n  EOS\r\nz = 'caf\xc3\xa9'");
	assert_int_equal(f->n, 3);
	assert_str(f->v[1].value, RB_OPAQUE, "<<~EOS\r\n  a\r\n  EOS");
	assert_str(f->v[2].value, RB_STR, "caf\xc3\xa9");
	assert_loc(f->v[2].loc, 6, 1);
	/* 16 heredocs on one line are fine */
	f = parse_ok("x = f(<<A, <<B, <<C, <<D, <<E, <<F, <<G, <<H, <<I, <<J, <<K, <<L, <<M, <<N, "
	             "<<O, <<P)\nA\nB\nC\nD\nE\nF\nG\nH\nI\nJ\nK\nL\nM\nN\nO\nP\ny = 1\n");
	assert_int_equal(f->n, 2);
	assert_loc(f->v[1].loc, 18, 1);
	/* non-ASCII identifiers inside opaque Ruby; keywords as symbol or method names */
	assert_str(val("caf\xc3\xa9(1)"), RB_OPAQUE, "caf\xc3\xa9(1)");
	assert_str(val(":if"), RB_SYM, "if");
	assert_str(val("foo.end"), RB_OPAQUE, "foo.end");
	/* arithmetic reuses nodes: a long chain stays small and exact */
	char *chain = repeat("x = 0", " + 1", 100000, "\n");
	f = parse_ok(chain);
	assert_int_val(f->v[0].value, 100000);
	free(chain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_statement_forms, teardown),
	    cmocka_unit_test_teardown(test_statements_in_order, teardown),
	    cmocka_unit_test_teardown(test_empty_and_comment_files, teardown),
	    cmocka_unit_test_teardown(test_value_on_next_line, teardown),
	    cmocka_unit_test_teardown(test_scalars, teardown),
	    cmocka_unit_test_teardown(test_strings, teardown),
	    cmocka_unit_test_teardown(test_arrays, teardown),
	    cmocka_unit_test_teardown(test_hashes, teardown),
	    cmocka_unit_test_teardown(test_arithmetic, teardown),
	    cmocka_unit_test_teardown(test_opaque_extents, teardown),
	    cmocka_unit_test_teardown(test_opaque_inside_literals, teardown),
	    cmocka_unit_test_teardown(test_heredocs, teardown),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_operator_mistakes),
	    cmocka_unit_test(test_nul_byte_inside),
	    cmocka_unit_test(test_diag_caret),
	    cmocka_unit_test_teardown(test_depth_limit, teardown),
	    cmocka_unit_test_teardown(test_conditions, teardown),
	    cmocka_unit_test_teardown(test_condition_depth, teardown),
	    cmocka_unit_test(test_size_limit),
	    cmocka_unit_test(test_fixture),
	    cmocka_unit_test(test_load_errors),
	    cmocka_unit_test(test_kind_names),
	    cmocka_unit_test_teardown(test_edge_inputs, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
