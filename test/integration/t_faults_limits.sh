# Fault suite: runsvdir and the services start from the system's resource limits,
# never from the caller's shell: `(ulimit -Sn 10; gitlab-ctl reconfigure)` leaves services
# whose open-file limit is pid 1's (or as near as the hard limit allows), and a hard limit
# of 10 that cannot be raised (no CAP_SYS_RESOURCE) makes the start fail with a message
# instead of leaving a runsvdir that cannot open its services.
. "$SRCDIR/test/integration/lib.sh"

PORT=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF2
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
$(only_services gitlab_exporter)
EOF2
SVC=$SV_DIR/gitlab-exporter
soft_nofile() { awk '/^Max open files/ { print $4 }' "/proc/$1/limits"; }
hard_nofile() { awk '/^Max open files/ { print $5 }' "/proc/$1/limits"; }
# What the services should get: pid 1's soft limit, capped by the hard limit we can reach.
WANT=$(soft_nofile 1)
MYHARD=$(ulimit -Hn)
[ "$MYHARD" != unlimited ] && [ "$MYHARD" -lt "$WANT" ] && WANT=$MYHARD

out=$( (ulimit -Sn 10 && ctl reconfigure) 2>&1) || fail "reconfigure under ulimit -Sn 10 failed: $out"
P=$(status_pid "$SVC/supervise/status")
W=$(head -n 1 "$PIDFILE")
for pid in "$W" "$P"; do
	n=$(soft_nofile "$pid")
	[ "$n" -ge "$WANT" ] || fail "pid $pid ($(tr '\0' ' ' </proc/$pid/cmdline | cut -c1-60)) has an open-file limit of $n, want $WANT"
done
note "wrapper $W and exporter $P: open files $(soft_nofile "$P") (pid 1: $(soft_nofile 1))"
ctl inspect gitlab-exporter >/dev/null 2>&1 || fail "exporter not healthy: $(ctl inspect gitlab-exporter 2>&1)"

# A hard limit of 10: raised back with CAP_SYS_RESOURCE, else refused with a reason.
kill -TERM "$W"
wait_gone "$W" 300 || fail "wrapper $W did not stop"
cap_sys_resource() {
	_eff=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
	[ $(((0x$_eff >> 24) & 1)) = 1 ]
}
if out=$( (ulimit -n 10 && ctl reconfigure) 2>&1); then
	cap_sys_resource || fail "started under a hard limit of 10 without CAP_SYS_RESOURCE: $out"
	P=$(status_pid "$SVC/supervise/status")
	[ "$(soft_nofile "$P")" -ge "$WANT" ] || fail "exporter limit $(soft_nofile "$P") after ulimit -n 10"
	note "hard limit 10: raised (CAP_SYS_RESOURCE)"
else
	cap_sys_resource && fail "with CAP_SYS_RESOURCE the limits should have been raised: $out"
	printf '%s\n' "$out" | grep -q 'open-file limit is 10' || fail "no reason given: $out"
	printf '%s\n' "$out" | grep -q 'gitlab Reconfigured!' && fail "said Reconfigured: $out"
	note "hard limit 10, no CAP_SYS_RESOURCE: refused: $(printf '%s\n' "$out" | grep 'open-file' | cut -c1-120)"
	out=$(ctl reconfigure 2>&1) || fail "reconfigure from a normal shell failed: $out"
fi
ctl inspect gitlab-exporter >/dev/null 2>&1 || fail "exporter not healthy: $(ctl inspect gitlab-exporter 2>&1)"
