# The monitoring set on one node, from gitlab.rb alone: prometheus and alertmanager come up
# on free loopback ports; the published prometheus.yml and alertmanager.yml pass promtool
# and amtool; every target (prometheus, gitlab_exporter_*) is up and PromQL returns the
# exporter's memory; nothing listens on 9094 or off loopback; a scrape_interval change
# HUPs Prometheus (same pid, reload successful); a malformed user scrape_configs is refused
# at its gitlab.rb line with prometheus.yml left byte-identical; a hostile job name stays one
# YAML string;
# roles(['monitoring_role']) runs prometheus, alertmanager and node-exporter only;
# prometheus_monitoring['enable'] = false stops and disables the set.
. "$SRCDIR/test/integration/lib.sh"

for b in /usr/bin/prometheus /usr/bin/promtool /usr/bin/prometheus-alertmanager /usr/bin/amtool \
	/usr/bin/prometheus-node-exporter; do
	[ -x "$b" ] || fail "$b missing: run scripts/setup (it installs Debian's prometheus packages)"
done

P=$(free_port)
A=$(free_port)
E=$(free_port)
N=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
YML=$T_ROOT/var/opt/gitlab/prometheus/prometheus.yml
AMYML=$T_ROOT/var/opt/gitlab/alertmanager/alertmanager.yml
mkdir -p "$T_ROOT/etc/gitlab"
base() {
	cat <<EOF
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $E
prometheus['listen_address'] = '127.0.0.1:$P'
alertmanager['listen_address'] = 'localhost:$A'
node_exporter['listen_address'] = '127.0.0.1:$N'
prometheus['scrape_interval'] = 1
prometheus['scrape_timeout'] = 1
prometheus['external_labels'] = { 'node' => "it's \"quoted\"\n- job_name: x" }
EOF
}
{
	base
	echo "prometheus['enable'] = true"
	echo "alertmanager['enable'] = true"
	only_services gitlab_exporter prometheus alertmanager
} >"$RB"

svpid() { status_pid "$SV_DIR/$1/supervise/status"; }
api() { curl -fsS --max-time 5 -u "$(mon_auth)" "http://127.0.0.1:$P$1"; }
# yaml FILE RUBY: evaluate RUBY with d = the parsed file.
yaml() { ruby -ryaml -e 'd = YAML.load_file(ARGV[0]); '"$2" "$1"; }

# --- first reconfigure ---------------------------------------------------------------------
expect_rc 0 ctl reconfigure
has "$OUT" "gitlab Reconfigured!"
PP=$(svpid prometheus)
AP=$(svpid alertmanager)
alive "$PP" && alive "$AP" || fail "prometheus ($PP) or alertmanager ($AP) not running"
promtool check config "$YML" >"$OUT" 2>&1 || { cat "$OUT" >&2; fail "promtool check config"; }
has "$OUT" "SUCCESS: 1 rule files found"
amtool check-config "$AMYML" >"$OUT" 2>&1 || { cat "$OUT" >&2; fail "amtool check-config"; }
yaml "$YML" 'exit 1 unless d["scrape_configs"].map { |j| j["job_name"] } ==
	%w[prometheus gitlab_exporter_ruby gitlab_exporter_process]' || fail "job names: $(cat "$YML")"
yaml "$YML" 'exit 1 unless d["global"]["external_labels"]["node"] == "it'\''s \"quoted\"\n- job_name: x"' ||
	fail "external_labels did not round-trip: $(cat "$YML")"
yaml "$YML" 'exit 1 unless d["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == ["localhost:'"$A"'"]' ||
	fail "alerting target: $(cat "$YML")"

# --- every target up, the exporter's memory through PromQL --------------------------------
all_up() {
	api /api/v1/targets >"$T_ROOT/targets" 2>/dev/null &&
		ruby -rjson -e 't = JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"]
			jobs = t.map { |x| x["labels"]["job"] }.sort
			exit 1 unless jobs == %w[gitlab_exporter_process gitlab_exporter_ruby prometheus]
			exit 1 unless t.all? { |x| x["health"] == "up" }' "$T_ROOT/targets"
}
until_true 600 all_up || fail "targets not all up: $(cat "$T_ROOT/targets" 2>/dev/null)"
mem() {
	api '/api/v1/query?query=process_resident_memory_bytes%7Bjob%3D%22gitlab_exporter_process%22%7D' \
		>"$T_ROOT/q" 2>/dev/null &&
		ruby -rjson -e 'r = JSON.parse(File.read(ARGV[0]))["data"]["result"]
			exit 1 if r.empty? || r[0]["value"][1].to_f < 1e6' "$T_ROOT/q"
}
until_true 300 mem || fail "no exporter memory through PromQL: $(cat "$T_ROOT/q" 2>/dev/null)"
note "exporter RSS via Prometheus: $(ruby -rjson -e 'puts JSON.parse(File.read(ARGV[0]))["data"]["result"][0]["value"][1]' "$T_ROOT/q")"

# --- listeners: loopback only, no cluster port ---------------------------------------------
ss -Hltnp >"$T_ROOT/ss"
for pid in $PP $AP; do
	grep "pid=$pid," "$T_ROOT/ss" >"$T_ROOT/mine" || fail "pid $pid listens nowhere: $(cat "$T_ROOT/ss")"
	awk '{print $4}' "$T_ROOT/mine" | grep -Ev '^(127\.0\.0\.1|\[::1\]):[0-9]+$' &&
		fail "pid $pid listens off loopback: $(cat "$T_ROOT/mine")"
	grep -q ':9094 ' "$T_ROOT/mine" && fail "pid $pid listens on 9094: $(cat "$T_ROOT/mine")"
done
ss -Hlunp | grep -q "pid=$AP," && fail "alertmanager has a UDP (gossip) socket"

# --- a scrape_interval change is a HUP: same pid, reload successful --------------------------
sed -i "s/^prometheus\['scrape_interval'\] = 1\$/prometheus['scrape_interval'] = 2/" "$RB"
expect_rc 0 ctl reconfigure
has "$OUT" "reload prometheus (config changed)"
lacks "$OUT" "restart prometheus"
[ "$(svpid prometheus)" = "$PP" ] || fail "prometheus pid changed on a config change"
reloaded() {
	api /api/v1/status/config 2>/dev/null | grep -q 'scrape_interval: 2s' &&
		api /metrics 2>/dev/null | grep -q '^prometheus_config_last_reload_successful 1$'
}
until_true 100 reloaded || fail "prometheus did not take the new config: $(api /metrics | grep reload)"

# --- a malformed user job is refused; nothing changes ---------------------------------------
cp "$YML" "$T_ROOT/before.yml"
echo "prometheus['scrape_configs'] = [ { 'job_name' => 'bad', 'static_configs' => 'nope' } ]" >>"$RB"
expect_rc 1 ctl reconfigure
has "$ERR" "nothing was written"
BADLINE=$(wc -l <"$RB")
has "$ERR" "$RB:$BADLINE: error: prometheus['scrape_configs']: promtool refuses the $YML written from this line"
lacks "$OUT" "gitlab Reconfigured!"
cmp "$YML" "$T_ROOT/before.yml" || fail "prometheus.yml changed after a refused reconfigure"
[ "$(svpid prometheus)" = "$PP" ] || fail "prometheus pid changed after a refused reconfigure"

# --- a hostile job name stays one string; a user job named like ours replaces it ----------
sed -i '$d' "$RB"
cat >>"$RB" <<EOF
prometheus['scrape_configs'] = [
  { 'job_name' => "inj\n- job_name: evil", 'static_configs' => [ { 'targets' => ['127.0.0.1:1'] } ] },
  { 'job_name' => 'prometheus', 'static_configs' => [ { 'targets' => ['127.0.0.1:$P'] } ] }
]
EOF
expect_rc 0 ctl reconfigure
has "$ERR" "scrape job 'prometheus' of prometheus['scrape_configs'] replaces gitlab-ctl's own job"
yaml "$YML" 'exit 1 unless d["scrape_configs"].map { |j| j["job_name"] } ==
	["prometheus", "gitlab_exporter_ruby", "gitlab_exporter_process", "inj\n- job_name: evil"]' ||
	fail "user jobs: $(cat "$YML")"
promtool check config "$YML" >/dev/null 2>&1 || fail "promtool check config after user jobs"

# --- roles(['monitoring_role']): prometheus, alertmanager, node-exporter; nothing else -----
{
	base
	echo "roles(['monitoring_role'])"
} >"$RB"
expect_rc 0 ctl reconfigure
for s in prometheus alertmanager node-exporter; do
	[ -L "$SERVICE_DIR/$s" ] || fail "$s not enabled by the role: $(cat "$OUT")"
done
for s in gitlab-exporter postgresql redis; do
	[ -e "$SERVICE_DIR/$s" ] && fail "$s enabled by the role"
done
[ "$(svpid prometheus)" = "$PP" ] || fail "prometheus restarted by a scrape job change"
yaml "$YML" 'exit 1 unless d["scrape_configs"].map { |j| j["job_name"] } == %w[prometheus node]' ||
	fail "role jobs: $(cat "$YML")"
NP=$(svpid node-exporter)
alive "$NP" || fail "node-exporter not running"

# --- prometheus_monitoring['enable'] = false: the set stops and is disabled ----------------
echo "prometheus_monitoring['enable'] = false" >>"$RB"
expect_rc 0 ctl reconfigure
for s in prometheus alertmanager node-exporter; do
	[ -e "$SERVICE_DIR/$s" ] && fail "$s still enabled: $(cat "$OUT")"
done
for pid in $PP $AP $NP; do
	wait_gone "$pid" 100 || fail "pid $pid still running after prometheus_monitoring off"
done
exit 0
