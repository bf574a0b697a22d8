# What reconfigure finds in the way of the tree it writes: a file where a service directory
# goes, a directory where a service link goes (both refused before anything is written,
# naming the path), and a file where the link goes (replaced by the link). Also what only
# reconfigure can check in a catalog entry (a tcp check without a port, a relative
# `creates`, a relative template destination), an operator's own service left alone, and a
# disable that cannot unlink (service/ read-only in a private mount namespace).
. "$SRCDIR/test/integration/lib.sh"

light_catalog
test_service light
: >"$T_ROOT/etc/gitlab/gitlab.rb"
ENVDIR=$T_ROOT/opt/gitlab/etc/light/env

note "a file where sv/light goes: refused, named, nothing written"
mkdir -p "$SV_DIR"
echo keep >"$SV_DIR/light"
expect_rc 1 ctl reconfigure
has "$ERR" "cannot compare $SV_DIR/light: Not a directory"
[ "$(cat "$SV_DIR/light")" = keep ] || fail "the file was changed"
[ -e "$ENVDIR" ] && fail "the env directory was written anyway"
rm "$SV_DIR/light"

note "a directory where service/light goes: refused, named, nothing written"
mkdir -p "$SERVICE_DIR/light"
expect_rc 1 ctl reconfigure
has "$ERR" "cannot compare $SERVICE_DIR/light: Is a directory"
[ -d "$SERVICE_DIR/light" ] && [ ! -L "$SERVICE_DIR/light" ] || fail "the directory was replaced"
[ -e "$SV_DIR/light" ] && fail "sv/light was written anyway"
rmdir "$SERVICE_DIR/light"

note "a file where service/light goes: replaced by the link, the service runs"
echo stale >"$SERVICE_DIR/light"
expect_rc 0 ctl reconfigure
has "$OUT" "replace file $SERVICE_DIR/light with symlink"
[ "$(readlink "$SERVICE_DIR/light")" = "$SV_DIR/light" ] || fail "not the link: $(ls -l "$SERVICE_DIR")"
P=$(status_pid "$SV_DIR/light/supervise/status")
[ "$P" != 0 ] && alive "$P" || fail "light not running"
note "disable when service/ cannot be written (read-only in a private mount namespace): named, light left running"
echo "light['enable'] = false" >"$T_ROOT/etc/gitlab/gitlab.rb"
rc=0
unshare --mount sh -c 'mount --make-rprivate / && mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" &&
	shift && exec "$@"' sh "$SERVICE_DIR" "$GITLAB_CTL" --root "$T_ROOT" reconfigure >"$OUT" 2>"$ERR" || rc=$?
[ "$rc" = 1 ] || { cat "$OUT" "$ERR"; fail "reconfigure with a read-only service/: exit $rc"; }
has "$ERR" "cannot remove $SERVICE_DIR/light: Read-only file system"
[ -L "$SERVICE_DIR/light" ] || fail "the link is gone"
alive "$P" || fail "light stopped although its link stayed"
expect_rc 0 ctl reconfigure
has "$OUT" "disable light"
wait_gone "$P" 100 || fail "light still runs once disabled"
: >"$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 0 ctl reconfigure

note "-v: an operator's own service in service/ is left alone, and said so"
mkdir -p "$T_ROOT/own"
ln -s "$T_ROOT/own" "$SERVICE_DIR/own"
expect_rc 0 ctl -v reconfigure
has "$ERR" "leaving $SERVICE_DIR/own alone: not a catalog service"
[ -L "$SERVICE_DIR/own" ] || fail "the operator's link was removed"
rm "$SERVICE_DIR/own"

note "what only reconfigure can check in a catalog entry: each refused at its file, nothing written"
# bad.conf: light's settings, plus one defect per case
bad() {
	sed -e 's/"light"/"bad"/g; s|/light"|/bad"|g' "$DATA/sv/light.conf" >"$DATA/sv/bad.conf"
	echo "$1" >>"$DATA/sv/bad.conf"
	expect_rc 1 ctl reconfigure
	has "$ERR" "$DATA/sv/bad.conf"
	has "$ERR" "$2"
	[ -e "$SV_DIR/bad" ] && fail "sv/bad written for: $1"
	rm "$DATA/sv/bad.conf"
}
bad 'check = "tcp";' 'bad: check "tcp" needs a listen address and port'
bad 'setup = ( { name = "s"; when = "before_start"; creates = "relative"; command = [ "/bin/true" ]; } );' \
	"bad: setup step s: an unknown placeholder, or 'creates' is not an absolute path"
bad 'templates = ( { src = "light.yml"; dest = "relative.yml"; } );' \
	'template light.yml: destination "relative.yml" is not an absolute path'
echo "ok t_reconfigure_in_the_way"
