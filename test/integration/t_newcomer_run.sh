#!/bin/sh
# A newcomer's first run, with services running: the embedded exporter link follows the data dir of the
# gitlab-ctl that reconfigures (another checkout's old link is replaced, an operator's own
# file is left alone) and run scripts exec the installed copy; a service that fails to start
# has the cause from its log on screen (reconfigure and start); tail and inspect as non-root
# on root's tree fail at once saying why; inspect --json prints one document.
. "$SRCDIR/test/integration/lib.sh"
CONF=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
LINK=$T_ROOT/opt/gitlab/embedded/bin/gitlab-exporter
PORT=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
has() { grep -q -F -e "$1" "$OUT" || { cat "$OUT"; fail "expected: $1"; }; }
hasnt() { ! grep -q -F -e "$1" "$OUT" || { cat "$OUT"; fail "unexpected: $1"; }; }
run() { "$@" >"$OUT" 2>&1 && rc=0 || rc=$?; }
json_ok() { ruby -rjson -e 'JSON.parse(STDIN.read)' <"$1" 2>/dev/null; }
cat >"$CONF" <<EOR
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
$(only_services gitlab_exporter)
EOR

note "item 2: a link left by another checkout's gitlab-ctl is updated"
mkdir -p "$T_ROOT/other"
cp -R "$GITLAB_CTL_DATADIR/." "$T_ROOT/other/"
GITLAB_CTL_DATADIR=$T_ROOT/other run ctl reconfigure
[ "$rc" = 0 ] || { cat "$OUT"; fail "reconfigure with the other data dir: exit $rc"; }
[ "$(readlink "$LINK")" = "$T_ROOT/other/exporter/gitlab-exporter" ] || fail "first link: $(readlink "$LINK")"
run ctl reconfigure
[ "$rc" = 0 ] || { cat "$OUT"; fail "second reconfigure: exit $rc"; }
[ "$(readlink "$LINK")" = "$GITLAB_CTL_DATADIR/exporter/gitlab-exporter" ] ||
	fail "the embedded link still points at $(readlink "$LINK")"
has "gitlab Reconfigured!"

note "item 1: services run the installed copy, nothing in the checkout or the build tree"
grep -q -F "exec '$GITLAB_CTL' " "$SV_DIR/gitlab-exporter/run" || { cat "$SV_DIR/gitlab-exporter/run"; fail "run script"; }
if [ -z "${GITLAB_CTL_TEST_AS_IS:-}" ]; then
	for f in "$SV_DIR/gitlab-exporter/run" "$SV_DIR/gitlab-exporter/log/run"; do
		grep -q -F -e "$SRCDIR" -e "${BUILDDIR:-/nonexistent}" "$f" && fail "$f refers to the checkout"
	done
	case $(readlink -f "$LINK") in "$SRCDIR"/* | "${BUILDDIR:-/nonexistent}"/*) fail "link into the checkout" ;; esac
fi

note "item 2: an exporter the operator installed there is not replaced"
rm "$LINK" && cp "$GITLAB_CTL_DATADIR/exporter/gitlab-exporter" "$LINK"
run ctl reconfigure
[ "$rc" = 0 ] || { cat "$OUT"; fail "reconfigure with an operator's exporter: exit $rc"; }
[ -f "$LINK" ] && [ ! -L "$LINK" ] || fail "the operator's exporter was replaced"

note "item 8: inspect --json of a running service is one JSON document"
metrics() { curl -fsS -o /dev/null "http://127.0.0.1:$PORT/metrics" 2>/dev/null; }
until_true 150 metrics || fail "/metrics does not answer"
ctl inspect --json >"$OUT" || { cat "$OUT"; fail "inspect --json"; }
json_ok "$OUT" || { cat "$OUT"; fail "inspect --json is not JSON"; }
has '"running": true'

if [ "$(id -u)" = 0 ]; then
	note "item 7: inspect as non-root on root's tree says permission denied"
	run su nobody -s /bin/sh -c "'$GITLAB_CTL' --root '$T_ROOT' inspect gitlab-exporter"
	[ "$rc" = 1 ] || { cat "$OUT"; fail "non-root inspect: exit $rc"; }
	has "Permission denied (the tree is root's: run as root)"
	hasnt "runsv not running"
	run su nobody -s /bin/sh -c "'$GITLAB_CTL' --root '$T_ROOT' inspect --json gitlab-exporter"
	json_ok "$OUT" || { cat "$OUT"; fail "non-root inspect --json is not JSON"; }

	note "item 6: tail as non-root fails at once with the reason"
	run su nobody -s /bin/sh -c "timeout 30 '$GITLAB_CTL' --root '$T_ROOT' tail gitlab-exporter"
	[ "$rc" = 1 ] || { cat "$OUT"; fail "non-root tail: exit $rc (124: it waited)"; }
	has "Permission denied"
	hasnt "waiting for it"
fi

note "item 5: a failing start shows the cause from the service's log"
echo "gitlab_exporter['command'] = '$T_ROOT/missing/gitlab-exporter'" >>"$CONF"
SVWAIT=10 run ctl reconfigure
[ "$rc" = 1 ] || { cat "$OUT"; fail "reconfigure of a missing command: exit $rc"; }
has "error: gitlab-exporter: command $T_ROOT/missing/gitlab-exporter not found" # pre-flight
# A command that exists but fails when it runs: the cause comes from the service's log.
mkdir -p "$T_ROOT/missing"
printf '#!/bin/sh\nexec %s/missing/nothing-here\n' "$T_ROOT" >"$T_ROOT/missing/gitlab-exporter"
chmod 755 "$T_ROOT/missing" "$T_ROOT/missing/gitlab-exporter"
SVWAIT=10 run ctl reconfigure
[ "$rc" = 1 ] || { cat "$OUT"; fail "reconfigure of a failing service: exit $rc"; }
has "last lines of $T_ROOT/var/log/gitlab/gitlab-exporter/current:"
has "$T_ROOT/missing/nothing-here: not found"
run ctl stop gitlab-exporter
SVWAIT=3 run ctl start gitlab-exporter
[ "$rc" = 1 ] || { cat "$OUT"; fail "start of a failing service: exit $rc"; }
has "$T_ROOT/missing/nothing-here: not found"
ctl stop gitlab-exporter >/dev/null 2>&1 || true

echo "ok: newcomer traps with services running"
