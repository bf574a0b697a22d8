/* Each file format's quoting (see quote.h). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "lib/ascii.h"
#include "lib/quote.h"

/* Inside single quotes nothing is special but the quote itself: close, escape, reopen. */
void quote_sh(struct buf *b, const char *s)
{
	buf_addc(b, '\'');
	for (size_t run; *s; s += run) {
		run = strcspn(s, "'"); /* whole runs: a call per byte costs more than the quoting */
		buf_add(b, s, run);
		if (s[run] == '\'') {
			buf_adds(b, "'\\''");
			run++;
		}
	}
	buf_addc(b, '\'');
}

/* Length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] >= 0xc2 && s[0] <= 0xdf && (s[1] & 0xc0) == 0x80)
		return 2;
	if (s[0] >= 0xe0 && s[0] <= 0xef && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0; /* overlong or surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
	    (s[3] & 0xc0) == 0x80) {
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

/*
 * The escapes YAML's and Redis' double-quoted strings share, for an ASCII byte c (hex: each
 * format's digits, as it has always been written): false for a byte from 0x80 up, not written.
 */
static bool dq_ascii(struct buf *b, unsigned char c, const char *hex)
{
	if (c == '"' || c == '\\') {
		buf_addc(b, '\\');
		buf_addc(b, (char)c);
	} else if (c == '\n') {
		buf_adds(b, "\\n");
	} else if (c == '\t') {
		buf_adds(b, "\\t");
	} else if (c == '\r') {
		buf_adds(b, "\\r");
	} else if (c < 0x20 || c == 0x7f) {
		char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
		buf_add(b, esc, sizeof esc);
	} else if (c < 0x80) {
		buf_addc(b, (char)c);
	} else {
		return false;
	}
	return true;
}

/*
 * YAML 1.1/1.2 double-quoted scalar: escape the quote, backslash, every
 * control character and the Unicode line breaks (NEL, LS, PS) that a YAML
 * parser would otherwise fold. A byte that is not valid UTF-8 becomes U+FFFD,
 * as a YAML stream must be valid Unicode.
 */
void quote_yaml(struct buf *b, const char *str)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)str;

	buf_addc(b, '"');
	while (*s) {
		if (dq_ascii(b, *s, hex)) {
			s++;
			continue;
		}
		size_t n = utf8_len(s);
		if (n == 0) {
			buf_adds(b, "\\uFFFD");
			s++;
			continue;
		}
		if (n == 2 && s[0] == 0xc2 && s[1] == 0x85)
			buf_adds(b, "\\N");
		else if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0xa8)
			buf_adds(b, "\\L");
		else if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0xa9)
			buf_adds(b, "\\P");
		else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
			buf_adds(b, "\\uFFFD"); /* C1 control other than NEL */
		else
			buf_add(b, (const char *)s, n);
		s += n;
	}
	buf_addc(b, '"');
}

static bool has_control(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

static int refuse(const char **why, const char *msg)
{
	*why = msg;
	return -1;
}

/* The GUC scanner unescapes backslashes in strings: both specials are doubled. */
static void pg_quoted(struct buf *out, const char *v)
{
	buf_addc(out, '\'');
	for (; *v; v++) {
		if (*v == '\'' || *v == '\\')
			buf_addc(out, *v);
		buf_addc(out, *v);
	}
	buf_addc(out, '\'');
}

int quote_pg_part(struct buf *out, const char *v, const char **why)
{
	size_t start = out->len;
	if (quote_pg_string(out, v, why) == -1)
		return -1;
	/* the same bytes without the quotes around them */
	memmove(out->p + start, out->p + start + 1, out->len - start - 2);
	buf_truncate(out, out->len - 2);
	return 0;
}

int quote_pg_string(struct buf *out, const char *v, const char **why)
{
	if (has_control(v))
		return refuse(why,
		              "a newline or control character cannot be held by postgresql.conf");
	pg_quoted(out, v);
	return 0;
}

/* PostgreSQL's memory and time units (guc.c), case-sensitive as it reads them. */
static bool pg_unit(const char *u)
{
	static const char *const units[] = {"",   "B",  "kB", "MB",  "GB", "TB",
	                                    "us", "ms", "s",  "min", "h",  "d"};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcmp(u, units[i]) == 0)
			return true;
	return false;
}

int quote_pg_number(struct buf *out, const char *v, const char **why)
{
	const char *p = v + (*v == '-');
	if (!ascii_digit(*p))
		return refuse(why, "not a number with an optional unit (e.g. 128MB, 30s)");
	while (ascii_digit(*p))
		p++;
	if (*p == '.' && ascii_digit(p[1]))
		for (p++; ascii_digit(*p);)
			p++;
	if (strlen(p) > 3 || !pg_unit(p))
		return refuse(why, "not a number with an optional unit (B, kB, MB, GB, TB, us, ms, "
		                   "s, min, h, d)");
	pg_quoted(out, v);
	return 0;
}

/* A host name or an IPv4/IPv6 address, as characters: what getaddrinfo gets to judge. */
static bool host_chars(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ascii_alnum(s[i]) && s[i] != '.' && s[i] != '-' && s[i] != ':' && s[i] != '_')
			return false;
	return s[0] != '-';
}

int quote_pg_hosts(struct buf *out, const char *v, const char **why)
{
	const char *p = v;
	while (*p) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, ", ");
		if (!(n == 1 && *p == '*') && !host_chars(p, n))
			return refuse(why, "not '*' or a comma-separated list of host names and IP "
			                   "addresses");
		p += n;
		while (*p == ' ')
			p++;
		if (*p != '\0' && *p != ',')
			return refuse(why, "addresses are separated by commas");
		if (*p == ',' && *++p == '\0')
			return refuse(why, "ends in a comma");
	}
	pg_quoted(out, v);
	return 0;
}

int quote_pg_token(struct buf *out, const char *v, const char **why)
{
	static const char *const keywords[] = {"all", "sameuser", "samerole", "samegroup",
	                                       "replication"};
	size_t n = strlen(v);
	if (n == 0 || n > 63)
		return refuse(why, "a role or account name of 1 to 63 characters is needed");
	if (!ascii_alnum(v[0]) && v[0] != '_')
		return refuse(why, "must start with a letter, digit or '_' ('+', '/' and '@' "
		                   "change its meaning in pg_hba.conf and pg_ident.conf)");
	for (size_t i = 1; i < n; i++)
		if (!ascii_alnum(v[i]) && v[i] != '_' && v[i] != '.' && v[i] != '-')
			return refuse(why,
			              "only letters, digits, '_', '.' and '-' can be a pg_hba.conf "
			              "or pg_ident.conf name");
	for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
		if (strcasecmp(v, keywords[i]) == 0)
			return refuse(why, "a pg_hba.conf keyword, not a name");
	buf_add(out, v, n);
	return 0;
}

int quote_pg_md5(struct buf *out, const char *v, const char **why)
{
	if (strncmp(v, "md5", 3) == 0 && strlen(v) == 35)
		v += 3;
	if (strlen(v) != 32 || strspn(v, "0123456789abcdefABCDEF") != 32)
		return refuse(why, "the md5 hash gitlab-ctl pg-password-md5 USER prints "
		                   "(32 hex digits) is needed, not the password");
	buf_adds(out, "md5");
	for (; *v; v++)
		buf_addc(out, ascii_upper(*v) ? (char)(*v - 'A' + 'a') : *v);
	return 0;
}

void quote_conninfo(struct buf *out, const char *v)
{
	if (*v != '\0' && strcspn(v, " \t\n\r\f\v'\\") == strlen(v)) {
		buf_adds(out, v);
		return;
	}
	buf_addc(out, '\'');
	for (; *v; v++) {
		if (*v == '\'' || *v == '\\')
			buf_addc(out, '\\');
		buf_addc(out, *v);
	}
	buf_addc(out, '\'');
}

void quote_redis_arg(struct buf *out, const char *v)
{
	static const char hex[] = "0123456789abcdef";
	buf_addc(out, '"');
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (!dq_ascii(out, *p, hex))
			buf_addc(out, (char)*p); /* bytes, not text: Redis takes them as they are */
	buf_addc(out, '"');
}

/* n bytes at s: digits and an optional unit b k kb m mb g gb (any case). */
static bool redis_memory_ok(const char *s, size_t n)
{
	static const char *const units[] = {"", "b", "k", "kb", "m", "mb", "g", "gb"};
	size_t d = 0;
	while (d < n && ascii_digit(s[d]))
		d++;
	if (d == 0 || d > 19)
		return false;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i]) == n - d && strncasecmp(s + d, units[i], n - d) == 0)
			return true;
	return false;
}

int quote_redis_acl_pass(struct buf *out, const char *v, const char **why)
{
	if (*v == '\0')
		return refuse(why, "an empty password");
	struct buf rule;
	buf_init(&rule);
	buf_addf(&rule, ">%s", v);
	quote_redis_arg(out, buf_str(&rule));
	buf_free(&rule);
	return 0;
}

int quote_redis_memory(struct buf *out, const char *v, const char **why)
{
	if (!redis_memory_ok(v, strlen(v)))
		return refuse(why,
		              "not a memory size (digits and an optional unit: b, k, kb, m, mb, "
		              "g, gb)");
	buf_adds(out, v);
	return 0;
}

int quote_redis_bool(struct buf *out, const char *v, const char **why)
{
	if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
		return refuse(why, "not true or false");
	buf_adds(out, v[0] == 't' ? "yes" : "no");
	return 0;
}

/* The next space-separated word of *p (its length; 0 at the end), *p moved past it. */
static size_t next_word(const char **p, const char **word)
{
	while (**p == ' ')
		(*p)++;
	*word = *p;
	while (**p != '\0' && **p != ' ')
		(*p)++;
	return (size_t)(*p - *word);
}

int quote_redis_obl(struct buf *out, const char *v, const char **why)
{
	static const char msg[] = "not \"HARD SOFT SECONDS\" (two memory sizes such as 256mb, then "
	                          "whole seconds)";
	const char *p = v, *w[4];
	size_t n[4];
	for (int i = 0; i < 4; i++)
		n[i] = next_word(&p, &w[i]);
	if (n[3] != 0 || !redis_memory_ok(w[0], n[0]) || !redis_memory_ok(w[1], n[1]) ||
	    !ascii_digits(w[2], n[2], 18))
		return refuse(why, msg);
	for (int i = 0; i < 3; i++) {
		if (i > 0)
			buf_addc(out, ' ');
		buf_add(out, w[i], n[i]);
	}
	return 0;
}

int quote_redis_save(struct buf *out, const struct yval *v, const char **why)
{
	static const char msg[] = "not an array of \"SECONDS CHANGES\" strings (or [\"\"] for no "
	                          "snapshots)";
	size_t start = out->len;
	if (v == NULL || v->kind == YV_NULL)
		return 0;
	if (v->kind != YV_SEQ)
		return refuse(why, msg);
	for (size_t i = 0; i < v->n; i++) /* one empty line turns snapshots off, as in Omnibus */
		if (v->items[i]->kind == YV_STR && v->items[i]->text[0] == '\0') {
			buf_adds(out, "save \"\"");
			return 0;
		}
	for (size_t i = 0; i < v->n; i++) {
		const struct yval *e = v->items[i];
		const char *p = e->kind == YV_STR ? e->text : "", *w;
		size_t words = 0, len;
		if (i > 0)
			buf_addc(out, '\n');
		buf_adds(out, "save");
		while ((len = next_word(&p, &w)) > 0 && ascii_digits(w, len, 18)) {
			buf_addc(out, ' ');
			buf_add(out, w, len);
			words++;
		}
		if (len > 0 || words == 0 || words % 2 != 0) {
			buf_truncate(out, start);
			return refuse(why, msg);
		}
	}
	return 0;
}

/* A command name rename-command can take: letters, digits, '_' and '-'. */
static bool redis_command_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ascii_alnum(s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

int quote_redis_renames(struct buf *out, const struct yval *v, const char **why)
{
	size_t start = out->len;
	if (v == NULL || v->kind == YV_NULL)
		return 0;
	if (v->kind != YV_MAP)
		return refuse(why, "not a hash of command => new name");
	for (size_t i = 0; i < v->n; i++) {
		const struct yval *e = v->items[i];
		const char *why_not = NULL;
		if (!redis_command_ok(v->keys[i]))
			why_not = "a command name is letters, digits, '_' and '-'";
		else if (strcasecmp(v->keys[i], "AUTH") == 0 || strcasecmp(v->keys[i], "PING") == 0)
			why_not = "AUTH and PING stay: gitlab-ctl's readiness check sends them";
		else if (e->kind == YV_SEQ || e->kind == YV_MAP)
			why_not = "a new name is a string (\"\" disables the command)";
		if (why_not != NULL) {
			buf_truncate(out, start);
			return refuse(why, why_not);
		}
		if (i > 0)
			buf_addc(out, '\n');
		buf_adds(out, "rename-command ");
		buf_adds(out, v->keys[i]);
		buf_addc(out, ' ');
		quote_redis_arg(out, e->kind == YV_NULL ? "" : e->text);
	}
	return 0;
}

/* v as address and prefix: 4 or 6, or 0 when it is not one. */
static int cidr_parse(const char *v, unsigned char bin[16], long long *prefix)
{
	char a[64];
	const char *slash = strchr(v, '/'), *errstr = NULL;
	size_t n = slash ? (size_t)(slash - v) : strlen(v);
	if (n == 0 || n >= sizeof a)
		return 0;
	memcpy(a, v, n);
	a[n] = '\0';
	int fam = inet_pton(AF_INET, a, bin) == 1 ? 4 : inet_pton(AF_INET6, a, bin) == 1 ? 6 : 0;
	long long max = fam == 4 ? 32 : 128;
	*prefix = max;
	if (fam != 0 && slash != NULL)
		*prefix = strtonum(slash + 1, 0, max, &errstr);
	return errstr == NULL ? fam : 0;
}

/* The lines of quote_pg_hba_md5, each after prefix (a YAML list's "    - " in patroni.yml). */
static int hba_md5_lines(struct buf *out, const struct yval *v, const char *pre, const char **why)
{
	static const char msg[] = "not an array of IP addresses with an optional /prefix "
	                          "(['10.0.0.0/24', '192.0.2.7'])";
	unsigned char bin[16];
	long long prefix;
	size_t start = out->len;
	if (v == NULL || v->kind == YV_NULL)
		return 0;
	if (v->kind != YV_SEQ)
		return refuse(why, msg);
	for (size_t i = 0; i < v->n; i++) {
		const struct yval *e = v->items[i];
		if (e->kind != YV_STR || cidr_parse(e->text, bin, &prefix) == 0) {
			buf_truncate(out, start);
			return refuse(why, msg);
		}
		int n = (int)strcspn(e->text, "/");
		/* replication too, as Omnibus: only a role with REPLICATION may use it */
		buf_addf(out,
		         "%s%shost    all           all   %.*s/%lld  md5\n"
		         "%shost    replication   all   %.*s/%lld  md5",
		         i ? "\n" : "", pre, n, e->text, prefix, pre, n, e->text, prefix);
	}
	return 0;
}

int quote_pg_hba_md5(struct buf *out, const struct yval *v, const char **why)
{
	return hba_md5_lines(out, v, "", why);
}

/* The address and prefix are digits, dots, colons and hex: a plain YAML scalar as they are. */
int quote_patroni_hba_md5(struct buf *out, const struct yval *v, const char **why)
{
	return hba_md5_lines(out, v, "    - ", why);
}

/* One bind address (n bytes at s, '-' prefix stripped): is it loopback? */
static bool loopback(const char *s, size_t n)
{
	char a[64];
	unsigned char bin[16];
	if (n >= sizeof a)
		return false;
	memcpy(a, s, n);
	a[n] = '\0';
	if (strcasecmp(a, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, a, bin) == 1)
		return bin[0] == 127;
	return inet_pton(AF_INET6, a, bin) == 1 &&
	       memcmp(bin, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0;
}

/* local: the refusal of a non-loopback address names the password that allows it (NULL: any). */
static int redis_bind(struct buf *out, const char *v, const char *local, const char **why)
{
	const char *p = v;
	size_t start = out->len;
	int n = 0;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		size_t len = strcspn(p, " ");
		const char *a = p + (*p == '-');
		size_t alen = len - (size_t)(a - p);
		if (!(alen == 1 && *a == '*') && !host_chars(a, alen)) {
			buf_truncate(out, start);
			return refuse(why, "not a list of addresses separated by spaces");
		}
		if (local != NULL && !loopback(a, alen)) {
			buf_truncate(out, start);
			return refuse(why, local);
		}
		if (n++ > 0)
			buf_addc(out, ' ');
		buf_add(out, p, len);
		p += len;
	}
	if (n == 0)
		return refuse(why, "no address");
	return 0;
}

int quote_redis_bind(struct buf *out, const char *v, const char **why)
{
	return redis_bind(out, v, NULL, why);
}

int quote_redis_bind_loopback(struct buf *out, const char *v, const char **why)
{
	return redis_bind(out, v,
	                  "not a loopback address: set redis['password'] before Redis listens "
	                  "beyond this host",
	                  why);
}

int quote_sentinel_bind_loopback(struct buf *out, const char *v, const char **why)
{
	return redis_bind(out, v,
	                  "not a loopback address: set sentinel['password'] before Sentinel "
	                  "listens beyond this host",
	                  why);
}

int quote_redis_name(struct buf *out, const char *v, const char **why)
{
	size_t n = strlen(v);
	if (n == 0 || n > 64)
		return refuse(why, "not a name of 1 to 64 letters, digits, '.', '_' or '-'");
	for (size_t i = 0; i < n; i++)
		if (!(ascii_alnum(v[i]) || v[i] == '.' || v[i] == '_' || v[i] == '-'))
			return refuse(why,
			              "not a name of 1 to 64 letters, digits, '.', '_' or '-'");
	buf_adds(out, v);
	return 0;
}

int quote_redis_myid(struct buf *out, const char *v, const char **why)
{
	size_t n = strlen(v);
	for (size_t i = 0; i < n; i++)
		if (!(ascii_digit(v[i]) || (v[i] >= 'a' && v[i] <= 'f')))
			n = 0;
	if (n != 40)
		return refuse(why, "not 40 lowercase hex digits (Sentinel's run id)");
	buf_adds(out, v);
	return 0;
}

/* "host:port", "[v6]:port" or a bare host (gitlab-exporter's listen_address): loopback? */
static bool listen_is_loopback(const char *v)
{
	if (loopback(v, strlen(v)))
		return true;
	const char *colon = strrchr(v, ':');
	const char *h = v;
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
		h++;
		n -= 2;
	}
	return n > 0 && loopback(h, n);
}

int quote_listen_loopback(struct buf *out, const char *v, const char **why)
{
	if (!listen_is_loopback(v))
		return refuse(why,
		              "not a loopback address: set its web_password (basic auth) before "
		              "it listens beyond this host");
	buf_adds(out, v);
	return 0;
}

int quote_listen_loopback_tls(struct buf *out, const char *v, const char **why)
{
	if (!listen_is_loopback(v))
		return refuse(why,
		              "not a loopback address: set its TLS certificate, key and client CA "
		              "(tls_cert_path, tls_key_path, tls_client_ca_path; Patroni's "
		              "tls_certificate_file, tls_key_file, tls_ca_file) before it listens "
		              "beyond this host");
	buf_adds(out, v);
	return 0;
}

int quote_host_loopback(struct buf *out, const char *v, const char **why)
{
	if (*v == '\0' || !loopback(v, strlen(v)))
		return refuse(why,
		              "not a loopback address: this listener has no authentication, so "
		              "it stays on this host");
	buf_adds(out, v);
	return 0;
}

int quote_url_host(struct buf *out, const char *v, const char **why)
{
	unsigned char bin[16];
	bool v6 = strchr(v, ':') != NULL;
	if (v6 ? inet_pton(AF_INET6, v, bin) != 1 : !host_chars(v, strlen(v)))
		return refuse(why, "not a host name or IP address");
	if (v6)
		buf_addc(out, '[');
	buf_adds(out, v);
	if (v6)
		buf_addc(out, ']');
	return 0;
}

int quote_mode_private(struct buf *out, const char *v, const char **why)
{
	size_t n = strlen(v);
	if (n < 3 || n > 4 || strspn(v, "01234567") != n || (n == 4 && v[0] != '0'))
		return refuse(why, "not an octal file mode (e.g. 770)");
	if (v[n - 1] != '0')
		return refuse(why, "grants every local account access: leave the last digit 0");
	buf_adds(out, v);
	return 0;
}

void quote_url_auth(struct buf *out, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	if (*v == '\0')
		return;
	buf_adds(out, "//:");
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (ascii_alnum((char)*p) || strchr("-._~", *p) != NULL) {
			buf_addc(out, (char)*p);
		} else {
			char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
			buf_add(out, esc, sizeof esc);
		}
	}
	buf_addc(out, '@');
}

void quote_resp(struct buf *out, const char *v)
{
	buf_addf(out, "$%zu\r\n", strlen(v));
	buf_adds(out, v);
	buf_adds(out, "\r\n");
}
