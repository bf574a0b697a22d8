# The static PIE build (GITLAB_CTL_LINK=static), built from this checkout and installed into
# a fresh root: ld.so loads nothing (no interpreter, no shared library), account and host
# lookups never load an NSS module even where nsswitch.conf names one, and it does what the
# shared build does: reconfigure creates the exporter's account and starts it with jemalloc,
# status, inspect and exec as that account, stop.
. "$SRCDIR/test/integration/lib.sh"

command -v strace >/dev/null || fail "strace is needed"
SB=$T_ROOT/build-static
note "configure and build GITLAB_CTL_LINK=static"
cmake -S "$SRCDIR" -B "$SB" -DGITLAB_CTL_LINK=static -DBUILD_TESTING=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$T_ROOT/static-build.log" 2>&1 &&
	cmake --build "$SB" --target gitlab-ctl -j2 >>"$T_ROOT/static-build.log" 2>&1 ||
	{ tail -30 "$T_ROOT/static-build.log" >&2; fail "static build"; }

# lib.sh installed the default build's tree; the static binary takes its place.
install -m 755 "$SB/gitlab-ctl" "$GITLAB_CTL"

note "nothing for ld.so: no interpreter, no NEEDED, position-independent"
readelf -lW "$GITLAB_CTL" >"$T_ROOT/phdrs"
grep -q INTERP "$T_ROOT/phdrs" && fail "static build has an interpreter: $(grep -A1 INTERP "$T_ROOT/phdrs")"
readelf -dW "$GITLAB_CTL" >"$T_ROOT/dyn"
grep -q NEEDED "$T_ROOT/dyn" && fail "static build needs shared libraries: $(grep NEEDED "$T_ROOT/dyn")"
readelf -hW "$GITLAB_CTL" | grep -q 'Type: *DYN' || fail "static build is not a PIE: $(readelf -hW "$GITLAB_CTL")"

PORT=$(free_port)
STATUS=$SV_DIR/gitlab-exporter/supervise/status
RUN_AS=gitlabctl-static # created by reconfigure when missing
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF
gitlab_exporter['enable'] = true
gitlab_exporter['listen_address'] = 'localhost'
gitlab_exporter['listen_port'] = $PORT
user['username'] = '$RUN_AS'
user['group'] = '$RUN_AS'
$(only_services gitlab_exporter)
EOF

# Lookups of an account that does not exist yet fall through every source nsswitch.conf
# names: in a private mount namespace, one that names a module after the files, as Debian's
# does (libnss-systemd). A static glibc that followed it would open libnss_systemd.so.2
# (and the host's libc.so.6 with it).
printf 'passwd: files systemd\ngroup: files systemd\nhosts: files mdns4_minimal dns\n' \
	>"$T_ROOT/nsswitch.conf"
# Where no mount namespace can be made, the host's own nsswitch.conf (Debian's names systemd).
private_nss() { unshare -m sh -c 'mount --bind "$1" /etc/nsswitch.conf && shift && exec "$@"' sh \
	"$T_ROOT/nsswitch.conf" "$@"; }
if ! private_nss true 2>/dev/null; then
	note "no private mount namespace here: tracing under the host's nsswitch.conf"
	private_nss() { "$@"; }
fi
note "reconfigure, traced: no NSS module, no shared library opened"
private_nss strace -qq -e trace=openat -o "$T_ROOT/trace" \
	"$GITLAB_CTL" --root "$T_ROOT" reconfigure >"$T_ROOT/out" 2>&1 ||
	{ cat "$T_ROOT/out" >&2; fail "reconfigure failed"; }
grep -q 'nsswitch.conf' "$T_ROOT/trace" || fail "the trace saw no lookup: $(cat "$T_ROOT/trace")"
grep -E '\.so[."]' "$T_ROOT/trace" && fail "the static build opened a shared object (above)"
id -u "$RUN_AS" >/dev/null 2>&1 || fail "reconfigure did not create $RUN_AS"

note "status, inspect, exec as the account, jemalloc in the exporter"
ctl status gitlab-exporter >"$T_ROOT/status" || fail "status: $(cat "$T_ROOT/status")"
grep -q '^run: gitlab-exporter: (pid [0-9]*)' "$T_ROOT/status" || fail "not running: $(cat "$T_ROOT/status")"
PID=$(status_pid "$STATUS")
grep -q 'libjemalloc\.so' "/proc/$PID/maps" || fail "libjemalloc.so not mapped in $PID"
ctl inspect gitlab-exporter >"$T_ROOT/inspect" 2>&1 || fail "inspect: $(cat "$T_ROOT/inspect")"
has "$T_ROOT/inspect" "$RUN_AS"
uid=$(id -u "$RUN_AS")
[ "$(ctl exec gitlab-exporter -- /usr/bin/id -u)" = "$uid" ] || fail "exec did not run as $RUN_AS ($uid)"
[ "$(ctl exec gitlab-exporter -- /usr/bin/id -G)" = "$(id -G "$RUN_AS")" ] ||
	fail "exec's groups: $(ctl exec gitlab-exporter -- /usr/bin/id -G), want $(id -G "$RUN_AS")"

note "stop"
ctl stop gitlab-exporter >"$T_ROOT/out" 2>&1 || fail "stop: $(cat "$T_ROOT/out")"
ctl status gitlab-exporter | grep -q '^down: gitlab-exporter' || fail "not down: $(ctl status gitlab-exporter)"
echo "ok t_static_build"
