# When runit's runsvdir cannot run: in private mount and pid namespaces /usr/bin/runsvdir is
# masked (the machine's is never touched). Missing: `gitlab-ctl runsvdir` exits 78 (the
# unit's "config error, do not restart") naming runit, and reconfigure reports the
# wrapper's exit status and last log line. A runsvdir that exits 3 at once: the wrapper
# logs that status and exits with it. A directory where the pidfile goes and a file where
# var/ goes are named, exit 1.
. "$SRCDIR/test/integration/lib.sh"
command -v unshare >/dev/null || fail "unshare (util-linux) is needed"

DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/templates" "$DATA/"
test_service light
: >"$T_ROOT/etc/gitlab/gitlab.rb"
printf '#!/bin/sh\necho "runsvdir stand-in exits 3" >&2\nexit 3\n' >"$T_ROOT/exit3"
chmod 755 "$T_ROOT/exit3"

cat >"$T_ROOT/scenario.sh" <<'EOF2'
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }
ctl() { "$GITLAB_CTL" --root "$T_ROOT" "$@"; }
LOG=$T_ROOT/opt/gitlab/var/runsvdir.log
mount --make-rprivate /
mount --bind /dev/null /usr/bin/runsvdir

note "runsvdir missing: the wrapper exits 78 and names runit"
rc=0
ctl runsvdir >"$T_ROOT/out" 2>&1 || rc=$?
[ "$rc" = 78 ] || fail "runsvdir exit $rc, want 78: $(cat "$T_ROOT/out")"
grep -q "runsvdir not found in PATH, /usr/bin or /usr/sbin (install runit)" "$T_ROOT/out" ||
	fail "said: $(cat "$T_ROOT/out")"
[ -e "$T_ROOT/opt/gitlab/var/runsvdir.pid" ] && fail "pidfile left"

note "reconfigure: the wrapper's status and last line, and where its log is"
rc=0
ctl reconfigure >"$T_ROOT/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "reconfigure exit $rc: $(cat "$T_ROOT/out")"
grep -q "runsvdir did not start (exit status 78): gitlab-ctl runsvdir: runsvdir not found in PATH, /usr/bin or /usr/sbin (install runit); see $LOG" \
	"$T_ROOT/out" || fail "said: $(cat "$T_ROOT/out")"

note "a runsvdir that exits 3: logged, and the wrapper exits 3"
umount /usr/bin/runsvdir
mount --bind "$T_ROOT/exit3" /usr/bin/runsvdir
rc=0
ctl runsvdir >"$T_ROOT/out" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "runsvdir exit $rc, want 3: $(cat "$T_ROOT/out")"
grep -q "runsvdir exited with status 3" "$T_ROOT/out" || fail "said: $(cat "$T_ROOT/out")"
[ -e "$T_ROOT/opt/gitlab/var/runsvdir.pid" ] && fail "pidfile left"
rc=0
SVWAIT=soon ctl runsvdir >"$T_ROOT/out" 2>&1 || rc=$? # a bad SVWAIT: the default, not a failure
[ "$rc" = 3 ] || fail "with SVWAIT=soon: exit $rc, want 3: $(cat "$T_ROOT/out")"

note "a directory where the pidfile goes, a file where var/ goes: named, exit 1"
mkdir "$T_ROOT/opt/gitlab/var/runsvdir.pid"
rc=0
ctl runsvdir >"$T_ROOT/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "exit $rc: $(cat "$T_ROOT/out")"
grep -q "cannot open $T_ROOT/opt/gitlab/var/runsvdir.pid" "$T_ROOT/out" || fail "said: $(cat "$T_ROOT/out")"
rmdir "$T_ROOT/opt/gitlab/var/runsvdir.pid"
R2=$T_ROOT/r2
mkdir -p "$R2/opt/gitlab"
: >"$R2/opt/gitlab/var"
rc=0
"$GITLAB_CTL" --root "$R2" runsvdir >"$T_ROOT/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "exit $rc: $(cat "$T_ROOT/out")"
grep -q "cannot create $R2/opt/gitlab/var: Not a directory" "$T_ROOT/out" || fail "said: $(cat "$T_ROOT/out")"
echo "ok: scenario"
EOF2

export T_ROOT GITLAB_CTL GITLAB_CTL_DATADIR="$DATA"
unshare --mount --pid --fork --mount-proc sh "$T_ROOT/scenario.sh" >"$T_ROOT/scenario.out" 2>&1 ||
	{ cat "$T_ROOT/scenario.out"; fail "scenario"; }
cat "$T_ROOT/scenario.out"
grep -q '^ok: scenario$' "$T_ROOT/scenario.out" || fail "scenario did not finish"
echo "ok t_runsvdir_missing"
