#!/bin/sh
# What a newcomer meets before anything runs: the build tree's binary finds its
# catalog alone (and says how to fix it when there is none), typos get "did you mean" with
# FILE:LINE:COL and --strict fails on them, unknown commands and services are named with
# suggestions, global options work after the command, check-config proves every enabled
# service can reach and execute its command, --json output is one JSON document, and the
# messages of non-root mistakes say what to do.
. "$SRCDIR/test/integration/lib.sh"
CONF=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
mkdir -p "$T_ROOT/etc/gitlab"
has() { grep -q -F -e "$1" "$OUT" || { cat "$OUT"; fail "expected: $1"; }; }
hasnt() { ! grep -q -F -e "$1" "$OUT" || { cat "$OUT"; fail "unexpected: $1"; }; }
# run CMD...: its output in $OUT, its exit status in $rc
run() { "$@" >"$OUT" 2>&1 && rc=0 || rc=$?; }
json_ok() { ruby -rjson -e 'JSON.parse(STDIN.read)' <"$1" 2>/dev/null; }
as_nobody() { su nobody -s /bin/sh -c "$*"; }

note "item 3: the build tree's binary needs no GITLAB_CTL_DATADIR"
# No service enabled: the checkout may be 0700, which check-config would rightly report.
only_services >"$CONF"
run env -u GITLAB_CTL_DATADIR "$BUILD_CTL" --root "$T_ROOT" check-config
[ "$rc" = 0 ] || { cat "$OUT"; fail "build-tree check-config without GITLAB_CTL_DATADIR: exit $rc"; }
run env -u GITLAB_CTL_DATADIR "$BUILD_CTL" --root "$T_ROOT" service-list
grep -qx 'gitlab-exporter\*\{0,1\}' "$OUT" || { cat "$OUT"; fail "service-list from the build tree"; }
run env -u GITLAB_CTL_DATADIR "$GITLAB_CTL" --root "$T_ROOT" show-config
[ "$rc" = 0 ] || { cat "$OUT"; fail "the installed copy does not find its own data dir"; }

note "item 3: no catalog anywhere: the message names the catalog and the fix, not gitlab.rb"
pkgdata=$(sed -n 's/^#define GITLAB_CTL_PKGDATADIR *"\(.*\)"$/\1/p' "${BUILDDIR:-/nonexistent}/build_config.h" 2>/dev/null || true)
if [ -n "$pkgdata" ] && [ ! -e "$pkgdata/sv" ]; then
	mkdir "$T_ROOT/alone" && cp "$BUILD_CTL" "$T_ROOT/alone/gitlab-ctl"
	run env -u GITLAB_CTL_DATADIR "$T_ROOT/alone/gitlab-ctl" --root "$T_ROOT" check-config
	[ "$rc" = 1 ] || fail "check-config without a catalog: exit $rc"
	has "no service catalog at $pkgdata/sv"
	has "GITLAB_CTL_DATADIR"
	hasnt "gitlab.rb: 1 error"
else
	note "skipped: $pkgdata/sv exists on this machine"
fi

note "item 4: typos get 'did you mean', located; --strict fails on warnings"
{
	cat <<'EOR'
gitlab_exporter['listen_prot'] = 9168
gitlab_exportr['enable'] = true
gitlab_rails['time_zone'] = 'UTC'
redis_exporter['enable'] = false
EOR
	only_services gitlab_exporter
} >"$CONF"
run ctl check-config
[ "$rc" = 1 ] || { cat "$OUT"; fail "an unknown top-level name passes check-config (exit $rc)"; }
has "$CONF:1:17: warning: gitlab_exporter['listen_prot'] is not a setting gitlab-ctl knows; ignored (did you mean 'listen_port'?)"
has "$CONF:2:1: error: gitlab_exportr is not a name gitlab-ctl or Omnibus knows; did you mean 'gitlab_exporter'?"
hasnt "did you mean 'gitlab_rails"
grep -q "redis_exporter.*did you mean" "$OUT" && fail "an Omnibus service name got a suggestion"
sed -i '2d' "$CONF"
run ctl check-config
[ "$rc" = 0 ] || { cat "$OUT"; fail "warnings alone fail check-config (exit $rc)"; }
run ctl check-config --strict
[ "$rc" = 1 ] || { cat "$OUT"; fail "check-config --strict with warnings: exit $rc"; }
has "(--strict: warnings are errors)"
{ echo "gitlab_exporter['listen_port'] = 9168"; only_services gitlab_exporter; } >"$CONF"
run ctl check-config --strict
[ "$rc" = 0 ] || { cat "$OUT"; fail "check-config --strict on a clean file: exit $rc"; }

note "item 4: unknown commands get a suggestion; global options after the command"
run "$GITLAB_CTL" statsu
[ "$rc" = 1 ] || fail "unknown command: exit $rc (1, as Omnibus)"
has "unknown command 'statsu'; did you mean 'status'?"
run "$GITLAB_CTL" help restrat
has "did you mean 'restart'?"
run env -u GITLAB_CTL_ROOT "$GITLAB_CTL" service-list --root "$T_ROOT"
[ "$rc" = 0 ] || { cat "$OUT"; fail "service-list --root DIR: exit $rc"; }
has "gitlab-exporter"
run env -u GITLAB_CTL_ROOT "$GITLAB_CTL" show-config -v --root="$T_ROOT" gitlab-exporter
[ "$rc" = 0 ] || { cat "$OUT"; fail "show-config -v --root=DIR: exit $rc"; }
has "config: $CONF"

note "item 5: check-config proves each enabled service can run its command"
cat >"$CONF" <<EOR
gitlab_exporter['command'] = '$T_ROOT/missing/gitlab-exporter'
$(only_services gitlab_exporter)
EOR
run ctl check-config
[ "$rc" = 1 ] || { cat "$OUT"; fail "a missing command passes check-config"; }
has "$CONF:1: error: gitlab-exporter: command $T_ROOT/missing/gitlab-exporter not found"
if [ ! -e /usr/bin/prometheus-node-exporter ]; then
	{ printf "node_exporter['enable'] = true\n"; only_services node_exporter; } >"$CONF"
	run ctl check-config
	[ "$rc" = 1 ] || { cat "$OUT"; fail "node_exporter without its binary passes check-config"; }
	has "$CONF:1: error: node-exporter: command /usr/bin/prometheus-node-exporter not found: install the Debian package prometheus-node-exporter (apt-get install prometheus-node-exporter)"
fi
if [ "$(id -u)" = 0 ]; then
	note "item 1/5: a checkout in a 0700 directory is named as what blocks the service user"
	mkdir -m 0700 "$T_ROOT/home"
	mkdir -p "$T_ROOT/home/checkout"
	cp -R "$GITLAB_CTL_DATADIR/." "$T_ROOT/home/checkout/"
	{ printf "gitlab_exporter['enable'] = true\n"; only_services gitlab_exporter; } >"$CONF"
	GITLAB_CTL_DATADIR=$T_ROOT/home/checkout run ctl check-config
	[ "$rc" = 1 ] || { cat "$OUT"; fail "a bundled exporter in a 0700 directory passes check-config"; }
	has "gitlab-exporter cannot run its command $T_ROOT/home/checkout/exporter/gitlab-exporter: $T_ROOT/home is not searchable by git (mode 0700)"
	{
		printf "gitlab_exporter['command'] = '%s'\n" "$T_ROOT/home/checkout/exporter/gitlab-exporter"
		only_services gitlab_exporter
	} >"$CONF"
	run ctl check-config
	has "$T_ROOT/home is not searchable by git (mode 0700)"
	chmod 0711 "$T_ROOT/home"
	chmod 0644 "$T_ROOT/home/checkout/exporter/gitlab-exporter"
	run ctl check-config
	has "$T_ROOT/home/checkout/exporter/gitlab-exporter is not executable by git (mode 0644)"
	chmod 0755 "$T_ROOT/home/checkout/exporter/gitlab-exporter"
	run ctl check-config
	[ "$rc" = 0 ] || { cat "$OUT"; fail "a reachable command fails check-config"; }
	# Without root the services run as the caller: its own permissions are what counts.
	chmod 0700 "$T_ROOT/home"
	run as_nobody "'$GITLAB_CTL' --root '$T_ROOT' check-config"
	has "$T_ROOT/home is not searchable by nobody (mode 0700)"
fi

note "item 7: unknown services are named with the known ones; non-root mistakes say what to do"
{ printf "gitlab_exporter['enable'] = true\n"; only_services gitlab_exporter; } >"$CONF"
run ctl inspect nosuch
[ "$rc" = 1 ] || fail "inspect nosuch: exit $rc"
has "unknown service 'nosuch' (known: alertmanager, etcd, gitlab-exporter, node-exporter, patroni, pgbouncer, pgbouncer-watcher, postgres-exporter, postgresql, prometheus, redis, redis-exporter, sentinel, sentinel-exporter)"
run ctl inspect node-exportr
has "did you mean 'node-exporter'?"
# no tree yet: inspect says what status says (it used to call gitlab-exporter, enabled here, "not enabled")
run ctl inspect gitlab-exporter
has "gitlab-ctl inspect: not set up yet: run gitlab-ctl reconfigure"
if [ "$(id -u)" = 0 ] && [ ! -e /opt/gitlab ]; then
	run as_nobody "env -u GITLAB_CTL_ROOT '$GITLAB_CTL' reconfigure"
	[ "$rc" = 1 ] || { cat "$OUT"; fail "non-root reconfigure on /opt/gitlab: exit $rc"; }
	has "Permission denied (run as root or use --root DIR)"
fi

note "item 6: tail of an unknown service fails at once"
run timeout 30 "$GITLAB_CTL" --root "$T_ROOT" tail nosuch
[ "$rc" = 1 ] || { cat "$OUT"; fail "tail nosuch: exit $rc (124: it waited)"; }
has "unknown service 'nosuch' (known: alertmanager, etcd, gitlab-exporter, node-exporter, patroni, pgbouncer, pgbouncer-watcher, postgres-exporter, postgresql, prometheus, redis, redis-exporter, sentinel, sentinel-exporter)"

note "item 8: show-config --json and inspect --json always print one JSON document"
{
	cat <<'EOR'
gitlab_exporter['env'] = { 'MY_API_TOKEN' => 's3cr3t-value', 'QUOTED' => "a\"b\\c" }
EOR
	only_services gitlab_exporter
} >"$CONF"
ctl show-config --json >"$OUT" || fail "show-config --json"
json_ok "$OUT" || { cat "$OUT"; fail "show-config --json is not JSON"; }
ruby -rjson -e '
	d = JSON.parse(STDIN.read)
	s = d.fetch("services")
	e = s.fetch("gitlab-exporter").fetch("env")
	exit 1 unless e["MY_API_TOKEN"] == "[REDACTED]" && e["QUOTED"] == "a\"b\\c"
	exit 2 unless s.fetch("node-exporter") == {"enabled" => false}
	exit 3 unless s.fetch("gitlab-exporter").fetch("settings").fetch("listen_port") == 9168
' <"$OUT" || { cat "$OUT"; fail "show-config --json content ($?)"; }
hasnt "s3cr3t-value"
ctl show-config --json --show-secrets >"$OUT" && json_ok "$OUT" || fail "show-config --json --show-secrets"
has "s3cr3t-value"
ctl show-config --json node-exporter >"$OUT" && json_ok "$OUT" || fail "show-config --json SERVICE"
echo "gitlab_exporter['listen_port'] = 'x' +" >"$CONF"
ctl show-config --json >"$OUT" 2>/dev/null && fail "show-config --json of a broken file succeeded"
json_ok "$OUT" || { cat "$OUT"; fail "show-config --json of a broken file prints no JSON"; }
{ printf "gitlab_exporter['enable'] = true\n"; only_services gitlab_exporter; } >"$CONF"
ctl inspect --json node-exporter >"$OUT" 2>/dev/null && fail "inspect of a disabled service succeeded"
json_ok "$OUT" || { cat "$OUT"; fail "inspect --json of a disabled service prints no JSON"; }
has 'not set up yet: run gitlab-ctl reconfigure"' # no tree yet: whether it is enabled is not known
ctl inspect --json >"$OUT" 2>/dev/null && fail "inspect with no service tree succeeded"
json_ok "$OUT" || { cat "$OUT"; fail "inspect --json without a tree prints no JSON"; }

note "item 9: the docs cite nothing the repository lacks, and say what the project is not"
# Sources, scripts and docs alike (test/ is left out: this very check names it); a whole
# word, since INSPECT (an include guard) cites nothing.
for f in README.md CMakeLists.txt launcher cmake scripts bench doc exporter sv templates etc; do
	! grep -rnw 'SPEC' "$SRCDIR/$f" || fail "$f cites SPEC, which the repository does not have"
done
grep -q 'not a replacement' "$SRCDIR/README.md" || fail "README does not say what it is not"
grep -q 'gitlab-psql' "$SRCDIR/README.md" && grep -q 'git' "$SRCDIR/README.md" ||
	fail "README does not name the accounts it creates"
note "the README's quick start: how to build and install, and a gitlab.rb check-config accepts"
grep -qF 'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j' "$SRCDIR/README.md" &&
	grep -qF 'cmake --install build --prefix /usr/local' "$SRCDIR/README.md" ||
	fail "README has no build and install commands"
sed -n "/^mkdir -p \/etc\/gitlab && cat >\/etc\/gitlab\/gitlab.rb <<'EOF'\$/,/^EOF\$/p" "$SRCDIR/README.md" |
	sed '1d;$d' >"$T_ROOT/quick.rb"
grep -q "^postgresql\[" "$T_ROOT/quick.rb" || fail "no quick-start gitlab.rb in the README"
ctl -c "$T_ROOT/quick.rb" check-config >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "the quick start's gitlab.rb"; }
echo "ok: newcomer traps (no service running)"
