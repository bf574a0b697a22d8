#!/bin/sh
# HA, no acknowledged write lost: three database nodes (test/integration/patroni_cluster.sh,
# 10.24.0.0/24) bootstrapped with patroni['synchronous_mode'] = true. The DCS took it: the
# leader names one replica its synchronous standby (pg_stat_replication sync_state 'sync',
# `gitlab-ctl patroni members` shows it as Sync Standby). A writer in the hub namespace
# (bench/lib/writer.py: an autocommit INSERT every 20 ms over libpq multi-host with
# target_session_attrs=read-write, each acknowledged id logged) runs; the replicas' links go
# down for 2 s, so that without synchronous replication the leader would acknowledge commits
# no replica has; then the leader's node is lost (every process of its namespace SIGKILLed,
# then its link down: its kernel delivers no more WAL) and the replicas' links come back: the
# synchronous standby takes over, and every id the server acknowledged is on the new primary.
# Prints the writes acknowledged (in all, and while the replicas were cut off), the ones lost
# and the seconds until the writer's INSERTs were taken again. (The same run with
# synchronous_mode false: 83 writes acknowledged during the cut-off, 84 lost.)
. "$SRCDIR/test/integration/lib.sh"
CL_TAG=sy CL_NET=10.24.0
. "$SRCDIR/test/integration/patroni_cluster.sh"
cl_require
/usr/bin/python3 -c 'import psycopg2' 2>/dev/null || fail "no python3-psycopg2 (patroni's dependency)"
PW=$SRCDIR/bench/lib/writer.py
OUT=$T_ROOT/out
W=$T_ROOT/writes.log

cl_net_up 1 2 3
# The writer's address, on the hub's bridge (samenet for the nodes' pg_hba).
ip -n "$CL_HUB" addr add "$CL_NET.1/24" dev br0 || fail "the hub's address"
cl_tls
cl_roots "patroni['synchronous_mode'] = true"
note "three nodes with synchronous_mode reconfigure side by side"
cl_reconfigure_all
L=$(cl_converged)
note "node $L leads"

sync_standby() { # the node streaming to the leader as its synchronous standby
	_a=$(sql "$L" "SELECT client_addr FROM pg_stat_replication WHERE sync_state = 'sync'" 2>/dev/null) || return 1
	case $_a in "$CL_NET".1[123]) echo "${_a#"$CL_NET".1}" ;; *) return 1 ;; esac
}
until_true 300 sync_standby >/dev/null ||
	{ cl_logs; fail "no synchronous standby: $(sql "$L" 'SELECT client_addr, sync_state FROM pg_stat_replication')"; }
S=$(sync_standby)
[ -n "$(sql "$L" 'SHOW synchronous_standby_names')" ] || fail "the leader's synchronous_standby_names is empty"
# Patroni writes its /sync key in the DCS once the standby streams synchronously: a loop later.
# (A subshell: in_node sets _n, until_true's counter.)
sync_member() { (in_node "$L" patroni members) >"$OUT" 2>&1 && grep -q "| db$S .*| Sync Standby " "$OUT"; }
until_true 300 sync_member || { cat "$OUT"; fail "members does not show db$S as Sync Standby"; }
note "node $S is the synchronous standby"

sql "$L" "CREATE TABLE acked (n bigint PRIMARY KEY)" >/dev/null || fail "create table on node $L"
DSN="host=$CL_NET.11,$CL_NET.12,$CL_NET.13 port=5432 dbname=postgres user=gitlab-psql"
DSN="$DSN target_session_attrs=read-write connect_timeout=2 password=super-Secret-43"
# A peer gone without a reset (its link down) is given up within seconds.
DSN="$DSN keepalives_idle=1 keepalives_interval=1 keepalives_count=2 tcp_user_timeout=3000"
: >"$W"
# In the hub namespace: cl_cleanup kills it with the namespaces' processes.
ip netns exec "$CL_HUB" /usr/bin/python3 "$PW" write "$DSN" "$W" 0 </dev/null >/dev/null 2>"$T_ROOT/writer.err" &
WP=$!
acked() { [ "$(grep -c '^ok' "$W")" -ge "$1" ]; }
until_true 300 acked 100 || fail "the writer does not write: $(cat "$W" "$T_ROOT/writer.err")"

link() { ip -n "$(ns "$1")" link set "e$1" "$2" || fail "link of node $1 $2"; }
OTHERS=$(for _i in 1 2 3; do [ "$_i" = "$L" ] || echo "$_i"; done | tr '\n' ' ')
note "the replicas are cut off for 2 s, then node $L is lost under the write load"
TS=$(date +%s.%N)
for _i in $OTHERS; do link "$_i" down; done
sleep 2
T0=$(date +%s.%N)
cl_kill_ns "$(ns "$L")"
sleep 0.5 # the killed connections' resets reach the writer
link "$L" down
for _i in $OTHERS; do link "$_i" up; done
STALL=$(awk -v a="$TS" -v b="$T0" '$1 == "ok" && $3 >= a && $3 < b { n++ } END { print n + 0 }' "$W")
# shellcheck disable=SC2086
until_true 900 leader_of $OTHERS >/dev/null || { cl_logs; fail "no new leader after node $L was lost"; }
# shellcheck disable=SC2086
N=$(leader_of $OTHERS)
[ "$N" = "$S" ] || fail "node $N took over, not the synchronous standby $S"
back() { [ "$(/usr/bin/python3 "$PW" series "$W" "$T0")" != - ]; }
until_true 600 back || fail "the writer's INSERTs are not taken again: $(tail -5 "$W")"
until_true 100 acked $(($(grep -c '^ok' "$W") + 50)) || fail "the writer stopped writing: $(tail -5 "$W")"
kill -TERM "$WP" 2>/dev/null || true
wait "$WP" 2>/dev/null || true
# shellcheck disable=SC2046
set -- $(ip netns exec "$CL_HUB" /usr/bin/python3 "$PW" report "$DSN" "$W" "$T0")
[ $# = 3 ] || fail "no report from the writer"
note "synchronous_mode, node loss under writes: node $N leads, INSERTs taken again $1 s after the loss;" \
	"$2 writes acknowledged ($STALL while the replicas were cut off), $3 of them lost"
[ "$2" -gt 100 ] || fail "only $2 writes were acknowledged"
[ "$3" = 0 ] || fail "$3 acknowledged writes are not on the new primary (node $N)"
echo ok
