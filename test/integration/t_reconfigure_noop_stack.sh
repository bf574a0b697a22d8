#!/bin/sh
# issue 31: a no-op reconfigure of the full single-node stack (an empty gitlab.rb: every
# service Omnibus runs by default) probes nothing the recorded state proves. Under strace -f
# it starts no process (one execve: gitlab-ctl's own; no clone or fork), replaces or syncs no
# file (the readiness records already say what it proved), and connects to no
# service (no psql, no pg_isready, no HTTP or Redis probe): each service is up with the pid
# its readiness was proven for, PostgreSQL's after_ready steps passed for that pid. A change
# probes only what it touched: postgresql['work_mem'] (a HUP) runs PostgreSQL's validation,
# readiness and steps and nothing of the others (the parameters' contexts asked once, then
# kept under the binary's identity); prometheus['scrape_interval'] probes
# Prometheus over HTTP and nothing else; Redis restarted outside reconfigure (a new pid) is
# probed again, and the next no-op is back to none. The first run starts the services that
# need nothing from PostgreSQL before its initdb, not after. The defaults' fixed ports: a
# network namespace of its own.
. "$SRCDIR/test/integration/netns.sh"
. "$SRCDIR/test/integration/lib.sh"

command -v strace >/dev/null 2>&1 || { echo "SKIP: no strace"; exit 77; }
[ -x /usr/lib/postgresql/15/bin/initdb ] || { echo "SKIP: no PostgreSQL 15"; exit 77; }
strace -f -qq -e trace=execve -o /dev/null true 2>/dev/null || { echo "SKIP: strace cannot trace here"; exit 77; }
export SVWAIT=120 # initdb, then the whole stack, on a busy machine
OUT=$T_ROOT/out ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
ALL="alertmanager gitlab-exporter node-exporter postgres-exporter postgresql prometheus redis redis-exporter"
mkdir -p "$T_ROOT/etc/gitlab"
: >"$RB"
chmod 600 "$RB"
pid_of() { status_pid "$SV_DIR/$1/supervise/status"; }

# traced NAME: reconfigure -v under strace -f (processes made and programs run, connections);
# the trace in $T_ROOT/NAME.st, its probes (connections but nscd's) in $T_ROOT/NAME.probes,
# the programs it ran in $T_ROOT/NAME.execs.
traced() {
	_rc=0
	strace -f -qq -e trace=execve,clone,clone3,fork,vfork,connect,rename,renameat,renameat2,fsync,fdatasync -o "$T_ROOT/$1.st" \
		"$GITLAB_CTL" --root "$T_ROOT" -v reconfigure >"$OUT" 2>"$ERR" || _rc=$?
	[ "$_rc" = 0 ] || { cat "$OUT" "$ERR" >&2; fail "$1: reconfigure exited $_rc"; }
	grep 'connect(' "$T_ROOT/$1.st" | grep -v '/nscd/socket"' >"$T_ROOT/$1.probes" || true
	sed -n 's/^[0-9]* *execve("\([^"]*\)".*) = 0$/\1/p' "$T_ROOT/$1.st" >"$T_ROOT/$1.execs"
}
# writes NAME: the files the traced run replaced or synced.
writes() { grep -cE '^[0-9]+ +(rename|renameat|renameat2|fsync|fdatasync)\(' "$T_ROOT/$1.st" || true; }
# procs NAME: the processes the traced run made (forks, and threads of what it ran).
procs() { grep -cE '^[0-9]+ +(clone|clone3|fork|vfork)\(' "$T_ROOT/$1.st" || true; }
# proven NAME SVC...: each SVC was found ready as proven, not probed.
proven() {
	_n=$1
	shift
	for _s in "$@"; do
		grep -q "^$_s: ready, as proven for pid $(pid_of "$_s")\$" "$ERR" ||
			{ cat "$ERR" >&2; fail "$_n: $_s was not found ready as proven"; }
	done
}

note "first run of the full stack: what needs nothing from PostgreSQL starts before initdb"
expect_rc 0 ctl -v reconfigure
has "$OUT" "gitlab Reconfigured!"
cat "$OUT" "$ERR" >"$T_ROOT/first"
_rsv=$(grep -n '^start runsvdir' "$T_ROOT/first" | cut -d: -f1)
_init=$(grep -n '^run postgresql setup initdb' "$T_ROOT/first" | cut -d: -f1)
[ -n "$_rsv" ] && [ -n "$_init" ] && [ "$_rsv" -lt "$_init" ] ||
	{ cat "$T_ROOT/first" >&2; fail "runsvdir was not started before initdb"; }
expect_rc 0 ctl status
for s in $ALL; do
	grep -q "^run: $s: (pid [0-9]*)" "$OUT" || { cat "$OUT" >&2; fail "$s is not running"; }
done
started() { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat"; } # clock ticks after boot
for s in alertmanager node-exporter prometheus redis; do
	[ "$(started "$(pid_of "$s")")" -lt "$(started "$(pid_of postgresql)")" ] ||
		fail "$s started after PostgreSQL, not while initdb ran"
done

note "a no-op: no process, no probe"
traced noop
grep -q '^0/[0-9]* resources updated' "$OUT" || { cat "$OUT" >&2; fail "the no-op updated something"; }
[ "$(wc -l <"$T_ROOT/noop.execs")" -eq 1 ] || fail "the no-op ran programs: $(cat "$T_ROOT/noop.execs")"
[ "$(procs noop)" -eq 0 ] || fail "the no-op made $(procs noop) processes"
[ "$(writes noop)" -eq 0 ] || fail "the no-op wrote: $(grep -E 'rename|fsync' "$T_ROOT/noop.st")"
empty "$T_ROOT/noop.probes"
proven noop $ALL
has "$ERR" "postgresql setup reachable: passed for pid $(pid_of postgresql) already"

note "postgresql['work_mem'] (a HUP): PostgreSQL is validated and probed, nothing else"
echo "postgresql['work_mem'] = '17MB'" >"$RB"
PG=$(pid_of postgresql)
traced hup
has "$OUT" "reload postgresql"
[ "$(pid_of postgresql)" = "$PG" ] || fail "the HUP restarted PostgreSQL"
grep -qx '/usr/lib/postgresql/15/bin/pg_isready' "$T_ROOT/hup.execs" || fail "PostgreSQL's readiness was not checked"
grep -qx '/usr/lib/postgresql/15/bin/psql' "$T_ROOT/hup.execs" || fail "PostgreSQL's steps did not run"
sed 1d "$T_ROOT/hup.execs" | grep -v '^/usr/lib/postgresql/15/bin/' | grep -vxF "$GITLAB_CTL" >"$T_ROOT/hup.others" || true
empty "$T_ROOT/hup.others"
grep -v '\.s\.PGSQL\.' "$T_ROOT/hup.probes" >"$T_ROOT/hup.others" || true
empty "$T_ROOT/hup.others"
proven hup alertmanager gitlab-exporter node-exporter postgres-exporter prometheus redis redis-exporter

grep -q '"--describe-config"' "$T_ROOT/hup.st" || fail "the first HUP did not ask PostgreSQL its parameters' contexts"

note "another HUP: the contexts are the binary's, kept from the first (no --describe-config)"
printf "%s\n" "postgresql['work_mem'] = '18MB'" "postgresql['shared_buffers'] = '200MB'" >"$RB"
traced hup2
has "$OUT" "reload postgresql"
has "$ERR" "postgresql: shared_buffers changed; it takes effect only at a restart"
grep -qx '/usr/lib/postgresql/15/bin/pg_isready' "$T_ROOT/hup2.execs" || fail "PostgreSQL's readiness was not checked"
! grep -q '"--describe-config"' "$T_ROOT/hup2.st" || fail "the contexts were asked again"
[ "$(stat -c '%U %a' "$T_ROOT/opt/gitlab/var/cache/contexts-postgresql")" = "root 600" ] ||
	fail "contexts-postgresql: $(stat -c '%U %a' "$T_ROOT/opt/gitlab/var/cache/contexts-postgresql")"
echo "postgresql['work_mem'] = '17MB'" >"$RB"
expect_rc 0 ctl reconfigure

note "the HUP's readiness is recorded: the next no-op probes nothing"
traced noop2
[ "$(procs noop2)" -eq 0 ] || fail "the no-op after the HUP made $(procs noop2) processes"
empty "$T_ROOT/noop2.probes"
proven noop2 $ALL

note "prometheus['scrape_interval']: Prometheus is probed over HTTP, nothing else"
printf "%s\n" "postgresql['work_mem'] = '17MB'" "prometheus['scrape_interval'] = 20" >"$RB"
traced prom
grep -q 'sin_port=htons(9090)' "$T_ROOT/prom.probes" || { cat "$T_ROOT/prom.probes" >&2; fail "Prometheus was not probed"; }
grep -v 'sin_port=htons(9090)' "$T_ROOT/prom.probes" >"$T_ROOT/prom.others" || true
empty "$T_ROOT/prom.others"
lacks "$T_ROOT/prom.execs" "/usr/lib/postgresql/"
proven prom alertmanager gitlab-exporter node-exporter postgres-exporter postgresql redis redis-exporter

note "Redis restarted outside reconfigure: a new pid, probed again; then nothing again"
RD=$(pid_of redis)
expect_rc 0 ctl restart redis
_new() { _p=$(pid_of redis) && [ -n "$_p" ] && [ "$_p" != 0 ] && [ "$_p" != "$RD" ]; }
until_true 100 _new || fail "redis did not come back with a new pid"
traced redis
grep -q 'redis.socket' "$T_ROOT/redis.probes" || { cat "$T_ROOT/redis.probes" >&2; fail "the restarted Redis was not probed"; }
grep -v 'redis.socket' "$T_ROOT/redis.probes" >"$T_ROOT/redis.others" || true
empty "$T_ROOT/redis.others"
lacks "$ERR" "redis: ready, as proven"
proven redis alertmanager gitlab-exporter node-exporter postgres-exporter postgresql prometheus redis-exporter
traced noop3
[ "$(procs noop3)" -eq 0 ] || fail "the no-op after Redis' restart made $(procs noop3) processes"
empty "$T_ROOT/noop3.probes"
proven noop3 $ALL
exit 0
