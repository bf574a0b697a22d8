#!/bin/sh
# HA: three database nodes, each its own --root and runsvdir in a network namespace of its own
# (veth pairs to a bridge in a fourth; 10.21.0.0/24 only there), each running etcd (TLS with
# client certificates, the three as one cluster) and Patroni from the same roles. One leads,
# two stream from it; the leader's node is lost (every process of its namespace SIGKILLed): a
# replica takes over and is writable, nothing acknowledged before is lost, and the old
# leader's node, started again, rejoins as a replica (pg_rewind with the superuser's
# password). A second reconfigure on every node changes nothing. Before the loss: node 1's
# Prometheus scrapes its own Patroni (job patroni, TLS with a client certificate) and the two
# others (a scrape_configs job) and sees one primary; on a replica `gitlab-ctl patroni members`
# lists the three, get-postgresql-primary names the leader, check-leader / check-replica (over
# TLS) answer as Omnibus'; a planned
# `patroni switchover` and a `patroni failover` each move the leader to the node named, writable
# within seconds (printed), and the old leader streams from it again.
# Each node's exporter probes the database through gitlab_rails['db_host'] (the three members,
# libpq's target_session_attrs=read-write): its /database series come from the leader, before
# the loss and, on the nodes left, from the new leader after it.
. "$SRCDIR/test/integration/lib.sh"

CL_TAG=db CL_NET=10.21.0
. "$SRCDIR/test/integration/patroni_cluster.sh"
cl_require
cl_net_up 1 2 3
OUT=$T_ROOT/out
cl_tls
test_cert "$C" scraper "DNS:scraper"
DBH=$(printf 'db-Secret-44\n' | "$GITLAB_CTL" pg-password-md5 gitlab) || fail "pg-password-md5"
cl_roots "postgresql['sql_user_password'] = '$DBH'
gitlab_exporter['enable'] = true
gitlab_rails['db_host'] = '10.21.0.11,10.21.0.12,10.21.0.13'
gitlab_rails['db_password'] = 'db-Secret-44'"
# Node 1 also monitors: its own Patroni through gitlab-ctl's job, the others listed.
cat >>"$T_ROOT/n1/etc/gitlab/gitlab.rb" <<EOF2
prometheus['enable'] = true
prometheus['listen_address'] = '127.0.0.1:9090'
prometheus['scrape_interval'] = 1
patroni['prometheus_scrape_tls_cert_path'] = '$T_ROOT/n1/etc/gitlab/tls/scraper.pem'
patroni['prometheus_scrape_tls_key_path'] = '$T_ROOT/n1/etc/gitlab/tls/scraper.key'
prometheus['scrape_configs'] = [
  { 'job_name' => 'patroni-members', 'scheme' => 'https',
    'tls_config' => { 'ca_file' => '$T_ROOT/n1/etc/gitlab/tls/ca.pem',
                      'cert_file' => '$T_ROOT/n1/etc/gitlab/tls/scraper.pem',
                      'key_file' => '$T_ROOT/n1/etc/gitlab/tls/scraper.key' },
    'static_configs' => [ { 'targets' => ['10.21.0.12:8008', '10.21.0.13:8008'] } ] },
]
EOF2

note "three nodes reconfigure side by side"
cl_reconfigure_all
for _i in 1 2 3; do ! grep -q "$DBH" "$T_ROOT/rc$_i.out" || fail "node $_i printed a password hash"; done
rows_are() { [ "$(sql "$1" 'SELECT count(*) FROM acked' 2>/dev/null)" = "$2" ]; }
L=$(cl_converged)
note "node $L leads"
# The REST API beyond loopback: no client certificate, no answer, not even to a GET.
for _u in "https://10.21.0.1$L:8008/cluster" "http://10.21.0.1$L:8008/cluster"; do
	if ip netns exec "$(ns "$L")" curl -sk --max-time 3 -o "$OUT" "$_u" && grep -q members "$OUT"; then
		fail "$_u answered without a client certificate"
	fi
done

# The exporter's /database answers with rows counted on the leader, over TCP as gitlab.
db_series() { # db_series N: node N's exporter answers /database with row counts
	ip netns exec "$(ns "$1")" curl -fsS --max-time 5 http://127.0.0.1:9168/database >"$T_ROOT/db$1.out" 2>&1 &&
		grep -q '^gitlab_database_rows{' "$T_ROOT/db$1.out"
}
from_leader() { # from_leader N L: the exporter of node N holds a connection to the leader L
	[ "$(sql "$2" "SELECT count(*) FROM pg_stat_activity WHERE usename = 'gitlab' AND client_addr = '10.21.0.1$1'")" -ge 1 ]
}
for _i in 1 2 3; do
	until_true 300 db_series "$_i" || { cat "$T_ROOT/db$_i.out" >&2; fail "node $_i's exporter has no /database series"; }
	until_true 100 from_leader "$_i" "$L" || fail "node $_i's exporter is not connected to the leader $L"
done
note "every exporter's /database series come from the leader $L"
# The file the leader ran holds the hash only (and is root's, readable by gitlab-psql's group).
SQLF=$T_ROOT/n$L/opt/gitlab/sv/patroni/setup.sql
! grep -q "db-Secret-44" "$SQLF" && grep -q "md5$DBH" "$SQLF" || fail "setup.sql: no hash, or the password"
[ "$(stat -c '%a %U %G' "$SQLF")" = "640 root gitlab-psql" ] || fail "setup.sql: $(stat -c '%a %U %G' "$SQLF")"
sql "$L" "CREATE TABLE acked (n int); INSERT INTO acked SELECT generate_series(1, 100)" >/dev/null ||
	fail "write on the leader"
sql "$L" "CREATE TABLE moves (n int)" >/dev/null || fail "write on the leader"

note "node 1's Prometheus scrapes the three Patroni members and sees one primary"
prom() { # prom QUERY: the values of an instant query on node 1's Prometheus, "instance value" lines
	ip netns exec "$(ns 1)" curl -fsS --max-time 3 -u "$(mon_auth "$T_ROOT/n1")" \
		"http://127.0.0.1:9090/api/v1/query" --data-urlencode "query=$1" >"$T_ROOT/prom.json" 2>/dev/null &&
		ruby -rjson -e 'JSON.parse(File.read(ARGV[0]))["data"]["result"].each { |r|
			puts "#{r["metric"]["job"]} #{r["metric"]["instance"]} #{r["value"][1]}" }' "$T_ROOT/prom.json" | sort
}
prom_is() { [ "$(prom "$1")" = "$2" ]; }
_up="patroni 10.21.0.11:8008 1
patroni-members 10.21.0.12:8008 1
patroni-members 10.21.0.13:8008 1"
until_true 300 prom_is 'up{job=~"patroni.*"}' "$_up" ||
	fail "Prometheus' patroni targets: $(prom 'up{job=~"patroni.*"}') $(cat "$T_ROOT/prom.json")"
_job=patroni-members
[ "$L" = 1 ] && _job=patroni
until_true 100 prom_is 'patroni_primary == 1' "$_job 10.21.0.1$L:8008 1" ||
	fail "Prometheus' primary: $(prom 'patroni_primary == 1'), not node $L's"
ip netns exec "$(ns 1)" curl -fsS --max-time 3 -u "$(mon_auth "$T_ROOT/n1")" \
	"http://127.0.0.1:9090/api/v1/targets" >"$OUT" || fail "Prometheus' targets"
grep -q '"scrapeUrl":"https://10.21.0.11:8008/metrics"' "$OUT" || fail "job patroni is not https: $(cat "$OUT")"

R=$(for _i in 1 2 3; do [ "$_i" = "$L" ] || echo "$_i"; done | head -1)
F=$(for _i in 1 2 3; do [ "$_i" = "$L" ] || [ "$_i" = "$R" ] || echo "$_i"; done)
note "on replica node $R: patroni members, check-leader, check-replica"
in_node "$R" get-postgresql-primary >"$OUT" 2>&1 || { cat "$OUT"; fail "get-postgresql-primary on node $R"; }
[ "$(cat "$OUT")" = "10.21.0.1$L:5432" ] || fail "get-postgresql-primary on node $R: $(cat "$OUT"), not node $L"
in_node "$R" patroni members >"$OUT" 2>&1 || { cat "$OUT"; fail "patroni members on node $R"; }
for _i in 1 2 3; do grep -q "| db$_i " "$OUT" || { cat "$OUT"; fail "members lacks db$_i"; }; done
[ "$(grep -c '| Leader ' "$OUT")" = 1 ] && grep -q "| db$L .*| Leader " "$OUT" ||
	{ cat "$OUT"; fail "members: db$L is not the one leader"; }
_rc=0; in_node "$R" patroni check-leader >"$OUT" 2>&1 || _rc=$?
[ "$_rc" = 1 ] || { cat "$OUT"; fail "check-leader on replica node $R: exit $_rc, not 1"; }
_rc=0; in_node "$R" patroni check-replica >"$OUT" 2>&1 || _rc=$?
[ "$_rc" = 0 ] || { cat "$OUT"; fail "check-replica on replica node $R: exit $_rc, not 0"; }
_rc=0; in_node "$L" patroni check-leader >"$OUT" 2>&1 || _rc=$?
[ "$_rc" = 0 ] || { cat "$OUT"; fail "check-leader on leader node $L: exit $_rc, not 0"; }

writable() { sql "$1" "INSERT INTO moves VALUES (1)" >/dev/null 2>&1; }
moved() { # moved HOW NODE: after `patroni HOW` made NODE lead: writable, the others stream from it
	until_true 300 writable "$2" || { cl_logs; fail "node $2 is not writable after the $1"; }
	_t=$(printf %.1f "$(echo "$(date +%s.%N) - $T0" | bc)")
	[ "$(leader_of 1 2 3)" = "$2" ] || fail "after the $1 node $(leader_of 1 2 3) leads, not $2"
	note "$1: node $2 leads, writable $_t s after the command started"
	until_true 600 streaming "$2" 2 || { cl_logs; fail "after the $1 the others do not stream from node $2"; }
}
note "planned switchover from node $L to node $R"
T0=$(date +%s.%N)
in_node "$F" patroni switchover --master "db$L" --candidate "db$R" >"$OUT" 2>&1 ||
	{ cat "$OUT"; fail "patroni switchover"; }
moved switchover "$R"
note "failover from node $R to node $F"
T0=$(date +%s.%N)
in_node "$L" patroni failover --candidate "db$F" >"$OUT" 2>&1 || { cat "$OUT"; fail "patroni failover"; }
moved failover "$F"
L=$F
# The replicas have it before the leader is lost (asynchronous replication: wait for it).
for _i in 1 2 3; do until_true 100 rows_are "$_i" 100 || fail "node $_i lacks the leader's rows"; done

note "second reconfigure on every node changes nothing"
for _i in 1 2 3; do
	SVWAIT=240 in_node $_i reconfigure >"$OUT" 2>&1 || { cat "$OUT"; fail "node $_i second reconfigure"; }
	! grep -qE "restart|create" "$OUT" || { cat "$OUT"; fail "node $_i: the second reconfigure changed something"; }
done
[ "$(leader_of 1 2 3)" = "$L" ] || fail "a reconfigure moved the leader"

note "node $L is lost"
T0=$(date +%s.%N)
cl_kill_ns "$(ns "$L")"
OTHERS=$(for _i in 1 2 3; do [ "$_i" = "$L" ] || echo "$_i"; done | tr '\n' ' ')
# shellcheck disable=SC2086
until_true 900 leader_of $OTHERS >/dev/null || fail "no new leader after node $L was lost"
# shellcheck disable=SC2086
N=$(leader_of $OTHERS)
# Patroni holds the leader key a moment before its PostgreSQL has left recovery.
until_true 300 writable "$N" || { cl_logs; fail "the new leader $N is not writable"; }
sql "$N" "INSERT INTO acked VALUES (101)" >/dev/null || fail "the new leader $N refused the write"
T1=$(date +%s.%N)
note "node $N leads, writable $(echo "$T1 - $T0" | bc) s after the loss"
_o=$(echo "$OTHERS" | tr ' ' '\n' | grep -vx "$N" | head -1)
in_node "$_o" get-postgresql-primary >"$OUT" 2>&1 && [ "$(cat "$OUT")" = "10.21.0.1$N:5432" ] ||
	fail "get-postgresql-primary on node $_o after the loss: $(cat "$OUT"), not node $N"
[ "$(sql "$N" 'SELECT count(*) FROM acked')" = 101 ] || fail "rows were lost"
for _i in $OTHERS; do
	until_true 600 db_series "$_i" || { cat "$T_ROOT/db$_i.out" >&2; fail "node $_i's exporter lost /database"; }
	note "node $_i's exporter answers /database again $(echo "$(date +%s.%N) - $T0" | bc) s after the loss"
	until_true 100 from_leader "$_i" "$N" || fail "node $_i's exporter is not connected to the new leader $N"
done

note "node $L starts again and rejoins as a replica"
SVWAIT=240 in_node "$L" reconfigure >"$OUT" 2>&1 || { cat "$OUT"; fail "node $L reconfigure after the loss"; }
until_true 1200 is_replica "$L" ||
	{ tail -30 "$T_ROOT/n$L/var/log/gitlab/patroni/current" >&2; fail "node $L did not rejoin as a replica"; }
until_true 300 rows_are "$L" 101 || fail "node $L does not have the new leader's rows"
[ "$(leader_of 1 2 3)" = "$N" ] || fail "the old leader came back as a second leader"
echo ok
