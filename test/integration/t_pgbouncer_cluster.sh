#!/bin/sh
# HA, clients through PgBouncer: three database nodes (test/integration/patroni_cluster.sh,
# 10.25.0.0/24) and a fourth with pgbouncer_role and the pgbouncer-watcher only, which reads
# the leader from etcd (patronictl on patroni['scope'] and patroni['etcd'] of its gitlab.rb,
# no Patroni there). The watcher points PgBouncer's database at Patroni's leader; a write
# through it reaches the leader. The leader's node is lost (every process of its namespace
# SIGKILLed): PgBouncer takes writes again once its watcher has re-pointed it (printed: the
# seconds until the first write through PgBouncer succeeded); a reconfigure then changes
# nothing and leaves it there. gitlab-ctl pgb-notify re-points it by hand (RESUME of a paused
# database, RELOAD), and the passwords never show in reconfigure's output.
. "$SRCDIR/test/integration/lib.sh"
CL_TAG=pb CL_NET=10.25.0
. "$SRCDIR/test/integration/patroni_cluster.sh"
cl_require
[ -x /usr/sbin/pgbouncer ] || fail "pgbouncer is not installed (scripts/setup installs it)"
OUT=$T_ROOT/out

cl_net_up 1 2 3 4
cl_tls
DBH=$(printf 'db-Secret-44\n' | "$GITLAB_CTL" pg-password-md5 gitlab) || fail "pg-password-md5"
cl_roots "postgresql['sql_user_password'] = '$DBH'"
P=4
N4=$CL_DIR/n4
CL_ROOTS="$CL_ROOTS $N4"
mkdir -p "$N4/etc/gitlab"
chmod 755 "$N4"
cp -a "$C" "$N4/etc/gitlab/tls"
cat >"$N4/etc/gitlab/gitlab.rb" <<EOF2
roles(['pgbouncer_role'])
pgbouncer_watcher['enable'] = true
pgbouncer['listen_addr'] = '127.0.0.1'
pgbouncer['server_login_retry'] = 2
pgbouncer['databases'] = { 'gitlabhq_production' => { 'host' => '$CL_NET.11', 'port' => 5432,
                             'user' => 'gitlab', 'password' => 'db-Secret-44' } }
pgbouncer['users'] = { 'gitlab' => { 'password' => '$DBH' } }
pgbouncer['admin_users'] = ['pgbouncer']
patroni['etcd'] = { 'hosts' => ['$CL_NET.11:2379', '$CL_NET.12:2379', '$CL_NET.13:2379'],
                    'protocol' => 'https', 'cacert' => '$N4/etc/gitlab/tls/ca.pem',
                    'cert' => '$N4/etc/gitlab/tls/patroni.pem', 'key' => '$N4/etc/gitlab/tls/patroni.key' }
EOF2
chmod 600 "$N4/etc/gitlab/gitlab.rb"
note "three database nodes reconfigure side by side"
cl_reconfigure_all
L=$(cl_converged)
note "node $L leads; node 4 (PgBouncer and its watcher) reconfigures"
SVWAIT=240 in_node 4 reconfigure >"$OUT" 2>&1 || { cat "$OUT"; fail "node 4 reconfigure"; }
! grep -q "Secret-4\|$DBH" "$OUT" || fail "node 4 printed a password"
# Root's rendered files hold the passwords: 0640, gitlab-psql's group.
for _f in pgbouncer.ini databases.ini userlist.txt; do
	[ "$(stat -c '%a %U %G' "$CL_DIR/n$P/opt/gitlab/sv/pgbouncer/$_f")" = "640 root gitlab-psql" ] ||
		fail "$_f: $(stat -c '%a %U %G' "$CL_DIR/n$P/opt/gitlab/sv/pgbouncer/$_f")"
done
grep -q "^\"gitlab\" \"md5$DBH\"$" "$CL_DIR/n$P/opt/gitlab/sv/pgbouncer/userlist.txt" || fail "userlist.txt"

pgb() { # pgb N SQL: through node N's PgBouncer, as gitlab with its password
	ip netns exec "$(ns "$1")" env PGPASSWORD=db-Secret-44 PGCONNECT_TIMEOUT=3 \
		/usr/lib/postgresql/15/bin/psql -X -At -h 127.0.0.1 -p 6432 -U gitlab -d gitlabhq_production -c "$2"
}
on_leader() { [ "$(pgb "$P" 'SELECT NOT pg_is_in_recovery()' 2>/dev/null)" = t ]; }
until_true 300 on_leader || { cat "$CL_DIR/n$P/var/log/gitlab/pgbouncer-watcher/current" >&2; fail "node $P's PgBouncer does not reach the leader"; }
pgb "$P" "CREATE TABLE pgb (n int); INSERT INTO pgb VALUES (1)" >/dev/null || fail "a write through node $P's PgBouncer"
note "a write through node $P's PgBouncer reached the leader $L"

note "second reconfigure on node $P changes nothing"
SVWAIT=240 in_node "$P" reconfigure >"$OUT" 2>&1 || { cat "$OUT"; fail "node $P second reconfigure"; }
! grep -qE "restart|create" "$OUT" || { cat "$OUT"; fail "node $P: the second reconfigure changed something"; }

note "node $L is lost"
T0=$(date +%s.%N)
cl_kill_ns "$(ns "$L")"
write() { pgb "$P" "INSERT INTO pgb VALUES (2)" >/dev/null 2>&1; }
until_true 900 write || { cat "$CL_DIR/n$P/var/log/gitlab/pgbouncer-watcher/current" >&2; fail "no write through node $P's PgBouncer after the loss"; }
T1=$(date +%s.%N)
OTHERS=$(for _i in 1 2 3; do [ "$_i" = "$L" ] || echo "$_i"; done | tr '\n' ' ')
# shellcheck disable=SC2086
N=$(leader_of $OTHERS) || fail "no new leader"
note "first write through node $P's PgBouncer $(printf %.1f "$(echo "$T1 - $T0" | bc)") s after the loss (node $N leads)"
[ "$(pgb "$P" 'SELECT count(*) FROM pgb')" = 2 ] || fail "the writes are not both on the new leader $N"
grep -q "now on $CL_NET.1$N" "$CL_DIR/n$P/var/log/gitlab/pgbouncer-watcher/current" ||
	fail "the watcher's log does not name the move"

note "a reconfigure on node $P after the failover changes nothing and keeps PgBouncer on node $N"
SVWAIT=240 in_node "$P" reconfigure >"$OUT" 2>&1 || { cat "$OUT"; fail "node $P reconfigure after the loss"; }
! grep -qE "restart|create" "$OUT" || { cat "$OUT"; fail "node $P: the reconfigure after the loss changed something"; }
[ "$(pgb "$P" 'SELECT inet_server_addr()')" = "$CL_NET.1$N" ] || fail "node $P's PgBouncer left node $N"

note "gitlab-ctl pgb-notify: a paused database resumed, re-pointed by hand"
adm() { ip netns exec "$(ns "$P")" setpriv --reuid=gitlab-psql --regid=gitlab-psql --init-groups \
	/usr/lib/postgresql/15/bin/psql -X -At -h "$CL_DIR/n$P/var/opt/gitlab/pgbouncer" -p 6432 -U pgbouncer -d pgbouncer -c "$1"; }
adm "PAUSE gitlabhq_production" >/dev/null || fail "PAUSE on the admin console"
in_node "$P" stop pgbouncer-watcher >/dev/null || fail "stop the watcher"
in_node "$P" pgb-notify --pg-database gitlabhq_production --newhost "$CL_NET.1$N" --user pgbouncer >"$OUT" 2>&1 ||
	{ cat "$OUT"; fail "pgb-notify"; }
write || fail "no write after pgb-notify resumed the database"
_rc=0
in_node "$P" pgb-notify --pg-database nosuch --newhost "$CL_NET.1$N" >"$OUT" 2>&1 || _rc=$?
[ "$_rc" = 1 ] && grep -q "nosuch: no such database" "$OUT" || { cat "$OUT"; fail "pgb-notify of an unknown database: exit $_rc"; }
_rc=0
in_node "$P" pgb-notify --pg-database gitlabhq_production >"$OUT" 2>&1 || _rc=$?
[ "$_rc" = 2 ] || fail "pgb-notify without --newhost: exit $_rc"
echo ok
