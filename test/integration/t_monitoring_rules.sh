#!/bin/sh
# Omnibus' monitoring contract, on the Prometheus Debian ships (2.42):
# - the published gitlab-ctl.rules passes `promtool test rules` with
#   test/fixtures/rules/gitlab-ctl.rules.test.yml: ServiceDown on `up`,
#   RedisDown, PostgresDown, SidekiqJobsQueuing, PostgresDatabaseDeadlocks and
#   the SLI recordings for PostgreSQL, Redis and the node mean what Omnibus'
#   gitlab.rules and node.rules mean; a runit state is RunitServiceDown, and no
#   rule keeps the old name PostgreSQLDown; PatroniNoLeader,
#   PatroniReplicationLagHigh (its limit patroni['maximum_lag_on_failover'] of
#   gitlab.rb) and SentinelMasterDown fire on synthetic series as meant;
# - the running Prometheus loaded those names;
# - every Prometheus page we print (inspect's memory graph, scripts/demo,
#   doc/monitoring.md) answers 200 itself on that Prometheus (no /targets,
#   /alerts or /graph there: its UI is under /classic/).
. "$SRCDIR/test/integration/lib.sh"

for b in /usr/bin/prometheus /usr/bin/promtool curl; do
	command -v "$b" >/dev/null 2>&1 || fail "$b missing: run scripts/setup"
done
P=$(free_port)
OUT=$T_ROOT/out ERR=$T_ROOT/err
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF
$(only_services prometheus)
prometheus['enable'] = true
prometheus['listen_address'] = '127.0.0.1:$P'
prometheus['alert_for_seconds'] = 60
EOF
chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 0 ctl reconfigure
RULES=$T_ROOT/opt/gitlab/etc/prometheus/rules/gitlab-ctl.rules
[ -f "$RULES" ] || fail "no $RULES"

note "promtool test rules: Omnibus' names and meanings, ours under their own names"
mkdir "$T_ROOT/rt"
cp "$RULES" "$T_ROOT/rt/gitlab-ctl.rules"
cp "$SRCDIR/test/fixtures/rules/gitlab-ctl.rules.test.yml" "$T_ROOT/rt/"
(cd "$T_ROOT/rt" && promtool test rules gitlab-ctl.rules.test.yml) >"$OUT" 2>&1 ||
	{ cat "$OUT" >&2; fail "promtool test rules"; }
has "$OUT" "SUCCESS"
lacks "$RULES" "PostgreSQLDown"

note "PatroniReplicationLagHigh's limit is patroni['maximum_lag_on_failover'] of this gitlab.rb"
has "$RULES" "> 1048576"
echo "patroni['maximum_lag_on_failover'] = 4194304" >>"$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 0 ctl reconfigure
has "$RULES" "> 4194304"
lacks "$RULES" "> 1048576"

note "Prometheus loaded them"
api() { curl -fsS --max-time 5 -u "$(mon_auth)" "http://127.0.0.1:$P$1"; }
names() {
	api /api/v1/rules >"$OUT" 2>"$ERR" &&
		ruby -rjson -e 'n = JSON.parse(File.read(ARGV[0]))["data"]["groups"].flat_map { |g| g["rules"].map { |r| r["name"] } }
			want = %w[ServiceDown RedisDown PostgresDown SidekiqJobsQueuing PostgresDatabaseDeadlocks
				RunitServiceDown RunitServiceFlapping GitLabExporterMemoryHigh TargetDown
				PatroniNoLeader PatroniReplicationLagHigh SentinelMasterDown
				gitlab_sli:job:availability:ratio gitlab_sli:gitlab_component_errors:ratio
				gitlab_sli:redis_cpu_seconds:rate1m instance:node_memory_utilization:ratio]
			exit 1 unless (want - n).empty?' "$OUT"
}
until_true 300 names || fail "Prometheus' rules lack Omnibus' names: $(cat "$OUT")"

note "every Prometheus URL we print is served as it is (200, no redirect)"
served() {
	_code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -u "$(mon_auth)" "$1") || _code=000
	[ "$_code" = 200 ] || fail "$1 answers $_code on Debian's Prometheus ($2)"
}
expect_rc 0 ctl inspect prometheus
_url=$(sed -n 's/^    \(http:.*graph.*\)$/\1/p' "$OUT")
[ -n "$_url" ] || { cat "$OUT"; fail "inspect printed no memory graph URL"; }
served "$_url" "gitlab-ctl inspect"
# scripts/demo prints http://$PROM/PATH; doc/monitoring.md http://localhost:9090/PATH.
_paths=$( (
	grep -o 'http://\$PROM/[^ "$]*' "$SRCDIR/scripts/demo" | grep -v '/$' | sed 's|http://\$PROM||'
	grep -o 'http://localhost:9090/[^ `)]*' "$SRCDIR/doc/monitoring.md" | sed 's|http://localhost:9090||'
) | sort -u)
[ -n "$_paths" ] || fail "no Prometheus URL found in scripts/demo or doc/monitoring.md"
for _p in $_paths; do
	case $_p in /api/v1/query) _p="/api/v1/query?query=up" ;; esac
	served "http://127.0.0.1:$P$_p" "scripts/demo or doc/monitoring.md"
done
note "checked: $(echo "$_paths" | tr '\n' ' ')"
