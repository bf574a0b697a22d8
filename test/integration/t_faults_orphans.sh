# Fault suite: the runsvdir wrapper is the subreaper of its tree.
#  - kill -9 of the exporter's runsv: the wrapper stops the orphaned exporter and svlogd
#    (TERM, logged), so the exporter runsvdir restarts gets the port and the log lock;
#  - a service that ignores TERM: when the wrapper stops, it is killed at the deadline
#    (SVWAIT), its svlogd too, and nothing of the tree is left;
#  - reconfigure during the wrapper's shutdown window waits for it to exit and starts a
#    new one instead of reporting success with nothing supervised.
# The catalog is a copy with one extra service whose command ignores TERM (/bin/sh: nothing
# it runs lives in the checkout).
. "$SRCDIR/test/integration/lib.sh"

DATA=$T_ROOT/data
mkdir -p "$DATA" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/sv" "$SRCDIR/templates" "$DATA/"
cp -R "$GITLAB_CTL_DATADIR/exporter" "$DATA/" # the installed copy: the checkout may be 0700
test_service stubborn cmd="trap '' TERM; echo stubborn up; while :; do sleep 1; done"
export GITLAB_CTL_DATADIR=$DATA
PORT=$(free_port)
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF2
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
$(only_services gitlab_exporter stubborn)
EOF2
# The wrapper's stop deadline is the SVWAIT it was started with.
export SVWAIT=4
LOG=$T_ROOT/opt/gitlab/var/runsvdir.log
EXP=$SV_DIR/gitlab-exporter
STB=$SV_DIR/stubborn

out=$(ctl reconfigure 2>&1) || fail "reconfigure failed: $out"
ppid_of() { awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$1/stat"; }

# --- kill -9 of a runsv ----------------------------------------------------------------------
E=$(status_pid "$EXP/supervise/status")
EL=$(status_pid "$EXP/log/supervise/status")
RSV=$(ppid_of "$E")
[ "$(ppid_of "$EL")" = "$RSV" ] || fail "exporter $E and its svlogd $EL have different parents"
track_pid "$E"
track_pid "$EL"
kill -KILL "$RSV"
until_true 300 eval '! alive $E && ! alive $EL' ||
	fail "orphans of the killed runsv $RSV still run: exporter $E $(alive $E && echo alive), svlogd $EL $(alive $EL && echo alive)"
grep -q "stopping pid $E " "$LOG" || fail "the wrapper did not log what it stopped: $(cat "$LOG")"
new_exporter_ok() {
	_p=$(status_pid "$EXP/supervise/status")
	[ "$_p" != 0 ] && [ "$_p" != "$E" ] && ctl inspect gitlab-exporter >/dev/null 2>&1
}
until_true 300 new_exporter_ok || fail "the restarted exporter is not healthy: $(ctl inspect gitlab-exporter 2>&1)"
note "killed runsv $RSV: orphans $E and $EL stopped, new exporter $(status_pid "$EXP/supervise/status") healthy"

# --- reconfigure during the shutdown window --------------------------------------------------
W=$(head -n 1 "$PIDFILE")
S=$(status_pid "$STB/supervise/status")
SL=$(status_pid "$STB/log/supervise/status")
[ "$S" != 0 ] || fail "stubborn does not run"
track_pid "$S"
track_pid "$SL"
kill -TERM "$W"
# The stubborn service keeps the wrapper in its shutdown window for SVWAIT (4 s).
until_true 50 grep -q stopping "$PIDFILE" || note "no stopping mark in the pidfile"
alive "$W" || fail "the wrapper $W exited at once: no shutdown window to test"
out=$(ctl reconfigure 2>&1) || fail "reconfigure during the shutdown window failed: $out"
# (it released its lock as its last act: give it a moment to be gone, and reaped)
wait_gone "$W" 50 || fail "reconfigure returned while the old wrapper $W still runs: $out"
W2=$(head -n 1 "$PIDFILE")
[ -n "$W2" ] && [ "$W2" != "$W" ] && alive "$W2" || fail "no new wrapper after the old one stopped: $out"
alive "$S" && fail "the TERM-ignoring service $S survived its wrapper"
alive "$SL" && fail "the stubborn svlogd $SL survived its wrapper"
grep -q "killing pid $S " "$LOG" || fail "the wrapper did not log the kill of $S: $(cat "$LOG")"
S2=$(status_pid "$STB/supervise/status")
[ "$S2" != 0 ] && [ "$S2" != "$S" ] || fail "stubborn not running again under the new wrapper"
note "reconfigure waited for wrapper $W, started $W2; stubborn $S killed, now $S2"

# --- start during the shutdown window: the same ------------------------------------------------
kill -TERM "$W2"
until_true 50 grep -q stopping "$PIDFILE" || note "no stopping mark in the pidfile"
alive "$W2" || fail "the wrapper $W2 exited at once: no shutdown window to test"
out=$(ctl start 2>&1) || fail "start during the shutdown window failed: $out"
wait_gone "$W2" 50 || fail "start returned while the old wrapper $W2 still runs: $out"
W3=$(head -n 1 "$PIDFILE")
[ -n "$W3" ] && [ "$W3" != "$W2" ] && alive "$W3" || fail "no new wrapper after start: $out"
printf '%s\n' "$out" | grep -q '^ok: run: stubborn: ' || fail "start did not bring stubborn up: $out"
alive "$S2" && fail "the TERM-ignoring service $S2 survived its wrapper"
S2=$(status_pid "$STB/supervise/status")
note "start waited for wrapper $W2, started $W3"
W2=$W3

# --- the wrapper stops: nothing of its tree is left --------------------------------------------
E2=$(status_pid "$EXP/supervise/status")
EL2=$(status_pid "$EXP/log/supervise/status")
SL2=$(status_pid "$STB/log/supervise/status")
for p in $E2 $EL2 $S2 $SL2; do track_pid "$p"; done
kill -TERM "$W2"
wait_gone "$W2" 300 || fail "the wrapper $W2 did not exit within 30 s"
for p in $E2 $EL2 $S2 $SL2; do
	alive "$p" && fail "pid $p ($(tr '\0' ' ' </proc/$p/cmdline)) outlived the wrapper"
done
note "wrapper $W2 stopped; exporter, stubborn and their svlogd gone"
