# reconfigure's less travelled paths, with a light catalog (sh sleeping; no Ruby):
# setup steps (a held service started only once its slow-starting runsv supervises it;
# before_start again once `creates` is gone: the service is stopped first and started after;
# a failing step's output shown; a step still running at its own timeout killed and named;
# after_ready output counted as an update, -v says when it had nothing to do), a restart
# runsv does not carry out (runsv stopped) named at SVWAIT, a dependency that never gets
# ready holds its dependents back, a service stopped on purpose keeps its change for its
# next start, a log/run change restarts only svlogd, disable (--dry-run, a directory in
# place of the symlink, a link without runsv, a service ignoring TERM), a new service
# runsvdir does not pick up (runsvdir stopped), --dry-run on a fresh root, usage errors,
# and a second reconfigure waiting for the lock of a first.
. "$SRCDIR/test/integration/lib.sh"

light_catalog
# alpha: ready when alpha['ready'] is true (its check_command is /bin/true or /bin/false);
# its before_start step creates {{home}}/made and fails while alpha['step_ok'] is false.
cat >"$DATA/sv/alpha.conf" <<'EOF2'
name = "alpha";
config_name = "alpha";
enable_default = true;
settings = (
  { name = "enable";        type = "bool";   default = true; },
  { name = "home";          type = "path";   default = "{{data_dir}}/alpha"; },
  { name = "log_directory"; type = "path";   default = "{{log_dir}}/alpha"; },
  { name = "env_directory"; type = "path";   default = "{{install_dir}}/etc/alpha/env"; },
  { name = "env";           type = "env"; },
  { name = "ready";         type = "bool";   default = true; },
  { name = "step_ok";       type = "bool";   default = true; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "/bin/sh", "-c", "exec sleep 100000" ];
check_command = [ "/bin/{{ready}}" ];
setup = (
  { name = "mkmade"; when = "before_start"; creates = "{{home}}/made"; timeout = 3;
    command = [ "/bin/sh", "-c", "[ ! -e {{home}}/slow ] || exec sleep 30; echo step output here; /bin/{{step_ok}} && touch {{home}}/made" ]; },
  { name = "greet"; when = "after_ready";
    command = [ "/bin/sh", "-c", "[ -e {{home}}/greeted ] || { touch {{home}}/greeted; echo greeted; }" ]; }
);
EOF2
test_service beta extra='after = [ "alpha" ];'
# gamma sleeps; stubborn ignores TERM. Both off unless gitlab.rb enables them.
test_service gamma enable=false
test_service stubborn enable=false cmd="trap '' TERM; while :; do sleep 1; done"
RB=$T_ROOT/etc/gitlab/gitlab.rb
: >"$RB"
A=$SV_DIR/alpha
B=$SV_DIR/beta
HOME_A=$T_ROOT/var/opt/gitlab/alpha
pid_of() { status_pid "$1/supervise/status"; }
# No runsv reads supervise/ok: a non-blocking open for writing fails with ENXIO.
no_reader() {
	ruby -e 'begin; File.open(ARGV[0], File::WRONLY | File::NONBLOCK).close; rescue Errno::ENXIO
		exit 0; end; exit 1' "$1"
}
want_of() { od -An -c -j17 -N1 "$1/supervise/status" | tr -d ' '; }

note "usage errors: status 2"
expect_rc 2 ctl reconfigure --bogus
has "$ERR" "usage: gitlab-ctl reconfigure"
expect_rc 2 ctl reconfigure extra
has "$ERR" "usage: gitlab-ctl reconfigure"
expect_rc 2 ctl runsvdir extra
has "$ERR" "usage: gitlab-ctl runsvdir"

note "--dry-run on a root never reconfigured: says what it would do, writes nothing"
expect_rc 0 ctl reconfigure --dry-run
[ -e "$T_ROOT/opt/gitlab/var/reconfigure.lock" ] && fail "--dry-run took the lock file"
[ -e "$SERVICE_DIR" ] && fail "--dry-run wrote $SERVICE_DIR"

note "first reconfigure: alpha's before_start and after_ready steps run, beta after alpha"
# Each runsv's first start is slow, as on a loaded machine: alpha, held while its step runs,
# is started only once its runsv supervises it.
RUNSV=$(command -v runsv) || exit 77
mkdir "$T_ROOT/slow"
printf '#!/bin/sh\n[ -p "$1/supervise/control" ] || sleep 0.5\nexec %s "$@"\n' "$RUNSV" \
	>"$T_ROOT/slow/runsv"
chmod 755 "$T_ROOT/slow/runsv"
PATH=$T_ROOT/slow:$PATH expect_rc 0 ctl reconfigure
[ -e "$HOME_A/made" ] || fail "before_start step did not run"
[ -e "$HOME_A/greeted" ] || fail "after_ready step did not run"
has "$OUT" "greeted"
PA=$(pid_of "$A")
PB=$(pid_of "$B")
[ "$PA" != 0 ] && [ "$PB" != 0 ] || fail "not both running: alpha $PA beta $PB"
expect_rc 0 ctl reconfigure
has "$OUT" "0/"
[ "$(pid_of "$A")" = "$PA" ] || fail "a no-op reconfigure restarted alpha"

note "creates gone while alpha runs: stopped, step run, started again; beta untouched"
rm "$HOME_A/made"
expect_rc 0 ctl reconfigure
[ -e "$HOME_A/made" ] || fail "before_start step did not run again"
has "$OUT" "start alpha (after setup)"
PA2=$(pid_of "$A")
[ "$PA2" != 0 ] && [ "$PA2" != "$PA" ] || fail "alpha not restarted around its step ($PA -> $PA2)"
[ "$(pid_of "$B")" = "$PB" ] || fail "beta restarted"

note "a failing before_start step: its output shown, the service marked failed"
rm "$HOME_A/made"
echo "alpha['step_ok'] = false" >>"$RB"
expect_rc 1 ctl reconfigure
has "$ERR" "alpha: setup step mkmade: /bin/sh exited with status 1"
has "$ERR" "step output here"
[ -e "$HOME_A/made" ] && fail "made exists after a failed step"
sed -i '/step_ok/d' "$RB"
expect_rc 0 ctl reconfigure
[ -e "$HOME_A/made" ] || fail "step did not run once fixed"

note "a before_start step still running at its own timeout (not SVWAIT's): killed and named"
rm "$HOME_A/made"
: >"$HOME_A/slow"
SVWAIT=1 expect_rc 1 ctl reconfigure
has "$ERR" "alpha: setup step mkmade: not finished within its timeout (3 s)"
[ -e "$HOME_A/made" ] && fail "made exists after a killed step"
rm "$HOME_A/slow"
expect_rc 0 ctl reconfigure
has "$OUT" "start alpha (after setup)"

note "-v: an after_ready step already passed for the running process is not run again"
expect_rc 0 ctl -v reconfigure
has "$ERR" "alpha setup greet: passed for pid $(pid_of "$A") already"
note "-v: once the process is new, it runs again; with nothing to do it says so"
expect_rc 0 ctl restart alpha
expect_rc 0 ctl -v reconfigure
has "$ERR" "alpha setup greet: nothing to do"

note "alpha's runsv stopped (SIGSTOP): its restart does not happen within SVWAIT, and that is named"
runsv_of() { # the runsv supervising $1, a child of runsvdir
	_w=$(head -n1 "$PIDFILE")
	_r=$(cat "/proc/$_w/task/$_w/children")
	for _k in $(cat "/proc/${_r%% *}/task/${_r%% *}/children"); do
		case "$(tr '\0' ' ' <"/proc/$_k/cmdline")" in
		"runsv $1 " | "$RUNSV $1 ") echo "$_k" ;; # runsvdir's own, or the slow start's exec
		esac
	done
	return 0
}
RA=$(runsv_of alpha)
[ -n "$RA" ] || fail "no runsv for alpha"
PA=$(pid_of "$A")
echo "alpha['env'] = { 'Z' => '1' }" >>"$RB"
kill -STOP "$RA"
SVWAIT=1 expect_rc 1 ctl reconfigure
kill -CONT "$RA"
has "$ERR" "alpha: did not come back up within SVWAIT (last status: run: alpha: (pid $PA)"
# The resumed runsv acts on the restart queued while it was stopped: wait until that restart
# is over (a new pid, running) before the next reconfigure, which would otherwise find alpha
# mid-restart and take it for a service that exits right after it starts.
restarted() {
	_rp=$(pid_of "$A")
	[ "$_rp" != "$PA" ] && [ "$_rp" != 0 ] && [ "$(od -An -tu1 -j19 -N1 "$A/supervise/status" | tr -d ' ')" = 1 ]
}
until_true 100 restarted || fail "alpha not restarted once its runsv goes on"
expect_rc 0 ctl reconfigure
sed -i "/'Z'/d" "$RB"
expect_rc 0 ctl reconfigure

note "alpha never ready: beta is held back and named"
echo "alpha['ready'] = false" >>"$RB"
echo "beta['env'] = { 'X' => '1' }" >>"$RB"
PB=$(pid_of "$B")
SVWAIT=2 expect_rc 1 ctl reconfigure
has "$ERR" "beta: waiting for alpha: "
[ "$(pid_of "$B")" = "$PB" ] || fail "beta restarted while alpha is not ready"
sed -i '/ready/d' "$RB"
expect_rc 0 ctl reconfigure
until_true 100 sh -c "[ \"\$(od -An -tu4 -j12 -N4 '$B/supervise/status' | tr -d ' ')\" != '$PB' ]" ||
	fail "beta's env change not applied once alpha is ready"

note "alpha stopped on purpose: an env change waits for its next start"
expect_rc 0 ctl stop alpha
echo "alpha['env'] = { 'Y' => '2' }" >>"$RB"
expect_rc 0 ctl reconfigure
has "$OUT" "alpha is down: the env change applies at its next start"
[ "$(pid_of "$A")" = 0 ] && [ "$(want_of "$A")" = d ] || fail "reconfigure started a stopped alpha"
expect_rc 0 ctl start alpha
grep -qx 2 "$T_ROOT/opt/gitlab/etc/alpha/env/Y" || fail "envdir lacks Y"
NEW=$(pid_of "$A")
tr '\0' '\n' <"/proc/$NEW/environ" | grep -qx 'Y=2' || fail "alpha started without Y=2"

note "log/run changed (another log directory): svlogd restarted, the service not"
PA=$(pid_of "$A")
LA=$(pid_of "$A/log")
echo "alpha['log_directory'] = '/var/log/gitlab/alpha2'" >>"$RB"
expect_rc 0 ctl reconfigure
has "$OUT" "restart alpha log (log/run changed)"
[ "$(pid_of "$A")" = "$PA" ] || fail "alpha restarted for a log change"
until_true 100 sh -c "p=\$(od -An -tu4 -j12 -N4 '$A/log/supervise/status' | tr -d ' '); [ \"\$p\" != 0 ] && [ \"\$p\" != '$LA' ]" ||
	fail "svlogd not restarted"

note "disable with --dry-run: said, nothing done"
echo "beta['enable'] = false" >>"$RB"
PB=$(pid_of "$B")
expect_rc 0 ctl reconfigure --dry-run
has "$OUT" "disable beta"
[ -L "$SERVICE_DIR/beta" ] || fail "--dry-run removed beta's link"
[ "$(pid_of "$B")" = "$PB" ] && alive "$PB" || fail "--dry-run stopped beta"

note "disable: stopped and unlinked"
expect_rc 0 ctl reconfigure
has "$OUT" "disable beta"
[ -e "$SERVICE_DIR/beta" ] && fail "beta's link left"
wait_gone "$PB" 100 || fail "beta still running"

note "a directory where beta's link was: left alone and said so"
mkdir "$SERVICE_DIR/beta"
expect_rc 0 ctl reconfigure
has "$ERR" "$SERVICE_DIR/beta is not a symlink made by reconfigure; leaving it"
[ -d "$SERVICE_DIR/beta" ] || fail "the directory was removed"
rmdir "$SERVICE_DIR/beta"

note "a link of a disabled service whose runsv is gone: unlinked"
# runsvdir may pick it up meanwhile (then reconfigure stops that runsv): either way it ends
# unlinked with no runsv reading supervise/ok.
ln -s "$B" "$SERVICE_DIR/beta"
expect_rc 0 ctl reconfigure
has "$OUT" "disable beta"
[ -e "$SERVICE_DIR/beta" ] && fail "beta's link left"

note "runsvdir stopped (SIGSTOP): a new service is not picked up, and that is named"
W=$(head -n1 "$PIDFILE")
RSV=$(cat "/proc/$W/task/$W/children")
RSV=${RSV%% *}
grep -q '^runsvdir' "/proc/$RSV/cmdline" || fail "wrapper's child $RSV is not runsvdir"
kill -STOP "$RSV"
echo "gamma['enable'] = true" >>"$RB"
SVWAIT=2 expect_rc 1 ctl reconfigure
kill -CONT "$RSV"
has "$ERR" "gamma: runsv was not started: runsvdir (wrapper pid $W) has not picked up $SERVICE_DIR/gamma"
expect_rc 0 ctl reconfigure
PG=$(pid_of "$SV_DIR/gamma")
[ "$PG" != 0 ] && alive "$PG" || fail "gamma not running once runsvdir goes on"

echo "stubborn['enable'] = true" >>"$RB"
expect_rc 0 ctl reconfigure
S=$(status_pid "$SV_DIR/stubborn/supervise/status")
[ "$S" != 0 ] && alive "$S" || fail "stubborn not running"

note "disable a service that ignores TERM: reconfigure gives up at SVWAIT and says so"
sed -i '/stubborn/d' "$RB"
SVWAIT=1 expect_rc 1 ctl reconfigure
has "$ERR" "stubborn: runsv did not exit within SVWAIT"
[ -e "$SERVICE_DIR/stubborn" ] && fail "stubborn's link left"
kill -KILL "$S"
until_true 100 no_reader "$SV_DIR/stubborn/supervise/ok" || fail "stubborn's runsv did not exit after its service died"

note "a second reconfigure waits for the first one's lock"
LOCK=$T_ROOT/opt/gitlab/var/reconfigure.lock
hold_root_lock 4242
"$GITLAB_CTL" --root "$T_ROOT" reconfigure >"$T_ROOT/r.out" 2>"$T_ROOT/r.err" &  # $! is its pid
RC_PID=$!
track_pid "$RC_PID"
until_true 100 grep -qs 'waiting for another reconfigure (pid 4242)' "$T_ROOT/r.err" ||
	fail "no waiting message: $(cat "$T_ROOT/r.err")"
: >"$T_ROOT/release"
wait "$RC_PID" || fail "reconfigure after the lock was released: $(cat "$T_ROOT/r.err")"
grep -q '^0/' "$T_ROOT/r.out" || fail "$(cat "$T_ROOT/r.out")"
wait "$HOLDER" || true

note "a holder that has not written its pid yet: named as '?'"
hold_root_lock ""
"$GITLAB_CTL" --root "$T_ROOT" reconfigure >"$T_ROOT/r.out" 2>"$T_ROOT/r.err" & # $! is its pid
RC_PID=$!
track_pid "$RC_PID"
until_true 100 grep -qs 'waiting for another reconfigure (pid ?)' "$T_ROOT/r.err" ||
	fail "no waiting message: $(cat "$T_ROOT/r.err")"
: >"$T_ROOT/release"
wait "$RC_PID" || fail "reconfigure after the lock was released: $(cat "$T_ROOT/r.err")"
wait "$HOLDER" || true

note "restart with an after file replaced by a symlink: not followed, said, acts in name order"
PA=$(pid_of "$A")
PG=$(pid_of "$SV_DIR/gamma")
rm "$A/after"
ln -s /etc/hostname "$A/after"
expect_rc 0 ctl restart
has "$ERR" "$SERVICE_DIR: cannot read the service order; acting in name order"
[ "$(pid_of "$A")" != "$PA" ] && [ "$(pid_of "$SV_DIR/gamma")" != "$PG" ] || fail "not both restarted"
expect_rc 0 ctl reconfigure
[ -f "$A/after" ] && [ ! -L "$A/after" ] || fail "reconfigure did not put the after file back"

note "a lock that cannot be opened is named"
rm -f "$LOCK"
mkdir "$LOCK"
expect_rc 1 ctl reconfigure
has "$ERR" "cannot open $LOCK"
rmdir "$LOCK"
echo "ok t_reconfigure_steps"
