#!/bin/sh
# A non-root user controlling root's tree (`gitlab-ctl restart redis` as nobody) fails at
# once, naming the reason (supervise/ is root's; run as root), instead of waiting SVWAIT for a
# runsv it cannot talk to; the service is left running, untouched.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "no setpriv"; exit 77; }
OUT=$T_ROOT/out ERR=$T_ROOT/err
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF
$(only_services redis)
redis['enable'] = true
EOF
chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 0 ctl reconfigure
P0=$(status_pid "$SV_DIR/redis/supervise/status")
alive "$P0" || fail "redis is not running"
# the installed copy must be reachable by nobody
chmod 755 "$T_ROOT/usr" "$T_ROOT/usr/bin" 2>/dev/null || true

_t0=$(date +%s)
_rc=0
SVWAIT=30 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$GITLAB_CTL" --root "$T_ROOT" restart redis >"$OUT" 2>"$ERR" </dev/null || _rc=$?
_took=$(($(date +%s) - _t0))
cat "$OUT" "$ERR" >"$T_ROOT/all"
[ "$_rc" -ne 0 ] || fail "a non-root restart of root's tree exited 0"
[ "$_took" -le 5 ] || fail "a non-root restart took ${_took}s (it must fail at once): $(cat "$T_ROOT/all")"
has "$T_ROOT/all" "redis"
has "$T_ROOT/all" "run gitlab-ctl as root"
note "failed in ${_took}s: $(head -n 2 "$T_ROOT/all" | tr '\n' ' ')"
[ "$(status_pid "$SV_DIR/redis/supervise/status")" = "$P0" ] || fail "redis was restarted"
