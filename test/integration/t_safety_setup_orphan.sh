#!/bin/sh
# kill -9 of gitlab-ctl alone during a first reconfigure, then an immediate retry: the
# retry must not start PostgreSQL while the orphaned initdb still builds the cluster (it
# stops the orphan, found by the pid and start time recorded for the step, and builds the
# cluster again) and converges, with the exporter's database answering. A few trials, each
# on a fresh tree, since where the kill lands varies.
. "$SRCDIR/test/integration/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || { echo "SKIP: no PostgreSQL 15 in $PGBIN"; exit 77; }
export SVWAIT=120 # a cluster is built on a busy machine
TRIALS=3
R=${T_ROOT:?}
PGHOME=$R/var/opt/gitlab/postgresql
OUT=$R/out
ERR=$R/err
mkdir -p "$R/etc/gitlab"
printf "%s\n" "postgresql['enable'] = true" "gitlab_exporter['enable'] = false" \
	"$(exporter_ports)" "$(only_services postgresql postgres_exporter)" >"$R/etc/gitlab/gitlab.rb"

# Whatever is left working in this root's PostgreSQL home is stopped on exit (lib.sh).
stop_leftovers() { stop_pg_home "$PGHOME"; }
trap 'stop_leftovers; t_cleanup' EXIT
pg_version_written() { find "$PGHOME" -maxdepth 2 -name PG_VERSION 2>/dev/null | grep -q .; }
db_answers() {
	ctl exec postgresql -- "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -d gitlabhq_production \
		-c 'SELECT count(*) FROM pg_database' >"$R/db" 2>&1 || { cat "$R/db" >&2; return 1; }
	[ "$(cat "$R/db")" -ge 4 ] || { cat "$R/db" >&2; return 1; }
}

n=1
while [ "$n" -le "$TRIALS" ]; do
	note "trial $n: kill -9 of gitlab-ctl while initdb runs, retry at once"
	stop_root
	stop_leftovers
	rm -rf "${R:?}/opt" "${R:?}/var"
	"$GITLAB_CTL" --root "$R" reconfigure >"$R/out0" 2>&1 &
	ctlpid=$!
	track_pid "$ctlpid"
	until_true 1200 pg_version_written || { cat "$R/out0"; fail "initdb never wrote PG_VERSION"; }
	step=$(child_of "$ctlpid")
	kill -KILL "$ctlpid" 2>/dev/null || true
	wait "$ctlpid" 2>/dev/null || true
	[ -n "$step" ] && alive "$step" || note "(initdb had already finished: no orphan)"
	expect_rc 0 ctl reconfigure
	has "$OUT" "gitlab Reconfigured!"
	[ -z "$step" ] || has "$OUT" "setup step initdb of an earlier run was interrupted"
	lacks "$ERR" "postmaster.pid"
	[ -n "$step" ] && alive "$step" && fail "the orphaned initdb (pid $step) still runs after the retry"
	db_answers || fail "trial $n: the exporter's database does not answer"
	n=$((n + 1))
done
echo "ok t_safety_setup_orphan"
