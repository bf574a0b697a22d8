# The runsvdir wrapper when runsvdir itself dies (kill -9 of runsvdir, not of the wrapper):
# the wrapper stops every service it supervised, logs the signal, releases its pidfile and
# exits 128+9; the next reconfigure starts a new wrapper and the service comes back.
# A light catalog (sh sleeping), so that nothing but the wrapper's own work is measured.
. "$SRCDIR/test/integration/lib.sh"

DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/templates" "$DATA/"
test_service light
export GITLAB_CTL_DATADIR=$DATA
: >"$T_ROOT/etc/gitlab/gitlab.rb"
SVC=$SV_DIR/light
LOG=$T_ROOT/opt/gitlab/var/runsvdir.log

out=$(ctl reconfigure 2>&1) || fail "reconfigure: $out"
W=$(head -n1 "$PIDFILE")
alive "$W" || fail "no wrapper"
RSV=$(cat "/proc/$W/task/$W/children")
RSV=${RSV%% *}
grep -q '^runsvdir' "/proc/$RSV/cmdline" || fail "wrapper's child $RSV is not runsvdir"
P=$(status_pid "$SVC/supervise/status")
L=$(status_pid "$SVC/log/supervise/status")
alive "$P" && alive "$L" || fail "light $P / its svlogd $L not running"

note "kill -9 of runsvdir: the wrapper stops the services, says why, and exits"
kill -KILL "$RSV"
wait_gone "$W" 300 || fail "wrapper $W still runs after its runsvdir died"
alive "$P" && fail "light $P outlived its wrapper"
alive "$L" && fail "svlogd $L outlived its wrapper"
grep -q 'runsvdir killed by signal 9' "$LOG" || fail "wrapper log: $(cat "$LOG")"
[ -s "$PIDFILE" ] && fail "pidfile left: $(cat "$PIDFILE")"
out=$(ctl status light 2>&1) && fail "status says light runs: $out"
out=$(ctl inspect light 2>&1) && fail "inspect says light runs: $out"
printf '%s\n' "$out" | grep -q "fail: light: runsv not running" || fail "inspect said: $out"

note "the next reconfigure starts a new wrapper; light runs again"
out=$(ctl reconfigure 2>&1) || fail "reconfigure after: $out"
W2=$(head -n1 "$PIDFILE")
[ "$W2" != "$W" ] && alive "$W2" || fail "no new wrapper ($W -> $W2)"
P2=$(status_pid "$SVC/supervise/status")
[ "$P2" != 0 ] && [ "$P2" != "$P" ] && alive "$P2" || fail "light not started again ($P -> $P2)"
echo "ok t_runsvdir_dies"
