#!/bin/sh
# pgbouncer_role's files, without starting anything: every value through its file's quoting
# (pgbouncer.ini's plain values, [databases] connection strings, userlist.txt) or refused at
# its gitlab.rb line; auth_type trust refused; the passwords (databases, users: secrets)
# never shown by check-config, show-config or reconfigure --dry-run --diff.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out ERR=$T_ROOT/err
mkdir -p "$T_ROOT/etc/gitlab"
rb() {
	{ echo "roles(['pgbouncer_role'])"; cat; } >"$T_ROOT/etc/gitlab/gitlab.rb"
	chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
}
refused() { # refused LINE:COL WORDS: check-config exits 1 with WORDS at gitlab.rb:LINE:COL
	expect_rc 1 ctl check-config
	has "$ERR" "gitlab.rb:$1: error: "
	has "$ERR" "$2"
}
note "trust, and values a file cannot hold, are refused at their line"
echo "pgbouncer['auth_type'] = 'trust'" | rb
refused 2:26 "is not one of 'md5', 'scram-sha-256'"
echo "pgbouncer['listen_addr'] = '0.0.0.0 ; x'" | rb
refused 2:28 "pgbouncer.ini takes"
echo "pgbouncer['databases'] = { 'gitlab db' => { 'host' => 'h' } }" | rb
refused 2:26 "a database name is"
printf "pgbouncer['databases'] = { 'd' => { 'host' => \"h\\\\nx = host=evil\" } }\n" | rb
refused 2:26 "one line of text"
echo "pgbouncer['databases'] = { 'd' => { 'host' => 'h', 'hots' => 'x' } }" | rb
refused 2:26 "a key PgBouncer's [databases] does not take"
echo "pgbouncer['users'] = { 'x\"y' => { 'password' => 'p' } }" | rb
refused 2:22 "a user name is"

note "the rendered files: quoted values, 0640 root's, no password shown"
rb <<'EOF2'
pgbouncer['databases'] = { 'gitlabhq_production' => { 'host' => '10.0.0.11', 'port' => 5432,
                             'user' => 'gitlab', 'password' => "pgb-Se'cret-1" } }
pgbouncer['users'] = { 'gitlab' => { 'password' => '0123456789abcdef0123456789abcdef' } }
pgbouncer['admin_users'] = %w(pgbouncer gitlab-consul)
EOF2
expect_rc 0 ctl check-config
expect_rc 0 ctl show-config pgbouncer
lacks "$OUT" "pgb-Se"
lacks "$OUT" "0123456789abcdef"
expect_rc 0 ctl reconfigure --dry-run --diff
lacks "$OUT" "pgb-Se"
lacks "$OUT" "0123456789abcdef"
has "$OUT" "service/pgbouncer"
echo ok
