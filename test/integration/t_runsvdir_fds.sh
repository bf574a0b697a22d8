# `gitlab-ctl runsvdir` started by hand or by an init system that leaks descriptors:
# nothing above stderr reaches runsvdir (and through it every runsv and svlogd).
. "$SRCDIR/test/integration/lib.sh"

mkdir -p "$SERVICE_DIR"
exec 7>"$T_ROOT/leaked"
"$GITLAB_CTL" --root "$T_ROOT" runsvdir >"$T_ROOT/fg.log" 2>&1 &
FG=$!
track_pid "$FG"
exec 7>&-
until_true 50 test -s "$PIDFILE" || fail "wrapper wrote no pidfile: $(cat "$T_ROOT/fg.log")"
children() { cat "/proc/$FG/task/$FG/children" 2>/dev/null; }
until_true 50 test -n "$(children)" || fail "wrapper started no runsvdir"
R=$(children | tr -s ' ' '\n' | head -n1)
grep -q runsvdir "/proc/$R/cmdline" || fail "child $R is not runsvdir"
# Control: the wrapper itself was handed fd 7.
[ -e "/proc/$FG/fd/7" ] || fail "control: fd 7 not inherited by the wrapper"
fds=$(ls "/proc/$R/fd" | grep -vx '[012]' | tr '\n' ' ')
for fd in $fds; do
	# runsvdir's own fds are its log pipe (and fds it made itself), never our file
	[ "$(readlink "/proc/$R/fd/$fd")" = "$T_ROOT/leaked" ] &&
		fail "fd $fd of the wrapper leaked into runsvdir"
done
kill -TERM "$FG"
wait "$FG" || fail "wrapper exit status $? on TERM"
alive "$R" && fail "runsvdir $R still running"
echo "ok t_runsvdir_fds"
