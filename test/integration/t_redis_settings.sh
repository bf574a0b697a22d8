#!/bin/sh
# Omnibus' redis.conf keys reach the running Redis: gitlab.rb sets integers, booleans (yes/no),
# the save list, client-output-buffer-limit, rename_commands and TLS; reconfigure renders them
# and `CONFIG GET` on the supervised redis-server answers what gitlab.rb said. A change
# restarts Redis (it does not reread its file on HUP), as Omnibus does. A bad enum, integer or
# save entry is refused at its gitlab.rb line, and the running Redis is left as it was.
. "$SRCDIR/test/integration/lib.sh"

export SVWAIT=120
for tool in redis-cli openssl; do
	command -v "$tool" >/dev/null || { echo "SKIP: no $tool"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: Redis runs as its own account: needs root"; exit 77; }
R=$T_ROOT
OUT=$R/out ERR=$R/err
RB=$R/etc/gitlab/gitlab.rb
TLS_PORT=$(free_port)
SSL=$R/etc/gitlab/ssl
mkdir -p "$SSL"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-keyout "$SSL/redis.key" -out "$SSL/redis.crt" >"$R/openssl.log" 2>&1 ||
	fail "openssl: $(cat "$R/openssl.log")"
chmod 644 "$SSL/redis.key" # the test's throwaway key: gitlab-redis reads it
chmod 755 "$R/etc/gitlab" "$SSL"

write_rb() {
	cat >"$RB" <<EOF
$(only_services redis)
redis['enable'] = true
redis['maxclients'] = "555"
redis['tcp_keepalive'] = 120
redis['tcp_timeout'] = 30
redis['hz'] = $1
redis['save'] = ['3600 1 300 100', '60 5']
redis['lazyfree_lazy_eviction'] = true
redis['lazyfree_lazy_server_del'] = true
redis['stop_writes_on_bgsave_error'] = false
redis['maxmemory_policy'] = 'allkeys-lru'
redis['client_output_buffer_limit_pubsub'] = "64mb 16mb 90"
redis['rename_commands'] = { 'KEYS' => '' }
redis['tls_port'] = $TLS_PORT
redis['tls_cert_file'] = "/etc/gitlab/ssl/redis.crt"
redis['tls_key_file'] = "/etc/gitlab/ssl/redis.key"
redis['tls_auth_clients'] = 'no'
redis['set_replicaof'] = '10.0.0.1 6379'
EOF
	chmod 600 "$RB"
}
write_rb 25
expect_rc 0 ctl reconfigure
has "$OUT" "gitlab Reconfigured!"
# a key left for the HA step warns at its line, saying why
has "$ERR" "$RB:$(grep -n set_replicaof "$RB" | cut -d: -f1):7: warning: redis['set_replicaof'] is an Omnibus setting this build does not apply to redis; ignored: replicaof comes from redis_replica_role"
sock=$R/var/opt/gitlab/redis/redis.socket
conf=$SV_DIR/redis/redis.conf

# cget NAME: the running Redis' value of NAME (root reaches the 0770 socket)
cget() { redis-cli -s "$sock" --raw CONFIG GET "$1" | sed -n 2p; }
want() {
	_got=$(cget "$1")
	[ "$_got" = "$2" ] || fail "CONFIG GET $1: '$_got', want '$2' (redis.conf: $(grep -i "^$1 " "$conf"))"
}
want maxclients 555
want tcp-keepalive 120
want timeout 30
want hz 25
want save "3600 1 300 100 60 5"
want lazyfree-lazy-eviction yes
want lazyfree-lazy-server-del yes
want lazyfree-lazy-expire no
want stop-writes-on-bgsave-error no
want maxmemory-policy allkeys-lru
want maxmemory-samples 5
want tcp-backlog 511
want client-output-buffer-limit "normal 0 0 0 slave 268435456 67108864 60 pubsub 67108864 16777216 90"
want tls-port "$TLS_PORT"
want tls-auth-clients no
# rename_commands: KEYS is gone
redis-cli -s "$sock" KEYS '*' >"$R/keys" 2>&1 || true
grep -qi "unknown command" "$R/keys" || fail "KEYS still answers: $(cat "$R/keys")"
# TLS on its own port, with the certificate gitlab.rb named
redis-cli --tls --cacert "$SSL/redis.crt" -h 127.0.0.1 -p "$TLS_PORT" ping >"$R/tls" 2>&1 || true
grep -qx PONG "$R/tls" || fail "TLS ping: $(cat "$R/tls")"

# A change restarts Redis (a new pid) and the new value is live.
pid=$(status_pid "$SV_DIR/redis/supervise/status")
write_rb 30
expect_rc 0 ctl reconfigure
want hz 30
pid2=$(status_pid "$SV_DIR/redis/supervise/status")
[ -n "$pid2" ] && [ "$pid2" != "$pid" ] || fail "redis not restarted on a redis.conf change ($pid -> $pid2)"

# Refused at their gitlab.rb lines: an enum, an integer, a save entry, a buffer limit.
write_rb 30
n=$(wc -l <"$RB")
cat >>"$RB" <<'EOF'
redis['maxmemory_policy'] = 'lru'
redis['tcp_keepalive'] = 'often'
redis['io_threads_do_reads'] = 'yes'
EOF
expect_rc 1 ctl check-config
has "$ERR" "$RB:$((n + 1)):29: error: redis['maxmemory_policy'] = 'lru' is not one of 'noeviction'"
has "$ERR" "$RB:$((n + 2)):26: error: redis['tcp_keepalive'] must be an integer, not \"often\""
has "$ERR" "$RB:$((n + 3)):32: error: redis['io_threads_do_reads'] must be true or false, not string"
# what only redis.conf's own quoting can judge: refused at the line too
write_rb 30
cat >>"$RB" <<'EOF'
redis['save'] = ['900 1', '300 often']
redis['client_output_buffer_limit_normal'] = "0 0"
redis['rename_commands'] = { 'PING' => 'P' }
EOF
expect_rc 1 ctl check-config
has "$ERR" "$RB:$((n + 1)):17: error: redis['save']: not an array of \"SECONDS CHANGES\" strings"
has "$ERR" "$RB:$((n + 2)):46: error: redis['client_output_buffer_limit_normal']: not \"HARD SOFT SECONDS\""
has "$ERR" "$RB:$((n + 3)):28: error: redis['rename_commands']: AUTH and PING stay"
# reconfigure refuses the same and leaves the running Redis alone
expect_rc 1 ctl reconfigure
[ "$(status_pid "$SV_DIR/redis/supervise/status")" = "$pid2" ] || fail "a refused config restarted redis"
want hz 30
grep -q '^save 3600 1 300 100$' "$conf" || fail "redis.conf rewritten: $(grep '^save' "$conf")"
echo "ok t_redis_settings"
