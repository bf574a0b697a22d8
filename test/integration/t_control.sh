# Service control over runit's protocol: `gitlab-ctl status` against runit's own
# `sv status` in every state (the text after the name must match), status exit
# codes, start/stop/restart waiting with ok:/timeout:, check scripts, signals,
# graceful-kill, unknown services, service-list and tail.
. "$SRCDIR/test/integration/lib.sh"

# mksv NAME RUN-BODY [nolog]: a hand-made service under $SV_DIR, enabled by symlink.
mksv() {
	_d=$SV_DIR/$1
	mkdir -p "$_d" "$T_ROOT/var/log/gitlab/$1"
	printf '#!/bin/sh\nexec 2>&1\n%s\n' "$2" >"$_d/run"
	chmod 755 "$_d/run"
	if [ "${3:-}" != nolog ]; then
		mkdir -p "$_d/log"
		printf '#!/bin/sh\nexec svlogd -tt %s\n' "$T_ROOT/var/log/gitlab/$1" >"$_d/log/run"
		chmod 755 "$_d/log/run"
	fi
}
enable() { ln -s "../sv/$1" "$SERVICE_DIR/$1"; }

mkdir -p "$SV_DIR" "$SERVICE_DIR"
mksv alpha 'echo "hello from alpha"; exec sleep 100000'
mksv beta 'exec sleep 100000'
touch "$SV_DIR/beta/down"
mksv stubborn "trap '' TERM; while :; do sleep 1; done" nolog
mksv checked 'exec sleep 100000' nolog
printf '#!/bin/sh\ntest -e "%s"\n' "$T_ROOT/ready" >"$SV_DIR/checked/check"
chmod 755 "$SV_DIR/checked/check"
# its own process group (like chpst -P), with a child that outlives a SIGKILL of the leader
mksv grouped "exec setsid sh -c 'sleep 100000 & echo \$! >$T_ROOT/grouped.child; trap \"\" TERM; wait'" nolog
for s in alpha beta stubborn checked grouped; do enable $s; done
start_runsvdir "$SERVICE_DIR"

svstat() { SVDIR=$SERVICE_DIR sv status "$1" 2>&1 || true; }
pid_of() { status_pid "$SV_DIR/$1/supervise/status"; }
is_up() { [ "$(pid_of "$1")" != 0 ] && [ -p "$SV_DIR/$1/supervise/ok" ]; }
until_true 100 is_up alpha || fail "runsvdir did not start alpha"
until_true 100 is_up stubborn || fail "runsvdir did not start stubborn"
until_true 100 is_up checked || fail "runsvdir did not start checked"
until_true 100 is_up alpha/log || fail "alpha's log did not start"
until_true 100 is_up beta/log || fail "beta's log did not start"

# same_as_sv SVC [EXPECTED-RC]: our status line equals sv's (taken in the same second) and rc.
same_as_sv() {
	for _try in 1 2 3; do
		_ours=$(ctl status "$1") && _rc=0 || _rc=$?
		_theirs=$(svstat "$1")
		[ "$_ours" = "$_theirs" ] && break
		sleep 0.2
	done
	[ "$_ours" = "$_theirs" ] || fail "status $1: ours '$_ours', sv '$_theirs'"
	if [ -n "${2:-}" ] && [ "$_rc" != "$2" ]; then
		fail "status $1: exit $_rc, want $2 ('$_ours')"
	fi
	note "$_ours (exit $_rc)"
}
expect_out() { # expect_out REGEX TEXT
	printf '%s\n' "$2" | grep -Eq "$1" || fail "expected /$1/ in: $2"
}

# --- states, compared with sv ------------------------------------------------------------
same_as_sv alpha 0
same_as_sv stubborn 0
same_as_sv beta 3 # a down file: down, no "normally up"; the running log does not mask it
expect_out '^down: beta: [0-9]+s; run: log: \(pid [0-9]+\) [0-9]+s$' "$(ctl status beta || true)"

out=$(ctl stop alpha) || fail "stop alpha failed: $out"
expect_out '^ok: down: alpha: [0-9]+s, normally up$' "$out"
same_as_sv alpha 3

out=$(ctl start alpha) || fail "start alpha failed: $out"
expect_out '^ok: run: alpha: \(pid [0-9]+\) [0-9]+s$' "$out"
same_as_sv alpha 0

SVDIR=$SERVICE_DIR sv pause alpha >/dev/null
# sv writes the control byte and returns; runsv records "paused" a moment later.
sv_paused() { SVDIR=$SERVICE_DIR sv status alpha | grep -q ', paused;'; }
until_true 50 sv_paused || fail "runsv never recorded the pause"
same_as_sv alpha 0
expect_out ', paused;' "$(ctl status alpha)"
SVDIR=$SERVICE_DIR sv cont alpha >/dev/null
sv_running() { ! sv_paused; }
until_true 50 sv_running || fail "runsv never recorded the cont"

out=$(ctl once alpha) || fail "once alpha failed: $out"
expect_out '^ok: run: alpha: .*, want down$' "$out"
same_as_sv alpha 0
ctl start alpha >/dev/null || fail "start after once"

# the log service down spoils an otherwise running service
SVDIR=$SERVICE_DIR sv down alpha/log >/dev/null
until_true 50 sh -c "[ \"\$(od -An -tu1 -j19 -N1 '$SV_DIR/alpha/log/supervise/status' | tr -d ' ')\" = 0 ]" ||
	fail "alpha/log did not stop"
same_as_sv alpha 3
expect_out '^run: alpha: .*; down: log: [0-9]+s, normally up$' "$(ctl status alpha || true)"
SVDIR=$SERVICE_DIR sv up alpha/log >/dev/null

# a service ignoring TERM: stop times out with "want down, got TERM"
out=$(SVWAIT=1 ctl stop stubborn) && fail "stop stubborn should time out: $out"
expect_out '^timeout: run: stubborn: \(pid [0-9]+\) [0-9]+s, want down, got TERM$' "$out"
same_as_sv stubborn 0
old=$(pid_of stubborn)
out=$(ctl kill stubborn) || fail "kill stubborn failed: $out"
expect_out '^ok: down: stubborn: [0-9]+s, normally up$' "$out"
same_as_sv stubborn 3
alive "$old" && fail "stubborn $old survived kill"

# graceful-kill: stop, then SIGKILL when SVWAIT runs out
ctl start stubborn >/dev/null || fail "start stubborn"
old=$(pid_of stubborn)
out=$(SVWAIT=1 ctl graceful-kill stubborn) && fail "graceful-kill of stubborn should report: $out"
expect_out '^kill: run: stubborn: ' "$out"
wait_gone "$old" 50 || fail "graceful-kill left $old running"
until_true 50 sh -c "[ \"\$(od -An -tu4 -j12 -N4 '$SV_DIR/stubborn/supervise/status' | tr -d ' ')\" = 0 ]" ||
	fail "stubborn not down after graceful-kill"
same_as_sv stubborn 3

# graceful-kill also SIGKILLs what is left in the service's own process group
until_true 100 is_up grouped || fail "grouped did not start"
until_true 50 test -s "$T_ROOT/grouped.child" || fail "grouped wrote no child pid"
child=$(cat "$T_ROOT/grouped.child")
track_pid "$child"
alive "$child" || fail "grouped's child is not running"
out=$(SVWAIT=1 ctl graceful-kill grouped) && fail "graceful-kill of grouped should report: $out"
expect_out '^kill: run: grouped: ' "$out"
expect_out "^kill: grouped: process group [0-9]+ still has processes, sending SIGKILL\$" "$out"
wait_gone "$child" 50 || fail "graceful-kill left the child $child of grouped running"
rm "$SERVICE_DIR/grouped" # runsvdir stops it; not part of the sums below

# kill: runsv restarts a wanted-up service with a new pid, and start waits for it
old=$(pid_of alpha)
out=$(ctl kill alpha) || fail "kill alpha failed: $out"
new=$(pid_of alpha)
[ "$new" != 0 ] && [ "$new" != "$old" ] || fail "kill: alpha pid $old -> $new"
expect_out "^ok: run: alpha: \\(pid $new\\)" "$out"
alive "$old" && fail "old alpha $old still alive"

# restart: new pid, ok:
old=$(pid_of alpha)
out=$(ctl restart alpha) || fail "restart alpha failed: $out"
new=$(pid_of alpha)
[ "$new" != "$old" ] || fail "restart kept pid $old"
expect_out "^ok: run: alpha: \\(pid $new\\)" "$out"

# hup and friends signal without changing the desired state
out=$(ctl hup beta) || fail "hup beta: $out"
expect_out '^ok: down: beta: ' "$out"
out=$(ctl usr1 checked) || fail "usr1 checked: $out"

# start waits for ./check: not ready -> timeout, ready -> ok
ctl stop checked >/dev/null || fail "stop checked"
out=$(SVWAIT=4 ctl start checked) && fail "start checked should time out on check: $out"
expect_out '^timeout: run: checked: ' "$out"
touch "$T_ROOT/ready"
out=$(ctl start checked) || fail "start checked with check passing: $out"
expect_out '^ok: run: checked: ' "$out"

# a service enabled while this test's own runsvdir runs: start waits for its scan
# (up to 5 s) and must not start a second runsvdir through the wrapper
mksv late 'exec sleep 100000' nolog
touch "$SV_DIR/late/down"
enable late
out=$(ctl start late) || fail "start of a newly enabled service: $out"
expect_out '^ok: run: late: \(pid [0-9]+\) [0-9]+s, normally down$' "$out"
[ -e "$PIDFILE" ] && fail "start launched a runsvdir wrapper although runsvdir runs"
ctl stop late >/dev/null || fail "stop late"
rm "$SERVICE_DIR/late"

# --- every service, exit code sum ---------------------------------------------------------
ctl stop stubborn >/dev/null 2>&1 || true
for _try in 1 2 3; do
	all=$(ctl status) && rc=0 || rc=$?
	svall=$(SVDIR=$SERVICE_DIR sv status alpha beta checked stubborn || true)
	[ "$all" = "$svall" ] && break
done
note "status: exit $rc"
printf '%s\n' "$all"
[ "$all" = "$svall" ] || fail "status of all: ours '$all', sv '$svall'"
[ "$(printf '%s\n' "$all" | wc -l)" = 4 ] || fail "status should list 4 services"
[ "$(printf '%s\n' "$all" | cut -d' ' -f2 | tr '\n' ' ')" = "alpha: beta: checked: stubborn: " ] ||
	fail "status not in sorted order"
[ "$rc" = 6 ] || fail "status exit $rc, want 6 (two down services)"

# --- not supervised: a second root with no runsvdir ---------------------------------------
R2=$T_ROOT/r2
mkdir -p "$R2/opt/gitlab/sv/lonely" "$R2/opt/gitlab/sv/orphan/supervise" "$R2/opt/gitlab/service"
mkfifo "$R2/opt/gitlab/sv/orphan/supervise/ok"
ln -s ../sv/lonely "$R2/opt/gitlab/service/lonely"
ln -s ../sv/orphan "$R2/opt/gitlab/service/orphan"
ln -s ../sv/gone "$R2/opt/gitlab/service/gone" # dangling: its sv directory was removed
out=$("$GITLAB_CTL" --root "$R2" status) && rc=0 || rc=$?
theirs=$(SVDIR=$R2/opt/gitlab/service sv status gone lonely orphan 2>&1 || true)
[ "$out" = "$theirs" ] || fail "unsupervised: ours '$out', sv '$theirs'"
expect_out '^warning: lonely: unable to open supervise/ok: file does not exist$' "$out"
expect_out '^fail: orphan: runsv not running$' "$out"
expect_out '^fail: gone: unable to change to service directory: file does not exist$' "$out"
[ "$rc" = 6 ] || fail "unsupervised status exit $rc, want 1+4+1"
out=$(SVWAIT=1 "$GITLAB_CTL" --root "$R2" stop orphan) && fail "stop without runsv succeeded"
expect_out '^fail: orphan: runsv not running$' "$out"

# --- unknown services and bad input --------------------------------------------------------
out=$(ctl status nope 2>&1) && fail "status of unknown service succeeded"
expect_out "^gitlab-ctl status: unknown service 'nope' \\(known: .*alpha" "$out"
ctl start nope >/dev/null && fail "start of unknown service succeeded"
ctl status ../sv >/dev/null && fail "status accepted a path"
SVWAIT=soon ctl start alpha 2>/dev/null && fail "bad SVWAIT accepted"
ctl status alpha beta >/dev/null 2>&1 && fail "two services accepted"

# --- service-list: catalog services, '*' on enabled ones -----------------------------------
if out=$(ctl service-list 2>&1); then
	expect_out '^alpha\*$' "$out"
	expect_out '^stubborn\*$' "$out"
	ls "$SRCDIR"/sv/*.conf >/dev/null 2>&1 && expect_out '^gitlab-exporter$' "$out"
else
	fail "service-list: $out"
fi

# --- tail: last lines, new lines, and a rotated file ---------------------------------------
until_true 50 grep -q 'hello from alpha' "$T_ROOT/var/log/gitlab/alpha/current" ||
	fail "alpha's log has no output"
mkdir -p "$T_ROOT/var/log/gitlab/rotating"
cur=$T_ROOT/var/log/gitlab/rotating/current
printf 'old line 1\nold line 2\n' >"$cur"
"$GITLAB_CTL" --root "$T_ROOT" tail alpha >"$T_ROOT/tail1.out" 2>&1 &
tail1=$!
track_pid $tail1
"$GITLAB_CTL" --root "$T_ROOT" tail -n 1 rotating >"$T_ROOT/tail2.out" 2>&1 &
tail2=$!
track_pid $tail2
until_true 50 grep -q 'hello from alpha' "$T_ROOT/tail1.out" || fail "tail alpha: $(cat "$T_ROOT/tail1.out")"
until_true 50 grep -q 'old line 2' "$T_ROOT/tail2.out" || fail "tail -n 1: $(cat "$T_ROOT/tail2.out")"
grep -q 'old line 1' "$T_ROOT/tail2.out" && fail "tail -n 1 printed two lines"
echo 'appended line' >>"$cur"
until_true 50 grep -q 'appended line' "$T_ROOT/tail2.out" || fail "tail did not follow"
mv "$cur" "$T_ROOT/var/log/gitlab/rotating/@4000.s" # what svlogd does
echo 'after rotation' >"$cur"
until_true 50 grep -q 'after rotation' "$T_ROOT/tail2.out" || fail "tail did not reopen: $(cat "$T_ROOT/tail2.out")"
kill "$tail1" "$tail2"
{ wait "$tail1" "$tail2"; } 2>/dev/null || true
note "ok"
