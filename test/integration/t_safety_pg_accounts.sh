# No account's SQL runs with another's rights through PostgreSQL (issue 29 rows 1 and 8).
# Row 1, as the attack was done: git (role `gitlab`, owner of gitlabhq_production) sets its
# database's search_path to public first and plants public.version() that makes `gitlab` a
# superuser; then postgres-exporter is restarted and scraped (it calls version() unqualified
# on every scrape) and reconfigure runs its steps. `gitlab` must stay a plain role: the
# exporter runs as its own account, mapped only to a pg_monitor role, with search_path
# pinned; gitlab-ctl's own steps pin it too. The exporter's account cannot log in as the
# superuser. Row 8: postgresql['database'] = 'gitlab production' works end to end (pg_up 1,
# per-table series of that database).
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (service accounts)"; exit 77; }
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || { echo "SKIP: no PostgreSQL 15 in $PGBIN"; exit 77; }
command -v prometheus-postgres-exporter >/dev/null || { echo "SKIP: no postgres-exporter"; exit 77; }
export SVWAIT=120
OUT=$T_ROOT/out
ERR=$T_ROOT/err
PGHOME=$T_ROOT/var/opt/gitlab/postgresql
trap '_r=$?; set +e; stop_pg_home "$PGHOME"; (exit $_r); t_cleanup' EXIT
PX=$(free_port) GE=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
rb() { # DATABASE
	{
		only_services postgresql postgres_exporter gitlab_exporter
		echo "postgresql['enable'] = true"
		echo "postgresql['database'] = '$1'"
		echo "gitlab_exporter['listen_port'] = $GE"
		echo "postgres_exporter['listen_address'] = '127.0.0.1:$PX'"
		echo "postgres_exporter['per_table_stats'] = true"
	} >"$T_ROOT/etc/gitlab/gitlab.rb"
}
# as ACCOUNT ROLE DB SQL...: psql on the socket as that OS account (peer, pg_ident.conf).
as() {
	_u=$1 _r=$2 _db=$3
	shift 3
	setpriv --reuid="$(id -u "$_u")" --regid="$(id -g "$_u")" --clear-groups \
		"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$PGHOME" -U "$_r" -d "$_db" "$@"
}
super() { as gitlab-psql gitlab-psql postgres -c "$1"; }
pg_up() { curl -fsS --max-time 10 "http://127.0.0.1:$PX/metrics" >"$OUT" 2>"$ERR" && grep -qx 'pg_up 1' "$OUT"; }

note "reconfigure with PostgreSQL and its exporter"
rb gitlabhq_production
expect_rc 0 ctl reconfigure
until_true 300 pg_up || fail "pg_up is not 1: $(cat "$OUT" "$ERR" | tail -5)"
EXU=$(ps -o user= -p "$(status_pid "$SV_DIR/postgres-exporter/supervise/status")")
note "postgres-exporter runs as $EXU"
[ "$(super "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = 'gitlab'")" = f ] ||
	fail "gitlab is a superuser before the attack"

note "git plants the trojan in the database its role owns"
as git gitlab gitlabhq_production \
	-c "ALTER DATABASE gitlabhq_production SET search_path = public, pg_catalog" \
	-c "CREATE FUNCTION public.version() RETURNS text LANGUAGE plpgsql AS
	    \$\$ BEGIN EXECUTE 'ALTER ROLE gitlab SUPERUSER'; RETURN 'PostgreSQL 15.0 trojan'; END \$\$" \
	-c "CREATE TABLE public.projects (id int)" -c "INSERT INTO public.projects VALUES (1)" \
	-c "ANALYZE public.projects" >"$OUT" 2>"$ERR" || fail "planting: $(cat "$ERR")"
# The trojan is what an unqualified version() there calls (git's own call cannot ALTER ROLE).
as git gitlab gitlabhq_production -c 'SELECT version()' >"$OUT" 2>"$ERR" || true
has "$ERR" 'PL/pgSQL function version()'

note "the exporter's new sessions, scraped, and reconfigure's steps"
expect_rc 0 ctl restart postgres-exporter
until_true 300 pg_up || fail "pg_up is not 1 after the restart: $(tail -5 "$OUT")"
for _i in 1 2 3; do
	pg_up || true
	sleep 1
done
expect_rc 0 ctl reconfigure
R=$(super "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = 'gitlab'")
[ "$R" = f ] || fail "git's role gitlab became a superuser through the trojan (rolsuper=$R)"
note "gitlab is still not a superuser"
[ "$EXU" != gitlab-psql ] || fail "postgres-exporter runs as the cluster's superuser gitlab-psql"
until_true 100 pg_up || fail "pg_up is not 1 after the attack"
grep -q 'pg_stat_user_tables_n_live_tup{.*relname="projects"' "$OUT" ||
	fail "no per-table series of gitlabhq_production: $(grep pg_stat_user "$OUT" | head -3)"

note "the exporter's account maps only to its pg_monitor role, never to the superuser"
R=$(super "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = '$EXU'")
[ "$R" = f ] || fail "the exporter's role $EXU is a superuser"
[ "$(super "SELECT pg_catalog.pg_has_role('$EXU', 'pg_monitor', 'MEMBER')")" = t ] ||
	fail "the exporter's role lacks pg_monitor"
if as "$EXU" gitlab-psql postgres -c 'SELECT 1' >"$OUT" 2>"$ERR"; then
	fail "the exporter's account logs in as gitlab-psql"
fi
has "$ERR" "Peer authentication failed"
if as "$EXU" gitlab gitlabhq_production -c 'SELECT 1' >"$OUT" 2>"$ERR"; then
	fail "the exporter's account logs in as git's role gitlab"
fi

note "postgresql['database'] = 'gitlab production': conninfo quoting end to end"
rb 'gitlab production'
expect_rc 0 ctl check-config
expect_rc 0 ctl reconfigure
until_true 300 pg_up || fail "pg_up is not 1 with a database name with a space: $(tail -5 "$OUT")"
[ "$(super "SELECT count(*) FROM pg_catalog.pg_database WHERE datname = 'gitlab production'")" = 1 ] ||
	fail "no database 'gitlab production'"
as git gitlab 'dbname='\''gitlab production'\''' -c "CREATE TABLE t_space (id int)" -c "ANALYZE t_space" ||
	fail "git cannot reach 'gitlab production'"
ok_space() { pg_up && grep -q 'pg_stat_user_tables_n_live_tup{datname="gitlab production".*relname="t_space"' "$OUT"; }
until_true 100 ok_space || fail "no series of 'gitlab production': $(grep pg_stat_user "$OUT" | head -3)"
echo "ok t_safety_pg_accounts"
