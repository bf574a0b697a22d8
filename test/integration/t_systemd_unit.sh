# The systemd path (runit/sdunit.c) of the default tree, on a machine without systemd: in
# private mount and pid namespaces (unshare), /run/systemd/system, the unit file,
# /usr/bin/systemctl (a stand-in that runs the unit's ExecStart as systemd would), /opt,
# /var/opt and /var/log are this test's own mounts, so the tree without --root is private
# too and the machine's /opt/gitlab, /var/log/gitlab, /var/opt/gitlab are never touched.
# reconfigure enables and starts the unit and waits for its wrapper (a failing
# `systemctl start`, and a systemctl that cannot run, are named); uninstall stops and
# disables it. Every process of the test lives in the pid namespace: the scenario stops
# them by pid, and the namespace ending kills anything left if it fails.
. "$SRCDIR/test/integration/lib.sh"
command -v unshare >/dev/null || fail "unshare (util-linux) is needed"

DATA=$T_ROOT/data
mkdir -p "$DATA/sv"
cp -R "$SRCDIR/templates" "$DATA/"
test_service light
: >"$T_ROOT/gitlab.rb"
chmod 600 "$T_ROOT/gitlab.rb"

# The stand-in systemctl: argv to calls.log; `start` runs ExecStart detached (as systemd
# would, its own session, stdio to a log); `disable --now` TERMs the wrapper found by its
# pidfile and waits for it, as systemd's stop waits for the main process.
cat >"$T_ROOT/systemctl" <<EOF2
#!/bin/sh
echo "\$*" >>"$T_ROOT/calls.log"
[ -e "$T_ROOT/start-fails" ] && [ "\$1" = start ] && exit 1
case "\$*" in
"enable --quiet gitlab-runsvdir.service") exit 0 ;;
"start --quiet gitlab-runsvdir.service")
	setsid "$GITLAB_CTL" runsvdir </dev/null >>"$T_ROOT/unit.log" 2>&1 &
	exit 0 ;;
"disable --quiet --now gitlab-runsvdir.service")
	w=\$(head -n1 /opt/gitlab/var/runsvdir.pid 2>/dev/null) || exit 0
	kill -TERM "\$w" 2>/dev/null || exit 0
	n=0
	while kill -0 "\$w" 2>/dev/null && [ \$n -lt 300 ]; do sleep 0.1; n=\$((n + 1)); done
	! kill -0 "\$w" 2>/dev/null ;;
*) exit 64 ;;
esac
EOF2
chmod 755 "$T_ROOT/systemctl"
: >"$T_ROOT/noexec"
chmod 644 "$T_ROOT/noexec"
printf '[Unit]\nDescription=test\n[Service]\nExecStart=%s runsvdir\n' "$GITLAB_CTL" >"$T_ROOT/unit"

cat >"$T_ROOT/scenario.sh" <<'EOF2'
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }
until_true() { _n=$1; shift; while [ "$_n" -gt 0 ]; do "$@" && return 0; sleep 0.1; _n=$((_n - 1)); done; return 1; }
stop_all() {
	set +e
	w=$(head -n1 /opt/gitlab/var/runsvdir.pid 2>/dev/null)
	[ -n "$w" ] && kill -TERM "$w" 2>/dev/null && until_true 150 sh -c "! kill -0 $w 2>/dev/null"
}
trap 'stop_all' EXIT
mount --make-rprivate /
mount -t tmpfs -o mode=755 tmpfs /run/systemd 2>/dev/null || {
	# no /run/systemd on this machine: a private /run instead
	mount -t tmpfs -o mode=755 tmpfs /run
}
mkdir -p /run/systemd/system
cp "$T_ROOT/unit" /run/systemd/system/gitlab-runsvdir.service
for d in /opt /var/opt /var/log; do mount -t tmpfs -o mode=755 tmpfs "$d"; done
mount --bind "$T_ROOT/systemctl" /usr/bin/systemctl
unset GITLAB_CTL_ROOT
ctl() { "$GITLAB_CTL" -c "$T_ROOT/gitlab.rb" "$@"; }

note "systemctl not executable: named"
mount --bind "$T_ROOT/noexec" /usr/bin/systemctl
ctl reconfigure >"$T_ROOT/out" 2>&1 && fail "reconfigure without a usable systemctl passed"
grep -q "systemd runs this machine but systemctl is not in /usr/bin or /bin" "$T_ROOT/out" ||
	fail "said: $(cat "$T_ROOT/out")"
umount /usr/bin/systemctl

note "systemctl start fails: named, with the journal to read"
: >"$T_ROOT/start-fails"
ctl reconfigure >"$T_ROOT/out" 2>&1 && fail "reconfigure with a failing unit passed"
grep -q "systemctl start gitlab-runsvdir.service failed (status 1); see journalctl -u gitlab-runsvdir.service" \
	"$T_ROOT/out" || fail "said: $(cat "$T_ROOT/out")"
[ -s /opt/gitlab/var/runsvdir.pid ] && fail "a wrapper started anyway"
rm "$T_ROOT/start-fails"
: >"$T_ROOT/calls.log"

note "reconfigure: the unit enabled, started, its wrapper supervises the service"
ctl reconfigure >"$T_ROOT/out" 2>&1 || fail "reconfigure: $(cat "$T_ROOT/out")"
printf 'enable --quiet gitlab-runsvdir.service\nstart --quiet gitlab-runsvdir.service\n' |
	cmp -s - "$T_ROOT/calls.log" || fail "systemctl calls: $(cat "$T_ROOT/calls.log")"
W=$(head -n1 /opt/gitlab/var/runsvdir.pid)
tr '\0' ' ' <"/proc/$W/cmdline" | grep -q "^$GITLAB_CTL runsvdir $" || fail "wrapper $W is not the unit's"
P=$(od -An -tu4 -j12 -N4 /opt/gitlab/sv/light/supervise/status | tr -d ' ')
[ "$P" != 0 ] && kill -0 "$P" || fail "light not running"
"$GITLAB_CTL" status light | grep -q "^run: light: (pid $P)" || fail "status: $("$GITLAB_CTL" status light)"

note "a second reconfigure finds the wrapper: systemctl is not asked again"
ctl reconfigure >"$T_ROOT/out" 2>&1 || fail "reconfigure 2: $(cat "$T_ROOT/out")"
[ "$(wc -l <"$T_ROOT/calls.log")" = 2 ] || fail "systemctl called again: $(cat "$T_ROOT/calls.log")"

note "uninstall: the unit stopped and disabled, nothing left running"
ctl uninstall >"$T_ROOT/out" 2>&1 || fail "uninstall: $(cat "$T_ROOT/out")"
grep -q "^stopped and disabled gitlab-runsvdir.service$" "$T_ROOT/out" || fail "said: $(cat "$T_ROOT/out")"
tail -n1 "$T_ROOT/calls.log" | grep -qx "disable --quiet --now gitlab-runsvdir.service" ||
	fail "systemctl calls: $(cat "$T_ROOT/calls.log")"
kill -0 "$W" 2>/dev/null && fail "wrapper $W still runs"
kill -0 "$P" 2>/dev/null && fail "light $P still runs"
echo "ok: scenario"
EOF2

export T_ROOT GITLAB_CTL GITLAB_CTL_DATADIR="$DATA"
unshare --mount --pid --fork --mount-proc sh "$T_ROOT/scenario.sh" >"$T_ROOT/scenario.out" 2>&1 ||
	{ cat "$T_ROOT/scenario.out" "$T_ROOT/unit.log" 2>/dev/null; fail "scenario"; }
cat "$T_ROOT/scenario.out"
grep -q '^ok: scenario$' "$T_ROOT/scenario.out" || fail "scenario did not finish"
echo "ok t_systemd_unit"
