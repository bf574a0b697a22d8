#!/bin/sh
# The lifecycle verbs in a private root: diff-config, upgrade (a changed program restarts its
# service, an unchanged one does not), uninstall (no process left, data kept), cleanse (refused
# without a terminal, then everything generated and the data removed, gitlab.rb kept), and
# `runsvdir`'s exit status 75 when the tree is already supervised. remove-accounts deletes
# system accounts, so it runs in the chroot of t_lifecycle.sh, not here.
. "$SRCDIR/test/integration/lib.sh"

port=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
# The exporter from a copy, so that the test can change "its program" as a package would.
cp "$SRCDIR/exporter/gitlab-exporter" "$T_ROOT/gitlab-exporter"
printf "%s\n%s\n%s\n%s\n" "gitlab_exporter['listen_address'] = '127.0.0.1'" \
	"gitlab_exporter['listen_port'] = $port" \
	"gitlab_exporter['command'] = '$T_ROOT/gitlab-exporter'" \
	"$(only_services gitlab_exporter)" >"$T_ROOT/etc/gitlab/gitlab.rb"
SVC=$SV_DIR/gitlab-exporter
pid() { status_pid "$SVC/supervise/status"; }
# Running, not a zombie: an exited detached wrapper waits for this machine's pid 1 to reap it.
live() { alive "$1" && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

note "diff-config: the operator's file (-) against the shipped template (+), as Omnibus"
set +e
ctl diff-config >"$T_ROOT/out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat "$T_ROOT/out"; fail "diff-config exit $rc, want 1 (files differ)"; }
grep -q "^-gitlab_exporter\['listen_port'\] = $port" "$T_ROOT/out" || fail "no - line for our port"
grep -q "^--- $T_ROOT/etc/gitlab/gitlab.rb" "$T_ROOT/out" || fail "gitlab.rb is not the --- side"
grep -q "^+++ ${GITLAB_CTL_DATADIR:-$SRCDIR}/etc/gitlab.rb" "$T_ROOT/out" || fail "template is not the +++ side"
cp "$SRCDIR/etc/gitlab.rb" "$T_ROOT/same.rb"
ctl -c "$T_ROOT/same.rb" diff-config >"$T_ROOT/out" 2>&1 || fail "identical files: exit $?"
[ -s "$T_ROOT/out" ] && fail "identical files printed a diff"
ctl -c "$T_ROOT/missing.rb" diff-config >"$T_ROOT/out" 2>&1 && fail "missing config: exit 0"
grep -q "missing.rb" "$T_ROOT/out" || fail "missing config not named"

note "reconfigure, then a second runsvdir exits 75 (already running)"
ctl reconfigure >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "reconfigure"; }
W=$(head -n1 "$PIDFILE")
set +e
ctl runsvdir >"$T_ROOT/out" 2>&1
rc=$?
set -e
[ "$rc" = 75 ] || { cat "$T_ROOT/out"; fail "second runsvdir exit $rc, want 75"; }
alive "$W" || fail "the first wrapper died"

note "upgrade with nothing changed restarts nothing"
p1=$(pid)
ctl upgrade >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "upgrade"; }
grep -q "no running service has a changed program" "$T_ROOT/out" ||
	{ cat "$T_ROOT/out"; fail "upgrade said"; }
[ "$(pid)" = "$p1" ] || fail "upgrade restarted an unchanged service ($p1 -> $(pid))"

note "upgrade after the exporter changed on disk restarts it"
# dpkg renames the new file over the old one: do the same.
cp "$T_ROOT/gitlab-exporter" "$T_ROOT/gitlab-exporter.new"
echo "# upgraded" >>"$T_ROOT/gitlab-exporter.new"
mv "$T_ROOT/gitlab-exporter.new" "$T_ROOT/gitlab-exporter"
ctl upgrade >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "upgrade"; }
grep -q "restart gitlab-exporter (pid $p1): .*gitlab-exporter changed since it started" \
	"$T_ROOT/out" || { cat "$T_ROOT/out"; fail "upgrade did not report the restart"; }
p2=$(pid)
[ "$p2" != "$p1" ] && [ "$p2" != 0 ] || fail "not restarted: pid $p1 -> $p2"
ctl upgrade >"$T_ROOT/out" 2>&1 || fail "third upgrade"
[ "$(pid)" = "$p2" ] || fail "a second upgrade restarted it again"

note "uninstall: every process gone, configuration, data and logs kept"
procs="$W $(recorded_pids | tr '\n' ' ')"
ctl uninstall >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "uninstall"; }
grep -q "stop runsvdir (pid $W)" "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "uninstall said"; }
for p in $procs; do
	live "$p" && fail "pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline")) survived uninstall"
done
[ -f "$T_ROOT/etc/gitlab/gitlab.rb" ] || fail "uninstall removed gitlab.rb"
[ -f "$T_ROOT/var/log/gitlab/gitlab-exporter/current" ] || fail "uninstall removed the log"
[ -d "$T_ROOT/var/opt/gitlab/gitlab-exporter" ] || fail "uninstall removed the data"
ctl uninstall >"$T_ROOT/out" 2>&1 || fail "a second uninstall failed"
grep -q "runsvdir is not running" "$T_ROOT/out" || fail "second uninstall said: $(cat "$T_ROOT/out")"

note "uninstall also stops a runsv whose runsvdir was killed"
ctl reconfigure >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "reconfigure again"; }
W=$(head -n1 "$PIDFILE")
# runsvdir is the wrapper's only child; runsv for the exporter is runsvdir's child.
rsd=$(tr -d ' ' <"/proc/$W/task/$W/children")
runsv=""
for c in $(cat "/proc/$rsd/task/$rsd/children"); do
	[ "$(readlink "/proc/$c/cwd")" = "$SVC" ] && runsv=$c
done
[ -n "$runsv" ] || fail "no runsv for $SVC under runsvdir $rsd"
procs="$(recorded_pids | tr '\n' ' ') $runsv"
# The wrapper stopped first: it can neither reap nor stop the runsv it inherits when
# runsvdir dies, and runsvdir, dead before the wrapper, gets no parent-death HUP.
kill -STOP "$W"
kill -KILL "$rsd"
until_true 50 sh -c "! kill -0 $rsd 2>/dev/null || grep -q '^State:[[:space:]]*Z' /proc/$rsd/status" ||
	fail "runsvdir did not die" # a zombie until the stopped wrapper is gone
kill -KILL "$W"
wait_gone "$W" 50 || fail "wrapper did not die"
alive "$runsv" || fail "runsv died with its runsvdir: the case is not tested"
track_pid "$runsv"
ctl uninstall >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "uninstall with an orphaned runsv"; }
grep -q "stop gitlab-exporter: its runsv outlived runsvdir" "$T_ROOT/out" ||
	{ cat "$T_ROOT/out"; fail "orphaned runsv not reported"; }
for p in $procs; do
	live "$p" && fail "pid $p survived uninstall"
done

note "cleanse: refused without a terminal and without --yes"
ctl reconfigure >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "reconfigure 3"; }
set +e
ctl cleanse </dev/null >"$T_ROOT/out" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "cleanse without a tty: exit $rc, want 2"
grep -q -- "--yes" "$T_ROOT/out" || fail "the refusal does not name --yes"
[ -d "$T_ROOT/var/opt/gitlab/gitlab-exporter" ] || fail "a refused cleanse removed data"
alive "$(head -n1 "$PIDFILE")" || fail "a refused cleanse stopped runsvdir"

note "cleanse on a terminal asks, and anything but 'yes' does nothing"
set +e
printf 'no\n' | script -qec "$GITLAB_CTL --root $T_ROOT cleanse" /dev/null >"$T_ROOT/out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat "$T_ROOT/out"; fail "cleanse answered 'no': exit $rc, want 1"; }
grep -q "Type 'yes' to go on" "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "no question asked"; }
grep -q "$T_ROOT/var/opt/gitlab" "$T_ROOT/out" || fail "the question does not list the data dir"
[ -d "$T_ROOT/var/opt/gitlab/gitlab-exporter" ] || fail "an unconfirmed cleanse removed data"
alive "$(head -n1 "$PIDFILE")" || fail "an unconfirmed cleanse stopped runsvdir"

note "cleanse --yes: a service-planted link is removed, never followed"
mkdir -p "$T_ROOT/outside"
echo keep >"$T_ROOT/outside/file"
home=$T_ROOT/var/opt/gitlab/gitlab-exporter
ln -s "$T_ROOT/outside" "$home/evil"
ln -s "$T_ROOT/outside/file" "$home/evil-file"
procs="$(head -n1 "$PIDFILE") $(recorded_pids | tr '\n' ' ')"
ctl cleanse --yes >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "cleanse --yes"; }
for p in $procs; do
	live "$p" && fail "pid $p survived cleanse"
done
for d in opt/gitlab/sv opt/gitlab/service opt/gitlab/etc opt/gitlab/var var/opt/gitlab \
	var/log/gitlab; do
	[ -e "$T_ROOT/$d" ] && fail "cleanse left $d"
done
[ "$(cat "$T_ROOT/outside/file")" = keep ] || fail "cleanse followed a link out of the tree"
[ -f "$T_ROOT/etc/gitlab/gitlab.rb" ] || fail "cleanse removed gitlab.rb"
[ -e "$T_ROOT/opt/gitlab/embedded/bin/gitlab-exporter" ] && fail "cleanse left the exporter link"

note "and reconfigure starts afresh"
ctl reconfigure >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "reconfigure after cleanse"; }
[ "$(pid)" != 0 ] || fail "not running after a fresh reconfigure"
echo "ok: diff-config, upgrade, uninstall, cleanse"
