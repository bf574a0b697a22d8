# `start` with no runsvdir running for the root: it starts the `gitlab-ctl
# runsvdir` wrapper (pidfile in <root>/opt/gitlab/var), waits for runsv to pick
# the service up, and reports ok: like any start. lib.sh stops the wrapper.
. "$SRCDIR/test/integration/lib.sh"

mkdir -p "$SV_DIR/solo" "$SERVICE_DIR"
printf '#!/bin/sh\nexec sleep 100000\n' >"$SV_DIR/solo/run"
chmod 755 "$SV_DIR/solo/run"
touch "$SV_DIR/solo/down" # only an explicit start brings it up
ln -s ../sv/solo "$SERVICE_DIR/solo"

out=$(ctl status solo) && fail "status without runsvdir succeeded: $out"
printf '%s\n' "$out" | grep -q '^warning: solo: unable to open supervise/ok: file does not exist$' ||
	fail "status without runsvdir: $out"

out=$(ctl start solo) || fail "start without runsvdir failed: $out"
printf '%s\n' "$out" | grep -Eq '^ok: run: solo: \(pid [0-9]+\) [0-9]+s, normally down$' ||
	fail "start: $out"
[ -s "$PIDFILE" ] || fail "no runsvdir wrapper pidfile after start"
out=$(ctl status solo) || fail "status after start: $out"
note "$out"
out=$(ctl stop solo) || fail "stop: $out"
printf '%s\n' "$out" | grep -q '^ok: down: solo: ' || fail "stop: $out"
note ok
