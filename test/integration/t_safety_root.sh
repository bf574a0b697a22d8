#!/bin/sh
# --root holds for every path setting: Omnibus' absolute paths pasted into gitlab.rb
# (postgresql['data_dir'], redis['dir'], redis['unixsocket'], ...) are taken inside the root.
# check-config says where each one resolves, the dry run plans initdb inside the root, and a
# real reconfigure creates nothing outside it. The absolute paths name a directory unique to
# this test that must never appear on the host.
. "$SRCDIR/test/integration/lib.sh"

U=/var/opt/gitlab-ctl-test-$(basename "$T_ROOT")
[ ! -e "$U" ] || fail "$U exists before the test"
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$RB" <<EOF
postgresql['enable'] = true
postgresql['home'] = '$U/postgresql'
postgresql['data_dir'] = '$U/postgresql/data'
postgresql['unix_socket_directory'] = '$U/postgresql'
postgresql['bin_dir'] = '/usr/lib/postgresql/15/bin'
redis['enable'] = true
redis['home'] = '$U/redis'
redis['dir'] = '$U/redis'
redis['unixsocket'] = '$U/redis/redis.socket'
$(exporter_ports)
gitlab_exporter['enable'] = false
$(only_services postgresql redis postgres_exporter redis_exporter)
EOF
chmod 600 "$RB"
# outside FILE: a mention of $U that is not below the root.
outside() { sed "s|$T_ROOT$U||g" "$1" | grep -F "$U"; }

# --- check-config: each path's resolution ------------------------------------------------
ctl check-config >"$T_ROOT/out" 2>&1 || fail "check-config: $(cat "$T_ROOT/out")"
for p in "postgresql['data_dir'] is $T_ROOT$U/postgresql/data" \
	"postgresql['unix_socket_directory'] is $T_ROOT$U/postgresql" \
	"redis['dir'] is $T_ROOT$U/redis" "redis['unixsocket'] is $T_ROOT$U/redis/redis.socket"; do
	grep -qF "$p (inside --root)" "$T_ROOT/out" || fail "check-config does not say $p: $(cat "$T_ROOT/out")"
done
grep -qF "postgresql['bin_dir'] is /usr/lib/postgresql/15/bin (a host path, used as written)" \
	"$T_ROOT/out" || fail "bin_dir: $(cat "$T_ROOT/out")"
! outside "$T_ROOT/out" >/dev/null || fail "check-config names a path outside the root: $(outside "$T_ROOT/out")"

# --- the dry run plans everything inside the root -----------------------------------------
ctl reconfigure --dry-run --diff >"$T_ROOT/out" 2>&1 || fail "dry run: $(cat "$T_ROOT/out")"
grep -qF "run postgresql setup initdb ($T_ROOT$U/postgresql/data" "$T_ROOT/out" ||
	fail "initdb not planned inside the root: $(grep initdb "$T_ROOT/out")"
! outside "$T_ROOT/out" >/dev/null || fail "the plan reaches outside the root: $(outside "$T_ROOT/out")"
ctl show-config >"$T_ROOT/out" 2>&1 || fail "show-config"
! outside "$T_ROOT/out" >/dev/null || fail "show-config: $(outside "$T_ROOT/out")"
[ ! -e "$U" ] || fail "a dry run created $U"

# --- a real run (Redis: quick to start) creates nothing outside the root -------------------
sed -i "s/^postgresql\['enable'\] = true/postgresql['enable'] = false/" "$RB"
ctl reconfigure >"$T_ROOT/out" 2>&1 || fail "reconfigure: $(cat "$T_ROOT/out")"
[ -S "$T_ROOT$U/redis/redis.socket" ] || fail "no Redis socket inside the root: $(cat "$T_ROOT/out")"
grep -qxF "dir \"$T_ROOT$U/redis\"" "$SV_DIR/redis/redis.conf" || fail "redis.conf: $(cat "$SV_DIR/redis/redis.conf")"
[ ! -e "$U" ] || fail "reconfigure created $U on the host"
exit 0
