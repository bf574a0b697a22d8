#!/bin/sh
# Container entrypoint mode: `gitlab-ctl exec gitlab-exporter --from-config -c FILE` with no
# runit tree computes the env from the config and execs the exporter in place: the pid we
# started becomes the exporter, with exactly the computed env (LD_PRELOAD of jemalloc,
# MALLOC_CONF, RUBY_GC_*; nothing inherited), jemalloc mapped, as the configured user.
. "$SRCDIR/test/integration/lib.sh"

JEMALLOC=$(sed -n 's/^#define GITLAB_CTL_JEMALLOC *"\(.*\)"$/\1/p' "$BUILDDIR/build_config.h")
[ -r "$JEMALLOC" ] || fail "jemalloc not found: '$JEMALLOC'"
DATADIR=${GITLAB_CTL_DATADIR:-$SRCDIR}
port=$(free_port)
HOME_DIR=$T_ROOT/home
CONFIG=$T_ROOT/gitlab.rb

# What a pod mounts: gitlab.rb and the exporter's YAML (a ConfigMap), and an empty home.
mkdir -p "$HOME_DIR"
chmod 755 "$HOME_DIR"
cat >"$HOME_DIR/gitlab-exporter.yml" <<EOF
server:
  name: webrick
  listen_address: 127.0.0.1
  listen_port: $port
probes:
  ruby:
    methods: [probe_gc]
    opts: { quantiles: false }
EOF
chmod 644 "$HOME_DIR/gitlab-exporter.yml"
cat >"$CONFIG" <<EOF
gitlab_exporter['home'] = '$HOME_DIR'
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $port
gitlab_exporter['command'] = '$DATADIR/exporter/gitlab-exporter'
gitlab_exporter['env'] = { 'EXTRA_SETTING' => 'from gitlab.rb' }
user['username'] = 'nobody'
user['group'] = 'nogroup'
EOF

note "start the entrypoint in the background; its pid must become the exporter"
export INHERITED_BY_ACCIDENT=yes
"$GITLAB_CTL" --root "$T_ROOT" exec gitlab-exporter --from-config -c "$CONFIG" >"$T_ROOT/out" 2>&1 </dev/null &
pid=$!
track_pid "$pid"
unset INHERITED_BY_ACCIDENT

metrics() { curl -fsS "http://127.0.0.1:$port/metrics" >"$T_ROOT/metrics" 2>/dev/null; }
until_true 150 metrics || { cat "$T_ROOT/out"; fail "/metrics does not answer on port $port"; }
alive "$pid" || fail "pid $pid is gone: the entrypoint forked instead of exec'ing"
tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "exporter/gitlab-exporter web -c $HOME_DIR/gitlab-exporter.yml" ||
	fail "pid $pid is not the exporter: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
case $(readlink "/proc/$pid/exe") in
*ruby*) ;;
*) fail "pid $pid runs $(readlink "/proc/$pid/exe"), not ruby" ;;
esac
[ "$(readlink "/proc/$pid/cwd")" = "$HOME_DIR" ] || fail "cwd is not the service home"

note "its environment is exactly the computed one"
tr '\0' '\n' <"/proc/$pid/environ" | sort >"$T_ROOT/environ"
for kv in "LD_PRELOAD=$JEMALLOC" "MALLOC_CONF=narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0,background_thread:true,tcache:false" \
	RUBY_GC_HEAP_INIT_SLOTS=80000 RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO=0.055 \
	RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO=0.111 "EXTRA_SETTING=from gitlab.rb" "HOME=$HOME_DIR"; do
	grep -qxF "$kv" "$T_ROOT/environ" || { cat "$T_ROOT/environ"; fail "env lacks $kv"; }
done
grep -q '^INHERITED_BY_ACCIDENT=' "$T_ROOT/environ" && fail "the caller's environment leaked in"

note "jemalloc is mapped, and the process runs as the configured user"
grep -qF "$JEMALLOC" "/proc/$pid/maps" || fail "$JEMALLOC is not mapped in pid $pid"
if [ "$(id -u)" -eq 0 ]; then
	uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
	[ "$uid" = "$(id -u nobody)" ] || fail "runs as uid $uid, not nobody"
fi

note "stopped by pid, as an orchestrator does"
kill -TERM "$pid"
wait_gone "$pid" 100 || fail "pid $pid did not stop on SIGTERM"
echo "ok: entrypoint exec'd the exporter in place (pid $pid) with jemalloc and the computed env"
