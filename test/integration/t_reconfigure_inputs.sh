# Inputs reconfigure must refuse before touching anything:
# - SVWAIT, read exactly as start/stop/restart read it: a value that is not a number of
#   seconds is a usage error, never a silent 30 s;
# - a listen address too long for the readiness check's URL: an error naming it, not a
#   check that probes a truncated address and times out after SVWAIT.
. "$SRCDIR/test/integration/lib.sh"

mkdir -p "$T_ROOT/etc/gitlab"
{ echo "gitlab_exporter['listen_port'] = $(free_port)"; only_services gitlab_exporter; } >"$T_ROOT/etc/gitlab/gitlab.rb"
for bad in soon 5s -1 86401; do
	rc=0
	out=$(SVWAIT=$bad ctl reconfigure 2>&1) || rc=$?
	[ "$rc" = 2 ] || fail "SVWAIT=$bad: want exit 2, got $rc: $out"
	printf '%s\n' "$out" | grep -q "SVWAIT=$bad" || fail "SVWAIT=$bad not named: $out"
	[ -e "$T_ROOT/opt" ] && fail "SVWAIT=$bad: the tree was touched"
	rc=0
	SVWAIT=$bad ctl start 2>/dev/null || rc=$?
	[ "$rc" = 2 ] || fail "SVWAIT=$bad start: want exit 2, got $rc"
done

long=$(printf '%0700d' 0 | tr 0 a)
echo "gitlab_exporter['listen_address'] = '$long'" >>"$T_ROOT/etc/gitlab/gitlab.rb"
rc=0
out=$(ctl reconfigure 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "long listen address: want exit 1, got $rc: $out"
printf '%s\n' "$out" | grep -q 'is too long for a check URL' || fail "message: $out"
[ -e "$SV_DIR" ] && fail "long listen address: the tree was touched"
echo "ok t_reconfigure_inputs"
