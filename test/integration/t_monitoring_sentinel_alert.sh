#!/bin/sh
# SentinelMasterDown on live series: Redis (redis_master_role) with a Sentinel
# (redis_sentinel_role, quorum 1, down after 1 s) and its sentinel-exporter, scraped by this
# node's Prometheus (job redis_sentinel). With the master up the Sentinel reports it ok and
# no alert is pending; Redis stopped, the Sentinel sees it down (no replica to fail over to),
# redis_sentinel_master_status is 0 with the master's name and address, and Prometheus holds
# SentinelMasterDown for it (pending or firing: rules are evaluated once a minute).
. "$SRCDIR/test/integration/lib.sh"

command -v redis-cli >/dev/null || { echo "SKIP: no redis-cli"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "# needs root (service accounts)"; exit 77; }
for b in /usr/bin/prometheus prometheus-redis-exporter curl ruby; do
	command -v "$b" >/dev/null 2>&1 || fail "$b missing: run scripts/setup"
done
OUT=$T_ROOT/out ERR=$T_ROOT/err
RP=$(free_port) SP=$(free_port) XP=$(free_port) P=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF2
roles(['redis_master_role', 'redis_sentinel_role'])
redis_exporter['enable'] = false
sentinel_exporter['listen_address'] = 'localhost:$XP'
redis['port'] = $RP
redis['password'] = 'redis-Secret-51'
redis['master_ip'] = '127.0.0.1'
redis['master_port'] = $RP
sentinel['bind'] = '127.0.0.1'
sentinel['port'] = $SP
sentinel['quorum'] = 1
sentinel['down_after_milliseconds'] = 1000
prometheus['enable'] = true
prometheus['listen_address'] = '127.0.0.1:$P'
prometheus['scrape_interval'] = 1
prometheus['alert_for_seconds'] = 1
EOF2
chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
SVWAIT=${T_SVWAIT:-120} expect_rc 0 ctl reconfigure

api() { curl -fsS --max-time 5 -u "$(mon_auth)" "http://127.0.0.1:$P$1" >"$OUT" 2>"$ERR"; }
# "master_status value" of the Sentinel's master gitlab-redis at 127.0.0.1:$RP, from Prometheus
status_is() {
	api "/api/v1/query?query=redis_sentinel_master_status%7Bjob%3D%22redis_sentinel%22%7D" || return 1
	_s=$(ruby -rjson -e 'r = JSON.parse(File.read(ARGV[0]))["data"]["result"].select { |x|
		x["metric"]["master_name"] == "gitlab-redis" && x["metric"]["master_address"] == ARGV[1] }
		puts r.map { |x| x["metric"]["master_status"] + " " + x["value"][1] }.join(",")' "$OUT" "127.0.0.1:$RP")
	[ "$_s" = "$1" ]
}
alert() { # the states of SentinelMasterDown for that master, comma-separated
	api /api/v1/alerts && ruby -rjson -e 'a = JSON.parse(File.read(ARGV[0]))["data"]["alerts"].select { |x|
		x["labels"]["alertname"] == "SentinelMasterDown" && x["labels"]["master_address"] == ARGV[1] }
		puts a.map { |x| x["state"] }.join(",")' "$OUT" "127.0.0.1:$RP"
}
rules_loaded() {
	api /api/v1/rules && grep -q '"name":"SentinelMasterDown"' "$OUT"
}

note "the master up: the Sentinel reports it ok, no alert"
until_true 600 status_is "ok 1" || fail "Prometheus: no redis_sentinel_master_status ok 1: $(cat "$OUT")"
until_true 300 rules_loaded || fail "Prometheus has no rule SentinelMasterDown"
[ -z "$(alert)" ] || fail "SentinelMasterDown while the master is up: $(alert)"

note "Redis stopped: the Sentinel sees the master down, and SentinelMasterDown is held"
expect_rc 0 ctl stop redis
down() { status_is "sdown 0" || status_is "odown 0" || status_is "odown,failover_in_progress 0"; }
until_true 300 down || fail "Prometheus: the Sentinel does not report the master down: $(cat "$OUT")"
held() { case $(alert) in pending | firing) return 0 ;; esac; return 1; }
# Rules are evaluated every minute (Prometheus' default evaluation_interval, as Omnibus').
until_true 1000 held || fail "no SentinelMasterDown for 127.0.0.1:$RP: $(cat "$OUT")"
note "SentinelMasterDown is $(alert)"
expect_rc 0 ctl start redis
