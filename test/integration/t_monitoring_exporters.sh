#!/bin/sh
# The exporters of the monitoring set on one node: node-exporter, and
# redis-exporter and postgres-exporter, which are on by default exactly where
# their backend is. node-exporter's runit collector must list every service
# of the tree (it silently skips a supervise/ its account cannot read), each
# exporter must reach its backend (redis_up 1, pg_up 1) as the backend's own
# account, and the database's connection string is never on a command line.
. "$SRCDIR/test/integration/lib.sh"

for _b in prometheus-node-exporter prometheus-redis-exporter prometheus-postgres-exporter curl; do
	command -v "$_b" >/dev/null 2>&1 || fail "$_b is not installed (scripts/setup installs it)"
done
OUT=$T_ROOT/out ERR=$T_ROOT/err
NODE=$(free_port) REDIS_X=$(free_port) PG_X=$(free_port) GE=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
write_rb() {
	cat >"$T_ROOT/etc/gitlab/gitlab.rb"
	chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
}
write_rb <<EOF
gitlab_exporter['listen_port'] = $GE
node_exporter['enable'] = true
node_exporter['listen_address'] = 'localhost:$NODE'
redis_exporter['listen_address'] = 'localhost:$REDIS_X'
postgres_exporter['listen_address'] = '127.0.0.1:$PG_X'
$(only_services gitlab_exporter node_exporter redis_exporter postgres_exporter)
EOF

note "without their backends the data exporters stay off"
expect_rc 0 ctl reconfigure --dry-run
has "$OUT" "service/node-exporter"
lacks "$OUT" "service/redis-exporter"
lacks "$OUT" "service/postgres-exporter"

# The data services and their exporters on free ports: every gitlab.rb below starts with these.
exporters_rb() {
	cat <<EOF
$(only_services gitlab_exporter node_exporter postgresql redis redis_exporter postgres_exporter)
postgresql['enable'] = true
redis['enable'] = true
redis['password'] = 'pw-Secret-77'
gitlab_exporter['listen_port'] = $GE
node_exporter['enable'] = true
node_exporter['listen_address'] = 'localhost:$NODE'
redis_exporter['listen_address'] = 'localhost:$REDIS_X'
postgres_exporter['listen_address'] = '127.0.0.1:$PG_X'
postgres_exporter['per_table_stats'] = true
EOF
}
exporters_rb | write_rb
expect_rc 0 ctl reconfigure --dry-run
has "$OUT" "service/redis-exporter"
has "$OUT" "service/postgres-exporter"
SVWAIT=120 expect_rc 0 ctl reconfigure
expect_rc 0 ctl status

metrics() { curl -fsS --max-time 5 "http://localhost:$1/metrics" >"$OUT" 2>"$ERR"; }

note "every supervise/ is 0755, so the runit collector lists every service"
for _s in gitlab-exporter node-exporter postgres-exporter postgresql redis redis-exporter; do
	[ "$(stat -c %a "$SV_DIR/$_s/supervise")" = 755 ] || fail "$_s/supervise is not 0755"
done
series_complete() {
	metrics "$NODE" || return 1
	for _s in gitlab-exporter node-exporter postgres-exporter postgresql redis redis-exporter; do
		grep -qF "node_service_state{service=\"$_s\",supervisor=\"runit\"} 1" "$OUT" || return 1
	done
}
until_true 100 series_complete || { cat "$OUT"; fail "node_service_state lacks a service"; }

note "a supervise/ runsv made 0700 (before this version) is opened up by reconfigure"
chmod 700 "$SV_DIR/redis/supervise"
until_true 50 sh -c "! curl -fsS http://localhost:$NODE/metrics | grep -q 'node_service_state{service=\"redis\"'" ||
	fail "the collector still reads a 0700 supervise/ (the test proves nothing)"
expect_rc 0 ctl reconfigure
has "$OUT" "supervise"
until_true 100 series_complete || { cat "$OUT"; fail "redis is not listed again"; }

note "the exporters reach their backends as the backends' accounts"
until_true 100 sh -c "curl -fsS http://localhost:$REDIS_X/metrics | grep -qx 'redis_up 1'" || fail "redis_up is not 1"
until_true 100 sh -c "curl -fsS http://127.0.0.1:$PG_X/metrics | grep -qx 'pg_up 1'" || fail "pg_up is not 1"
metrics "$PG_X" || fail "postgres-exporter /metrics"
has "$OUT" "pg_postmaster_start_time_seconds"
# 0.11's database and bgwriter collectors are off: the queries file gives their series, with
# their names, server label and types, on the exporter's one connection.
grep -q '^pg_database_size_bytes{datname="gitlabhq_production",server="[^"]*:[0-9]*"} [0-9]' "$OUT" ||
	fail "no pg_database_size_bytes: $(grep pg_database "$OUT")"
grep -q '^pg_stat_bgwriter_buffers_alloc_total{server="[^"]*:[0-9]*"} [0-9]' "$OUT" ||
	fail "no pg_stat_bgwriter_buffers_alloc_total: $(grep bgwriter "$OUT")"
has "$OUT" "# TYPE pg_stat_bgwriter_checkpoints_timed_total counter"
# pg_backends: the exporter's connections to PostgreSQL, counted by the superuser
pg_backends() {
	"$GITLAB_CTL" --root "$T_ROOT" exec postgresql -- psql -X -qtA -h "$T_ROOT/var/opt/gitlab/postgresql" -d postgres \
		-c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'gitlab-postgres-exporter'" 2>"$ERR"
}
[ "$(pg_backends)" = 1 ] || fail "postgres-exporter holds $(pg_backends) connections, not one: $(cat "$ERR")"
pid_of() { od -An -tu4 -j12 -N4 "$SV_DIR/$1/supervise/status" | tr -d ' '; }
user_of() { ps -o user= -p "$(pid_of "$1")"; }
if [ "$(id -u)" = 0 ]; then
	[ "$(user_of node-exporter)" = gitlab-prometheus ] || fail "node-exporter runs as $(user_of node-exporter)"
	[ "$(user_of redis-exporter)" = gitlab-redis ] || fail "redis-exporter runs as $(user_of redis-exporter)"
	[ "$(user_of postgres-exporter)" = gitlab-postgres-exporter ] || fail "postgres-exporter runs as $(user_of postgres-exporter)"
fi
tr '\0' ' ' <"/proc/$(pid_of postgres-exporter)/cmdline" >"$OUT"
has "$OUT" "--extend.query-path=$T_ROOT/var/opt/gitlab/postgres-exporter/queries.yaml"
lacks "$OUT" "host="
tr '\0' ' ' <"/proc/$(pid_of redis-exporter)/cmdline" >"$OUT"
lacks "$OUT" "pw-Secret-77" # redis['password'] reaches it only through its envdir
expect_rc 0 ctl show-config redis-exporter
lacks "$OUT" "pw-Secret-77"
[ -f "$T_ROOT/opt/gitlab/etc/postgres-exporter/env/DATA_SOURCE_NAME" ] || fail "no DATA_SOURCE_NAME in the envdir"
# The catalog's Go runtime defaults (bench/stack measured them) reach the running exporters.
if [ "$(id -u)" = 0 ]; then
	for _sv in "node-exporter GOGC=75" "redis-exporter GOGC=25" "postgres-exporter GOGC=25"; do
		set -- $_sv
		tr '\0' '\n' <"/proc/$(pid_of "$1")/environ" >"$OUT"
		for _v in "$2" GOMAXPROCS=1; do
			grep -qx "$_v" "$OUT" || fail "$1 runs without $_v: $(grep '^GO' "$OUT")"
		done
	done
fi
has "$T_ROOT/var/opt/gitlab/postgres-exporter/queries.yaml" "pg_stat_user_tables:"
[ -d "$T_ROOT/var/opt/gitlab/node-exporter/textfile_collector" ] || fail "no textfile_collector directory"

note "a second reconfigure changes nothing"
expect_rc 0 ctl reconfigure
grep -q '^0/[0-9]* resources updated' "$OUT" || { cat "$OUT"; fail "a second reconfigure changed something"; }

note "through Prometheus: the runit series, redis_up, pg_up and gitlab-exporter's database and Sidekiq series"
PROM=$(free_port) AM=$(free_port)
"$GITLAB_CTL" --root "$T_ROOT" exec postgresql -- psql -X -q -v ON_ERROR_STOP=1 -h "$T_ROOT/var/opt/gitlab/postgresql" \
	-d gitlabhq_production -c 'SET ROLE gitlab' -c 'CREATE TABLE IF NOT EXISTS projects (id int)' \
	-c 'INSERT INTO projects VALUES (1), (2)' -c 'ANALYZE projects' >"$OUT" 2>"$ERR" || { cat "$ERR"; fail "seeding projects"; }
{
	exporters_rb
	cat <<EOF2
prometheus['enable'] = true
prometheus['listen_address'] = 'localhost:$PROM'
prometheus['scrape_interval'] = 1
prometheus['scrape_timeout'] = 1
alertmanager['enable'] = true
alertmanager['listen_address'] = 'localhost:$AM'
EOF2
} | write_rb
SVWAIT=60 expect_rc 0 ctl reconfigure
has "$T_ROOT/var/opt/gitlab/prometheus/prometheus.yml" "job_name: \"redis\""
# query PROMQL: Prometheus' answer (JSON) in $OUT; true when it holds a sample.
query() {
	curl -fsS --max-time 5 -u "$(mon_auth)" "http://localhost:$PROM/api/v1/query" --data-urlencode "query=$1" >"$OUT" 2>"$ERR" &&
		grep -q '"result":\[{' "$OUT"
}
for _q in 'node_service_state{service="redis",job="node"} == 1' \
	'node_service_state{service="postgres-exporter",job="node"} == 1' \
	'redis_up{job="redis"} == 1' 'pg_up{job="postgres"} == 1' \
	'pg_stat_user_tables_n_live_tup{job="postgres",relname="projects"}' \
	'gitlab_database_stat_table_n_tup_ins{job="gitlab_exporter_database",table_name="projects"}' \
	'sidekiq_jobs_processed_total{job="gitlab_exporter_sidekiq"}' \
	'process_resident_memory_bytes{job="gitlab_exporter_process"} > 0'; do
	until_true 300 query "$_q" || { cat "$OUT" "$ERR"; fail "Prometheus has no sample of $_q"; }
done

note "inspect shows the Prometheus query graphing a service's memory, and its URL"
expect_rc 0 ctl inspect redis-exporter
has "$OUT" "memory graph: process_resident_memory_bytes{instance=\"localhost:$REDIS_X\"}"
has "$OUT" "http://localhost:$PROM/classic/graph?g0.expr=process_resident_memory_bytes%7Binstance%3D%22localhost%3A$REDIS_X%22%7D&g0.tab=0"
expect_rc 0 ctl inspect --json node-exporter
has "$OUT" "\"memory_query\": \"process_resident_memory_bytes{instance=\\\"localhost:$NODE\\\"}\""
until_true 100 query "process_resident_memory_bytes{instance=\"localhost:$REDIS_X\"}" || fail "inspect's query has no sample"

note "a collector turned back on drops its queries: each series once, on its second connection"
echo "postgres_exporter['flags'] = { 'collector.bgwriter' => true }" >>"$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 0 ctl reconfigure
lacks "$T_ROOT/var/opt/gitlab/postgres-exporter/queries.yaml" "pg_stat_bgwriter:"
has "$T_ROOT/var/opt/gitlab/postgres-exporter/queries.yaml" "pg_database:"
until_true 100 sh -c "curl -fsS --max-time 5 http://127.0.0.1:$PG_X/metrics | grep -q '^pg_stat_bgwriter_buffers_alloc_total'" ||
	fail "no bgwriter series from the collector"
metrics "$PG_X" || fail "postgres-exporter /metrics with the bgwriter collector"
[ "$(grep -c '^pg_stat_bgwriter_buffers_alloc_total' "$OUT")" = 1 ] || fail "the bgwriter series twice"
[ "$(grep -c '^pg_database_size_bytes{datname="gitlabhq_production"' "$OUT")" = 1 ] || fail "pg_database_size_bytes not once"
[ "$(pg_backends)" = 2 ] || fail "with its collector on, postgres-exporter holds $(pg_backends) connections"
