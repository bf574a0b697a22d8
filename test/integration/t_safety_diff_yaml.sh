#!/bin/sh
# issue 29 row 4 (--diff): `reconfigure --dry-run --diff` (and --diff) print no credential the
# user wrote inside YAML settings: basic_auth, password, authorization credentials,
# bearer_token in scrape_configs and alertmanagers, userinfo in a receivers or remote_write URL.
# The lines around them are still shown, [REDACTED] in place of each value.
. "$SRCDIR/test/integration/lib.sh"

[ -x /usr/bin/promtool ] && [ -x /usr/bin/amtool ] || exit 77
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
prometheus['scrape_configs'] = [
  { 'job_name' => 'app', 'basic_auth' => { 'username' => 'scrUSER1', 'password' => 'scrPASS1' },
    'static_configs' => [ { 'targets' => ['10.0.0.2:9100'] } ] },
  { 'job_name' => 'tok', 'authorization' => { 'type' => 'Bearer', 'credentials' => 'credTOK2' },
    'static_configs' => [ { 'targets' => ['10.0.0.3:9100'] } ] },
  { 'job_name' => 'old', 'bearer_token' => 'bearTOK3',
    'static_configs' => [ { 'targets' => ['10.0.0.4:9100'] } ] }
]
prometheus['alertmanagers'] = [
  { 'basic_auth' => { 'username' => 'amUSER4', 'password' => 'amPASS4' },
    'static_configs' => [ { 'targets' => ['10.0.0.5:9093'] } ] }
]
prometheus['remote_write'] = [ { 'url' => 'https://rwUSER5:rwPASS5@rw.example/api/v1/write' } ]
alertmanager['receivers'] = [
  { 'name' => 'hook', 'webhook_configs' => [ { 'url' => 'https://hkUSER6:hkPASS6@hook.example/x' } ] }
]
EOF2
} >"$RB"
chmod 600 "$RB"

SECRETS="scrPASS1 scrUSER1 credTOK2 bearTOK3 amPASS4 amUSER4 rwPASS5 rwUSER5 hkPASS6 hkUSER6"
no_leak() {
	for _w in $SECRETS; do
		! grep -F -- "$_w" "$1" >/dev/null || fail "$2 printed $_w: $(cat "$1")"
	done
}
expect_rc 0 ctl reconfigure --dry-run --diff
cat "$OUT" "$ERR" >"$T_ROOT/all"
no_leak "$T_ROOT/all" "--dry-run --diff"
# What is not a credential is still shown.
has "$T_ROOT/all" 'job_name: "app"'
has "$T_ROOT/all" '10.0.0.5:9093'
for k in basic_auth authorization; do
	grep -q "^+ *$k:\\[REDACTED\\]\$" "$T_ROOT/all" || fail "$k not redacted in place: $(cat "$T_ROOT/all")"
done
grep -q '^+ *bearer_token: \[REDACTED\]$' "$T_ROOT/all" || fail "bearer_token not redacted in place: $(cat "$T_ROOT/all")"

# The real run shows the same, and the files still hold the values the services read.
expect_rc 0 ctl reconfigure --diff
cat "$OUT" "$ERR" >"$T_ROOT/all"
no_leak "$T_ROOT/all" "reconfigure --diff"
grep -q 'scrPASS1' "$T_ROOT/var/opt/gitlab/prometheus/prometheus.yml" || fail "prometheus.yml lost the password"
