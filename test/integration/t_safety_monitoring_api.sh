#!/bin/sh
# issue 29 row 5: with prometheus['web_password'] and alertmanager['web_password'] set,
# Prometheus' and Alertmanager's HTTP APIs answer only to those credentials (basic auth
# through --web.config.file, which holds a bcrypt hash, root-owned 0640 to the service's
# group). As `nobody`, /api/v1/status/config and /api/v2/status give 401 and a silence POST
# is refused; with the credentials they work. gitlab-ctl's readiness checks and inspect
# pass the credentials, Prometheus scrapes itself with them, a second reconfigure changes
# nothing (the hash is stable), and --diff and show-config print neither password.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || exit 77
for b in /usr/bin/prometheus /usr/bin/promtool /usr/bin/prometheus-alertmanager curl setpriv; do
	command -v "$b" >/dev/null 2>&1 || exit 77
done
P=$(free_port)
A=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
mkdir -p "$T_ROOT/etc/gitlab"
{
	only_services prometheus alertmanager
	cat <<EOF2
prometheus['enable'] = true
alertmanager['enable'] = true
prometheus['listen_address'] = '127.0.0.1:$P'
alertmanager['listen_address'] = '127.0.0.1:$A'
prometheus['scrape_interval'] = 1
prometheus['web_password'] = 'promPW-s3cret'
alertmanager['web_password'] = 'amPW-s3cret'
EOF2
} >"$RB"
chmod 600 "$RB"

expect_rc 0 ctl reconfigure --diff
cat "$OUT" "$ERR" >"$T_ROOT/all"
for w in promPW-s3cret amPW-s3cret; do
	! grep -qF "$w" "$T_ROOT/all" || fail "reconfigure --diff printed $w"
done
for svc in prometheus alertmanager; do
	W=$T_ROOT/opt/gitlab/etc/$svc/web.yml
	[ "$(stat -c '%U %a' "$W")" = "root 640" ] || fail "$W: $(stat -c '%U %a' "$W")"
	grep -q '"gitlab-prometheus": "\$2b\$10\$' "$W" || fail "$W holds no bcrypt hash: $(cat "$W")"
	! grep -q 'PW-s3cret' "$W" || fail "$W holds the password"
done
ctl show-config >"$OUT" 2>&1
! grep -q 'PW-s3cret' "$OUT" || fail "show-config printed a password"

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
code=$(as_nobody "http://127.0.0.1:$P/api/v1/status/config")
[ "$code" = 401 ] || fail "nobody got $code from Prometheus' /api/v1/status/config"
code=$(as_nobody "http://127.0.0.1:$A/api/v2/status")
[ "$code" = 401 ] || fail "nobody got $code from Alertmanager's /api/v2/status"
SIL='{"matchers":[{"name":"alertname","value":".+","isRegex":true}],"startsAt":"2026-01-01T00:00:00Z","endsAt":"2099-01-01T00:00:00Z","createdBy":"nobody","comment":"x"}'
code=$(as_nobody -H 'Content-Type: application/json' -d "$SIL" "http://127.0.0.1:$A/api/v2/silences")
[ "$code" = 401 ] || fail "nobody's silence POST got $code"

code=$(curl -s -o "$OUT" -w '%{http_code}' -u 'gitlab-prometheus:promPW-s3cret' "http://127.0.0.1:$P/api/v1/status/config")
[ "$code" = 200 ] || fail "with the credentials Prometheus answered $code"
code=$(curl -s -o "$OUT" -w '%{http_code}' -u 'gitlab-prometheus:amPW-s3cret' "http://127.0.0.1:$A/api/v2/status")
[ "$code" = 200 ] || fail "with the credentials Alertmanager answered $code"
code=$(curl -s -o "$OUT" -w '%{http_code}' -u 'gitlab-prometheus:amPW-s3cret' -H 'Content-Type: application/json' \
	-d "$SIL" "http://127.0.0.1:$A/api/v2/silences")
[ "$code" = 200 ] || fail "with the credentials the silence POST got $code: $(cat "$OUT")"

# Prometheus scrapes itself with its credentials.
self_up() {
	curl -s -u 'gitlab-prometheus:promPW-s3cret' "http://127.0.0.1:$P/api/v1/targets" >"$OUT" &&
		ruby -rjson -e 't = JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"]
			exit 1 unless t.any? { |x| x["labels"]["job"] == "prometheus" && x["health"] == "up" }' "$OUT"
}
until_true 300 self_up || fail "Prometheus' self-scrape is not up: $(cat "$OUT")"
for svc in prometheus alertmanager; do
	expect_rc 0 ctl inspect $svc
	lacks "$OUT" "401"
done

# The hash is stable: a second run changes nothing.
expect_rc 0 ctl reconfigure --dry-run
lacks "$OUT" "web.yml"

# The hashes are kept across runs (root's record, 0600: a random key, each hash beside its
# password's digest under it): a no-op takes them from it and makes no bcrypt (a checksum
# forged into the record is what it would write), a changed password is hashed; each hash has
# a random salt, so a lost record means new hashes, which still work.
K=$T_ROOT/opt/gitlab/var/secrets/bcrypt
WP=$T_ROOT/opt/gitlab/etc/prometheus/web.yml
WA=$T_ROOT/opt/gitlab/etc/alertmanager/web.yml
[ "$(stat -c '%U %a' "$K")" = "root 600" ] || fail "$K: $(stat -c '%U %a' "$K")"
[ "$(wc -l <"$K")" -eq 3 ] || fail "$K holds not its key and the two hashes: $(cat "$K")"
! grep -q 'PW-s3cret' "$K" || fail "$K holds a password"
cp "$WP" "$T_ROOT/wp.before"
cp "$WA" "$T_ROOT/wa.before"
expect_rc 0 ctl reconfigure
cmp -s "$WP" "$T_ROOT/wp.before" && cmp -s "$WA" "$T_ROOT/wa.before" || fail "a no-op rewrote a web.yml"
real=$(sed -n 's/.*"\(\$2b\$10\$[^"]*\)".*/\1/p' "$WP")
forged=$(printf '%s' "$real" | cut -c1-29)AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
sed "s|$real|$forged|" "$K" >"$T_ROOT/forged"
install -m 600 "$T_ROOT/forged" "$K"
expect_rc 0 ctl reconfigure --dry-run
has "$OUT" "web.yml" # the record's hash, not a bcrypt of the password
rm -f "$K" # a lost record: hashed anew
expect_rc 0 ctl reconfigure
! cmp -s "$WP" "$T_ROOT/wp.before" || fail "without the record the same salt came back"
[ "$(wc -l <"$K")" -eq 3 ] || fail "$K was not made again: $(cat "$K")"
cp "$WP" "$T_ROOT/wp.before"
cp "$WA" "$T_ROOT/wa.before"
code=$(curl -s -o /dev/null -w '%{http_code}' -u 'gitlab-prometheus:promPW-s3cret' "http://127.0.0.1:$P/api/v1/status/config")
[ "$code" = 200 ] || fail "with the new hash Prometheus answered $code"
sed -i 's/promPW-s3cret/promPW-changed/' "$RB"
expect_rc 0 ctl reconfigure
! cmp -s "$WP" "$T_ROOT/wp.before" || fail "a changed password kept the old hash"
cmp -s "$WA" "$T_ROOT/wa.before" || fail "Alertmanager's web.yml changed with Prometheus' password"
[ "$(wc -l <"$K")" -eq 4 ] || fail "$K lacks the new hash: $(cat "$K")"
code=$(curl -s -o /dev/null -w '%{http_code}' -u 'gitlab-prometheus:promPW-changed' "http://127.0.0.1:$P/api/v1/status/config")
[ "$code" = 200 ] || fail "with the changed password Prometheus answered $code"
exit 0
