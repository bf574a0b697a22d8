#!/bin/sh
# Redis Sentinel on one node, from roles: redis_master_role and redis_sentinel_role bring up
# Redis on TCP and a Sentinel watching it. Sentinel's own file is its account's, in its own
# directory, written by the account (sentinel-config) from root's rendered copy; Sentinel
# answers the master's address; a changed quorum applies, and the master Sentinel follows
# (as after a failover) is never reset from gitlab.rb (Omnibus #9989); the passwords never
# show; reconfigure renders the master the sentinel names (replicaof it) and get-redis-master
# prints it; a Sentinel beyond loopback without a password is refused at its bind line.
. "$SRCDIR/test/integration/lib.sh"

command -v redis-cli >/dev/null || { echo "SKIP: no redis-cli"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "# needs root (service accounts)"; exit 77; }
OUT=$T_ROOT/out ERR=$T_ROOT/err
RP=$(free_port) SP=$(free_port) XP=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
write_rb() {
	cat >"$T_ROOT/etc/gitlab/gitlab.rb"
	chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
}
base_rb() {
	cat <<EOF2
roles(['redis_master_role', 'redis_sentinel_role'])
redis_exporter['enable'] = false
sentinel_exporter['listen_address'] = 'localhost:$XP'
redis['port'] = $RP
redis['password'] = 'redis-Secret-51'
redis['master_ip'] = '127.0.0.1'
redis['master_port'] = $RP
sentinel['port'] = $SP
sentinel['quorum'] = ${1:-1}
EOF2
}

note "a Sentinel beyond loopback without a password is refused at its bind line"
{ base_rb; echo "sentinel['bind'] = '10.1.2.3'"; } | write_rb
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:10:"
has "$ERR" "set sentinel['password']"
# Omnibus' default bind 0.0.0.0 without a password: at the role that enabled Sentinel
base_rb | write_rb
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:1:29: error: sentinel['bind'] (its default; the role enables sentinel): not a loopback address"

{ base_rb; echo "sentinel['bind'] = '127.0.0.1'"; echo "sentinel['password'] = 'sentinel-Secret-52'"; } | write_rb
SVWAIT=${T_SVWAIT:-60} expect_rc 0 ctl reconfigure
lacks "$OUT" "Secret-5"
lacks "$ERR" "Secret-5"
LIVE=$T_ROOT/var/opt/gitlab/sentinel/sentinel.conf
MINE=$T_ROOT/opt/gitlab/sv/sentinel/sentinel.conf
[ "$(stat -c '%a %U %G' "$MINE")" = "640 root gitlab-redis" ] || fail "rendered: $(stat -c '%a %U %G' "$MINE")"
[ "$(stat -c '%U' "$LIVE")" = gitlab-redis ] || fail "Sentinel's own file: $(stat -c '%U' "$LIVE")"
[ "$(stat -c '%U' "$(dirname "$LIVE")")" = gitlab-redis ] || fail "its directory is not the account's"

scli() { REDISCLI_AUTH=sentinel-Secret-52 redis-cli --no-auth-warning -h 127.0.0.1 -p "$SP" "$@"; }
master_addr() { scli SENTINEL get-master-addr-by-name gitlab-redis | paste -sd: -; }
[ "$(master_addr)" = "127.0.0.1:$RP" ] || fail "sentinel answers '$(master_addr)'"
REDISCLI_AUTH=x redis-cli --no-auth-warning -h 127.0.0.1 -p "$SP" PING >"$OUT" 2>&1 || true
has "$OUT" "WRONGPASS"
has "$LIVE" "sentinel myid"

note "sentinel-exporter: what the Sentinel sees, as its read-only ACL user"
metrics() { curl -fsS --max-time 5 "http://127.0.0.1:$XP/metrics" >"$OUT" 2>"$ERR"; }
until_true 100 sh -c "curl -fsS --max-time 5 http://127.0.0.1:$XP/metrics | grep -q '^redis_sentinel_master_status{.*} 1'" ||
	{ metrics || true; fail "no redis_sentinel_master_status 1: $(grep -i sentinel "$OUT" | head -5)"; }
MPW=$(cat "$T_ROOT/opt/gitlab/var/secrets/sentinel-monitor_password")
mcli() { REDISCLI_AUTH=$MPW redis-cli --no-auth-warning --user gitlab-sentinel-exporter -h 127.0.0.1 -p "$SP" "$@" 2>&1; }
mcli SENTINEL masters >"$OUT"
has "$OUT" "gitlab-redis"
mcli SENTINEL REMOVE gitlab-redis >"$OUT"
has "$OUT" "NOPERM"
mcli SENTINEL FAILOVER gitlab-redis >"$OUT"
has "$OUT" "NOPERM"
[ "$(master_addr)" = "127.0.0.1:$RP" ] || fail "the exporter's user changed the master: '$(master_addr)'"

note "the passwords are redacted: show-config, --diff, command lines"
for f in "" --json; do
	expect_rc 0 ctl show-config $f sentinel redis sentinel-exporter
	lacks "$OUT" "Secret-5"
	lacks "$OUT" "$MPW"
done
expect_rc 0 ctl show-config --show-secrets sentinel
has "$OUT" "sentinel-Secret-52"
for p in $(pgrep -u gitlab-redis || true); do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo; done >"$OUT"
lacks "$OUT" "Secret-5"
lacks "$OUT" "$MPW"

note "inspect: Sentinel and its exporter run as configured (env, user, memory)"
expect_rc 0 ctl inspect sentinel
expect_rc 0 ctl inspect sentinel-exporter

note "a second reconfigure changes nothing"
SVWAIT=60 expect_rc 0 ctl reconfigure --dry-run
has "$OUT" "0/"

note "Sentinel follows another master (as after a failover): gitlab.rb does not reset it"
# Sentinel monitoring 127.0.0.2 (another loopback address, no Redis) rewrites its own file.
scli SENTINEL REMOVE gitlab-redis >/dev/null
scli SENTINEL MONITOR gitlab-redis 127.0.0.2 "$RP" 1 >/dev/null
until_true 10 sh -c "grep -q '^sentinel monitor gitlab-redis 127.0.0.2 $RP' '$LIVE'" ||
	fail "Sentinel did not rewrite its file: $(cat "$LIVE")"
base_rb 2 | { cat; echo "sentinel['bind'] = '127.0.0.1'"; echo "sentinel['password'] = 'sentinel-Secret-52'"; } | write_rb
SVWAIT=60 expect_rc 0 ctl reconfigure --diff
cp "$OUT" "$T_ROOT/out.follow"
has "$OUT" "sentinel"
lacks "$OUT" "Secret-5"
until_true 20 sh -c "[ \"\$(REDISCLI_AUTH=sentinel-Secret-52 redis-cli --no-auth-warning -h 127.0.0.1 -p $SP SENTINEL master gitlab-redis 2>/dev/null | sed -n '/^quorum$/{n;p}')\" = 2 ]" ||
	fail "the quorum did not apply: $(cat "$LIVE")"
lacks "$OUT" "Secret-5"
[ "$(master_addr)" = "127.0.0.2:$RP" ] || fail "gitlab.rb reset the monitored master: '$(master_addr)'"
grep -q "^sentinel monitor gitlab-redis 127.0.0.2 $RP 2" "$LIVE" || fail "live file: $(cat "$LIVE")"
# reconfigure asked the sentinel: Redis follows its master (replicaof), root's copy names it
has "$T_ROOT/out.follow" "redis: the sentinels' master is 127.0.0.2:$RP, not gitlab.rb's"
grep -q "^replicaof \"127.0.0.2\" $RP\$" "$T_ROOT/opt/gitlab/sv/redis/redis.conf" ||
	fail "redis.conf does not follow the sentinel: $(grep replicaof "$T_ROOT/opt/gitlab/sv/redis/redis.conf")"
grep -q "^sentinel monitor gitlab-redis \"127.0.0.2\"" "$MINE" || fail "rendered: $(cat "$MINE")"

note "get-redis-master: the sentinel's answer; exit 1 when no sentinel answers"
expect_rc 0 ctl get-redis-master
same "$OUT" "127.0.0.2:$RP"
lacks "$ERR" "Secret-5"
{ base_rb; echo "sentinel['bind'] = '127.0.0.1'"; echo "sentinel['password'] = 'wrong-Secret-53'"; } | write_rb
expect_rc 1 ctl get-redis-master
has "$ERR" "127.0.0.1:$SP"
lacks "$ERR" "Secret-5"
note "get-redis-master on a node without a sentinel: gitlab_rails['redis_sentinels'] in turn"
DEAD=$(free_port)
cat <<EOF2 | write_rb
roles(['redis_master_role'])
redis_exporter['enable'] = false
redis['port'] = $RP
redis['password'] = 'redis-Secret-51'
gitlab_rails['redis_sentinels'] = [ { 'host' => '127.0.0.1', 'port' => $DEAD }, { 'host' => '127.0.0.1', 'port' => $SP } ]
gitlab_rails['redis_sentinels_password'] = 'sentinel-Secret-52'
EOF2
expect_rc 0 ctl get-redis-master
same "$OUT" "127.0.0.2:$RP"
echo PASS
