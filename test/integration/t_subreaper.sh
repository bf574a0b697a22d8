# gitlab-ctl subreaper (Patroni's command): COMMAND runs as its child; a process COMMAND detached
# (as Patroni detaches postmaster) is adopted by the subreaper and reaped when it dies, never
# left a zombie (Patroni takes a zombie postmaster for a running one and keeps the leader key);
# TERM, as runsv sends it, reaches COMMAND and the subreaper exits with COMMAND's status;
# SIGKILL of the subreaper takes COMMAND with it.
. "$SRCDIR/test/integration/lib.sh"

D=$T_ROOT/sr
mkdir -p "$D"
cat >"$D/cmd.sh" <<'EOF2'
trap 'echo term >"$1/term"; exit 3' TERM
sh -c 'sleep 300 & echo $! >"$1/orphan"' sh "$1"
echo $$ >"$1/cmd"
while :; do sleep 0.1; done
EOF2
ppid_of() { awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$1/stat" 2>/dev/null; }
start() {
	rm -f "$D/cmd" "$D/orphan" "$D/term"
	"$GITLAB_CTL" subreaper -- /bin/sh "$D/cmd.sh" "$D" &
	SR=$!
	track_pid "$SR"
	until_true 100 test -s "$D/cmd" || fail "COMMAND did not start"
	until_true 100 test -s "$D/orphan" || fail "COMMAND's detached child did not start"
	C=$(cat "$D/cmd") O=$(cat "$D/orphan")
	track_pid "$C"
	track_pid "$O"
	[ "$(ppid_of "$C")" = "$SR" ] || fail "COMMAND's parent is $(ppid_of "$C"), not the subreaper $SR"
}

start
[ "$(ppid_of "$O")" = "$SR" ] || fail "the detached child's parent is $(ppid_of "$O"), not the subreaper $SR"
kill -KILL "$O"
until_true 50 sh -c "! test -e /proc/$O" || fail "the detached child stays: $(cat "/proc/$O/stat")"
note "a detached child that died was reaped"
rc=0
kill -TERM "$SR"
wait "$SR" || rc=$?
[ "$rc" = 3 ] || fail "the subreaper exited $rc, not COMMAND's 3"
[ -s "$D/term" ] || fail "COMMAND did not get the TERM"
wait_gone "$C" 50 || fail "COMMAND still runs"

start
kill -KILL "$SR"
wait "$SR" 2>/dev/null || true
wait_gone "$C" 50 || fail "COMMAND outlived its subreaper's SIGKILL"
kill -KILL "$O"
echo ok
