#!/bin/sh
# Names an account plants do not block root. git (the exporter's account) fills its home with
# a file named .gitlab-exporter.yml.moved-aside.N for every pid N the run could have, and puts
# a directory at gitlab-exporter.yml. The next reconfigure, which also changes Redis, must:
# move git's directory out of the way under a name git could not plant (into root's
# <install>/var/moved-aside, git's data kept), write the YAML, and apply the Redis change
# (redis restarted with the new maxmemory); nothing git planted is touched. Needs root.
. "$SRCDIR/test/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }

export SVWAIT=60
PORT=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
H=$T_ROOT/var/opt/gitlab/gitlab-exporter
YML=$H/gitlab-exporter.yml
SOCK=$T_ROOT/var/opt/gitlab/redis/redis.socket
ASIDE=$T_ROOT/opt/gitlab/var/moved-aside
mkdir -p "$T_ROOT/etc/gitlab"
write_rb() {
	cat >"$RB" <<EOF
redis['enable'] = true
redis['maxmemory'] = '$1'
$(exporter_ports)
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
$(only_services gitlab_exporter redis redis_exporter)
EOF
	chmod 600 "$RB"
}
pid_of() { status_pid "$SV_DIR/$1/supervise/status"; }
maxmemory() { ctl exec redis -- redis-cli -s "$SOCK" config get maxmemory 2>/dev/null | sed -n 2p; }

write_rb 10mb
out=$(ctl reconfigure 2>&1) || fail "first reconfigure: $out"
[ "$(maxmemory)" = 10485760 ] || fail "redis maxmemory is $(maxmemory), want 10mb"
[ "$(stat -c %U "$H")" = git ] || fail "the home is not git's: $(stat -c %U "$H")"
REDIS=$(pid_of redis)

note "git plants a moved-aside name for every pid the run could get, and a directory at the YAML"
# Every pid when pid_max is small (32768 here, the kernel's default), else a window past the
# last one handed out that the few forks before reconfigure cannot leave.
PIDMAX=$(cat /proc/sys/kernel/pid_max)
LAST=$(cat /proc/sys/kernel/ns_last_pid)
if [ "$PIDMAX" -le 65536 ]; then FROM=1 N=$((PIDMAX - 1)); else FROM=$((LAST + 1)) N=32768; fi
runuser -u git -- sh -c '
	cd "$1" && i=0
	while [ $i -lt "$3" ]; do
		p=$(( ($2 + i - 1) % ($4 - 1) + 1 ))
		: >".gitlab-exporter.yml.moved-aside.$p"
		i=$((i + 1))
	done
	rm -f gitlab-exporter.yml && mkdir gitlab-exporter.yml && echo mine >gitlab-exporter.yml/data
' sh "$H" "$FROM" "$N" "$PIDMAX" || fail "planting as git"
planted=$(find "$H" -maxdepth 1 -name '.gitlab-exporter.yml.moved-aside.*' | wc -l)
[ "$planted" -ge "$N" ] || fail "planted $planted names, want $N"
note "planted $planted names (pids $FROM.., pid_max $PIDMAX)"

note "reconfigure with a Redis change: the YAML is written, Redis gets its change"
write_rb 20mb
out=$(ctl reconfigure 2>&1) || fail "reconfigure blocked by planted names: $out"
printf '%s\n' "$out" | grep -q "^replace directory $YML with file" || fail "not said: $out"
printf '%s\n' "$out" | grep -q "^moved the directory at $YML to $ASIDE/gitlab-exporter\.gitlab-exporter\.yml\.[A-Za-z0-9]\{6\}$" ||
	fail "where it went is not said: $out"
[ "$(stat -c '%a %U %F' "$YML")" = "600 git regular file" ] || fail "yml: $(stat -c '%a %U %F' "$YML")"
grep -q "listen_port: $PORT\|port: $PORT" "$YML" || fail "the YAML lacks the port: $(cat "$YML")"
[ "$(maxmemory)" = 20971520 ] || fail "the Redis change was not applied: maxmemory $(maxmemory)"
[ "$(pid_of redis)" != "$REDIS" ] || fail "redis was not restarted for its change"
# git's directory is kept, in root's 0700 place that git can neither reach nor fill
[ "$(stat -c '%a %U' "$ASIDE")" = "700 root" ] || fail "aside dir: $(stat -c '%a %U' "$ASIDE")"
[ "$(cat "$ASIDE"/gitlab-exporter.gitlab-exporter.yml.*/data)" = mine ] || fail "git's data is gone"
left=$(find "$H" -maxdepth 1 -name '.gitlab-exporter.yml.moved-aside.*' -type f -empty | wc -l)
[ "$left" = "$planted" ] || fail "planted files changed: $left of $planted left"
note "reconfigure: $(printf '%s\n' "$out" | grep resources)"

note "again: a directory at the YAML and a full set of names is still no obstacle"
runuser -u git -- sh -c 'rm -f "$1" && mkdir "$1"' sh "$YML"
write_rb 30mb
out=$(ctl reconfigure 2>&1) || fail "second reconfigure: $out"
[ "$(maxmemory)" = 31457280 ] || fail "the second Redis change was not applied: $(maxmemory)"
[ "$(find "$ASIDE" -mindepth 1 -maxdepth 1 | wc -l)" = 2 ] || fail "aside: $(ls -la "$ASIDE")"
