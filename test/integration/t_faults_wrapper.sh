# Fault suite: kill -9 of the `gitlab-ctl runsvdir` wrapper itself. Nothing can
# clean up after a SIGKILL, so runsvdir is started with a parent-death signal
# (HUP: runsvdir TERMs every runsv and exits): the whole tree goes down instead
# of running on unsupervised, holding the supervise locks a new wrapper's runsv
# would need. The next start brings up a fresh tree.
. "$SRCDIR/test/integration/lib.sh"

DATA=$T_ROOT/data
mkdir -p "$DATA" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/sv" "$SRCDIR/templates" "$DATA/"
export GITLAB_CTL_DATADIR=$DATA
test_service sleeper cmd='echo sleeper up; exec sleep 100000'
only_services sleeper >"$T_ROOT/etc/gitlab/gitlab.rb"

out=$(ctl reconfigure 2>&1) || fail "reconfigure failed: $out"
ppid_of() { awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$1/stat"; }
SVC=$SV_DIR/sleeper
until_true 300 eval '[ "$(status_pid "$SVC/supervise/status")" != 0 ]' || fail "sleeper never ran"
S=$(status_pid "$SVC/supervise/status")
SL=$(status_pid "$SVC/log/supervise/status")
RSV=$(ppid_of "$S")
R=$(ppid_of "$RSV")
W=$(head -n 1 "$PIDFILE")
[ "$(ppid_of "$R")" = "$W" ] || fail "runsvdir $R is not the wrapper $W's child"
for p in $S $SL $RSV $R; do track_pid "$p"; done

kill -KILL "$W"
until_true 300 eval '! alive $S && ! alive $SL && ! alive $RSV && ! alive $R' ||
	fail "after kill -9 of the wrapper $W, still running:$(for p in $S $SL $RSV $R; do alive $p && printf ' %s' $p; done)"
note "kill -9 of wrapper $W took down runsvdir $R, runsv $RSV, sleeper $S and its svlogd $SL"

out=$(ctl start 2>&1) || fail "start after the wrapper's death failed: $out"
W2=$(head -n 1 "$PIDFILE")
[ -n "$W2" ] && [ "$W2" != "$W" ] && alive "$W2" || fail "no new wrapper: $out"
until_true 300 eval 'p=$(status_pid "$SVC/supervise/status"); [ "$p" != 0 ] && [ "$p" != "$S" ] && alive $p' ||
	fail "sleeper did not come back under the new wrapper $W2: $(ctl status 2>&1)"
ctl status sleeper | grep -q '^run: sleeper' || fail "status: $(ctl status sleeper 2>&1)"
note "a new wrapper $W2 supervises a new sleeper $(status_pid "$SVC/supervise/status")"
