#!/bin/sh
# A stand-in for systemctl in the lifecycle chroot (no systemd runs there): logs every call to
# /tmp/systemctl.log, and for gitlab-runsvdir.service does what systemd does with the unit's
# main process: `start` runs its ExecStart in a new session and remembers the pid, `stop` and
# `disable --now` TERM that pid and wait until it is gone (TimeoutStopSec=150).
set -eu
echo "$*" >>/tmp/systemctl.log
unit_pid=/tmp/gitlab-runsvdir.pid

running() {
	[ -s "$unit_pid" ] || return 1
	p=$(cat "$unit_pid")
	[ -d "/proc/$p" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null
}

stop_unit() {
	running || return 0
	kill -TERM "$(cat "$unit_pid")"
	n=1500
	while running && [ "$n" -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	! running
}

verb=$1
now=""
for a in "$@"; do [ "$a" = --now ] && now=1; done
case $verb in
start)
	running && exit 0
	exec_start=$(sed -n 's/^ExecStart=//p' /usr/lib/systemd/system/gitlab-runsvdir.service)
	# shellcheck disable=SC2086
	setsid $exec_start </dev/null >>/tmp/gitlab-runsvdir.log 2>&1 &
	echo $! >"$unit_pid"
	;;
stop) stop_unit ;;
disable) [ -z "$now" ] || stop_unit ;;
enable | daemon-reload) ;;
*)
	echo "fake systemctl: $verb not supported" >&2
	exit 1
	;;
esac
