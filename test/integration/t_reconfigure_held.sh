#!/bin/sh
# A first run links what waits (a service with a one-time step, and its dependents) at once,
# under a `down` file of reconfigure's own, so that runsvdir supervises everything at its
# first look; each is started by `u` when its turn comes. What it leaves is never a service
# kept down for good: a run killed while the step runs, or one whose step fails, leaves the
# start recorded (pending "start"), and the next run removes the down file and starts it.
# Light catalog: alpha has a before_start step, beta is after alpha.
. "$SRCDIR/test/integration/lib.sh"

light_catalog
# alpha's step takes half a second while {{home}}/pause exists, never ends while slow does,
# and fails while alpha['step_ok'] is false.
test_service alpha settings='
  { name = "step_ok"; type = "bool"; default = true; },' extra='setup = (
  { name = "mkmade"; when = "before_start"; creates = "{{home}}/made"; timeout = 60;
    command = [ "/bin/sh", "-c", "[ ! -e {{home}}/slow ] || exec sleep 60; [ ! -e {{home}}/pause ] || sleep 0.5; /bin/{{step_ok}} && touch {{home}}/made" ]; }
);'
test_service beta extra='after = [ "alpha" ];'
test_service solo
RB=$T_ROOT/etc/gitlab/gitlab.rb
: >"$RB"
HOME_A=$T_ROOT/var/opt/gitlab/alpha
PENDING=$T_ROOT/opt/gitlab/var/pending
pid_of() { status_pid "$SV_DIR/$1/supervise/status"; }
# converged: every service runs, no down file and no pending record is left.
converged() {
	for _s in alpha beta solo; do
		[ "$(pid_of "$_s")" != 0 ] || { cat "$OUT" "$ERR" >&2; fail "$1: $_s does not run"; }
		[ ! -e "$SV_DIR/$_s/down" ] || fail "$1: $_s keeps a down file"
	done
	[ -z "$(ls "$PENDING")" ] || fail "$1: pending work left: $(ls "$PENDING")"
}

note "first run: all supervised at runsvdir's first look, alpha and beta started by u"
mkdir -p "$HOME_A"
: >"$HOME_A/pause" # the step takes half a second
expect_rc 0 ctl reconfigure
converged "first run"
started() { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat"; } # clock ticks after boot
# beta's log (never held) runs from its runsv's start: before alpha's step ended, not after.
[ "$(started "$(status_pid "$SV_DIR/beta/log/supervise/status")")" -lt "$(started "$(pid_of alpha)")" ] ||
	fail "beta was supervised only after alpha started"
rm "$HOME_A/pause"

note "a first run killed while alpha's step runs: the next run starts both"
expect_rc 0 ctl cleanse --yes
[ ! -e "$SV_DIR/alpha" ] || fail "cleanse left alpha's service directory"
mkdir -p "$HOME_A"
: >"$HOME_A/slow"
"$GITLAB_CTL" --root "$T_ROOT" reconfigure >"$OUT" 2>"$ERR" </dev/null &
RC=$!
track_pid "$RC"
until_true 300 grep -q "^run alpha setup mkmade" "$OUT" || { cat "$OUT" "$ERR" >&2; fail "the step did not start"; }
[ -e "$SV_DIR/alpha/down" ] && [ -e "$SV_DIR/beta/down" ] || fail "alpha and beta are not held"
grep -qx start "$PENDING/beta" || fail "beta's start is not recorded: $(cat "$PENDING/beta" 2>&1)"
kill -KILL "$RC"
wait_gone "$RC" 50 || fail "reconfigure did not die"
# The step's sleep outlives it (its own session): stop it by pid, found by this root's path.
for p in $(ps -eo pid=,args= | awk -v h="$HOME_A/slow" 'index($0, h) { print $1 }'); do
	track_pid "$p"
	kill -TERM "$p" 2>/dev/null || true
done
rm -f "$HOME_A/slow"
expect_rc 3 ctl status beta
has "$OUT" "down: beta"
expect_rc 0 ctl reconfigure
has "$OUT" "beta: an earlier run left a"
converged "after the killed run"

note "a failing step: alpha and beta stay held, recorded; fixed, the next run starts them"
expect_rc 0 ctl cleanse --yes
echo "alpha['step_ok'] = false" >"$RB"
expect_rc 1 ctl reconfigure
has "$ERR" "alpha: setup step mkmade"
[ "$(pid_of solo)" != 0 ] || fail "solo, which needs nothing, does not run"
for s in alpha beta; do
	[ "$(pid_of "$s")" = 0 ] || fail "$s runs though alpha's step failed"
	[ -e "$SV_DIR/$s/down" ] || fail "$s is not held down"
done
: >"$RB"
expect_rc 0 ctl reconfigure
converged "after the fix"
echo "ok: held services are started by u, and a run that cannot start them leaves the start owed"
