#!/bin/sh
# HA safety, etcd's credentials: etcd has no authentication of gitlab-ctl's but TLS client
# certificates, so with tls_client_ca_path (and tls_cert_path, tls_key_path) it serves clients
# and peers over https taking only certificates of that CA: etcdctl without one gets nothing,
# Patroni with one (patroni['etcd'] protocol https, cacert, cert, key) keeps its leader key
# there and leads. Without them a listen_address beyond loopback is refused at its gitlab.rb
# line, and a CA without a certificate at the CA's.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "# needs root (service accounts)"; exit 77; }
for _b in /usr/bin/patroni /usr/bin/etcd etcdctl curl openssl; do
	[ -x "$_b" ] || command -v "$_b" >/dev/null 2>&1 || fail "$_b is not installed (scripts/setup installs it)"
done
OUT=$T_ROOT/out ERR=$T_ROOT/err
ETCD=$(free_port) PEER=$(free_port) REST=$(free_port) PG=$(free_port) PGX=$(free_port)
C=$T_ROOT/tls
test_ca "$C"
test_cert "$C" etcd "IP:127.0.0.1"
test_cert "$C" patroni "DNS:patroni"
test_cert "$C" other "DNS:other"
mkdir -p "$T_ROOT/etc/gitlab"
RB=$T_ROOT/etc/gitlab/gitlab.rb
write_rb() {
	cat >"$RB"
	chmod 600 "$RB"
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
tls_rb() {
	cat <<EOF2
etcd['tls_cert_path'] = '$C/etcd.pem'
etcd['tls_key_path'] = '$C/etcd.key'
etcd['tls_client_ca_path'] = '$C/ca.pem'
patroni['etcd'] = { 'hosts' => ['127.0.0.1:$ETCD'], 'protocol' => 'https', 'cacert' => '$C/ca.pem',
                    'cert' => '$C/patroni.pem', 'key' => '$C/patroni.key' }
EOF2
}

note "beyond loopback without client certificates: refused at the line"
{ base_rb; echo "etcd['listen_address'] = '10.1.2.3'"; } | write_rb
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:11:"
has "$ERR" "not a loopback address: set its TLS certificate, key and client CA (tls_cert_path, tls_key_path, tls_client_ca_path"
{ base_rb; echo "etcd['listen_address'] = '10.1.2.3'"; echo "etcd['tls_client_ca_path'] = '$C/ca.pem'"; } | write_rb
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:12:"
has "$ERR" "etcd['tls_client_ca_path'] needs etcd['tls_cert_path']"
{ base_rb; echo "etcd['listen_address'] = '10.1.2.3'"; tls_rb; } | write_rb
expect_rc 0 ctl check-config

note "etcd over TLS with client certificates; Patroni connects with its own"
{ base_rb; tls_rb; } | write_rb
SVWAIT=${T_SVWAIT:-120} expect_rc 0 ctl reconfigure
Y=$T_ROOT/opt/gitlab/sv/etcd/etcd.yml
has "$Y" "listen-client-urls: \"https://127.0.0.1:$ETCD\""
has "$Y" "client-cert-auth: true"
leader() { curl -fsS --max-time 2 "http://127.0.0.1:$REST/leader" >"$OUT" 2>"$ERR"; }
until_true 600 leader || { cat "$T_ROOT/var/log/gitlab/patroni/current" >&2; fail "no leader on $REST"; }
ectl() { ETCDCTL_API=3 etcdctl --endpoints "https://127.0.0.1:$ETCD" --dial-timeout 3s --command-timeout 5s "$@"; }
ectl --cacert "$C/ca.pem" --cert "$C/other.pem" --key "$C/other.key" get --prefix --keys-only /service >"$OUT" 2>"$ERR" ||
	fail "a certificate of the CA: $(cat "$ERR")"
grep -q "/leader" "$OUT" || fail "no Patroni leader key in etcd: $(cat "$OUT")"
if ectl --cacert "$C/ca.pem" get --prefix --keys-only /service >"$OUT" 2>"$ERR"; then
	fail "no client certificate got etcd's keys: $(cat "$OUT")"
fi
if curl -sS --max-time 5 "http://127.0.0.1:$ETCD/health" >"$OUT" 2>"$ERR" && grep -q health "$OUT"; then
	fail "plain HTTP got etcd's health"
fi
if curl -sS --max-time 5 --cacert "$C/ca.pem" "https://127.0.0.1:$ETCD/v3/kv/range" -d '{"key":"Lw=="}' >"$OUT" 2>"$ERR"; then
	fail "https without a client certificate got an answer: $(cat "$OUT")"
fi
SVWAIT=${T_SVWAIT:-120} expect_rc 0 ctl reconfigure
lacks "$OUT" "restart"
expect_rc 0 ctl stop
echo ok
