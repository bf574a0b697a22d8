#!/bin/sh
# The payload: PostgreSQL, Redis and the exporter in one private root.
# - reconfigure creates each service's account, runs initdb once as gitlab-psql,
#   brings PostgreSQL and Redis up and ready before the exporter starts, and
#   creates the exporter's role and database;
# - /metrics shows the rows and the queue the test put there (when the bundled
#   exporter has the database and Sidekiq probes);
# - kill -9 of postgres: the exporter keeps serving, runsv brings postgres back, ready;
# - a second reconfigure runs no initdb and restarts nothing (same pids);
# - stop goes in reverse dependency order; start holds back what needs a service
#   that does not get ready, and names it;
# - a port held by another process makes reconfigure fail naming that process.
. "$SRCDIR/test/integration/lib.sh"

export SVWAIT=120 # the first run makes a cluster; CI machines are busy
PORT=$(free_port)
R=$T_ROOT
PGBIN=/usr/lib/postgresql/15/bin
mkdir -p "$R/etc/gitlab"
cat >"$R/etc/gitlab/gitlab.rb" <<EOF
postgresql['enable'] = true
redis['enable'] = true
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
redis_exporter['listen_address'] = 'localhost:$(free_port)'
postgres_exporter['listen_address'] = 'localhost:$(free_port)'
$(only_services gitlab_exporter postgresql redis postgres_exporter redis_exporter)
EOF

pid_of() { status_pid "$SV_DIR/$1/supervise/status"; }
metrics() { curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" 2>/dev/null; }
has_metric() { metrics | grep -Eq "$1"; } # ERE; integer values may print as 7 or 7.0
line_of() { grep -n "$1" "$R/out" | head -n1 | cut -d: -f1; }

# --- first reconfigure ------------------------------------------------------------
ctl -v reconfigure >"$R/out" 2>&1 || { cat "$R/out"; fail "first reconfigure"; }
grep -q "^run postgresql setup initdb" "$R/out" || fail "no initdb: $(cat "$R/out")"
grep -q "^postgresql setup database: CREATE ROLE;CREATE DATABASE" "$R/out" ||
	fail "role and database not created: $(cat "$R/out")"
grep -q "gitlab Reconfigured!" "$R/out" || fail "not reconfigured: $(cat "$R/out")"
# Dependencies first: the exporter is linked (and supervised) only after both are ready.
pg_ready=$(line_of "^gitlab-ctl: postgresql: ready after\|^postgresql: ready after")
redis_ready=$(line_of "^redis: ready after")
exp_sup=$(line_of "^gitlab-exporter: supervised after")
[ -n "$pg_ready" ] && [ -n "$redis_ready" ] && [ -n "$exp_sup" ] || fail "verbose lines: $(cat "$R/out")"
[ "$exp_sup" -gt "$pg_ready" ] && [ "$exp_sup" -gt "$redis_ready" ] ||
	fail "exporter supervised before its dependencies were ready: $(cat "$R/out")"
[ "$(cat "$SV_DIR/gitlab-exporter/after")" = "$(printf 'postgresql\nredis')" ] ||
	fail "after file: $(cat "$SV_DIR/gitlab-exporter/after")"

# --- accounts and files -----------------------------------------------------------
for svc in postgresql:gitlab-psql redis:gitlab-redis gitlab-exporter:git; do
	name=${svc%%:*} user=${svc#*:}
	id "$user" >/dev/null 2>&1 || fail "no account $user"
	[ "$(stat -c %U:%G "$R/var/opt/gitlab/$name")" = "$user:$user" ] ||
		fail "$name home owner: $(stat -c %U:%G "$R/var/opt/gitlab/$name")"
	pid=$(pid_of "$name")
	[ "$(stat -c %U "/proc/$pid")" = "$user" ] || fail "$name runs as $(stat -c %U "/proc/$pid")"
done
[ "$(stat -c %a "$R/var/opt/gitlab/gitlab-exporter")" = 750 ] || fail "exporter home mode"
[ "$(stat -c %a "$R/var/opt/gitlab/postgresql/data")" = 700 ] || fail "cluster mode"
# Each account keeps out of the others' files.
runuser -u gitlab-redis -- ls "$R/var/opt/gitlab/postgresql/data" >/dev/null 2>&1 &&
	fail "gitlab-redis can read the cluster"
runuser -u gitlab-psql -- ls "$R/var/opt/gitlab/gitlab-exporter" >/dev/null 2>&1 &&
	fail "gitlab-psql can read the exporter's home"
for f in postgresql/postgresql.conf postgresql/pg_hba.conf postgresql/pg_ident.conf \
	postgresql/setup.sql redis/redis.conf postgresql/control/t; do
	[ "$(stat -c %U "$SV_DIR/$f")" = root ] || fail "$f is not root's"
done
grep -q "^unix_socket_directories = '$R/var/opt/gitlab/postgresql'$" \
	"$SV_DIR/postgresql/postgresql.conf" || fail "postgresql.conf: socket dir"
grep -q "^listen_addresses = ''$" "$SV_DIR/postgresql/postgresql.conf" || fail "postgres on TCP"
grep -q "^port 0$" "$SV_DIR/redis/redis.conf" || fail "redis on TCP"
yml="$R/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml"
grep -q "connection_string: \"dbname=gitlabhq_production user=gitlab host=$R/var/opt/gitlab/postgresql port=5432\"" \
	"$yml" || fail "connection string: $(cat "$yml")"
grep -q "redis_url: \"unix:$R/var/opt/gitlab/redis/redis.socket\"" "$yml" || fail "redis url"
grep -q "class_name: Database::TuplesProber" "$yml" || fail "no tuple_stats probe"
# The check scripts speak to gitlab-ctl probe, no curl.
grep -q curl "$SV_DIR/gitlab-exporter/check" && fail "check uses curl"
for svc in postgresql redis gitlab-exporter; do
	(cd "$SV_DIR/$svc" && ./check) || fail "$svc/check does not pass"
done

# --- data the exporter should see -----------------------------------------------------
ctl exec postgresql -- "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d gitlabhq_production -c "
	SET ROLE gitlab;
	CREATE TABLE projects (id serial PRIMARY KEY, name text);
	INSERT INTO projects (name) SELECT 'p' || i FROM generate_series(1, 7) i;
	ANALYZE projects;" >/dev/null || fail "seeding PostgreSQL"
sock="$R/var/opt/gitlab/redis/redis.socket"
ctl exec redis -- redis-cli -s "$sock" sadd queues default >/dev/null || fail "seeding Redis"
for j in 1 2 3; do
	ctl exec redis -- redis-cli -s "$sock" lpush queue:default \
		"{\"class\":\"HardWorker\",\"args\":[$j],\"jid\":\"j$j\",\"queue\":\"default\",\"enqueued_at\":1}" \
		>/dev/null || fail "seeding Redis"
done
until_true 100 has_metric '^ruby_gc_stat_count' || fail "no /metrics"
until_true 200 has_metric '^gitlab_database_stat_table_n_tup_ins\{table_name="projects"\} 7(\.0)?$' ||
	fail "database series: $(metrics | grep -i database | head)"
until_true 100 has_metric '^sidekiq_queue_size\{name="default"\} 3(\.0)?$' ||
	fail "sidekiq series: $(metrics | grep sidekiq | head)"
note "database and Sidekiq series match the seeded data"

# --- kill -9 postgres -----------------------------------------------------------------------
old=$(pid_of postgresql)
kill -KILL "$old"
metrics | grep -q '^ruby_gc_stat_count' || fail "exporter stopped serving when postgres died"
newpid() { p=$(pid_of postgresql); [ "$p" != 0 ] && [ "$p" != "$old" ]; }
until_true 300 newpid || fail "runsv did not restart postgres"
probe_pg() { (cd "$SV_DIR/postgresql" && ./check 2>/dev/null); }
until_true 600 probe_pg || fail "postgres not ready again: $(cd "$SV_DIR/postgresql" && ./check 2>&1)"
alive "$(pid_of gitlab-exporter)" || fail "exporter died with postgres"
# Crash recovery resets PostgreSQL's statistics, so the count itself may restart at 0:
# the series and a healthy probe must come back.
until_true 200 has_metric '^gitlab_database_stat_table_n_tup_ins\{table_name="projects"\} ' ||
	fail "database series did not come back: $(metrics | grep -E 'database|probe_error' | head)"
until_true 100 has_metric '^gitlab_exporter_probe_error\{probe="tuple_stats"\} 0' ||
	fail "tuple_stats probe still failing: $(metrics | grep probe_error)"

# --- a second reconfigure changes nothing ----------------------------------------------
before="$(pid_of postgresql) $(pid_of redis) $(pid_of gitlab-exporter)"
ctl reconfigure >"$R/out2" 2>&1 || { cat "$R/out2"; fail "second reconfigure"; }
grep -q initdb "$R/out2" && fail "initdb ran again: $(cat "$R/out2")"
grep -q "^0/[0-9]* resources updated" "$R/out2" || fail "second run updated: $(cat "$R/out2")"
after="$(pid_of postgresql) $(pid_of redis) $(pid_of gitlab-exporter)"
[ "$before" = "$after" ] || fail "pids changed: $before -> $after"

# --- restart and stop in order ------------------------------------------------------------
ctl restart postgresql >/dev/null || fail "restart postgresql (fast shutdown via control/t)"
ctl stop >"$R/out3" 2>&1 || fail "stop: $(cat "$R/out3")"
# The exporters (gitlab-exporter, and redis- and postgres-exporter, on with their
# backends) go down before the backends they read.
[ "$(tail -n2 "$R/out3" | grep -c -e ' redis: ' -e ' postgresql: ')" = 2 ] ||
	fail "stop did not take the exporters down first: $(cat "$R/out3")"
ctl start >"$R/out4" 2>&1 || fail "start: $(cat "$R/out4")"
[ "$(head -n2 "$R/out4" | grep -c -e ' redis: ' -e ' postgresql: ')" = 2 ] ||
	fail "start did not bring the exporters up after their backends: $(cat "$R/out4")"

# --- a dependency that never gets ready holds its dependents back, named --------------
ctl stop >/dev/null || fail "stop"
mv "$R/var/opt/gitlab/postgresql/data/PG_VERSION" "$R/pg_version"
rc=0
SVWAIT=5 ctl start >"$R/out6" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "start succeeded without a cluster: $(cat "$R/out6")"
grep -q "^fail: gitlab-exporter: waiting for postgresql: not ready$" "$R/out6" ||
	fail "the dependency is not named: $(cat "$R/out6")"
[ "$(pid_of gitlab-exporter)" = 0 ] || fail "the exporter started before postgresql was ready"
ctl stop postgresql >/dev/null || true
mv "$R/pg_version" "$R/var/opt/gitlab/postgresql/data/PG_VERSION"
ctl start >"$R/out7" 2>&1 || fail "start after the repair: $(cat "$R/out7")"

# --- someone else on the exporter's port ------------------------------------------------
P2=$(free_port)
ruby -rsocket -e 's = TCPServer.new("127.0.0.1", ARGV[0].to_i); $stdout.puts "up"; $stdout.flush; loop { s.accept.close }' \
	"$P2" >"$R/holder" 2>&1 &
holder=$!
track_pid "$holder"
until_true 100 grep -q up "$R/holder" || fail "port holder did not start"
sed -i "s/^gitlab_exporter\['listen_port'\] = .*/gitlab_exporter['listen_port'] = $P2/" "$R/etc/gitlab/gitlab.rb"
rc=0
SVWAIT=20 ctl reconfigure >"$R/out5" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "reconfigure succeeded with the port taken: $(cat "$R/out5")"
grep -q "gitlab-exporter: port $P2 is in use by pid $holder (ruby" "$R/out5" ||
	fail "the holder is not named: $(cat "$R/out5")"
grep -q "gitlab Reconfigured!" "$R/out5" && fail "said Reconfigured!: $(cat "$R/out5")"
kill "$holder"
echo "ok t_payload"
