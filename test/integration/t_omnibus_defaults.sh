#!/bin/sh
# Omnibus' defaults on a single node. A host runs PostgreSQL and Redis; its gitlab.rb goes
# away (mv gitlab.rb gitlab.rb.bak): reconfigure keeps both up (same pids, the database
# answering) and brings up the rest of what Omnibus runs by default (gitlab-exporter,
# Prometheus, Alertmanager, the node, Redis and PostgreSQL exporters). Turning a database
# off takes its own enable = false, and reconfigure says where its data is kept; enabled
# again, PostgreSQL starts on that cluster (no initdb). prometheus_monitoring['enable'] =
# false turns the monitoring set and the exporters off, never the databases. The defaults
# listen on fixed ports (9090, 9093, 9100, 9121, 9168, 9187): the test runs in a network
# namespace of its own, so no other process on the machine is in their way.
. "$SRCDIR/test/integration/netns.sh"
. "$SRCDIR/test/integration/lib.sh"

[ -x /usr/lib/postgresql/15/bin/initdb ] || { echo "SKIP: no PostgreSQL 15"; exit 77; }
export SVWAIT=120 # initdb, then the whole stack, on a busy machine
OUT=$T_ROOT/out ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
PGDATA=$T_ROOT/var/opt/gitlab/postgresql/data
REDISDIR=$T_ROOT/var/opt/gitlab/redis
ALL="alertmanager gitlab-exporter node-exporter postgres-exporter postgresql prometheus redis redis-exporter"
mkdir -p "$T_ROOT/etc/gitlab"
pid_of() { status_pid "$SV_DIR/$1/supervise/status"; }
pg_answers() {
	ctl exec postgresql -- psql -X -q -At -h "$T_ROOT/var/opt/gitlab/postgresql" -d gitlabhq_production \
		-c 'SELECT 1' 2>/dev/null | grep -qx 1
}

note "a host running PostgreSQL and Redis (and the exporter), the monitoring set off"
cat >"$RB" <<EOF
postgresql['enable'] = true
redis['enable'] = true
$(only_services gitlab_exporter postgresql redis postgres_exporter redis_exporter)
EOF
chmod 600 "$RB"
expect_rc 0 ctl reconfigure
has "$OUT" "gitlab Reconfigured!"
PG=$(pid_of postgresql) RD=$(pid_of redis)
alive "$PG" && alive "$RD" || fail "postgresql ($PG) or redis ($RD) not running"
until_true 100 pg_answers || fail "the database does not answer"

note "gitlab.rb moved away: the defaults, and the databases stay up"
mv "$RB" "$RB.bak"
expect_rc 0 ctl reconfigure
has "$ERR" "no configuration file; using the defaults"
lacks "$OUT" "disable "
has "$OUT" "gitlab Reconfigured!"
[ "$(pid_of postgresql)" = "$PG" ] || fail "postgresql restarted ($PG -> $(pid_of postgresql))"
[ "$(pid_of redis)" = "$RD" ] || fail "redis restarted ($RD -> $(pid_of redis))"
pg_answers || fail "the database does not answer after the defaults"
expect_rc 0 ctl status
for s in $ALL; do
	grep -q "^run: $s: (pid [0-9]*)" "$OUT" || { cat "$OUT" >&2; fail "$s is not running by default"; }
done
for j in prometheus redis postgres node gitlab_exporter_database gitlab_exporter_sidekiq; do
	has "$T_ROOT/var/opt/gitlab/prometheus/prometheus.yml" "job_name: \"$j\""
done

note "a database is turned off only by its own enable = false; its data is kept and named"
printf "%s\n" "postgresql['enable'] = false" "redis['enable'] = false" >"$RB"
chmod 600 "$RB"
expect_rc 0 ctl reconfigure --dry-run
has "$OUT" "postgresql's data is kept in $PGDATA"
expect_rc 0 ctl reconfigure
for s in postgresql redis postgres-exporter redis-exporter; do
	grep -qx "disable $s" "$OUT" || { cat "$OUT" >&2; fail "no 'disable $s'"; }
done
has "$OUT" "postgresql's data is kept in $PGDATA (remove it yourself once you no longer need it)"
has "$OUT" "redis's data is kept in $REDISDIR (remove it yourself"
lacks "$OUT" "exporter's data"
wait_gone "$PG" 100 && wait_gone "$RD" 100 || fail "a disabled database still runs"
[ -f "$PGDATA/PG_VERSION" ] || fail "the cluster is gone from $PGDATA"

note "enabled again (gitlab.rb gone): PostgreSQL starts on the kept cluster, no initdb"
rm "$RB"
expect_rc 0 ctl reconfigure
lacks "$OUT" "setup initdb"
until_true 100 pg_answers || fail "the database does not answer on its kept cluster"
PG=$(pid_of postgresql) RD=$(pid_of redis)

note "prometheus_monitoring['enable'] = false: the monitoring set and the exporters off, the databases on"
echo "prometheus_monitoring['enable'] = false" >"$RB"
chmod 600 "$RB"
expect_rc 0 ctl reconfigure
for s in alertmanager gitlab-exporter node-exporter postgres-exporter prometheus redis-exporter; do
	grep -qx "disable $s" "$OUT" || { cat "$OUT" >&2; fail "no 'disable $s'"; }
done
! grep -qx -e "disable postgresql" -e "disable redis" "$OUT" || { cat "$OUT" >&2; fail "a database disabled"; }
[ "$(pid_of postgresql)" = "$PG" ] && [ "$(pid_of redis)" = "$RD" ] ||
	fail "the monitoring switch restarted a database"
echo "ok t_omnibus_defaults"
