#!/bin/sh
# gitlab_exporter's Omnibus keys take effect in the bundled exporter:
# - probe_sidekiq = false: no /sidekiq route (404), no sidekiq series in
#   /metrics, no gitlab_exporter_sidekiq scrape job (Redis running);
# - tls_enabled with tls_cert_path/tls_key_path: the exporter serves TLS with
#   that certificate (plain HTTP refused), on webrick and on puma, and
#   Prometheus scrapes every gitlab_exporter_* job over https trusting it
#   (targets up, scheme https);
# - server_name = 'puma' is served by Debian's Puma (its log line, no WEBrick
#   Server header), 'webrick' by WEBrick;
# - tls_enabled without tls_key_path, a server_name or scrape scheme outside Omnibus' values,
#   and a key the exporter's account cannot read are refused at their gitlab.rb line.
. "$SRCDIR/test/integration/lib.sh"

for b in openssl curl redis-server /usr/bin/prometheus /usr/bin/puma; do
	command -v "$b" >/dev/null 2>&1 || fail "$b missing: run scripts/setup"
done
E=$(free_port) P=$(free_port)
OUT=$T_ROOT/out ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
YML=$T_ROOT/var/opt/gitlab/prometheus/prometheus.yml
SSL=$T_ROOT/etc/gitlab/ssl
mkdir -p "$SSL"
chmod 755 "$T_ROOT/etc/gitlab" "$SSL"
base() {
	cat <<EOF
$(only_services gitlab_exporter redis prometheus)
redis['enable'] = true
prometheus['enable'] = true
prometheus['listen_address'] = '127.0.0.1:$P'
prometheus['scrape_interval'] = 1
prometheus['scrape_timeout'] = 1
gitlab_exporter['listen_address'] = 'localhost'
gitlab_exporter['listen_port'] = $E
EOF
}
write_rb() {
	{
		base
		cat
	} >"$RB"
	chmod 600 "$RB"
}
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true; }
yaml() { ruby -ryaml -e 'd = YAML.load_file(ARGV[0]); '"$2" "$1"; }

note "probe_sidekiq = false: /sidekiq is gone, with Redis running"
echo "gitlab_exporter['probe_sidekiq'] = false" | write_rb
SVWAIT=60 expect_rc 0 ctl reconfigure
[ "$(code "http://localhost:$E/sidekiq")" = 404 ] || fail "/sidekiq answers $(code "http://localhost:$E/sidekiq") with probe_sidekiq false"
curl -fsS --max-time 5 "http://localhost:$E/metrics" >"$OUT" || fail "/metrics"
lacks "$OUT" "sidekiq_"
lacks "$YML" "gitlab_exporter_sidekiq"
echo "gitlab_exporter['probe_sidekiq'] = true" | write_rb
SVWAIT=60 expect_rc 0 ctl reconfigure
[ "$(code "http://localhost:$E/sidekiq")" = 200 ] || fail "/sidekiq does not answer with probe_sidekiq true"
has "$YML" "gitlab_exporter_sidekiq"

note "TLS: the exporter's account reads the key; Prometheus trusts the certificate"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$SSL/exporter.key" -out "$SSL/exporter.crt" \
	-days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost >/dev/null 2>&1 || fail "openssl req"
chgrp git "$SSL/exporter.key" # user['username'], the exporter's account
chmod 640 "$SSL/exporter.key"
chmod 644 "$SSL/exporter.crt"
tls_rb() {
	write_rb <<EOF
gitlab_exporter['server_name'] = '$1'
gitlab_exporter['tls_enabled'] = true
gitlab_exporter['tls_cert_path'] = '/etc/gitlab/ssl/exporter.crt'
gitlab_exporter['tls_key_path'] = '/etc/gitlab/ssl/exporter.key'
EOF
}
https_up() {
	curl -fsS --max-time 5 -u "$(mon_auth)" "http://127.0.0.1:$P/api/v1/targets" >"$T_ROOT/targets" 2>/dev/null &&
		ruby -rjson -e 't = JSON.parse(File.read(ARGV[0]))["data"]["activeTargets"].select { |x| x["labels"]["job"].start_with?("gitlab_exporter_") }
			exit 1 if t.size < 3
			exit 1 unless t.all? { |x| x["health"] == "up" && x["scrapeUrl"].start_with?("https://localhost:") }' "$T_ROOT/targets"
}
for srv in puma webrick; do
	note "tls_enabled on $srv"
	tls_rb "$srv"
	SVWAIT=60 expect_rc 0 ctl reconfigure
	[ "$(code --cacert "$SSL/exporter.crt" "https://localhost:$E/metrics")" = 200 ] ||
		{ ctl tail gitlab-exporter -n 20 >&2 || true; fail "$srv: https /metrics with the configured certificate"; }
	[ "$(code "http://localhost:$E/metrics")" != 200 ] || fail "$srv: plain HTTP answered with tls_enabled"
	yaml "$YML" 'j = d["scrape_configs"].select { |x| x["job_name"].start_with?("gitlab_exporter_") }
		exit 1 unless j.size >= 3 && j.all? { |x| x["scheme"] == "https" && x["tls_config"]["ca_file"].end_with?("/etc/gitlab/ssl/exporter.crt") &&
			x["tls_config"]["server_name"] == "localhost" && x["tls_config"]["insecure_skip_verify"] == false }' ||
		fail "prometheus.yml: the exporter's jobs are not https trusting its certificate: $(cat "$YML")"
	until_true 300 https_up || fail "$srv: Prometheus does not scrape the exporter over https: $(cat "$T_ROOT/targets")"
	curl -sS -D "$OUT" -o /dev/null --cacert "$SSL/exporter.crt" "https://localhost:$E/ruby" || fail "headers"
	if [ "$srv" = webrick ]; then has "$OUT" "WEBrick"; else lacks "$OUT" "WEBrick"; fi
	grep "listening on" "$T_ROOT"/var/log/gitlab/gitlab-exporter/current | tail -n 1 >"$OUT"
	has "$OUT" "$srv listening on https://localhost:$E"
done

note "server_name puma without TLS"
echo "gitlab_exporter['server_name'] = 'puma'" | write_rb
SVWAIT=60 expect_rc 0 ctl reconfigure
[ "$(code "http://localhost:$E/metrics")" = 200 ] || fail "puma over http"
curl -sS -D "$OUT" -o /dev/null "http://localhost:$E/ruby" || fail "headers"
lacks "$OUT" "WEBrick"
grep "listening on" "$T_ROOT"/var/log/gitlab/gitlab-exporter/current | tail -n 1 >"$OUT"
has "$OUT" "puma listening on http://localhost:$E"

note "tls_enabled without tls_key_path is refused at its line"
write_rb <<EOF
gitlab_exporter['tls_enabled'] = true
gitlab_exporter['tls_cert_path'] = '/etc/gitlab/ssl/exporter.crt'
EOF
_line=$(grep -n "tls_enabled" "$RB" | cut -d: -f1)
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:$_line:"
has "$ERR" "gitlab_exporter['tls_enabled'] = true needs gitlab_exporter['tls_key_path']"

note "server_name and prometheus_scrape_scheme outside Omnibus' values are refused at their line"
write_rb <<EOF
gitlab_exporter['server_name'] = 'thin'
gitlab_exporter['prometheus_scrape_scheme'] = 'htps'
EOF
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:$(grep -n "server_name" "$RB" | cut -d: -f1):"
has "$ERR" "gitlab_exporter['server_name'] = 'thin' is not one of 'webrick', 'puma'"
has "$ERR" "gitlab.rb:$(grep -n "prometheus_scrape_scheme" "$RB" | cut -d: -f1):"
has "$ERR" "gitlab_exporter['prometheus_scrape_scheme'] = 'htps' is not one of 'http', 'https'"

note "a key the exporter's account cannot read is refused at its line, before anything starts"
chmod 600 "$SSL/exporter.key"
tls_rb puma
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:$(grep -n "tls_key_path" "$RB" | cut -d: -f1): error: gitlab-exporter: gitlab_exporter['tls_key_path'] cannot be read by git: $SSL/exporter.key is not readable by git (mode 0600)"
