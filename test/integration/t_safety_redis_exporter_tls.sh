#!/bin/sh
# Monitoring safety, redis-exporter beyond loopback: 1.45 has no basic auth and its /scrape
# answers whoever reaches the port, so a non-loopback listen_address is refused at its gitlab.rb
# line unless the exporter serves TLS taking only client certificates of tls_client_ca_path.
# With them: no certificate (or plain HTTP) gets nothing, `nobody` with no certificate gets
# nothing, a certificate of the CA gets the metrics, and Prometheus' own redis job presents
# prometheus_scrape_tls_cert_path and is up.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || exit 77
for b in prometheus-redis-exporter redis-server /usr/bin/prometheus openssl curl setpriv ruby; do
	command -v "$b" >/dev/null 2>&1 || exit 77
done
export SVWAIT=120
EP=$(free_port)
P=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
C=$T_ROOT/tls
mkdir -p "$T_ROOT/etc/gitlab"
# A CA, the exporter's certificate and Prometheus' client certificate.
test_ca "$C"
test_cert "$C" exporter "DNS:localhost,IP:127.0.0.1"
test_cert "$C" scraper "DNS:scraper"
{
	only_services redis redis_exporter prometheus
	cat <<EOF2
prometheus['enable'] = true
prometheus['listen_address'] = '127.0.0.1:$P'
prometheus['scrape_interval'] = 1
prometheus['scrape_timeout'] = 1
redis_exporter['listen_address'] = '0.0.0.0:$EP'
redis_exporter['tls_cert_path'] = '$C/exporter.pem'
redis_exporter['tls_key_path'] = '$C/exporter.key'
redis_exporter['tls_client_ca_path'] = '$C/ca.pem'
redis_exporter['prometheus_scrape_tls_cert_path'] = '$C/scraper.pem'
redis_exporter['prometheus_scrape_tls_key_path'] = '$C/scraper.key'
redis_exporter['prometheus_scrape_tls_server_name'] = 'localhost'
EOF2
} >"$RB"
chmod 600 "$RB"
start_runsvdir
expect_rc 0 ctl reconfigure
has "$T_ROOT/opt/gitlab/etc/redis-exporter/listen" "https 0.0.0.0:$EP client certificates of $C/ca.pem"

U=https://127.0.0.1:$EP
with_cert() { curl -fsS --max-time 10 --cacert "$C/ca.pem" --cert "$C/scraper.pem" --key "$C/scraper.key" "$@"; }
until_true 100 sh -c "curl -fsS --max-time 5 --cacert '$C/ca.pem' --cert '$C/scraper.pem' --key '$C/scraper.key' '$U/metrics' | grep -qx 'redis_up 1'" ||
	fail "with a client certificate: no redis_up 1"
with_cert "$U/metrics" >"$OUT" || fail "with a client certificate"
grep -q '^redis_connected_clients ' "$OUT" || fail "no INFO metrics"

note "no certificate, plain HTTP, nobody: nothing comes"
for r in /metrics "/scrape?target=unix://$T_ROOT/var/opt/gitlab/redis/redis.socket"; do
	if curl -sS --max-time 10 --cacert "$C/ca.pem" -o "$OUT" "$U$r" 2>"$ERR"; then
		fail "no client certificate got $r: $(head -3 "$OUT")"
	fi
	if curl -sS --max-time 10 -o "$OUT" "http://127.0.0.1:$EP$r" 2>"$ERR" && grep -q redis_up "$OUT"; then
		fail "plain HTTP got $r"
	fi
	if setpriv --reuid=nobody --regid=nogroup --clear-groups curl -sSk --max-time 10 -o "$OUT" "$U$r" 2>"$ERR"; then
		fail "nobody got $r: $(head -3 "$OUT")"
	fi
done

redis_up() {
	curl -s -u "$(mon_auth)" "http://127.0.0.1:$P/api/v1/targets" >"$OUT" &&
		ruby -rjson -e 't = JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"]
			exit 1 unless t.any? { |x| x["labels"]["job"] == "redis" && x["health"] == "up" &&
				x["scrapeUrl"].start_with?("https://") }' "$OUT"
}
until_true 300 redis_up || fail "Prometheus' redis job is not up over https: $(cat "$OUT")"

note "beyond loopback without client certificates: refused at its gitlab.rb line"
L=$(grep -n "redis_exporter\['listen_address'\]" "$RB" | cut -d: -f1)
cp "$RB" "$T_ROOT/rb.full"
sed -i '/tls_client_ca_path/d' "$RB"
expect_rc 1 ctl check-config
has "$ERR" "$RB:$L:"
has "$ERR" "not a loopback address: set its TLS certificate, key and client CA (tls_cert_path"
sed -i '/redis_exporter..tls_/d' "$RB"
expect_rc 1 ctl check-config
has "$ERR" "$RB:$L:"
expect_rc 1 ctl reconfigure
# A certificate without its key: refused at tls_cert_path's line.
grep -v "tls_key_path" "$T_ROOT/rb.full" >"$RB"
expect_rc 1 ctl check-config
has "$ERR" "redis_exporter['tls_cert_path'] needs redis_exporter['tls_key_path']"
# On loopback no certificate is needed.
{ only_services redis redis_exporter; echo "redis_exporter['listen_address'] = 'localhost:$EP'"; } >"$RB"
expect_rc 0 ctl check-config
exit 0
