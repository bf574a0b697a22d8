#!/bin/sh
# `exec --from-config` renders the service's config file from gitlab.rb: a container needs
# gitlab.rb alone. The home is created (owned by the service user), gitlab-exporter.yml is
# written 0600 for that user with the address and port of gitlab.rb, an unchanged file is not
# written again, and a link the service user planted there is replaced, never followed.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || fail "needs root (switches to nobody)"
DATADIR=${GITLAB_CTL_DATADIR:-$SRCDIR}
port=$(free_port)
HOME_DIR=$T_ROOT/srv/exporter
CONFIG=$T_ROOT/gitlab.rb
cat >"$CONFIG" <<EOF
gitlab_exporter['home'] = '$HOME_DIR'
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $port
gitlab_exporter['command'] = '$DATADIR/exporter/gitlab-exporter'
user['username'] = 'nobody'
user['group'] = 'nogroup'
EOF
[ ! -e "$HOME_DIR" ] || fail "home exists before the test"

start() {
	"$GITLAB_CTL" exec gitlab-exporter --from-config -c "$CONFIG" >"$T_ROOT/out" 2>&1 </dev/null &
	pid=$!
	track_pid "$pid"
}
metrics() { curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1; }
stop() {
	kill -TERM "$pid"
	wait_gone "$pid" 100 || fail "exporter pid $pid did not stop on TERM"
}

note "from gitlab.rb alone: home and YAML are made, the exporter answers on gitlab.rb's port"
start
until_true 150 metrics || { cat "$T_ROOT/out"; fail "/metrics does not answer on port $port"; }
[ "$(stat -c '%U %a' "$HOME_DIR")" = "nobody 750" ] || fail "home is $(stat -c '%U %a' "$HOME_DIR")"
yml=$HOME_DIR/gitlab-exporter.yml
[ "$(stat -c '%U %a' "$yml")" = "nobody 600" ] || fail "YAML is $(stat -c '%U %a' "$yml")"
grep -q "$port" "$yml" || fail "the YAML lacks the port of gitlab.rb"
grep -q "create file $yml" "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "the write was not reported"; }
stop

note "unchanged: nothing written; a changed port: the YAML follows gitlab.rb"
start
until_true 150 metrics || { cat "$T_ROOT/out"; fail "second start"; }
grep -q "$yml" "$T_ROOT/out" && fail "an unchanged YAML was written again: $(cat "$T_ROOT/out")"
stop
port2=$(free_port)
sed -i "s/listen_port'\] = $port/listen_port'] = $port2/" "$CONFIG"
port=$port2
start
until_true 150 metrics || { cat "$T_ROOT/out"; fail "/metrics not on the new port $port"; }
grep -q "update file $yml" "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "no update reported"; }
stop

note "a link planted by the service user is replaced, never followed"
echo "root's file" >"$T_ROOT/outside"
rm -f "$yml"
ln -s "$T_ROOT/outside" "$yml"
start
until_true 150 metrics || { cat "$T_ROOT/out"; fail "start over a planted link"; }
[ "$(cat "$T_ROOT/outside")" = "root's file" ] || fail "exec wrote through the planted link"
[ "$(stat -c %U "$T_ROOT/outside")" = root ] || fail "exec chowned through the planted link"
[ -L "$yml" ] && fail "the planted link is still there"
grep -q "$port" "$yml" || fail "the YAML was not rendered in place of the link"
stop
echo "ok: exec --from-config renders the service's config from gitlab.rb"
