#!/bin/sh
# issue 29, exporters beyond loopback: node_exporter['web_password'] puts node-exporter's
# /metrics behind HTTP basic auth (--web.config.file, a bcrypt hash in root's 0640 web.yml), on
# any address; `nobody` gets 401, the credentials get the metrics, gitlab-ctl's readiness check
# sends them (reconfigure waits for it and succeeds), and Prometheus' job for it scrapes
# with them (target up). Without a password, a non-loopback listen_address is refused at its
# gitlab.rb line.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || exit 77
for b in /usr/bin/prometheus /usr/bin/prometheus-node-exporter curl setpriv; do
	command -v "$b" >/dev/null 2>&1 || exit 77
done
N=$(free_port)
P=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
mkdir -p "$T_ROOT/etc/gitlab"
{
	only_services node_exporter prometheus
	cat <<EOF2
node_exporter['enable'] = true
prometheus['enable'] = true
node_exporter['listen_address'] = '0.0.0.0:$N'
node_exporter['web_password'] = 'nodePW-s3cret'
prometheus['listen_address'] = '127.0.0.1:$P'
prometheus['scrape_interval'] = 1
prometheus['scrape_timeout'] = 1
EOF2
} >"$RB"
chmod 600 "$RB"
expect_rc 0 ctl reconfigure
W=$T_ROOT/opt/gitlab/etc/node-exporter/web.yml
[ "$(stat -c '%U %a' "$W")" = "root 640" ] || fail "$W: $(stat -c '%U %a' "$W")"
! grep -q 'nodePW' "$W" || fail "$W holds the password"

code=$(setpriv --reuid=nobody --regid=nogroup --clear-groups curl -s -o /dev/null -w '%{http_code}' \
	--max-time 5 "http://127.0.0.1:$N/metrics")
[ "$code" = 401 ] || fail "nobody got $code from node-exporter"
code=$(curl -s -o "$OUT" -w '%{http_code}' -u 'gitlab-prometheus:nodePW-s3cret' "http://127.0.0.1:$N/metrics")
[ "$code" = 200 ] && grep -q '^node_exporter_build_info' "$OUT" || fail "with the credentials: $code"
node_up() {
	curl -s -u "$(mon_auth)" "http://127.0.0.1:$P/api/v1/targets" >"$OUT" &&
		ruby -rjson -e 't = JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"]
			exit 1 unless t.any? { |x| x["labels"]["job"] == "node" && x["health"] == "up" }' "$OUT"
}
until_true 300 node_up || fail "Prometheus' node job is not up: $(cat "$OUT")"

# Beyond loopback without a password: refused at its gitlab.rb line, as Redis' bind is.
sed -i '/web_password/d' "$RB"
expect_rc 1 ctl check-config
L=$(grep -n "node_exporter\['listen_address'\]" "$RB" | cut -d: -f1)
has "$ERR" "$RB:$L:"
has "$ERR" "not a loopback address: set its web_password"
expect_rc 1 ctl reconfigure
exit 0
