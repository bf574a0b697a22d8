# inspect: the running process against the configuration. A hand-made tree
# runs the bundled exporter as gitlab-exporter with jemalloc preloaded through
# its envdir, and a plain Ruby web server as node-exporter without it (both
# through `gitlab-ctl exec --envdir`, as generated run scripts do). inspect
# must report jemalloc for one and glibc for the other, the user, /metrics,
# exit 0 (the exporter's process tree within its memory_budget, the stand-in with none);
# over budget once the budget is 1 MB; then "restart needed" with the variable names and exit 1 once an
# envdir is edited behind the service's back.
. "$SRCDIR/test/integration/lib.sh"

command -v ruby >/dev/null || fail "ruby is required"
JEMALLOC=$(pkg-config --variable=libdir jemalloc)/libjemalloc.so.2
[ -e "$JEMALLOC" ] || fail "no $JEMALLOC"
me=$(id -un)
grp=$(id -gn)
port1=$(free_port)
port2=$(free_port)
while [ "$port2" = "$port1" ]; do port2=$(free_port); done

mkdir -p "$T_ROOT/etc/gitlab" "$SERVICE_DIR"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF
user['username'] = '$me'
user['group'] = '$grp'
manage_accounts['enable'] = false
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $port1
node_exporter['enable'] = true
node_exporter['listen_address'] = '127.0.0.1:$port2'
node_exporter['username'] = '$me'
node_exporter['group'] = '$grp'
node_exporter['memory_budget'] = 0
$(only_services gitlab_exporter node_exporter)
EOF

# envdir NAME VAR=VALUE...: the service's complete environment, one file per variable.
envdir() {
	_e=$T_ROOT/opt/gitlab/etc/$1/env
	shift
	mkdir -p "$_e"
	chmod 700 "$_e"
	for _kv in "$@"; do printf '%s' "${_kv#*=}" >"$_e/${_kv%%=*}"; done
}
# mksv NAME HOME -- COMMAND...: run script through gitlab-ctl exec with the envdir.
mksv() {
	_n=$1 _home=$2
	shift 3
	_d=$SV_DIR/$_n
	mkdir -p "$_d" "$_home"
	{
		printf '#!/bin/sh\nexec 2>&1\nexec %s --root %s exec --envdir %s --user %s --group %s --chdir %s %s --' \
			"$GITLAB_CTL" "$T_ROOT" "$T_ROOT/opt/gitlab/etc/$_n/env" "$me" "$grp" "$_home" "$_n"
		for _a in "$@"; do printf " '%s'" "$_a"; done
		printf '\n'
	} >"$_d/run"
	chmod 755 "$_d/run"
	ln -s "../sv/$_n" "$SERVICE_DIR/$_n"
}

home1=$T_ROOT/var/opt/gitlab/gitlab-exporter
home2=$T_ROOT/var/opt/gitlab/node-exporter
mkdir -p "$home1" "$home2/www"
echo "up 1" >"$home2/www/metrics"
cat >"$home1/gitlab-exporter.yml" <<EOF
server:
  name: webrick
  listen_address: 127.0.0.1
  listen_port: $port1
probes:
  ruby:
    methods: [probe_gc]
    opts: { quantiles: false }
EOF
BASE="PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8"
# shellcheck disable=SC2086
envdir gitlab-exporter $BASE "HOME=$home1" "LD_PRELOAD=$JEMALLOC" \
	MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0 RUBY_GC_HEAP_INIT_SLOTS=80000
# shellcheck disable=SC2086
envdir node-exporter $BASE "HOME=$home2"
mksv gitlab-exporter "$home1" -- ruby "$SRCDIR/exporter/gitlab-exporter" web -c "$home1/gitlab-exporter.yml"
mksv node-exporter "$home2" -- ruby -run -e httpd -- -b 127.0.0.1 -p "$port2" "$home2/www"

start_runsvdir "$SERVICE_DIR"
answers() { curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$1/metrics" 2>/dev/null; }
until_true 300 answers "$port1" || fail "exporter does not answer: $(ctl status)"
until_true 300 answers "$port2" || fail "node-exporter stand-in does not answer: $(ctl status)"

out=$(ctl inspect) || fail "inspect should pass: $out"
printf '%s\n' "$out"
section() { printf '%s\n' "$out" | sed -n "/^$1:/,/metrics:/p"; }
exp=$(section gitlab-exporter)
node=$(section node-exporter)
printf '%s\n' "$exp" | grep -q "^  allocator: jemalloc $JEMALLOC\$" || fail "exporter allocator: $exp"
printf '%s\n' "$node" | grep -q '^  allocator: glibc$' || fail "node allocator: $node"
printf '%s\n' "$exp" | grep -Eq '^gitlab-exporter: pid [0-9]+, up [0-9]+s$' || fail "pid line: $exp"
printf '%s\n' "$exp" | grep -Eq '^  memory: rss [0-9.]+[BKMG], pss [0-9.]+[BKMG], uss [0-9.]+[BKMG]$' ||
	fail "memory line: $exp"
printf '%s\n' "$exp" | grep -q "^  user: $me\$" || fail "user: $exp"
printf '%s\n' "$exp" | grep -q '^  env: ok$' || fail "env: $exp"
printf '%s\n' "$exp" | grep -q "^  metrics: http://127.0.0.1:$port1/metrics: HTTP 200\$" || fail "metrics: $exp"
printf '%s\n' "$node" | grep -q "^  metrics: http://127.0.0.1:$port2/metrics: HTTP 200\$" || fail "metrics: $node"

# --json: exact kB, machine-readable verdicts
js=$(ctl inspect --json gitlab-exporter) || fail "inspect --json: $js"
printf '%s' "$js" | ruby -rjson -e '
	r = JSON.parse(STDIN.read)
	abort "not one service" unless r.size == 1
	s = r[0]
	abort "bad: #{s}" unless s["ok"] && s["allocator"] == "jemalloc" && s["env_ok"] &&
		s["memory_kb"]["rss"].is_a?(Integer) && s["memory_kb"]["rss"] > 1000 &&
		s["memory_kb"]["uss"] <= s["memory_kb"]["rss"] && s["metrics_status"] == 200' ||
	fail "json: $js"

# memory_budget: the default is met, 1 MB is not (exit 1, text and --json)
printf '%s\n' "$exp" | grep -Eq '^  budget: pss [0-9.]+[KM] of 96M \(1 process\)$' || fail "budget line: $exp"
printf '%s\n' "$node" | grep -q '^  budget:' && fail "a budget of 0 is none: $node"
echo "gitlab_exporter['memory_budget'] = 1" >>"$T_ROOT/etc/gitlab/gitlab.rb"
out=$(ctl inspect gitlab-exporter) && fail "inspect passed over budget: $out"
printf '%s\n' "$out" | grep -Eq '^  budget: pss [0-9.]+M of 1.0M \(1 process\): over budget$' ||
	fail "over budget not flagged: $out"
js=$(ctl inspect --json gitlab-exporter) && fail "inspect --json passed over budget: $js"
printf '%s' "$js" | python3 -m json.tool >/dev/null || fail "not JSON: $js"
printf '%s' "$js" | ruby -rjson -e '
	s = JSON.parse(STDIN.read)[0]
	abort "bad: #{s}" unless !s["ok"] && s["over_budget"] == true && s["budget_kb"] == 1024 &&
		s["tree_pss_kb"] > 1024 && s["tree_processes"] == 1' || fail "json over budget: $js"
sed -i "/^gitlab_exporter\['memory_budget'\]/d" "$T_ROOT/etc/gitlab/gitlab.rb"
ctl inspect gitlab-exporter >/dev/null || fail "inspect within budget again"

# gitlab.rb's name for the service is a typo of its runit name, not a disabled service
ctl inspect gitlab_exporter >"$T_ROOT/out" 2>"$T_ROOT/err" && fail "inspect gitlab_exporter passed"
case $(cat "$T_ROOT/err") in
"gitlab-ctl inspect: unknown service 'gitlab_exporter' (known: "*"); did you mean 'gitlab-exporter'?") ;;
*) fail "inspect gitlab_exporter: $(cat "$T_ROOT/err")" ;;
esac
ctl inspect --json gitlab_exporter >"$T_ROOT/out" 2>"$T_ROOT/err" && fail "inspect --json gitlab_exporter passed"
grep -qF '"enabled": false, "known": false' "$T_ROOT/out" || fail "inspect --json gitlab_exporter: $(cat "$T_ROOT/out")"

# the envdir edited behind the service's back: restart needed, exit 1
printf '%s' 'dirty_decay_ms:1000' >"$T_ROOT/opt/gitlab/etc/gitlab-exporter/env/MALLOC_CONF"
printf '%s' 'yes' >"$T_ROOT/opt/gitlab/etc/gitlab-exporter/env/NEW_VAR"
rm "$T_ROOT/opt/gitlab/etc/gitlab-exporter/env/RUBY_GC_HEAP_INIT_SLOTS"
out=$(ctl inspect gitlab-exporter) && fail "inspect passed with a drifted env: $out"
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q '^  env: restart needed (changed: MALLOC_CONF; missing: NEW_VAR; unexpected: RUBY_GC_HEAP_INIT_SLOTS)$' ||
	fail "drift not reported: $out"
ctl inspect node-exporter >/dev/null || fail "node-exporter should still pass"

# a restart picks the new env up: ok again
ctl restart gitlab-exporter >/dev/null || fail "restart"
until_true 300 answers "$port1" || fail "exporter does not answer after restart"
out=$(ctl inspect gitlab-exporter) || fail "inspect after restart: $out"
printf '%s\n' "$out" | grep -q '^  env: ok$' || fail "env after restart: $out"

# the wrong user is reported
sed -i "s/^node_exporter\\['username'\\] = .*/node_exporter['username'] = 'nobody'/" "$T_ROOT/etc/gitlab/gitlab.rb"
out=$(ctl inspect node-exporter) && fail "inspect passed with the wrong user: $out"
printf '%s\n' "$out" | grep -q "^  user: $me (expected nobody)\$" || fail "user mismatch: $out"

# a stopped service fails inspect; a bad config is reported with its diagnostics
ctl stop node-exporter >/dev/null || fail "stop node-exporter"
out=$(ctl inspect node-exporter) && fail "inspect of a stopped service passed: $out"
printf '%s\n' "$out" | grep -q '^node-exporter: not running: down: node-exporter: ' || fail "stopped: $out"
echo "gitlab_exporter['listen_port'] = 'eighty'" >>"$T_ROOT/etc/gitlab/gitlab.rb"
out=$(ctl inspect gitlab-exporter 2>&1) && fail "inspect passed with a bad config: $out"
printf '%s\n' "$out" | grep -q 'gitlab.rb:[0-9]*:[0-9]*: error' || fail "no diagnostics: $out"
note ok
