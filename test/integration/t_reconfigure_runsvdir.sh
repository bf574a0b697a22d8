# The runsvdir wrapper: one per root, found by its locked pidfile; a second one refuses;
# SIGUSR1 (the rescan nudge) does not hurt it; TERM stops every service and log and waits
# for them before it exits; reconfigure starts it again detached; a foreground
# `gitlab-ctl runsvdir` (as systemd runs it) is used by reconfigure, not duplicated.
. "$SRCDIR/test/integration/lib.sh"

PORT=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF2
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
$(only_services gitlab_exporter)
EOF2
SVC=$SV_DIR/gitlab-exporter
svpid() { status_pid "$SVC/supervise/status"; }
logpid() { status_pid "$SVC/log/supervise/status"; }
wrapper() { head -n1 "$PIDFILE"; }
# The exporter must be serving before a TERM (a TERM during its Ruby boot is lost).
answers() { sh "$SVC/check" 2>/dev/null; }
running() { [ "$(od -An -tu1 -j19 -N1 "$SVC/supervise/status" 2>/dev/null | tr -d ' ')" = 1 ]; }

out=$(ctl reconfigure) || fail "reconfigure failed: $out"
W=$(wrapper)
alive "$W" || fail "no runsvdir wrapper (pidfile says '$W')"
grep -q runsvdir "/proc/$W/cmdline" || fail "pidfile pid $W is not the wrapper"

# --- a second wrapper refuses ---------------------------------------------------------------
out=$(ctl runsvdir 2>&1) && fail "second runsvdir started: $out"
printf '%s\n' "$out" | grep -q "runsvdir already running for this root (pid $W)" || fail "message: $out"

# --- SIGUSR1 is the rescan nudge, never fatal: it reaches runsvdir as a NUL byte on its
# log pipe (seen by strace on runsvdir), and the wrapper is alive after handling it.
RSV=$(cat "/proc/$W/task/$W/children")
RSV=${RSV%% *}
grep -q '^runsvdir' "/proc/$RSV/cmdline" || fail "wrapper's child $RSV is not runsvdir"
strace -qq -e trace=read -s 8 -p "$RSV" -o "$T_ROOT/rsv.trace" 2>"$T_ROOT/strace.err" &
STRACE=$!
track_pid "$STRACE"
nudged() { kill -USR1 "$W" && grep -q 'read([0-9]*, "\\0"' "$T_ROOT/rsv.trace"; }
# Until strace is attached a nudge goes unseen: send one every 0.1 s until one is read.
until_true 100 nudged || fail "no nudge reached runsvdir: $(cat "$T_ROOT/rsv.trace" "$T_ROOT/strace.err")"
kill -TERM "$STRACE" 2>/dev/null || true
wait "$STRACE" 2>/dev/null || true
alive "$W" || fail "wrapper died on SIGUSR1"
alive "$RSV" || fail "runsvdir died on a nudge"
running || fail "service not running"

# --- TERM: services and logs stopped before the wrapper exits ------------------------------
until_true 150 answers || fail "exporter does not answer"
S=$(svpid)
L=$(logpid)
alive "$S" && alive "$L" || fail "service $S / log $L not alive"
kill -TERM "$W"
wait_gone "$W" 300 || fail "wrapper did not exit on TERM"
alive "$S" && fail "service $S still running after the wrapper exited"
alive "$L" && fail "svlogd $L still running after the wrapper exited"
[ -e "$PIDFILE" ] && fail "pidfile left behind"

# --- reconfigure starts it again, detached, and the service comes back -----------------
t0=$(date +%s%N)
out=$(ctl -v reconfigure 2>&1) || fail "reconfigure after stop failed: $out"
note "up again in $((($(date +%s%N) - t0) / 1000000)) ms: $(printf '%s\n' "$out" | grep -E 'supervised|mtime' | tr '\n' ' ')"
printf '%s\n' "$out" | grep -Eq '^0/[0-9]+ resources updated' || fail "tree changed: $out"
W2=$(wrapper)
[ "$W2" != "$W" ] && alive "$W2" || fail "no new wrapper"
running || fail "service not running after restart of runsvdir"

# --- a foreground wrapper (systemd style) is reused, not duplicated ---------------------
until_true 150 answers || fail "exporter does not answer"
kill -TERM "$W2"
wait_gone "$W2" 300 || fail "wrapper did not exit on TERM"
"$GITLAB_CTL" --root "$T_ROOT" runsvdir >"$T_ROOT/fg.log" 2>&1 &
FG=$!
track_pid "$FG"
until_true 50 test -s "$PIDFILE" || fail "foreground wrapper wrote no pidfile"
[ "$(wrapper)" = "$FG" ] || fail "pidfile holds $(wrapper), not $FG"
out=$(ctl reconfigure) || fail "reconfigure with a foreground runsvdir failed: $out"
[ "$(wrapper)" = "$FG" ] || fail "reconfigure replaced the foreground runsvdir"
running || fail "service not running under the foreground runsvdir"
until_true 150 answers || fail "exporter does not answer"
S=$(svpid)
[ "$S" != 0 ] || fail "no service pid"
kill -INT "$FG"
wait "$FG" || fail "foreground wrapper exit status $? on INT"
alive "$S" && fail "service $S still running after ^C on the foreground wrapper"
true
