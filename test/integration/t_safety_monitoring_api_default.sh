#!/bin/sh
# issue 29 row 5, by default: with no web_password in gitlab.rb, reconfigure generates one
# password for Prometheus and Alertmanager and keeps it in <install>/var/secrets (root's, 0600
# in 0700). `nobody` gets 401 from /api/v1/status/config and /api/v2/status and cannot create
# a silence; the kept credentials work; a second reconfigure keeps the same password (web.yml
# unchanged), and show-config never prints it.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || exit 77
for b in /usr/bin/prometheus /usr/bin/prometheus-alertmanager curl setpriv; do
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
	echo "prometheus['enable'] = true"
	echo "alertmanager['enable'] = true"
	echo "prometheus['listen_address'] = '127.0.0.1:$P'"
	echo "alertmanager['listen_address'] = '127.0.0.1:$A'"
} >"$RB"
expect_rc 0 ctl reconfigure
S=$T_ROOT/opt/gitlab/var/secrets
[ "$(stat -c '%U %a' "$S")" = "root 700" ] || fail "$S: $(stat -c '%U %a' "$S")"
[ "$(stat -c '%U %a' "$S/monitoring-web-password")" = "root 600" ] || fail "the kept password's mode"
PW=$(cat "$S/monitoring-web-password")
[ ${#PW} -ge 32 ] || fail "a short generated password"

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
[ "$(as_nobody "http://127.0.0.1:$P/api/v1/status/config")" = 401 ] || fail "nobody reads Prometheus' config"
[ "$(as_nobody "http://127.0.0.1:$A/api/v2/status")" = 401 ] || fail "nobody reads Alertmanager's status"
SIL='{"matchers":[{"name":"alertname","value":".+","isRegex":true}],"startsAt":"2026-01-01T00:00:00Z","endsAt":"2099-01-01T00:00:00Z","createdBy":"nobody","comment":"x"}'
[ "$(as_nobody -H 'Content-Type: application/json' -d "$SIL" "http://127.0.0.1:$A/api/v2/silences")" = 401 ] ||
	fail "nobody created a silence"
code=$(curl -s -o /dev/null -w '%{http_code}' -u "$(mon_auth)" "http://127.0.0.1:$P/api/v1/status/config")
[ "$code" = 200 ] || fail "the kept credentials got $code from Prometheus"
code=$(curl -s -o /dev/null -w '%{http_code}' -u "$(mon_auth)" "http://127.0.0.1:$A/api/v2/status")
[ "$code" = 200 ] || fail "the kept credentials got $code from Alertmanager"

expect_rc 0 ctl reconfigure --dry-run
lacks "$OUT" "web.yml"
[ "$(cat "$S/monitoring-web-password")" = "$PW" ] || fail "the kept password changed"
ctl show-config >"$OUT" 2>&1
! grep -qF "$PW" "$OUT" || fail "show-config printed the generated password"
exit 0
