#!/bin/sh
# Redis belongs to its users: PostgreSQL, Redis and the exporter in one private root, with
# redis['password'] set to a value every format must quote (a quote, a space, '@', ':', '/', '%').
# - the socket is 0770 in a 0750 home, group gitlab-redis: nobody and gitlab-psql are refused
#   by the kernel, git (the exporter's account) reaches it through its supplementary group;
# - Redis asks for the password (redis-cli without it: NOAUTH), and the exporter's Sidekiq
#   probe, which has it in its Redis URL (percent-encoded), reads the seeded queue;
# - redis.conf holds the password quoted for Redis and is not world-readable; no process's
#   command line holds it; show-config redacts it; readiness (gitlab-ctl's own AUTH) passes.
. "$SRCDIR/test/integration/lib.sh"

export SVWAIT=120 # the first run makes a cluster; CI machines are busy
for tool in runuser setpriv redis-cli curl; do
	command -v "$tool" >/dev/null || fail "$tool is needed (scripts/setup installs it)"
done
PORT=$(free_port)
R=$T_ROOT
PW='p"a ss@:/%x'
mkdir -p "$R/etc/gitlab"
cat >"$R/etc/gitlab/gitlab.rb" <<EOF
postgresql['enable'] = true
redis['enable'] = true
$(exporter_ports)
redis['password'] = 'p"a ss@:/%x'
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
$(only_services gitlab_exporter postgresql redis postgres_exporter redis_exporter)
EOF

ctl reconfigure >"$R/out" 2>&1 || { cat "$R/out"; fail "reconfigure"; }
grep -q "gitlab Reconfigured!" "$R/out" || fail "not reconfigured: $(cat "$R/out")"
home=$R/var/opt/gitlab/redis
sock=$home/redis.socket
conf=$SV_DIR/redis/redis.conf

# --- who may connect --------------------------------------------------------------------
# as_user USER CMD...: the account's own groups (initgroups), as a login would have them.
as_user() { _u=$1; shift; runuser -u "$_u" -- "$@"; }
for who in nobody gitlab-psql; do
	rc=0
	as_user "$who" redis-cli -s "$sock" ping >"$R/cli" 2>&1 || rc=$?
	grep -q "Permission denied" "$R/cli" || fail "$who reached Redis (rc $rc): $(cat "$R/cli")"
done
# git, as the exporter runs (exec: its group set from the catalog), connects but must AUTH.
ctl exec gitlab-exporter -- redis-cli -s "$sock" ping >"$R/cli" 2>&1 || true
grep -q NOAUTH "$R/cli" || fail "git without the password: $(cat "$R/cli")"
# The password from the environment (REDISCLI_AUTH), never an argument.
ctl exec gitlab-exporter -- /usr/bin/env REDISCLI_AUTH="$PW" \
	redis-cli -s "$sock" ping >"$R/cli" 2>&1 || true
grep -qx PONG "$R/cli" || fail "git with the password: $(cat "$R/cli")"

# --- files ----------------------------------------------------------------------------
[ "$(stat -c '%a %U:%G' "$home")" = "750 gitlab-redis:gitlab-redis" ] ||
	fail "redis home: $(stat -c '%a %U:%G' "$home")"
[ "$(stat -c '%a %G' "$sock")" = "770 gitlab-redis" ] || fail "socket: $(stat -c '%a %G' "$sock")"
[ "$(stat -c '%a %U:%G' "$conf")" = "640 root:gitlab-redis" ] ||
	fail "redis.conf: $(stat -c '%a %U:%G' "$conf")"
grep -qxF 'requirepass "p\"a ss@:/%x"' "$conf" || fail "requirepass: $(grep requirepass "$conf")"
grep -qxF 'unixsocketperm 770' "$conf" || fail "unixsocketperm: $(grep perm "$conf")"
yml=$R/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml
grep -qF "redis_url: \"unix://:p%22a%20ss%40%3A%2F%25x@$sock\"" "$yml" ||
	fail "redis_url: $(grep redis_url "$yml")"
grep -q -- "--groups 'gitlab-redis'" "$SV_DIR/gitlab-exporter/run" ||
	fail "exporter run script: $(tail -1 "$SV_DIR/gitlab-exporter/run")"

# --- the exporter's Sidekiq probe reads with the password from its URL ----------------------
ctl exec redis -- /usr/bin/env REDISCLI_AUTH="$PW" redis-cli -s "$sock" sadd queues default >/dev/null ||
	fail "seeding Redis"
for j in 1 2; do
	ctl exec redis -- /usr/bin/env REDISCLI_AUTH="$PW" redis-cli -s "$sock" lpush queue:default \
		"{\"class\":\"W\",\"args\":[$j],\"jid\":\"j$j\",\"queue\":\"default\",\"enqueued_at\":1}" \
		>/dev/null || fail "seeding Redis"
done
metrics() { curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" 2>/dev/null; }
has_metric() { metrics | grep -Eq "$1"; }
until_true 300 has_metric '^sidekiq_queue_size\{name="default"\} 2(\.0)?$' ||
	fail "sidekiq series: $(metrics | grep -E 'sidekiq|probe_error' | head)"

# --- the password is nowhere it could be read --------------------------------------------
for f in /proc/[0-9]*/cmdline; do
	{ tr '\0' ' ' <"$f"; } 2>/dev/null || true # a process may be gone
	echo
done >"$R/cmdlines"
grep -qF 'ss@:/%x' "$R/cmdlines" && fail "a command line holds the password"
ctl show-config >"$R/show" 2>&1 || fail "show-config: $(cat "$R/show")"
grep -qF 'ss@:/%x' "$R/show" && fail "show-config prints the password"
grep -qF 'p%22a' "$R/show" && fail "show-config prints the password in the URL"
(cd "$SV_DIR/redis" && ./check) || fail "redis/check does not pass with a password"
echo "ok t_safety_redis"
