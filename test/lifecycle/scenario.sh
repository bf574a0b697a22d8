#!/bin/sh
# The life of the package on a Debian host, run by t_lifecycle.sh as pid 1 of a fresh pid
# namespace, chrooted into a throwaway bookworm system. Default paths throughout: /etc/gitlab,
# /opt/gitlab, /var/opt/gitlab, /var/log/gitlab are the chroot's.
# usage: scenario.sh DEB1 DEB2 PORT     (DEB2: a newer version whose run template changed)
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
DEB1=$1
DEB2=$2
PORT=$3
SV=/opt/gitlab/sv/gitlab-exporter
PIDFILE=/opt/gitlab/var/runsvdir.pid
# The exporter alone: every other service of the catalog, on by default, off (the chroot has
# neither PostgreSQL nor Prometheus, and the host's ports are shared).
EXPORTER_ONLY="postgresql['enable'] = false
redis['enable'] = false
prometheus['enable'] = false
alertmanager['enable'] = false
node_exporter['enable'] = false"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
step() { echo "# $*"; }

# Every live process of the namespace but this shell (pid 1), with its command name. Builtins
# only in the loop, so that no helper of ours shows up in its own listing; zombies (exited,
# waiting for pid 1 to reap them) are not running anything.
others() {
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = 1 ] && continue
		state=""
		while read -r k v; do
			[ "$k" = State: ] && { state=$v; break; }
		done <"$d/status" 2>/dev/null || continue
		case $state in Z*) continue ;; esac
		read -r comm <"$d/comm" 2>/dev/null || continue
		echo "$p $comm"
	done
}

status_pid() {
	[ -s "$1" ] || { echo 0; return; }
	od -An -tu4 -j12 -N4 "$1" | tr -d ' '
}
exporter_pid() { status_pid "$SV/supervise/status"; }

# Bounded polling: up to $1 tenths of a second.
until_true() {
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
serving() { curl -fsS -o /dev/null "http://127.0.0.1:$PORT/metrics" 2>/dev/null; }
# A function with a redirection runs in this shell: a $(...) would list its own subshell.
no_others() {
	others >/tmp/others
	[ ! -s /tmp/others ]
}

step "install $DEB1 with apt-get"
apt-get install -y -q "$DEB1" >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; fail "apt-get install"; }
grep -q "created /etc/gitlab/gitlab.rb from the template" /tmp/apt.log || fail "postinst said nothing about gitlab.rb"
[ "$(stat -c '%a %U %G' /etc/gitlab/gitlab.rb)" = "600 root root" ] ||
	fail "gitlab.rb is $(stat -c '%a %U %G' /etc/gitlab/gitlab.rb), want 600 root root"
cmp -s /etc/gitlab/gitlab.rb /usr/share/gitlab-ctl/etc/gitlab.rb || fail "gitlab.rb is not the template"
[ -L /etc/systemd/system/multi-user.target.wants/gitlab-runsvdir.service ] ||
	fail "postinst did not enable gitlab-runsvdir.service"
[ ! -d /opt/gitlab/sv ] || fail "installing configured services"
no_others || fail "installing started processes: $(cat /tmp/others)"
gitlab-ctl diff-config >/dev/null || fail "diff-config: the new gitlab.rb differs from the template"

step "container: doc/containers.md's Dockerfile steps, gitlab.rb mounted, its ENTRYPOINT as uid 1000"
mkdir -p /var/opt/gitlab
useradd --uid 1000 --user-group --create-home --home-dir /var/opt/gitlab/gitlab-exporter \
	--shell /usr/sbin/nologin gitlab-exporter
# The mounted gitlab.rb (a ConfigMap or a bind mount) in place of the package's template.
printf "%s\n%s\n%s\n" "gitlab_exporter['listen_address'] = '127.0.0.1'" \
	"gitlab_exporter['listen_port'] = $PORT" \
	"gitlab_exporter['command'] = '/usr/share/gitlab-ctl/exporter/gitlab-exporter'" \
	>/tmp/container.rb
install -m 0644 /tmp/container.rb /etc/gitlab/gitlab.rb
setpriv --reuid 1000 --regid 1000 --clear-groups \
	gitlab-ctl exec gitlab-exporter --from-config -c /etc/gitlab/gitlab.rb >/tmp/entry.log 2>&1 &
entry=$!
until_true 150 serving || { cat /tmp/entry.log; fail "the entrypoint does not serve /metrics"; }
yml=/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml
[ "$(stat -c '%u %a' "$yml")" = "1000 600" ] || fail "the entrypoint's YAML: $(stat -c '%u %a' "$yml")"
grep -q "$PORT" "$yml" || fail "the entrypoint's YAML lacks the port of gitlab.rb"
kill -TERM "$entry"
wait "$entry" || true
no_others || fail "the entrypoint left processes: $(cat /tmp/others)"
install -m 0600 /usr/share/gitlab-ctl/etc/gitlab.rb /etc/gitlab/gitlab.rb
userdel gitlab-exporter
rm -rf /var/opt/gitlab

step "reconfigure on the default paths (no systemd here: a detached runsvdir)"
printf "\ngitlab_exporter['listen_address'] = '127.0.0.1'\ngitlab_exporter['listen_port'] = %s\n%s\n" \
	"$PORT" "$EXPORTER_ONLY" >>/etc/gitlab/gitlab.rb
gitlab-ctl reconfigure >/tmp/out 2>&1 || { cat /tmp/out; fail "reconfigure"; }
grep -q "start runsvdir for /opt/gitlab/service" /tmp/out || { cat /tmp/out; fail "no runsvdir start"; }
gitlab-ctl status >/tmp/out 2>&1 || { cat /tmp/out; fail "status"; }
grep -q '^run: gitlab-exporter: (pid [0-9]*)' /tmp/out || { cat /tmp/out; fail "status: $(cat /tmp/out)"; }
until_true 150 serving || fail "/metrics does not answer on port $PORT"
id git >/dev/null || fail "reconfigure did not create the git account"
wrapper=$(head -n1 "$PIDFILE")
p1=$(exporter_pid)
echo "wrapper $wrapper, exporter $p1"

step "apt-get remove: prerm stops everything; configuration, tree and data stay"
apt-get remove -y -q gitlab-ctl >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; fail "apt-get remove"; }
grep -q "stop runsvdir (pid $wrapper)" /tmp/apt.log || { cat /tmp/apt.log; fail "prerm did not stop runsvdir"; }
[ ! -e /usr/bin/gitlab-ctl ] || fail "binary still there"
no_others || fail "processes left after remove: $(cat /tmp/others)"
[ -f /etc/gitlab/gitlab.rb ] && [ -d /opt/gitlab/sv ] && [ -d /var/opt/gitlab/gitlab-exporter ] &&
	[ -f /var/log/gitlab/gitlab-exporter/current ] || fail "remove deleted configuration or data"
# The bug this replaces: a run script exec'ing the deleted binary every second, forever, which
# needs a runsv to run it. None is left, so nothing loops.

step "reinstall: the configured tree comes back (postinst runs gitlab-ctl upgrade)"
apt-get install -y -q "$DEB1" >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; fail "reinstall"; }
grep -q "gitlab-ctl: upgrading from" /tmp/apt.log || { cat /tmp/apt.log; fail "postinst did not upgrade"; }
gitlab-ctl status >/tmp/out 2>&1 || { cat /tmp/out; fail "status after reinstall"; }
until_true 150 serving || fail "/metrics does not answer after reinstall"
p2=$(exporter_pid)
[ "$p2" != 0 ] && [ "$p2" != "$p1" ] || fail "exporter pid $p1 -> $p2 after reinstall"

step "upgrade to $DEB2 (its run template changed): the exporter restarts"
apt-get install -y -q "$DEB2" >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; fail "upgrade"; }
grep -q "restart gitlab-exporter (run script changed)" /tmp/apt.log ||
	{ cat /tmp/apt.log; fail "upgrade did not restart the exporter for its run script"; }
grep -q "lifecycle test: package 2" "$SV/run" || fail "the run script is not the new package's"
p3=$(exporter_pid)
[ "$p3" != 0 ] && [ "$p3" != "$p2" ] || fail "exporter pid $p2 -> $p3: not restarted"
until_true 150 serving || fail "/metrics does not answer after the upgrade"
w2=$(head -n1 "$PIDFILE")
[ "$w2" = "$wrapper" ] && fail "the wrapper pid $wrapper was reused?"
kill -0 "$w2" || fail "no runsvdir after the upgrade"

step "remove-accounts is refused while runsvdir runs; after uninstall it deletes git"
gitlab-ctl remove-accounts >/tmp/out 2>&1 && fail "remove-accounts while running"
grep -q "gitlab-ctl uninstall" /tmp/out || fail "refusal does not say what to do: $(cat /tmp/out)"
gitlab-ctl uninstall >/tmp/out 2>&1 || { cat /tmp/out; fail "uninstall"; }
no_others || fail "processes left after uninstall: $(cat /tmp/others)"
gitlab-ctl remove-accounts >/tmp/out 2>&1 || { cat /tmp/out; fail "remove-accounts"; }
grep -q "remove user git" /tmp/out || fail "remove-accounts said: $(cat /tmp/out)"
id git >/dev/null 2>&1 && fail "git still exists"
id root >/dev/null || fail "remove-accounts removed root?"
gitlab-ctl reconfigure >/tmp/out 2>&1 || { cat /tmp/out; fail "reconfigure after remove-accounts"; }
until_true 150 serving || fail "/metrics does not answer after a new reconfigure"

step "purge: the generated tree and logs go, service data stays, untouched gitlab.rb goes"
# Back to the shipped template (services are stopped by prerm before anything is read again).
cp /usr/share/gitlab-ctl/etc/gitlab.rb /etc/gitlab/gitlab.rb
echo "data" >/var/opt/gitlab/gitlab-exporter/precious
apt-get purge -y -q gitlab-ctl >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; fail "purge"; }
no_others || fail "processes left after purge: $(cat /tmp/others)"
for d in /opt/gitlab /var/log/gitlab /etc/gitlab /var/lib/gitlab-ctl; do
	[ ! -e "$d" ] || fail "purge left $d: $(ls -A "$d")"
done
[ -f /var/opt/gitlab/gitlab-exporter/precious ] || fail "purge deleted service data"
grep -q "kept /var/opt/gitlab, the data of the services" /tmp/apt.log || fail "purge did not say it kept data"
[ ! -e /etc/systemd/system/multi-user.target.wants/gitlab-runsvdir.service ] ||
	fail "purge left the unit enabled"

step "under systemd (a stand-in systemctl): reconfigure starts runsvdir through the unit"
mkdir -p /run/systemd/system
install -m 0755 /lifecycle/fake-systemctl.sh /usr/bin/systemctl
: >/tmp/systemctl.log
apt-get install -y -q "$DEB2" >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; fail "install under systemd"; }
grep -q "daemon-reload" /tmp/systemctl.log ||
	fail "postinst did not reload systemd: $(cat /tmp/systemctl.log)"
printf "\ngitlab_exporter['listen_address'] = '127.0.0.1'\ngitlab_exporter['listen_port'] = %s\n%s\n" \
	"$PORT" "$EXPORTER_ONLY" >>/etc/gitlab/gitlab.rb
gitlab-ctl reconfigure >/tmp/out 2>&1 || { cat /tmp/out; fail "reconfigure under systemd"; }
grep -q "^enable --quiet gitlab-runsvdir.service" /tmp/systemctl.log || fail "unit not enabled"
grep -q "^start --quiet gitlab-runsvdir.service" /tmp/systemctl.log || fail "unit not started"
unit=$(cat /tmp/gitlab-runsvdir.pid)
[ "$(head -n1 "$PIDFILE")" = "$unit" ] ||
	fail "the runsvdir reconfigure found ($(head -n1 "$PIDFILE")) is not the unit's ($unit)"
until_true 150 serving || fail "/metrics does not answer under the unit"
gitlab-ctl reconfigure >/tmp/out 2>&1 || fail "second reconfigure"
[ "$(grep -c '^start' /tmp/systemctl.log)" = 1 ] || fail "the unit was started twice"
gitlab-ctl runsvdir >/tmp/out 2>&1 && fail "a second wrapper started"
rc=0
gitlab-ctl runsvdir >/tmp/out 2>&1 || rc=$?
[ "$rc" = 75 ] || fail "a second wrapper exits $rc, want 75 (the unit's SuccessExitStatus)"

step "uninstall under systemd disables and stops the unit"
gitlab-ctl uninstall >/tmp/out 2>&1 || { cat /tmp/out; fail "uninstall under systemd"; }
grep -q "^disable --quiet --now gitlab-runsvdir.service" /tmp/systemctl.log ||
	fail "uninstall did not disable --now: $(cat /tmp/systemctl.log)"
grep -q "stopped and disabled gitlab-runsvdir.service" /tmp/out || fail "uninstall said: $(cat /tmp/out)"
grep -q "runsvdir is not running" /tmp/out || fail "the unit's stop left the wrapper: $(cat /tmp/out)"
no_others || fail "processes left after uninstall under systemd: $(cat /tmp/others)"
apt-get purge -y -q gitlab-ctl >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; fail "purge 2"; }
echo "ok: install, reconfigure, remove, reinstall, upgrade, remove-accounts, purge, systemd path"
