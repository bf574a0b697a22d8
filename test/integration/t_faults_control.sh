# Fault suite: SVWAIT is one deadline for the whole command, checks included (a
# check that hangs is killed at it), and a signal verb reports the pid running afterwards,
# saying when the signalled one died.
. "$SRCDIR/test/integration/lib.sh"

mksv() { # mksv NAME RUN-BODY
	mkdir -p "$SV_DIR/$1"
	printf '#!/bin/sh\nexec 2>&1\n%s\n' "$2" >"$SV_DIR/$1/run"
	chmod 755 "$SV_DIR/$1/run"
	ln -s "../sv/$1" "$SERVICE_DIR/$1"
}
mkdir -p "$SV_DIR" "$SERVICE_DIR"
mksv hang 'exec sleep 100000'
# its check hangs for ever, after saying where it runs (with a terminal title escape, which
# must reach the output as text: what a check says may quote the service)
printf '#!/bin/sh\necho $$ >>"%s"\nprintf "hang: not ready\\033]0;owned\\007\\n" >&2\nexec sleep 100000\n' \
	"$T_ROOT/check.pids" >"$SV_DIR/hang/check"
chmod 755 "$SV_DIR/hang/check"
mksv fragile 'exec sleep 100000'
mksv sturdy "trap '' USR1 HUP; while :; do sleep 1; done"
start_runsvdir "$SERVICE_DIR"
is_up() { [ "$(status_pid "$SV_DIR/$1/supervise/status")" != 0 ]; }
for s in hang fragile sturdy; do until_true 100 is_up $s || fail "runsvdir did not start $s"; done

# start_with SVWAIT: `start hang` in the background, polled for (generously) 60 s.
start_with() {
	SVWAIT=$1 "$GITLAB_CTL" --root "$T_ROOT" start hang >"$T_ROOT/out" 2>&1 &
	_c=$!
	track_pid "$_c"
	until_true 600 eval '! alive $_c' || fail "start at SVWAIT=$1 still waits on the hanging check after 60 s"
	wait "$_c" && fail "start at SVWAIT=$1 succeeded: $(cat "$T_ROOT/out")"
	grep -q '^timeout: run: hang: ' "$T_ROOT/out" || fail "SVWAIT=$1: no timeout line: $(cat "$T_ROOT/out")"
	note "SVWAIT=$1: $(tr '\n' ' ' <"$T_ROOT/out")"
}
start_with 0
start_with 2
grep -q 'hang: not ready' "$T_ROOT/out" || fail "the check's own message was not shown: $(cat "$T_ROOT/out")"
grep -qF 'hang: not ready\x1b]0;owned\x07' "$T_ROOT/out" ||
	fail "the check's escape sequence was not shown as text: $(od -c "$T_ROOT/out" | head -20)"
for p in $(cat "$T_ROOT/check.pids" 2>/dev/null); do
	track_pid "$p"
	wait_gone "$p" 50 || fail "the check (pid $p) still runs after start returned"
done

# --- signal verbs ------------------------------------------------------------------------------
sleep 1.1 # runsv restarts at once only a service that ran for a second
OLD=$(status_pid "$SV_DIR/fragile/supervise/status")
out=$(ctl usr1 fragile 2>&1) || true
note "usr1 fragile: $out"
printf '%s\n' "$out" | grep -q "(pid $OLD)" && fail "usr1 reported the dead pid $OLD: $out"
printf '%s\n' "$out" | grep -Eq "exited on SIGUSR1" || fail "usr1 did not say pid $OLD died: $out"
printf '%s\n' "$out" | grep -Eq "^(ok: run: fragile: \(pid [0-9]+\) 0s \(restarted: pid $OLD|fail: )" ||
	fail "usr1: unexpected report: $out"

S=$(status_pid "$SV_DIR/sturdy/supervise/status")
out=$(ctl hup sturdy 2>&1) || fail "hup sturdy failed: $out"
printf '%s\n' "$out" | grep -Eq "^ok: run: sturdy: \(pid $S\) [0-9]+s$" || fail "hup sturdy: $out"
