# redis-exporter answers /scrape?target=...&check-keys=... for whoever reaches its port, and
# sends its credentials to the target the caller names. It holds only its own ACL user's:
# no key or value of Redis comes out through it, and what reaches a caller's target is never
# redis['password']. Its own metrics (redis_up, INFO's) still come.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (service accounts)"; exit 77; }
command -v prometheus-redis-exporter >/dev/null || { echo "SKIP: no redis exporter"; exit 77; }
for tool in runuser redis-cli curl python3; do
	command -v "$tool" >/dev/null || fail "$tool is needed (scripts/setup installs it)"
done
export SVWAIT=120
OUT=$T_ROOT/out ERR=$T_ROOT/err
EP=$(free_port) TRAP=$(free_port)
PW='main-redis-secret'
mkdir -p "$T_ROOT/etc/gitlab"
{
	only_services redis redis_exporter
	echo "redis['password'] = '$PW'"
	echo "redis_exporter['listen_address'] = '127.0.0.1:$EP'"
} >"$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 0 ctl reconfigure
sock=$T_ROOT/var/opt/gitlab/redis/redis.socket
redis-cli -s "$sock" --no-auth-warning -a "$PW" SET session:root SECRET-SESSION-DATA >"$OUT" ||
	fail "seeding: $(cat "$OUT")"
scrape() { runuser -u nobody -- curl -fsS --max-time 10 "http://127.0.0.1:$EP$1"; }

note "its own metrics come"
until_true 30 sh -c "curl -fsS --max-time 5 http://127.0.0.1:$EP/metrics | grep -qx 'redis_up 1'" ||
	fail "redis_up is not 1: $(curl -s "http://127.0.0.1:$EP/metrics" | grep redis_up)"
curl -fsS "http://127.0.0.1:$EP/metrics" | grep -q '^redis_connected_clients ' || fail "no INFO metrics"

note "nobody asks it for Redis' keys: no value comes out"
scrape "/scrape?target=unix://$sock&check-keys=session:*" >"$OUT" || true
grep -q '^redis_up' "$OUT" || fail "no scrape answer: $(head -3 "$OUT")"
lacks "$OUT" "SECRET-SESSION-DATA"
lacks "$OUT" 'redis_key_value_as_string'
scrape "/scrape?target=unix://$sock&check-single-keys=session:root" >"$OUT" || true
lacks "$OUT" "SECRET-SESSION-DATA"

note "nobody names a target of its own: what arrives there is not redis['password']"
python3 - "$TRAP" "$T_ROOT/trap.bin" "$T_ROOT/trap.ready" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
open(sys.argv[3], "w").close()
s.settimeout(30)
c, _ = s.accept()
c.settimeout(5)
data = b""
try:
    while len(data) < 4096:
        b = c.recv(4096)
        if not b:
            break
        data += b
        c.sendall(b"-ERR no\r\n")
except OSError:
    pass
open(sys.argv[2], "wb").write(data)
PY
TPID=$!
track_pid "$TPID"
until_true 10 test -e "$T_ROOT/trap.ready" || fail "the trap did not listen"
scrape "/scrape?target=redis://127.0.0.1:$TRAP" >/dev/null 2>&1 || true
wait "$TPID" 2>/dev/null || true
[ -s "$T_ROOT/trap.bin" ] || fail "the exporter sent nothing to the caller's target"
grep -q "gitlab-redis-exporter" "$T_ROOT/trap.bin" ||
	fail "not its own user: $(tr -c '[:print:]' . <"$T_ROOT/trap.bin")"
! grep -qF "$PW" "$T_ROOT/trap.bin" || fail "redis['password'] reached the caller's target"

note "its user reads no key itself"
mpw=$(cat "$T_ROOT/opt/gitlab/var/secrets/redis-monitor_password")
redis-cli -s "$sock" --no-auth-warning --user gitlab-redis-exporter --pass "$mpw" GET session:root \
	>"$OUT" 2>&1 || true
has "$OUT" "NOPERM"
# CONFIG GET answers requirepass in clear: a caller's trap that learns the exporter's password
# must not turn it into redis['password'].
redis-cli -s "$sock" --no-auth-warning --user gitlab-redis-exporter --pass "$mpw" CONFIG GET requirepass \
	>"$OUT" 2>&1 || true
has "$OUT" "NOPERM"
lacks "$OUT" "$PW"
note ok
