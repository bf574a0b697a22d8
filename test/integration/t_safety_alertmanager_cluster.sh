#!/bin/sh
# issue 29 row 7: alertmanager['flags'] = { 'cluster.listen-address' => '' }, Alertmanager's
# documented way to turn clustering off, passes --cluster.listen-address= (empty): the running
# Alertmanager has no gossip listener (no TCP or UDP socket on 9094 or anywhere off its web port).
. "$SRCDIR/test/integration/lib.sh"

[ -x /usr/bin/prometheus-alertmanager ] || exit 77
A=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
mkdir -p "$T_ROOT/etc/gitlab"
{
	only_services alertmanager
	echo "alertmanager['enable'] = true"
	echo "alertmanager['listen_address'] = '127.0.0.1:$A'"
	echo "alertmanager['flags'] = { 'cluster.listen-address' => '' }"
} >"$RB"

expect_rc 0 ctl show-config alertmanager
grep -q -- '--cluster.listen-address=' "$OUT" || fail "no empty --cluster.listen-address: $(cat "$OUT")"

expect_rc 0 ctl reconfigure
AP=$(status_pid "$SV_DIR/alertmanager/supervise/status")
alive "$AP" || fail "alertmanager not running"
tr '\0' ' ' <"/proc/$AP/cmdline" | grep -q -- '--cluster.listen-address= ' ||
	fail "alertmanager runs without an empty --cluster.listen-address: $(tr '\0' ' ' <"/proc/$AP/cmdline")"
# Gossip would bind once the process is up: let it settle, then look at its sockets.
sleep 2
ss -Hltunp >"$T_ROOT/ss"
grep "pid=$AP," "$T_ROOT/ss" >"$T_ROOT/mine" || true
awk '{print $5}' "$T_ROOT/mine" | grep -v ":$A\$" &&
	fail "alertmanager listens beyond its web port: $(cat "$T_ROOT/mine")"
grep -q "127.0.0.1:$A " "$T_ROOT/mine" || fail "alertmanager not on its web port: $(cat "$T_ROOT/ss")"
exit 0
