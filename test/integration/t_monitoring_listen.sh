#!/bin/sh
# node_exporter['listen_address'] in the wildcard forms operators write:
# Prometheus' ':PORT' and '0.0.0.0:PORT' reach ready (the HTTP readiness check
# connects to loopback for a wildcard host) and /metrics answers there;
# '*:PORT', which node_exporter cannot listen on, is refused at its gitlab.rb
# position with the form to write. Beyond loopback it needs a web_password (basic auth),
# which readiness and curl here send.
. "$SRCDIR/test/integration/lib.sh"

for _b in prometheus-node-exporter curl; do
	command -v "$_b" >/dev/null 2>&1 || fail "$_b is not installed (scripts/setup installs it)"
done
OUT=$T_ROOT/out ERR=$T_ROOT/err
GE=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"

# ready ADDRESS PORT: a gitlab.rb with node_exporter on ADDRESS; reconfigure waits for ready.
ready() {
	cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<RB
gitlab_exporter['listen_port'] = $GE
node_exporter['enable'] = true
node_exporter['listen_address'] = '$1'
node_exporter['web_password'] = 'listen-test-pw'
$(only_services gitlab_exporter node_exporter)
RB
	chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
	expect_rc 0 ctl check-config
	SVWAIT=60 expect_rc 0 ctl reconfigure
	expect_rc 0 ctl status node-exporter
	has "$OUT" "run: node-exporter:"
	curl -fsS --max-time 5 -u gitlab-prometheus:listen-test-pw "http://127.0.0.1:$2/metrics" >"$OUT" 2>"$ERR" || fail "no /metrics on 127.0.0.1:$2 for '$1'"
	grep -q '^node_exporter_build_info' "$OUT" || fail "127.0.0.1:$2 is not node_exporter"
	note "node_exporter['listen_address'] = '$1': ready"
}

P=$(free_port)
ready ":$P" "$P"
P=$(free_port)
ready "0.0.0.0:$P" "$P"

P=$(free_port)
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<RB
gitlab_exporter['listen_port'] = $GE
node_exporter['enable'] = true
node_exporter['listen_address'] = '*:$P'
node_exporter['web_password'] = 'listen-test-pw'
$(only_services gitlab_exporter node_exporter)
RB
expect_rc 1 ctl check-config
[ "$(head -n 1 "$ERR")" = "$T_ROOT/etc/gitlab/gitlab.rb:3:35: error: node_exporter['listen_address']: host '*' cannot be listened on: write \":$P\" for every interface" ] ||
	{ cat "$ERR" >&2; fail "'*:$P' not refused at its position"; }
run_before=$(cat "$SV_DIR/node-exporter/run")
expect_rc 1 ctl reconfigure
[ "$(cat "$SV_DIR/node-exporter/run")" = "$run_before" ] || fail "reconfigure changed the run script on a refused config"
echo ok
