#!/bin/sh
# HA: three Redis nodes, each its own --root and runsvdir in a network namespace of its own
# (veth pairs to a bridge in a fourth; 10.22.0.0/24 only there), each running Redis (one
# redis_master_role, two redis_replica_role) and a Sentinel (redis_sentinel_role, quorum 2,
# down_after_milliseconds 3000, failover_timeout 10000), passwords on both. The sentinels see
# both replicas; the master's Redis is SIGKILLed (runsv told not to restart it): a replica is
# writable again after the seconds printed. A reconfigure on every node then follows the
# sentinels (the old master comes back as a replica of the new one, never as a second master;
# a restart of it keeps that), get-redis-master on every node prints the new master, and a
# second reconfigure on every node changes nothing. Node 1's exporter reads Sidekiq's data
# through the sentinels (redis-rb's sentinels), from the new master after the loss (printed).
. "$SRCDIR/test/integration/lib.sh"
CL_TAG=rs CL_NET=10.22.0
. "$SRCDIR/test/integration/patroni_cluster.sh"

[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null 2>&1 || skip "no ip(8) (iproute2)"
command -v redis-cli >/dev/null 2>&1 || fail "redis-cli is not installed (scripts/setup installs it)"
cl_net_up 1 2 3

RPW=redis-Secret-61 SPW=sentinel-Secret-62
OUT=$T_ROOT/out ERR=$T_ROOT/err
for _i in 1 2 3; do
	mkdir -p "$T_ROOT/n$_i/etc/gitlab"
	chmod 755 "$T_ROOT/n$_i"
	CL_ROOTS="$CL_ROOTS $T_ROOT/n$_i"
	_role=redis_replica_role
	[ "$_i" = 1 ] && _role=redis_master_role
	cat >"$T_ROOT/n$_i/etc/gitlab/gitlab.rb" <<EOF2
roles(['$_role', 'redis_sentinel_role'])
redis_exporter['enable'] = false
redis['bind'] = '$CL_NET.1$_i'
redis['port'] = 6379
redis['password'] = '$RPW'
redis['master_ip'] = '$CL_NET.11'
redis['announce_ip'] = '$CL_NET.1$_i'
sentinel['bind'] = '$CL_NET.1$_i'
sentinel['announce_ip'] = '$CL_NET.1$_i'
sentinel['password'] = '$SPW'
sentinel['quorum'] = 2
sentinel['down_after_milliseconds'] = 3000
sentinel['failover_timeout'] = 10000
gitlab_rails['redis_sentinels'] = [ { 'host' => '$CL_NET.11', 'port' => 26379 },
  { 'host' => '$CL_NET.12', 'port' => 26379 }, { 'host' => '$CL_NET.13', 'port' => 26379 } ]
EOF2
	chmod 600 "$T_ROOT/n$_i/etc/gitlab/gitlab.rb"
done
# Node 1 also runs the exporter: its Sidekiq probe finds the master through the sentinels.
printf "gitlab_exporter['enable'] = true\ngitlab_exporter['listen_address'] = '127.0.0.1'\n" \
	>>"$T_ROOT/n1/etc/gitlab/gitlab.rb"
# processed N: node 1's exporter reports Sidekiq's processed count N
processed() {
	ip netns exec "$(ns 1)" curl -s --max-time 5 http://127.0.0.1:9168/sidekiq |
		grep -qE "^sidekiq_jobs_processed_total(\{[^}]*\})? $1(\.0)?\$"
}

# rcli N PORT ARGS... (its variables not until_true's _n): redis-cli to node N's Redis (6379) or Sentinel (26379), password from env
rcli() {
	_rn=$1 _rp=$2
	shift 2
	_pw=$RPW
	[ "$_rp" = 26379 ] && _pw=$SPW
	REDISCLI_AUTH=$_pw ip netns exec "$(ns "$_rn")" timeout 3 redis-cli --no-auth-warning \
		-h "$CL_NET.1$_rn" -p "$_rp" "$@" 2>&1
}
role() { rcli "$1" 6379 INFO replication | tr -d '\r' | sed -n 's/^role://p'; }
master_host() { rcli "$1" 6379 INFO replication | tr -d '\r' | sed -n 's/^master_host://p'; }
# sees N K: node N's sentinel knows K replicas and K other sentinels of the master, none down
sees() {
	rcli "$1" 26379 SENTINEL replicas gitlab-redis >"$T_ROOT/sees"
	[ "$(grep -c '^name$' "$T_ROOT/sees")" = "$2" ] && ! grep -q 's_down' "$T_ROOT/sees" &&
		[ "$(rcli "$1" 26379 SENTINEL sentinels gitlab-redis | grep -c '^name$')" = "$2" ]
}
logs() { for _i in 1 2 3; do echo "== node $_i" && tail -n 20 "$T_ROOT/n$_i/var/log/gitlab/sentinel/current"; done >&2; }
reconfigure_all() { # $1: a tag for the outputs
	for _i in 1 2 3; do
		SVWAIT=120 in_node $_i reconfigure >"$T_ROOT/rc$_i.$1" 2>&1 &
		eval "_rp$_i=\$!"
	done
	for _i in 1 2 3; do
		eval "_p=\$_rp$_i"
		wait "$_p" || { cat "$T_ROOT/rc$_i.$1" >&2; logs; fail "node $_i reconfigure ($1)"; }
		! grep -q "Secret-6" "$T_ROOT/rc$_i.$1" || fail "node $_i printed a password"
	done
}

note "three nodes: one master, two replicas, a sentinel each"
reconfigure_all up
until_true 300 sh -c "[ \"\$(REDISCLI_AUTH=$RPW ip netns exec $(ns 1) redis-cli --no-auth-warning -h $CL_NET.11 INFO replication | tr -d '\r' | sed -n 's/^connected_slaves://p')\" = 2 ]" ||
	{ logs; fail "the replicas did not connect: $(rcli 1 6379 INFO replication)"; }
for _i in 1 2 3; do
	until_true 600 sees "$_i" 2 || { logs; fail "sentinel $_i does not see the others"; }
done
[ "$(role 1)" = master ] || fail "node 1: $(role 1)"
[ "$(role 2)" = slave ] && [ "$(role 3)" = slave ] || fail "nodes 2, 3: $(role 2) $(role 3)"
rcli 1 6379 SET before-loss 1 >/dev/null
rcli 1 6379 SET stat:processed 17 >/dev/null
grep -q "redis_sentinels" "$T_ROOT/n1/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml" ||
	fail "the exporter's YAML has no sentinels"
until_true 300 processed 17 ||
	fail "the exporter does not read Sidekiq's data: $(ip netns exec "$(ns 1)" curl -s http://127.0.0.1:9168/sidekiq | head -5)"
for _i in 1 2 3; do
	expect_rc 0 in_node "$_i" get-redis-master
	same "$OUT" "$CL_NET.11:6379"
done
# Sentinel's INFO period (10 s) must pass before a failover can pick a replica.
sleep 11

note "the master's Redis is lost"
SV1=$T_ROOT/n1/opt/gitlab/sv/redis
printf o >"$SV1/supervise/control" # runsv: do not start it again once it stops
PID=$(status_pid "$SV1/supervise/status")
[ "$PID" -gt 0 ] || fail "no Redis pid on node 1"
T0=$(date +%s%N)
kill -KILL "$PID"
writable() {
	for _i in 2 3; do
		[ "$(rcli "$_i" 6379 SET after-loss 1)" = OK ] && { echo "$_i"; return 0; }
	done
	return 1
}
until_true 600 writable >/dev/null || { logs; fail "no replica became writable"; }
T1=$(date +%s%N)
NEW=$(writable)
echo "# a replica (node $NEW) writable $(( (T1 - T0) / 1000000 )) ms after the master's loss"
[ "$(rcli "$NEW" 6379 GET before-loss)" = 1 ] || fail "the new master lost the write"
OTHER=$((5 - NEW))
rcli "$NEW" 6379 SET stat:processed 4242 >/dev/null
until_true 600 processed 4242 || fail "the exporter does not follow the failover"
T2=$(date +%s%N)
echo "# the exporter's Sidekiq series from the new master $(( (T2 - T0) / 1000000 )) ms after the master's loss"
until_true 300 sh -c "[ \"\$(REDISCLI_AUTH=$RPW ip netns exec $(ns $OTHER) redis-cli --no-auth-warning -h $CL_NET.1$OTHER INFO replication | tr -d '\r' | sed -n 's/^master_host://p')\" = $CL_NET.1$NEW ]" ||
	fail "node $OTHER does not follow node $NEW"

note "a reconfigure on every node follows the sentinels: the old master comes back as a replica"
reconfigure_all follow
has "$T_ROOT/rc1.follow" "redis: the sentinels' master is $CL_NET.1$NEW:6379, not gitlab.rb's"
grep -q "^replicaof \"$CL_NET.1$NEW\" 6379" "$SV1/redis.conf" || fail "node 1 redis.conf: $(grep replicaof "$SV1/redis.conf")"
# runsv was told to leave it down (o): started again, it reads the rendered file
SVWAIT=60 in_node 1 start redis >"$OUT" 2>&1 || { cat "$OUT"; fail "start redis on node 1"; }
until_true 300 sh -c "[ \"\$(REDISCLI_AUTH=$RPW ip netns exec $(ns 1) redis-cli --no-auth-warning -h $CL_NET.11 INFO replication | tr -d '\r' | sed -n 's/^role://p')\" = slave ]" ||
	fail "node 1 came back as $(role 1)"
[ "$(master_host 1)" = "$CL_NET.1$NEW" ] || fail "node 1 replicates from $(master_host 1)"
[ "$(role "$NEW")" = master ] || fail "node $NEW is $(role "$NEW") after the reconfigure"
[ "$(master_host "$OTHER")" = "$CL_NET.1$NEW" ] || fail "node $OTHER follows $(master_host "$OTHER")"
grep -q "^replicaof \"$CL_NET.1$NEW\" 6379" "$SV1/redis.conf" || fail "node 1 redis.conf: $(grep replicaof "$SV1/redis.conf")"
grep -q "^replicaof" "$T_ROOT/n$NEW/opt/gitlab/sv/redis/redis.conf" && fail "node $NEW renders a replicaof"
note "restarted, the old master is still a replica of the new one"
SVWAIT=60 in_node 1 restart redis >"$OUT" 2>&1 || { cat "$OUT"; fail "restart redis on node 1"; }
until_true 100 sh -c "[ \"\$(REDISCLI_AUTH=$RPW ip netns exec $(ns 1) redis-cli --no-auth-warning -h $CL_NET.11 INFO replication | tr -d '\r' | sed -n 's/^role://p')\" = slave ]" ||
	fail "node 1 restarted as $(role 1)"
[ "$(master_host 1)" = "$CL_NET.1$NEW" ] || fail "node 1 replicates from $(master_host 1) after a restart"
for _i in 1 2 3; do
	expect_rc 0 in_node "$_i" get-redis-master
	same "$OUT" "$CL_NET.1$NEW:6379"
	[ "$(rcli "$_i" 26379 SENTINEL get-master-addr-by-name gitlab-redis | head -1)" = "$CL_NET.1$NEW" ] ||
		fail "sentinel $_i names another master"
done

note "a second reconfigure on every node changes nothing"
reconfigure_all again
for _i in 1 2 3; do has "$T_ROOT/rc$_i.again" "0/"; done
until_true 100 sh -c "[ \"\$(REDISCLI_AUTH=$RPW ip netns exec $(ns 1) redis-cli --no-auth-warning -h $CL_NET.11 INFO replication | tr -d '\r' | sed -n 's/^role://p')\" = slave ]" ||
	fail "node 1 is $(role 1) after the second reconfigure"
echo PASS
