# Three database nodes in network namespaces, each its own --root and runsvdir, running etcd
# (TLS with client certificates, the three as one cluster) and Patroni from the same roles.
# Sourced after lib.sh by t_patroni_cluster, t_patroni_sync, t_pgbouncer_cluster and
# bench/failover, which set first:
#   CL_TAG  a short word in the namespaces' names: node N is gl${CL_TAG}N$$, the hub gl${CL_TAG}hub$$
#   CL_NET  the /24's first three octets, one no other test uses: node N is $CL_NET.1N
# and before each cluster CL_DIR (its nodes' roots are $CL_DIR/nN; default $T_ROOT) and
# CL_TTL, CL_LOOP, CL_RETRY (the DCS timings its bootstrap seeds; default 10/2/4).
# cl_cleanup is the sourcing script's EXIT trap (set here): every root's runsvdir stopped,
# every process of the namespaces made here SIGKILLed by pid, the namespaces deleted.
: "${CL_TAG:?}" "${CL_NET:?}"
CL_NS=""
CL_ROOTS=""
CL_DIR=$T_ROOT
cl_kill_ns() { # every process of a namespace made here, by pid
	for _p in $(ip netns pids "$1" 2>/dev/null); do kill -KILL "$_p" 2>/dev/null || true; done
}
cl_stop_nodes() { # every root's runsvdir wrapper and what is left in the nodes' namespaces
	for _r in $CL_ROOTS; do
		PIDFILE=$_r/opt/gitlab/var/runsvdir.pid SV_DIR=$_r/opt/gitlab/sv stop_root
	done
	for _ns in $CL_NS; do cl_kill_ns "$_ns"; done
}
cl_cleanup() {
	_rc=$?
	set +e
	cl_stop_nodes
	for _ns in $CL_NS; do ip netns del "$_ns" 2>/dev/null; done
	if [ "$_rc" -ne 0 ] && [ -n "${KEEP_ROOT:-}" ]; then
		echo "# kept $T_ROOT" >&2
	else
		rm -rf "$T_ROOT"
	fi
	exit "$_rc"
}
trap cl_cleanup EXIT
skip() {
	echo "SKIP: $*"
	exit 77
}
# cl_require: root, ip(8) and the HA packages, or exit 77 / fail.
cl_require() {
	[ "$(id -u)" = 0 ] || skip "network namespaces need root"
	command -v ip >/dev/null 2>&1 || skip "no ip(8) (iproute2)"
	for _b in /usr/bin/patroni /usr/bin/etcd etcdctl openssl curl; do
		[ -x "$_b" ] || command -v "$_b" >/dev/null 2>&1 || fail "$_b is not installed (scripts/setup installs it)"
	done
}
ns() { echo "gl$CL_TAG$1$$"; }
CL_HUB=gl${CL_TAG}hub$$
# cl_net_up N...: the hub namespace with a bridge, and node N's namespace with a veth to it,
# $CL_NET.1N/24 (names unique per run: a parallel or killed run never collides with this one).
cl_net_up() {
	ip netns add "$CL_HUB" 2>"$T_ROOT/netns.err" || { cat "$T_ROOT/netns.err"; skip "cannot make a network namespace here"; }
	CL_NS=$CL_HUB
	ip -n "$CL_HUB" link add br0 type bridge || skip "cannot make a bridge here"
	ip -n "$CL_HUB" link set br0 up
	for _i; do
		_ns=$(ns "$_i")
		ip netns add "$_ns" || fail "netns $_ns"
		CL_NS="$CL_NS $_ns"
		ip -n "$_ns" link set lo up
		ip link add name e$_i netns "$_ns" type veth peer name p$_i netns "$CL_HUB" || skip "cannot make a veth pair here"
		ip -n "$CL_HUB" link set p$_i master br0 up
		ip -n "$_ns" addr add "$CL_NET.1$_i/24" dev e$_i
		ip -n "$_ns" link set e$_i up
	done
}
in_node() { # in_node N ARGS...: gitlab-ctl for node N, inside its namespace
	_n=$1
	shift
	ip netns exec "$(ns "$_n")" "$GITLAB_CTL" --root "$CL_DIR/n$_n" "$@"
}
# cl_tls: a CA, a server certificate per etcd member, one client certificate for Patroni, in $C.
C=$T_ROOT/tls
cl_tls() {
	test_ca "$C"
	for _i in 1 2 3; do test_cert "$C" etcd$_i "IP:$CL_NET.1$_i"; done
	test_cert "$C" patroni "DNS:patroni"
}
# cl_roots [GITLAB.RB LINES]: fresh roots $CL_DIR/n1..3, each with its gitlab.rb (the lines appended).
cl_roots() {
	mkdir -p "$CL_DIR"
	chmod 755 "$T_ROOT" "$CL_DIR"
	for _i in 1 2 3; do
		mkdir -p "$CL_DIR/n$_i/etc/gitlab"
		chmod 755 "$CL_DIR/n$_i"
		CL_ROOTS="$CL_ROOTS $CL_DIR/n$_i"
		# Paths in a gitlab.rb are under its --root: each node has its copy.
		cp -a "$C" "$CL_DIR/n$_i/etc/gitlab/tls"
		_c=$CL_DIR/n$_i/etc/gitlab/tls
		_a=$CL_NET.1
		cat >"$CL_DIR/n$_i/etc/gitlab/gitlab.rb" <<EOF2
roles(['patroni_role', 'etcd_role'])
etcd['name'] = 'db$_i'
etcd['listen_address'] = '$_a$_i'
etcd['tls_cert_path'] = '$_c/etcd$_i.pem'
etcd['tls_key_path'] = '$_c/etcd$_i.key'
etcd['tls_client_ca_path'] = '$_c/ca.pem'
etcd['initial_cluster'] = 'db1=https://${_a}1:2380,db2=https://${_a}2:2380,db3=https://${_a}3:2380'
patroni['etcd'] = { 'hosts' => ['${_a}1:2379', '${_a}2:2379', '${_a}3:2379'],
                    'protocol' => 'https', 'cacert' => '$_c/ca.pem',
                    'cert' => '$_c/patroni.pem', 'key' => '$_c/patroni.key' }
patroni['name'] = 'db$_i'
patroni['listen_address'] = '$_a$_i'
patroni['connect_address'] = '$_a$_i'
patroni['password'] = 'rest-Secret-42'
patroni['tls_certificate_file'] = '$_c/etcd$_i.pem'
patroni['tls_key_file'] = '$_c/etcd$_i.key'
patroni['tls_ca_file'] = '$_c/ca.pem'
patroni['ttl'] = ${CL_TTL:-10}
patroni['loop_wait'] = ${CL_LOOP:-2}
patroni['retry_timeout'] = ${CL_RETRY:-4}
postgresql['sql_replication_password'] = 'repl-Secret-41'
postgresql['sql_superuser_password'] = 'super-Secret-43'
${1:-}
EOF2
		chmod 600 "$CL_DIR/n$_i/etc/gitlab/gitlab.rb"
	done
}
# cl_reconfigure_all: the three side by side, since etcd has no quorum, and so Patroni no
# leader, until two members run; no password in their output.
cl_reconfigure_all() {
	for _i in 1 2 3; do
		SVWAIT=240 in_node $_i reconfigure >"$CL_DIR/rc$_i.out" 2>&1 &
		eval "CL_RC_PID$_i=\$!"
	done
	_failed=
	for _i in 1 2 3; do
		eval "_p=\$CL_RC_PID$_i"
		wait "$_p" || _failed="$_failed $_i"
	done
	[ -z "$_failed" ] || { cl_report; fail "reconfigure failed on node(s)$_failed"; }
	for _i in 1 2 3; do ! grep -q "Secret-4" "$CL_DIR/rc$_i.out" || fail "node $_i printed a password"; done
}
# cl_report: each node's reconfigure output (what it made left out) and its etcd's and
# Patroni's last lines: the node that failed first is seldom the one waited on first.
cl_report() {
	for _i in 1 2 3; do
		echo "== node $_i: reconfigure"
		grep -v '^create \|^update ' "$CL_DIR/rc$_i.out"
		echo "== node $_i: etcd"
		tail -n 20 "$CL_DIR/n$_i/var/log/gitlab/etcd/current"
		echo "== node $_i: patroni"
		tail -n 10 "$CL_DIR/n$_i/var/log/gitlab/patroni/current"
	done >&2 2>/dev/null
}
rest() { # rest N PATH: HTTP status of node N's Patroni REST API
	ip netns exec "$(ns "$1")" curl -s -o /dev/null -w '%{http_code}' --max-time 3 --cacert "$C/ca.pem" \
		--cert "$C/patroni.pem" --key "$C/patroni.key" "https://$CL_NET.1$1:8008$2"
}
leader_of() { # the node whose /primary answers 200, among $*
	for _i in "$@"; do [ "$(rest "$_i" /primary)" = 200 ] && { echo "$_i"; return 0; }; done
	return 1
}
sql() { # sql N SQL: as the database account, on node N's socket
	ip netns exec "$(ns "$1")" setpriv --reuid=gitlab-psql --regid=gitlab-psql --init-groups \
		/usr/lib/postgresql/15/bin/psql -X -At -h "$CL_DIR/n$1/var/opt/gitlab/postgresql" -p 5432 -d postgres -c "$2"
}
is_replica() { [ "$(rest "$1" /replica)" = 200 ]; }
streaming() { [ "$(sql "$1" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = "$2" ]; }
cl_logs() { for _i in 1 2 3; do echo "== node $_i" && tail -n 15 "$CL_DIR/n$_i/var/log/gitlab/patroni/current"; done >&2; }
# cl_converged: one leader, printed, and two replicas streaming from it.
cl_converged() {
	until_true 1200 leader_of 1 2 3 >/dev/null || { cl_logs; fail "no leader"; }
	_l=$(leader_of 1 2 3)
	until_true 1200 streaming "$_l" 2 ||
		{ cl_logs; fail "the replicas do not stream: $(sql "$_l" 'SELECT * FROM pg_stat_replication')"; }
	for _i in 1 2 3; do
		[ "$_i" = "$_l" ] && continue
		until_true 300 is_replica "$_i" || fail "node $_i is no replica: /replica $(rest "$_i" /replica)"
	done
	echo "$_l"
}
