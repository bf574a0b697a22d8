#!/bin/sh
# `gitlab-ctl exec gitlab-exporter --from-config -c FILE` in a fresh root, with the catalog's
# command (gitlab_exporter['command'] unset): before any reconfigure there is no
# <install>/embedded/bin/gitlab-exporter link, and exec runs the bundled exporter the link
# would name, in place (same pid), serving /metrics; nothing is linked by it.
. "$SRCDIR/test/integration/lib.sh"

port=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$RB" <<EOF
$(only_services gitlab_exporter)
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $port
EOF
chmod 600 "$RB"
LINK=$T_ROOT/opt/gitlab/embedded/bin/gitlab-exporter
[ ! -e "$LINK" ] && [ ! -L "$LINK" ] || fail "a fresh root already has $LINK"

"$GITLAB_CTL" --root "$T_ROOT" exec gitlab-exporter --from-config -c "$RB" >"$T_ROOT/out" 2>&1 </dev/null &
pid=$!
track_pid "$pid"
metrics() { curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics" >"$T_ROOT/metrics" 2>/dev/null; }
until_true 150 metrics || { cat "$T_ROOT/out"; fail "/metrics does not answer: exec with the catalog's command failed"; }
alive "$pid" || fail "pid $pid is gone: exec forked"
tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "exporter/gitlab-exporter web -c $T_ROOT/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml" ||
	fail "pid $pid is not the bundled exporter: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
grep -q "gitlab_exporter_probe_error" "$T_ROOT/metrics" || fail "/metrics: $(head -5 "$T_ROOT/metrics")"
[ ! -e "$LINK" ] && [ ! -L "$LINK" ] || fail "exec made $LINK (reconfigure's to make)"
kill -TERM "$pid"
_rc=0
wait "$pid" || _rc=$?
[ "$_rc" = 0 ] || fail "the exporter exited $_rc on TERM"
