#!/bin/sh
# Each rendered format has its own quoting: a gitlab.rb value that postgresql.conf,
# pg_ident.conf or redis.conf cannot hold, or that would widen who may connect, is an error
# at its gitlab.rb line:col, from check-config and from reconfigure, before anything is
# written (no sv/ tree, no data dir). Values the formats can hold pass.
. "$SRCDIR/test/integration/lib.sh"

R=$T_ROOT
RB=$R/etc/gitlab/gitlab.rb
OUT=$R/out
ERR=$R/err
mkdir -p "$R/etc/gitlab"

# conf LINE...: gitlab.rb with PostgreSQL and Redis enabled on lines 1-2, then LINE... from 3,
# then the exporters on free ports and every other service off.
conf() {
	printf '%s\n' "postgresql['enable'] = true" "redis['enable'] = true" "$@" "$(exporter_ports)" \
		"$(only_services gitlab_exporter postgresql redis postgres_exporter redis_exporter)" >"$RB"
}

# refused LINE COL TEXT: check-config and reconfigure both fail naming gitlab.rb:LINE:COL and
# TEXT, and reconfigure wrote nothing.
refused() {
	expect_rc 1 ctl check-config
	has "$ERR" "$RB:$1:$2: error: "
	has "$ERR" "$3"
	rc=0
	ctl reconfigure >"$OUT" 2>"$ERR" || rc=$?
	[ "$rc" -ne 0 ] || { cat "$OUT" "$ERR"; fail "reconfigure accepted it"; }
	has "$ERR" "$RB:$1:$2: error: "
	for d in "$R/opt/gitlab/sv" "$R/var/opt/gitlab"; do
		[ ! -e "$d" ] || fail "reconfigure wrote $d: $(find "$d" | head)"
	done
}

# --- the four values of the report ----------------------------------------------------------
conf "postgresql['shared_buffers'] = \"128MB'\""
refused 3 32 "postgresql['shared_buffers']: not a number with an optional unit"
conf "redis['bind'] = '127.0.0.1 \"'"
refused 3 17 "redis['bind']: not a list of addresses"
conf "redis['maxmemory'] = '0 1'"
refused 3 22 "redis['maxmemory']: not a memory size"
conf "postgresql['listen_address'] = \"127.0.0.1' # rest\""
refused 3 32 "postgresql['listen_address']: not '*' or a comma-separated list"

# --- pg_ident.conf: no mapping of the exporter's account to a superuser or a pattern -------
for role in gitlab-psql postgres; do
	conf "postgresql['sql_user'] = '$role'"
	refused 3 26 "postgresql['sql_user'] = '$role' is refused: a superuser role"
done
conf "postgresql['username'] = 'git'"
refused 3 26 "postgresql['username'] = 'git' is refused: the exporter's account"
for role in all '+gitlab' '/^.*$' 'a b' 'gitlab,postgres' '"gitlab"'; do
	conf "postgresql['sql_user'] = '$role'"
	refused 3 26 "postgresql['sql_user']: "
done

# --- Redis: open to the network only with a password; never a world-usable socket ----------
conf "redis['bind'] = '0.0.0.0'"
refused 3 17 "redis['bind']: not a loopback address: set redis['password']"
conf "redis['port'] = 6379" "redis['bind'] = '127.0.0.1 10.1.2.3'"
refused 4 17 "redis['bind']: not a loopback address"
conf "redis['unixsocketperm'] = '777'"
refused 3 27 "redis['unixsocketperm']: grants every local account access"
conf "redis['maxmemory'] = '1GB'" "redis['tls_ciphers'] = 'HIGH\" x'" \
	"redis['dir'] = '$R/var/opt/gitlab/redis/a \"b'"
expect_rc 0 ctl check-config # quoted for redis.conf, not refused
conf "redis['maxmemory_policy'] = 'noeviction\" x'"
refused 3 29 "redis['maxmemory_policy'] = 'noeviction\" x' is not one of 'noeviction'"
conf "redis['rename_commands'] = { 'KEYS' => '', 'a\" b' => 'x' }"
refused 3 28 "redis['rename_commands']: a command name is letters, digits"

# --- what the formats can hold passes -----------------------------------------------------
conf "postgresql['shared_buffers'] = '256MB'" "postgresql['listen_address'] = '127.0.0.1, ::1'" \
	"redis['maxmemory'] = '100mb'" "redis['bind'] = '0.0.0.0 -::1'" "redis['password'] = 's3cret'" \
	"redis['unixsocketperm'] = '0700'" "postgresql['sql_user'] = 'gitlab_ro'"
expect_rc 0 ctl check-config
has "$OUT" "gitlab.rb OK"
echo "ok t_safety_formats"
