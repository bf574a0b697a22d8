#!/bin/sh
# Monitoring safety, exporters beyond loopback: gitlab_exporter['web_password'] puts every route
# of the bundled exporter behind HTTP basic auth (server.basic_auth_users, a bcrypt hash: the
# password is in no file); `nobody` and a wrong password get 401, the credentials get metrics;
# reconfigure's readiness check and Prometheus' gitlab_exporter_* jobs send them (targets up).
# Without a password, a non-loopback listen_address is refused at its gitlab.rb line.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || exit 77
for b in /usr/bin/prometheus curl setpriv ruby; do
	command -v "$b" >/dev/null 2>&1 || exit 77
done
G=$(free_port)
P=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
mkdir -p "$T_ROOT/etc/gitlab"
{
	only_services gitlab_exporter prometheus
	cat <<EOF2
prometheus['enable'] = true
gitlab_exporter['listen_address'] = '0.0.0.0'
gitlab_exporter['listen_port'] = $G
gitlab_exporter['web_password'] = 'exporterPW-s3cret'
prometheus['listen_address'] = '127.0.0.1:$P'
prometheus['scrape_interval'] = 1
prometheus['scrape_timeout'] = 1
EOF2
} >"$RB"
chmod 600 "$RB"
start_runsvdir
expect_rc 0 ctl reconfigure
Y=$T_ROOT/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml
grep -q 'basic_auth_users:' "$Y" || fail "$Y has no basic_auth_users"
! grep -q 'exporterPW' "$Y" || fail "$Y holds the password"
! ctl show-config 2>&1 | grep -q 'exporterPW' || fail "show-config prints the password"

get() { # get URL [CURL-ARGS]: the HTTP status, the body in $OUT
	_u=$1
	shift
	curl -s -o "$OUT" -w '%{http_code}' --max-time 10 "$@" "$_u"
}
for r in /metrics /ruby /process /nosuch; do
	code=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
		curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$G$r")
	[ "$code" = 401 ] || fail "nobody got $code from the exporter's $r"
done
code=$(get "http://127.0.0.1:$G/metrics" -u 'gitlab-prometheus:wrong')
[ "$code" = 401 ] || fail "a wrong password got $code"
code=$(get "http://127.0.0.1:$G/metrics" -u 'someone:exporterPW-s3cret')
[ "$code" = 401 ] || fail "a wrong user got $code"
code=$(get "http://127.0.0.1:$G/ruby" -u 'gitlab-prometheus:exporterPW-s3cret')
[ "$code" = 200 ] && grep -q '^ruby_' "$OUT" || fail "with the credentials: $code $(head -3 "$OUT")"
# Remembered after the first check: the same header again answers too.
code=$(get "http://127.0.0.1:$G/ruby" -u 'gitlab-prometheus:exporterPW-s3cret')
[ "$code" = 200 ] || fail "the second request with the credentials: $code"

exporter_up() {
	curl -s -u "$(mon_auth)" "http://127.0.0.1:$P/api/v1/targets" >"$OUT" &&
		ruby -rjson -e 't = JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"]
			g = t.select { |x| x["labels"]["job"] == "gitlab_exporter_ruby" }
			exit 1 unless !g.empty? && g.all? { |x| x["health"] == "up" }' "$OUT"
}
until_true 300 exporter_up || fail "Prometheus' gitlab_exporter_ruby job is not up: $(cat "$OUT")"
ctl status >"$OUT" 2>&1 || true
has "$OUT" "run: gitlab-exporter:"

# Beyond loopback without a password: refused at its gitlab.rb line, nothing rewritten.
cp "$Y" "$T_ROOT/yml.before"
sed -i '/web_password/d' "$RB"
expect_rc 1 ctl check-config
L=$(grep -n "gitlab_exporter\['listen_address'\]" "$RB" | cut -d: -f1)
has "$ERR" "$RB:$L:"
has "$ERR" "not a loopback address: set its web_password"
expect_rc 1 ctl reconfigure
cmp -s "$Y" "$T_ROOT/yml.before" || fail "a refused reconfigure rewrote $Y"
# On loopback no password is needed (Omnibus' default).
sed -i "s/^gitlab_exporter\['listen_address'\].*/gitlab_exporter['listen_address'] = '::1'/" "$RB"
expect_rc 0 ctl check-config
exit 0
