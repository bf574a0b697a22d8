#!/bin/sh
# An interrupted initdb is never trusted: a one-time step is done only when gitlab-ctl saw
# it succeed.
# - reconfigure and initdb both killed (-9) once initdb has written PG_VERSION: the next
#   reconfigure says the step was interrupted, builds the cluster again and converges;
#   the exporter's database answers (a half cluster holding only template1 would fail);
# - SVWAIT=1 reconfigure: initdb has its own timeout, so the short SVWAIT does not kill it
#   half way; the next reconfigure converges and the database answers;
# - a cluster that an older gitlab-ctl left half built (PG_VERSION but no `postgres`
#   database, no record of the step) fails the verify command: it is moved aside (kept)
#   and initdb runs again; a complete one (its `postgres` database opens) is kept, data
#   and all, and recorded.
. "$SRCDIR/test/integration/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || { echo "SKIP: no PostgreSQL 15 in $PGBIN"; exit 77; }
export SVWAIT=120 # a cluster is built on a busy machine
R=${T_ROOT:?}
PGHOME=$R/var/opt/gitlab/postgresql
OUT=$R/out
ERR=$R/err
mkdir -p "$R/etc/gitlab"
cat >"$R/etc/gitlab/gitlab.rb" <<EOF
postgresql['enable'] = true
gitlab_exporter['enable'] = false
$(exporter_ports)
$(only_services postgresql postgres_exporter)
EOF

# Whatever is left working in this root's PostgreSQL home is stopped on exit (lib.sh).
stop_leftovers() { stop_pg_home "$PGHOME"; }
trap 'stop_leftovers; t_cleanup' EXIT
# A fresh start: nothing supervised, no cluster, no tree (gitlab.rb and the install stay).
fresh() {
	stop_root
	stop_leftovers
	rm -rf "${R:?}/opt" "${R:?}/var"
}
pg_version_written() { find "$PGHOME" -maxdepth 2 -name PG_VERSION 2>/dev/null | grep -q .; }
# The exporter's database answers through the socket, as gitlab-psql.
db_answers() {
	ctl exec postgresql -- "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -d gitlabhq_production \
		-c 'SELECT count(*) FROM pg_database' >"$R/db" 2>&1 || { cat "$R/db" >&2; return 1; }
	# template0, template1, postgres and gitlabhq_production: a complete cluster.
	[ "$(cat "$R/db")" -ge 4 ] || { cat "$R/db" >&2; return 1; }
}

note "reconfigure and initdb killed after PG_VERSION: the next run redoes the step"
"$GITLAB_CTL" --root "$R" reconfigure >"$R/out0" 2>&1 &
ctlpid=$!
track_pid "$ctlpid"
until_true 1200 pg_version_written || { cat "$R/out0"; fail "initdb never wrote PG_VERSION"; }
step=$(child_of "$ctlpid")
kill -KILL "$ctlpid" 2>/dev/null || true
# initdb leads its own process group: it and the postgres it runs, all at once (procps'
# kill: dash's builtin takes no process group).
[ -z "$step" ] || /bin/kill -KILL -- "-$step" 2>/dev/null || true
wait "$ctlpid" 2>/dev/null || true
[ -n "$step" ] || note "(initdb had already finished: nothing to interrupt)"
expect_rc 0 ctl reconfigure
has "$OUT" "gitlab Reconfigured!"
[ -z "$step" ] || has "$OUT" "setup step initdb of an earlier run was interrupted"
db_answers || fail "the exporter's database does not answer after the redo"
[ -z "$(find "$PGHOME" -maxdepth 1 -name '.data.setup-*')" ] || fail "a staging directory is left"

note "SVWAIT=1: initdb is not killed by SVWAIT; the next reconfigure converges"
fresh
rc=0
SVWAIT=1 ctl reconfigure >"$OUT" 2>"$ERR" || rc=$?
lacks "$ERR" "setup step initdb: not finished"
expect_rc 0 ctl reconfigure
has "$OUT" "gitlab Reconfigured!"
db_answers || fail "the exporter's database does not answer after SVWAIT=1"

note "a half-built cluster without a record (an older gitlab-ctl's): moved aside, redone"
fresh
mkdir -p "$PGHOME"
chown gitlab-psql:gitlab-psql "$PGHOME"
# initdb killed once it wrote PG_VERSION, as an older gitlab-ctl's SVWAIT did.
setsid runuser -u gitlab-psql -- "$PGBIN/initdb" -D "$PGHOME/data" -E UTF8 --locale=C.UTF-8 \
	>"$R/initdb.log" 2>&1 &
ipid=$!
track_pid "$ipid"
until_true 1200 test -e "$PGHOME/data/PG_VERSION" || fail "initdb never wrote PG_VERSION"
/bin/kill -KILL -- "-$ipid" 2>/dev/null || true
stop_leftovers
wait "$ipid" 2>/dev/null || true
expect_rc 0 ctl reconfigure
has "$OUT" "fails its verify command (not made by a completed step): moved aside to $PGHOME/data.unverified-"
has "$OUT" "gitlab Reconfigured!"
db_answers || fail "the exporter's database does not answer after the move aside"
[ -n "$(find "$PGHOME" -maxdepth 1 -name 'data.unverified-*')" ] || fail "the half cluster is gone"

note "a complete cluster without a record (upgrade from an older gitlab-ctl): verified, kept"
ctl exec postgresql -- "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d gitlabhq_production \
	-c 'CREATE TABLE kept (v int)' >"$R/db" 2>&1 || { cat "$R/db"; fail "create table"; }
rm "$R/opt/gitlab/var/setup/postgresql+initdb"
expect_rc 0 ctl reconfigure
has "$OUT" "passes the verify command, kept"
has "$OUT" "gitlab Reconfigured!"
ctl exec postgresql -- "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d gitlabhq_production \
	-c 'SELECT v FROM kept' >"$R/db" 2>&1 || { cat "$R/db"; fail "the kept cluster lost its table"; }
echo "ok t_safety_setup_initdb"
