#!/bin/sh
# Many nodes: two "app" nodes run their exporters on 0.0.0.0 (listen_address),
# one monitoring node runs roles(['monitoring_role']) with the app nodes as
# static targets in prometheus['scrape_configs']. Each node is its own --root
# with its own runsvdir, started inside a network namespace this test makes:
# veth pairs between the monitoring namespace and each app namespace, 10.x
# addresses only on them, so no traffic leaves the namespaces (and fixed
# ports cannot clash with the host or a parallel run). Every remote target
# must be up; stopping one app node's node-exporter must make its target down
# and the shipped alert reach Alertmanager.
. "$SRCDIR/test/integration/lib.sh"

MN_NS="" # namespaces made by this run (deleted on exit)
MN_ROOTS="$T_ROOT/mon $T_ROOT/app1 $T_ROOT/app2"

mn_cleanup() {
	_rc=$?
	set +e
	for _r in $MN_ROOTS; do
		PIDFILE=$_r/opt/gitlab/var/runsvdir.pid SV_DIR=$_r/opt/gitlab/sv stop_root
	done
	for _ns in $MN_NS; do
		ip netns del "$_ns" 2>/dev/null
	done
	if [ "$_rc" -ne 0 ] && [ -n "${KEEP_ROOT:-}" ]; then
		echo "# kept $T_ROOT" >&2
	else
		rm -rf "$T_ROOT"
	fi
	exit "$_rc"
}
trap mn_cleanup EXIT

skip() {
	echo "SKIP: $*"
	exit 77
}

command -v ip >/dev/null 2>&1 || skip "no ip(8) (iproute2)"
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
for _b in prometheus prometheus-alertmanager prometheus-node-exporter openssl; do
	command -v "$_b" >/dev/null 2>&1 || fail "$_b is not installed (scripts/setup installs it)"
done

# Names unique per run: a parallel or killed run never collides with this one.
NS_MON=glmon$$ NS_APP1=glapp1$$ NS_APP2=glapp2$$
for _ns in $NS_MON $NS_APP1 $NS_APP2; do
	ip netns add "$_ns" 2>"$T_ROOT/netns.err" ||
		{ cat "$T_ROOT/netns.err"; skip "cannot make a network namespace here"; }
	MN_NS="$MN_NS $_ns"
	ip -n "$_ns" link set lo up || fail "lo up in $_ns"
done
# veth pairs created straight in the namespaces: no interface ever exists in the host's.
ip link add name m1 netns "$NS_MON" type veth peer name a1 netns "$NS_APP1" ||
	skip "cannot make a veth pair here"
ip link add name m2 netns "$NS_MON" type veth peer name a2 netns "$NS_APP2" ||
	fail "second veth pair"
ip -n "$NS_MON" addr add 10.19.1.1/24 dev m1
ip -n "$NS_APP1" addr add 10.19.1.2/24 dev a1
ip -n "$NS_MON" addr add 10.19.2.1/24 dev m2
ip -n "$NS_APP2" addr add 10.19.2.2/24 dev a2
for _l in "$NS_MON m1" "$NS_MON m2" "$NS_APP1 a1" "$NS_APP2 a2"; do
	# shellcheck disable=SC2086
	set -- $_l
	ip -n "$1" link set "$2" up || fail "link $2 up in $1"
done

OUT=$T_ROOT/out ERR=$T_ROOT/err

# in NS ROOT ARGS...: gitlab-ctl for that node, run inside its namespace.
in_node() {
	_ns=$1 _r=$2
	shift 2
	ip netns exec "$_ns" "$GITLAB_CTL" --root "$_r" "$@"
}

write_rb() {
	mkdir -p "$1/etc/gitlab"
	chmod 755 "$1"
	cat >"$1/etc/gitlab/gitlab.rb"
	chmod 600 "$1/etc/gitlab/gitlab.rb"
}

# App nodes: node and gitlab exporters on every address; app1 also runs Redis and its exporter.
C=$T_ROOT/app1/etc/gitlab/tls # under app1's --root, where its gitlab.rb paths are
test_ca "$C"
test_cert "$C" app1 "IP:10.19.1.2"
test_cert "$C" mon "DNS:mon"
for _i in 1 2; do
	{
		echo "node_exporter['enable'] = true"
		echo "node_exporter['listen_address'] = '0.0.0.0:9100'"
		echo "node_exporter['web_password'] = 'app-node-pw'" # beyond loopback: basic auth
		echo "gitlab_exporter['listen_address'] = '0.0.0.0'"
		echo "gitlab_exporter['listen_port'] = 9168"
		echo "gitlab_exporter['web_password'] = 'app-node-pw'" # beyond loopback: basic auth
		if [ "$_i" = 1 ]; then
			echo "redis['enable'] = true"
			echo "redis_exporter['listen_address'] = '0.0.0.0:9121'"
			# beyond loopback: TLS, only client certificates of the CA
			echo "redis_exporter['tls_cert_path'] = '$C/app1.pem'"
			echo "redis_exporter['tls_key_path'] = '$C/app1.key'"
			echo "redis_exporter['tls_client_ca_path'] = '$C/ca.pem'"
			only_services gitlab_exporter node_exporter redis redis_exporter
		else
			only_services gitlab_exporter node_exporter
		fi
	} | write_rb "$T_ROOT/app$_i"
done

in_node "$NS_APP1" "$T_ROOT/app1" reconfigure >"$OUT" 2>"$ERR" || { cat "$OUT" "$ERR"; fail "app1 reconfigure"; }
in_node "$NS_APP2" "$T_ROOT/app2" reconfigure >"$OUT" 2>"$ERR" || { cat "$OUT" "$ERR"; fail "app2 reconfigure"; }

# Reached from the monitoring namespace, over the veth pairs.
mon_get() { ip netns exec "$NS_MON" curl -fsS --max-time 5 -u gitlab-prometheus:app-node-pw "$@"; }
# The monitoring node's Prometheus and Alertmanager, with the credentials it generated.
mon_api() { ip netns exec "$NS_MON" curl -fsS --max-time 5 -u "$(mon_auth "$T_ROOT/mon")" "$1"; }
for _t in http://10.19.1.2:9100 http://10.19.2.2:9100 http://10.19.1.2:9168 http://10.19.2.2:9168 https://10.19.1.2:9121; do
	mon_get --cacert "$C/ca.pem" --cert "$C/mon.pem" --key "$C/mon.key" "$_t/metrics" >"$OUT" 2>"$ERR" ||
		{ cat "$ERR"; fail "$_t not reachable from the monitoring node"; }
done
note "app nodes serve their exporters on the veth addresses"

# The monitoring node: roles(['monitoring_role']) (Prometheus, Alertmanager, its own
# node-exporter), the app nodes as static targets (app1's Redis exporter over TLS with a client
# certificate), short
# intervals so the alert fires soon.
write_rb "$T_ROOT/mon" <<EOF2
roles(['monitoring_role'])
prometheus['scrape_interval'] = 1
prometheus['scrape_timeout'] = 1
prometheus['alert_for_seconds'] = 1
prometheus['scrape_configs'] = [
  {
    'job_name' => 'app-node',
    'basic_auth' => { 'username' => 'gitlab-prometheus', 'password' => 'app-node-pw' },
    'static_configs' => [ { 'targets' => ['10.19.1.2:9100', '10.19.2.2:9100'] } ]
  },
  {
    'job_name' => 'app-gitlab-exporter',
    'metrics_path' => '/ruby',
    'basic_auth' => { 'username' => 'gitlab-prometheus', 'password' => 'app-node-pw' },
    'static_configs' => [ { 'targets' => ['10.19.1.2:9168', '10.19.2.2:9168'] } ]
  },
  {
    'job_name' => 'app-redis',
    'scheme' => 'https',
    'tls_config' => { 'ca_file' => '$C/ca.pem', 'cert_file' => '$C/mon.pem', 'key_file' => '$C/mon.key' },
    'static_configs' => [ { 'targets' => ['10.19.1.2:9121'] } ]
  }
]
EOF2
in_node "$NS_MON" "$T_ROOT/mon" reconfigure >"$OUT" 2>"$ERR" || { cat "$OUT" "$ERR"; fail "monitoring node reconfigure"; }
in_node "$NS_MON" "$T_ROOT/mon" status >"$OUT" 2>&1 || { cat "$OUT"; fail "monitoring node status"; }
has "$OUT" "run: prometheus:"
has "$OUT" "run: alertmanager:"
has "$OUT" "run: node-exporter:"
lacks "$OUT" "gitlab-exporter"

# targets JOB HEALTH: how many of JOB's targets have that health (Prometheus' own view).
targets() {
	mon_api "http://localhost:9090/api/v1/targets?state=active" >"$OUT" 2>"$ERR" || return 1
	ruby -rjson -e 'puts JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"].count { |t|
		t["labels"]["job"] == ARGV[1] && t["health"] == ARGV[2] }' "$OUT" "$1" "$2"
}
all_up() {
	[ "$(targets app-node up)" = 2 ] && [ "$(targets app-gitlab-exporter up)" = 2 ] &&
		[ "$(targets app-redis up)" = 1 ] && [ "$(targets node up)" = 1 ]
}
until_true 600 all_up || { cat "$OUT"; fail "not every remote target is up"; }
note "every remote target is up"

note "app2's node-exporter stops: its target goes down and TargetDown reaches Alertmanager"
in_node "$NS_APP2" "$T_ROOT/app2" stop node-exporter >"$OUT" 2>&1 || { cat "$OUT"; fail "stop on app2"; }
target_down() {
	mon_api "http://localhost:9090/api/v1/targets?state=active" >"$OUT" 2>"$ERR" &&
		ruby -rjson -e 'exit JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"].any? { |t|
			t["labels"]["instance"] == "10.19.2.2:9100" && t["health"] == "down" }' "$OUT"
}
until_true 300 target_down || { cat "$OUT"; fail "app2's node target is not down"; }
[ "$(targets app-node up)" = 1 ] || fail "app1's node target is no longer up"
alert_in_am() {
	mon_api "http://localhost:9093/api/v2/alerts?active=true" >"$OUT" 2>"$ERR" &&
		ruby -rjson -e 'exit JSON.parse(File.read(ARGV[0])).any? { |a|
			a["labels"]["alertname"] == "TargetDown" && a["labels"]["instance"] == "10.19.2.2:9100" }' "$OUT"
}
until_true 2400 alert_in_am || { cat "$OUT"; fail "TargetDown for 10.19.2.2:9100 never reached Alertmanager"; }
note "TargetDown{instance=10.19.2.2:9100} is active in Alertmanager"
