# GitLab's own gitlab.rb template, with the sections of the services gitlab-ctl runs
# uncommented (test/fixtures/omnibus-gitlab.rb, and every other Omnibus key of those services
# in omnibus-service-keys.rb), passes check-config and reconfigure as it stands, and each key
# it sets shows its effect on the running services: the golden table below is what
# PostgreSQL's SHOW, Redis' CONFIG GET, the exporter's endpoints and Prometheus' rules say.
# The template's services listen on their fixed ports (9090, 9093, 9168, 6379): the test runs
# in a network namespace of its own.
. "$SRCDIR/test/integration/netns.sh"
. "$SRCDIR/test/integration/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || { echo "SKIP: no PostgreSQL 15"; exit 77; }
for b in /usr/bin/redis-cli /usr/bin/prometheus /usr/bin/prometheus-alertmanager curl; do
	[ -x "$b" ] || command -v "$b" >/dev/null || { echo "SKIP: no $b"; exit 77; }
done
export SVWAIT=120
OUT=$T_ROOT/out ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
PGHOME=$T_ROOT/var/opt/gitlab/postgresql
trap '_r=$?; set +e; stop_pg_home "$PGHOME"; (exit $_r); t_cleanup' EXIT
mkdir -p "$T_ROOT/etc/gitlab"
cat "$SRCDIR/test/fixtures/omnibus-gitlab.rb" "$SRCDIR/test/fixtures/omnibus-service-keys.rb" >"$RB"

note "check-config and reconfigure take the template as it stands"
expect_rc 0 ctl check-config
has "$OUT" "gitlab.rb OK"
expect_rc 0 ctl reconfigure
has "$OUT" "gitlab Reconfigured!"
for s in postgresql redis gitlab-exporter prometheus alertmanager; do
	[ "$(status_pid "$SV_DIR/$s/supervise/status")" -gt 0 ] 2>/dev/null || fail "$s is not running"
done

note "the golden table: each key the template sets, as the running service reports it"
show() {
	setpriv --reuid="$(id -u gitlab-psql)" --regid="$(id -g gitlab-psql)" --clear-groups \
		"$PGBIN/psql" -X -q -At -h "$PGHOME" -d postgres -c "SHOW $1"
}
rcli() { redis-cli -h 127.0.0.1 -p 6379 --no-auth-warning -a redis-password-goes-here "$@"; }
api() { curl -fsS --max-time 5 -u "$(mon_auth)" "http://localhost:9090$1"; }
check() { # KEY WANT GOT
	[ "$3" = "$2" ] || fail "$1: the running service says '$3', the template set '$2'"
	printf '  %-45s %s\n' "$1" "$3"
}
check "postgresql['max_connections']" 400 "$(show max_connections)"
check "postgresql['shared_buffers']" 256MB "$(show shared_buffers)"
check "postgresql['work_mem']" 16MB "$(show work_mem)"
check "postgresql['checkpoint_timeout']" 5min "$(show checkpoint_timeout)"
check "postgresql['checkpoint_completion_target']" 0.9 "$(show checkpoint_completion_target)"
check "postgresql['random_page_cost']" 2 "$(show random_page_cost)"
check "postgresql (Omnibus' default statement_timeout)" 1min "$(show statement_timeout)"
check "redis['maxclients']" 10000 "$(rcli CONFIG GET maxclients | tail -1)"
check "redis['tcp_timeout']" 60 "$(rcli CONFIG GET timeout | tail -1)"
check "redis['tcp_keepalive']" 300 "$(rcli CONFIG GET tcp-keepalive | tail -1)"
check "redis['password']" PONG "$(rcli PING)"
rcli KEYS '*' >"$OUT" 2>&1 || true
check "redis['rename_commands'] KEYS => ''" "unknown command" "$(grep -o 'unknown command' "$OUT" | head -1)"
curl -fsS --max-time 10 -o /dev/null -w '%{http_code}' http://localhost:9168/sidekiq >"$OUT" 2>"$ERR" || true
check "gitlab_exporter['probe_sidekiq'] /sidekiq" 200 "$(cat "$OUT")"
curl -fsS --max-time 10 -o /dev/null -D "$OUT" http://localhost:9168/metrics 2>"$ERR" || true
check "gitlab_exporter['server_name']" WEBrick "$(sed -n 's/^Server: \([A-Za-z]*\).*/\1/p' "$OUT" | tr -d '\r')"
api /api/v1/status/flags >"$OUT"
check "prometheus['flags'] retention" '"15d"' "$(grep -o '"storage.tsdb.retention.time":"[^"]*"' "$OUT" | cut -d: -f2)"
api /api/v1/status/config >"$OUT"
check "prometheus['scrape_configs'] job" 1 "$(grep -c 'job_name: example' "$OUT")"
api /api/v1/rules >"$OUT"
for r in ServiceDown PostgresDown RedisDown; do
	check "rule $r" 1 "$(grep -o "\"name\":\"$r\"" "$OUT" | head -1 | grep -c .)"
done
note ok
