#!/bin/sh
# PostgreSQL under Patroni on one node, from roles: etcd_role and patroni_role
# bring up etcd and Patroni (the plain postgresql service stays off), Patroni
# bootstraps the cluster and leads it, a second reconfigure changes nothing,
# the replication password never shows, a DCS change is applied with patronictl
# edit-config while Patroni is only reloaded, a Patroni REST API or etcd
# listener beyond loopback without authentication is refused at its line, and
# a Prometheus on the node gets the job patroni (https with a client
# certificate when the REST API serves TLS).
. "$SRCDIR/test/integration/lib.sh"

for _b in /usr/bin/patroni /usr/bin/etcd curl openssl; do
	[ -x "$_b" ] || command -v "$_b" >/dev/null 2>&1 || fail "$_b is not installed (scripts/setup installs it)"
done
[ "$(id -u)" = 0 ] || { echo "# needs root (service accounts)"; exit 77; }
OUT=$T_ROOT/out ERR=$T_ROOT/err
ETCD=$(free_port) PEER=$(free_port) REST=$(free_port) PG=$(free_port) PGX=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
write_rb() {
	cat >"$T_ROOT/etc/gitlab/gitlab.rb"
	chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
}
base_rb() {
	cat <<EOF2
roles(['patroni_role', 'etcd_role'])
etcd['client_port'] = $ETCD
etcd['peer_port'] = $PEER
patroni['port'] = $REST
postgresql['port'] = $PG
patroni['ttl'] = 10
patroni['loop_wait'] = 2
patroni['retry_timeout'] = 4
postgresql['sql_replication_password'] = 'repl-Secret-41'
postgres_exporter['listen_address'] = 'localhost:$PGX'
EOF2
}

note "no authentication: a REST API or etcd beyond loopback is refused at its line"
{ base_rb; echo "patroni['listen_address'] = '0.0.0.0'"; } | write_rb
expect_rc 1 ctl reconfigure --dry-run
has "$ERR" "gitlab.rb:11:"
has "$ERR" "not a loopback address"
{ base_rb; echo "etcd['listen_address'] = '10.1.2.3'"; } | write_rb
expect_rc 1 ctl reconfigure --dry-run
has "$ERR" "gitlab.rb:11:"
# The password guards only the REST API's changes: beyond loopback its GETs need client
# certificates too.
{ base_rb; echo "patroni['listen_address'] = '0.0.0.0'"; echo "patroni['password'] = 'rest-Secret-42'"; } | write_rb
expect_rc 1 ctl reconfigure --dry-run
has "$ERR" "gitlab.rb:11:"
has "$ERR" "Patroni's tls_certificate_file, tls_key_file, tls_ca_file"
{ base_rb; echo "patroni['listen_address'] = '0.0.0.0'"; echo "patroni['password'] = 'rest-Secret-42'"
	echo "patroni['tls_ca_file'] = '/etc/gitlab/ca.pem'"; } | write_rb
expect_rc 1 ctl reconfigure --dry-run
has "$ERR" "gitlab.rb:13:"
has "$ERR" "patroni['tls_ca_file'] needs patroni['tls_certificate_file']"
{ base_rb; echo "patroni['listen_address'] = '0.0.0.0'"; echo "patroni['tls_client_mode'] = 'optional'"; } | write_rb
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:12:"
test_ca "$T_ROOT/etc/gitlab/tls"
test_cert "$T_ROOT/etc/gitlab/tls" patroni "IP:127.0.0.1"
{ base_rb; echo "patroni['listen_address'] = '0.0.0.0'"; echo "patroni['password'] = 'rest-Secret-42'"
	echo "patroni['tls_certificate_file'] = '/etc/gitlab/tls/patroni.pem'"
	echo "patroni['tls_key_file'] = '/etc/gitlab/tls/patroni.key'"
	echo "patroni['tls_ca_file'] = '/etc/gitlab/tls/ca.pem'"; } | write_rb
expect_rc 0 ctl reconfigure --dry-run
lacks "$OUT" "rest-Secret-42"
lacks "$OUT" "repl-Secret-41"

note "Prometheus here: its job patroni, over https with prometheus_scrape_tls_* beyond loopback"
test_cert "$T_ROOT/etc/gitlab/tls" scraper "DNS:scraper"
PROM=$(free_port)
{ base_rb; echo "patroni['listen_address'] = '0.0.0.0'"; echo "patroni['password'] = 'rest-Secret-42'"
	echo "patroni['tls_certificate_file'] = '/etc/gitlab/tls/patroni.pem'"
	echo "patroni['tls_key_file'] = '/etc/gitlab/tls/patroni.key'"
	echo "patroni['tls_ca_file'] = '/etc/gitlab/tls/ca.pem'"
	echo "patroni['prometheus_scrape_tls_cert_path'] = '/etc/gitlab/tls/scraper.pem'"
	echo "patroni['prometheus_scrape_tls_key_path'] = '/etc/gitlab/tls/scraper.key'"
	echo "prometheus['enable'] = true"; echo "prometheus['listen_address'] = '127.0.0.1:$PROM'"; } | write_rb
expect_rc 0 ctl reconfigure --dry-run --diff
JOB=$T_ROOT/job
sed -n '/job_name: "patroni"/,/- "localhost:/p' "$OUT" >"$JOB"
has "$JOB" 'scheme: "https"'
has "$JOB" "ca_file: \"$T_ROOT/etc/gitlab/tls/patroni.pem\""
has "$JOB" "cert_file: \"$T_ROOT/etc/gitlab/tls/scraper.pem\""
has "$JOB" "key_file: [REDACTED]"
has "$JOB" "- \"localhost:$REST\""
lacks "$JOB" "server_name" # 0.0.0.0 names no host: the target's, localhost, is checked
# A key gitlab-prometheus cannot read is refused at its line, not left to a job that stays down.
chmod 600 "$T_ROOT/etc/gitlab/tls/scraper.key"
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:$(grep -n prometheus_scrape_tls_key_path "$T_ROOT/etc/gitlab/gitlab.rb" | cut -d: -f1): error: patroni: patroni['prometheus_scrape_tls_key_path'] cannot be read by gitlab-prometheus"
chmod 644 "$T_ROOT/etc/gitlab/tls/scraper.key"
{ base_rb; echo "prometheus['enable'] = true"; echo "prometheus['listen_address'] = '127.0.0.1:$PROM'"; } | write_rb
expect_rc 0 ctl reconfigure --dry-run --diff
sed -n '/job_name: "patroni"/,/- "127.0.0.1:/p' "$OUT" >"$JOB"
has "$JOB" "- \"127.0.0.1:$REST\""
lacks "$JOB" "scheme"

note "md5_auth_cidr_addresses reach patroni.yml's pg_hba through its quoting, or are refused at their line"
{ base_rb; echo "postgresql['md5_auth_cidr_addresses'] = ['10.9.0.0/24']"; } | write_rb
expect_rc 0 ctl reconfigure --dry-run --diff
has "$OUT" "- host    replication   all   10.9.0.0/24  md5"
{ base_rb; echo "postgresql['md5_auth_cidr_addresses'] = ['0.0.0.0/0 trust']"; } | write_rb
expect_rc 1 ctl reconfigure --dry-run
has "$ERR" "gitlab.rb:11:41: error: postgresql['md5_auth_cidr_addresses']: not an array of IP addresses"

base_rb | write_rb
note "patroni_role: Patroni runs PostgreSQL, the plain postgresql service is off"
expect_rc 0 ctl reconfigure --dry-run
has "$OUT" "service/patroni"
has "$OUT" "service/etcd"
lacks "$OUT" "service/postgresql"
lacks "$OUT" "repl-Secret-41"

SVWAIT=${T_SVWAIT:-120} expect_rc 0 ctl reconfigure
lacks "$OUT" "repl-Secret-41"
YML=$T_ROOT/opt/gitlab/sv/patroni/patroni.yml
[ "$(stat -c '%a %U %G' "$YML")" = "640 root gitlab-psql" ] || fail "patroni.yml: $(stat -c '%a %U %G' "$YML")"

note "Patroni bootstrapped the cluster and leads it"
leader() { curl -fsS --max-time 2 "http://127.0.0.1:$REST/leader" >"$OUT" 2>"$ERR"; }
until_true 600 leader || { cat "$T_ROOT/var/log/gitlab/patroni/current" >&2; fail "no leader on $REST"; }
curl -fsS --max-time 2 "http://127.0.0.1:$REST/patroni" >"$OUT"
has "$OUT" '"role": "master"'
note "patroni_role runs postgres-exporter on this member's PostgreSQL, as Omnibus"
pg_up() { curl -fsS --max-time 5 "http://localhost:$PGX/metrics" >"$OUT" 2>"$ERR" && grep -q '^pg_up 1$' "$OUT"; }
until_true 300 pg_up || { cat "$T_ROOT/var/log/gitlab/postgres-exporter/current" >&2; fail "postgres-exporter: no pg_up 1"; }
note "gitlab-ctl patroni check-leader / check-replica: Omnibus' exit codes"
expect_rc 0 ctl patroni check-leader
expect_rc 1 ctl patroni check-replica
expect_rc 2 ctl patroni nosuch
note "gitlab-ctl patroni members: patronictl list as gitlab-psql"
expect_rc 0 ctl patroni members
has "$OUT" "Leader"
has "$OUT" "running"
lacks "$OUT" "repl-Secret-41"
# PostgreSQL answers on the socket Patroni was told, as the database account.
sql() { setpriv --reuid=gitlab-psql --regid=gitlab-psql --init-groups \
	/usr/lib/postgresql/15/bin/psql -X -At -h "$T_ROOT/var/opt/gitlab/postgresql" -p "$PG" -d postgres -c "$1"; }
[ "$(sql 'SELECT pg_is_in_recovery()')" = f ] || fail "the leader is in recovery"
[ "$(sql "SELECT count(*) FROM pg_roles WHERE rolname = 'gitlab_replicator' AND rolreplication")" = 1 ] ||
	fail "no replication role"
# Patroni wrote PostgreSQL's config into the data dir: the account's files.
[ "$(stat -c %U "$T_ROOT/var/opt/gitlab/postgresql/data/postgresql.conf")" = gitlab-psql ] ||
	fail "postgresql.conf is not the account's"

note "gitlab-ctl patroni pause -w / resume -w / reload"
expect_rc 0 ctl patroni pause -w
curl -sS --max-time 2 "http://127.0.0.1:$REST/patroni" >"$OUT"
has "$OUT" '"pause": true'
expect_rc 0 ctl patroni resume --wait
curl -sS --max-time 2 "http://127.0.0.1:$REST/patroni" >"$OUT"
lacks "$OUT" '"pause": true'
expect_rc 0 ctl patroni reload
expect_rc 0 ctl patroni check-leader
note "switchover, failover, reinitialize-replica: patronictl refuses them on a lone leader"
expect_rc 1 ctl patroni switchover --candidate nosuch
expect_rc 1 ctl patroni reinitialize-replica
expect_rc 2 ctl patroni failover --candidate --force
expect_rc 0 ctl patroni check-leader

note "etcd's and Patroni's process trees within their memory_budget"
for _s in etcd patroni; do
	expect_rc 0 ctl inspect "$_s"
	grep -E "budget:" "$OUT" | sed "s/^/# $_s/"
	grep -Eq "budget: pss [0-9.]+[KM] of (64|256)M" "$OUT" || fail "$_s has no memory budget: $(cat "$OUT")"
done

note "a second reconfigure changes nothing"
SVWAIT=${T_SVWAIT:-120} expect_rc 0 ctl reconfigure
lacks "$OUT" "restart"
lacks "$OUT" "create"
leader || fail "no leader after the second reconfigure"

note "dcs.yml is patroni.yml's bootstrap.dcs, so a made cluster gets what a new one would"
python3 - "$YML" "$T_ROOT/opt/gitlab/sv/patroni/dcs.yml" <<'EOF2' || fail "dcs.yml and bootstrap.dcs differ"
import sys, yaml
a = yaml.safe_load(open(sys.argv[1]))["bootstrap"]["dcs"]
b = yaml.safe_load(open(sys.argv[2]))
sys.exit(0 if a == b and a["ttl"] == 10 else 1)
EOF2
note "a DCS change is applied with patronictl edit-config; Patroni is reloaded, never restarted"
ST=$T_ROOT/opt/gitlab/sv/patroni/supervise/status
PAT=$(status_pid "$ST") PGSTART=$(sql 'SELECT pg_postmaster_start_time()')
{ base_rb | sed 's/^patroni..ttl.. = 10$/patroni['"'"'ttl'"'"'] = 12/'
	echo "patroni['maximum_lag_on_failover'] = 2097152"; } | write_rb
SVWAIT=${T_SVWAIT:-120} expect_rc 0 ctl reconfigure
has "$OUT" "Configuration changed"
lacks "$OUT" "restart"
[ "$(status_pid "$ST")" = "$PAT" ] || fail "patroni was restarted ($PAT -> $(status_pid "$ST"))"
[ "$(sql 'SELECT pg_postmaster_start_time()')" = "$PGSTART" ] || fail "PostgreSQL was restarted"
# /config answers from what Patroni read of the DCS in its last loop (loop_wait 2 s)
dcs_has() { curl -fsS --max-time 2 "http://127.0.0.1:$REST/config" >"$OUT" && grep -qF '"ttl": 12' "$OUT"; }
until_true 100 dcs_has || has "$OUT" '"ttl": 12'
has "$OUT" '"maximum_lag_on_failover": 2097152'
leader || fail "no leader after the DCS change"
SVWAIT=${T_SVWAIT:-120} expect_rc 0 ctl reconfigure
lacks "$OUT" "Configuration changed"

note "stop: Patroni stops PostgreSQL with it"
expect_rc 0 ctl stop patroni
until_true 300 sh -c '! pgrep -u gitlab-psql -f "$1" >/dev/null' _ "$T_ROOT/var/opt/gitlab/postgresql/data" ||
	fail "postgres outlived patroni's stop"
expect_rc 3 ctl patroni check-leader # no REST API answers
expect_rc 0 ctl stop
echo ok
