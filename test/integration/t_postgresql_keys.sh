# Omnibus' postgresql[...] parameters take effect as Omnibus applies them: written into
# postgresql.conf with Omnibus' defaults; a bad value refused by postgres itself at its
# gitlab.rb line before anything is published; a reloadable change is a reload (same pid);
# a postmaster-context change is written and named with `gitlab-ctl restart postgresql`,
# the server keeps running on the old value until then; an Omnibus key PostgreSQL 15 lacks
# is a warning at its own line.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (service accounts)"; exit 77; }
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || { echo "SKIP: no PostgreSQL 15 in $PGBIN"; exit 77; }
export SVWAIT=120
OUT=$T_ROOT/out
ERR=$T_ROOT/err
PGHOME=$T_ROOT/var/opt/gitlab/postgresql
RB=$T_ROOT/etc/gitlab/gitlab.rb
trap '_r=$?; set +e; stop_pg_home "$PGHOME"; (exit $_r); t_cleanup' EXIT
mkdir -p "$T_ROOT/etc/gitlab"
rb() { # more gitlab.rb lines on stdin
	{
		only_services postgresql
		cat
	} >"$RB"
}
show() {
	setpriv --reuid="$(id -u gitlab-psql)" --regid="$(id -g gitlab-psql)" --clear-groups \
		"$PGBIN/psql" -X -q -At -h "$PGHOME" -d postgres -c "SHOW $1"
}
pg_pid() { status_pid "$SV_DIR/postgresql/supervise/status"; }
line_of() { grep -n -F -- "$1" "$RB" | head -1 | cut -d: -f1; }

note "Omnibus' defaults, and gitlab.rb's values of each Ruby type"
rb <<'RB'
postgresql['work_mem'] = '32MB'
postgresql['checkpoint_completion_target'] = 0.8
postgresql['random_page_cost'] = 1.5
postgresql['log_lock_waits'] = false
postgresql['autovacuum_naptime'] = :'2min'
postgresql['max_locks_per_transaction'] = 200
postgresql['log_statement'] = 'ddl'
RB
expect_rc 0 ctl reconfigure
for kv in work_mem=32MB checkpoint_completion_target=0.8 random_page_cost=1.5 log_lock_waits=off \
	autovacuum_naptime=2min max_locks_per_transaction=200 log_statement=ddl \
	statement_timeout=1min idle_in_transaction_session_timeout=1min maintenance_work_mem=16MB \
	autovacuum_vacuum_scale_factor=0.02 default_statistics_target=1000 deadlock_timeout=5s \
	wal_level=minimal max_wal_size=1GB log_min_duration_statement=1s max_pred_locks_per_transaction=10; do
	got=$(show "${kv%%=*}")
	[ "$got" = "${kv#*=}" ] || fail "SHOW ${kv%%=*}: $got, want ${kv#*=}"
done
P1=$(pg_pid)
note "running as pid $P1 with the values"

note "a reloadable parameter: reload, same pid"
sed -i "s/'32MB'/'64MB'/" "$RB"
expect_rc 0 ctl reconfigure
has "$OUT" "reload postgresql (config changed)"
lacks "$OUT" "restart postgresql"
lacks "$ERR" "restart"
[ "$(pg_pid)" = "$P1" ] || fail "postgresql was restarted: pid $(pg_pid), was $P1"
until_true 30 sh -c "[ \"\$(setpriv --reuid=$(id -u gitlab-psql) --regid=$(id -g gitlab-psql) --clear-groups \
	$PGBIN/psql -X -q -At -h $PGHOME -d postgres -c 'SHOW work_mem')\" = 64MB ]" ||
	fail "work_mem after the reload: $(show work_mem)"

note "postmaster parameters: written, named, no restart"
echo "postgresql['shared_buffers'] = '256MB'" >>"$RB"
echo "postgresql['max_worker_processes'] = 12" >>"$RB"
expect_rc 0 ctl reconfigure
has "$ERR" "postgresql: max_worker_processes, shared_buffers changed; they take effect only at a restart: run gitlab-ctl restart postgresql"
[ "$(pg_pid)" = "$P1" ] || fail "postgresql was restarted for a postmaster parameter"
[ "$(show shared_buffers)" = 128MB ] || fail "shared_buffers changed without a restart?"
grep -qx "shared_buffers = '256MB'" "$SV_DIR/postgresql/postgresql.conf" || fail "not written"
expect_rc 0 ctl restart postgresql
until_true 60 sh -c "[ \"\$(setpriv --reuid=$(id -u gitlab-psql) --regid=$(id -g gitlab-psql) --clear-groups \
	$PGBIN/psql -X -q -At -h $PGHOME -d postgres -c 'SHOW shared_buffers' 2>/dev/null)\" = 256MB ]" ||
	fail "shared_buffers after the restart: $(show shared_buffers)"
P2=$(pg_pid)
expect_rc 0 ctl reconfigure
lacks "$ERR" "restart"
[ "$(pg_pid)" = "$P2" ] || fail "a no-op reconfigure restarted postgresql"

note "bad values: refused by postgres at their lines, nothing published"
cp "$SV_DIR/postgresql/postgresql.conf" "$T_ROOT/before.conf"
echo "postgresql['work_mem'] = '16XB'" >>"$RB"
echo "postgresql['synchronous_commit'] = 'sometimes'" >>"$RB"
echo "postgresql['wal_keep_segments'] = 10" >>"$RB"
L1=$(line_of "'16XB'") L2=$(line_of "'sometimes'") L3=$(line_of wal_keep_segments)
for verb in check-config reconfigure; do
	expect_rc 1 ctl "$verb"
	has "$ERR" "gitlab.rb:$L1: error: postgresql['work_mem']: postgres refuses the"
	has "$ERR" "invalid value for parameter \"work_mem\": \"16XB\""
	has "$ERR" "gitlab.rb:$L2: error: postgresql['synchronous_commit']: postgres refuses the"
	has "$ERR" "gitlab.rb:$L3:12: warning: postgresql['wal_keep_segments'] is an Omnibus setting this build does not apply to postgresql; ignored: PostgreSQL 15 has no such parameter; set postgresql['wal_keep_size']"
done
cmp -s "$T_ROOT/before.conf" "$SV_DIR/postgresql/postgresql.conf" || fail "postgresql.conf changed"
[ "$(pg_pid)" = "$P2" ] || fail "postgresql restarted after a refusal"

note "md5_auth_cidr_addresses: a password from each address, replication too; trust never"
sed -i '/16XB\|sometimes/d' "$RB"
PGPORT=$(free_port)
{
	echo "postgresql['listen_address'] = '127.0.0.1'"
	echo "postgresql['port'] = $PGPORT"
	echo "postgresql['md5_auth_cidr_addresses'] = ['10.0.0.0/24', '192.0.2.7']"
	echo "postgresql['trust_auth_cidr_addresses'] = ['127.0.0.1/32']"
} >>"$RB"
LT=$(line_of trust_auth_cidr_addresses)
expect_rc 0 ctl reconfigure
has "$ERR" "gitlab.rb:$LT:12: warning: postgresql['trust_auth_cidr_addresses'] is an Omnibus setting this build does not apply to postgresql; ignored: not written: trust lets whoever connects from there (on loopback: any local user) in as any role"
PGHOST_TCP="host=127.0.0.1 port=$PGPORT"
rules=$(setpriv --reuid="$(id -u gitlab-psql)" --regid="$(id -g gitlab-psql)" --clear-groups \
	"$PGBIN/psql" -X -q -At -h "$PGHOME" -p "$PGPORT" -d postgres \
	-c "SELECT type, database[1], user_name[1], address, netmask, auth_method, coalesce(error, '') FROM pg_catalog.pg_hba_file_rules ORDER BY line_number")
echo "$rules" | grep -qx 'host|all|all|10.0.0.0|255.255.255.0|md5|' || fail "no md5 rule for 10.0.0.0/24: $rules"
echo "$rules" | grep -qx 'host|replication|all|192.0.2.7|255.255.255.255|md5|' ||
	fail "no replication rule for 192.0.2.7: $rules"
echo "$rules" | grep -q '|trust|' && fail "a trust rule was written: $rules"
# nobody, over loopback TCP, gets a password prompt, never a session
rc=0
setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups \
	"$PGBIN/psql" -X -w -At -d "$PGHOST_TCP user=gitlab-psql dbname=postgres" -c 'SELECT 1' \
	>"$OUT" 2>"$ERR" || rc=$?
[ "$rc" != 0 ] || fail "nobody reached the database over loopback without a password"
has "$ERR" "password"
sed -i '/trust_auth_cidr_addresses/d' "$RB"
echo "postgresql['md5_auth_cidr_addresses'] = ['10.0.0.0/24', 'db.example.com']" >>"$RB"
LB=$(line_of db.example.com)
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:$LB:41: error: postgresql['md5_auth_cidr_addresses']: not an array of IP addresses"

note "logging stays with svlogd"
sed -i '/db.example.com/d' "$RB"
echo "postgresql['logging_collector'] = 'on'" >>"$RB"
expect_rc 1 ctl check-config
has "$ERR" "postgresql['logging_collector'] = 'on' is not one of 'off', 'false': PostgreSQL logs to stderr"
note ok
