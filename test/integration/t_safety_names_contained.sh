#!/bin/sh
# A failure in one account's home fails that service only. The exporter's home (git's) cannot
# be written (a read-only bind mount over it, in a private mount namespace: a broken volume,
# or anything an account can make fail there) while gitlab.rb changes both the exporter (its
# YAML and its env) and Redis. reconfigure must: apply and publish the Redis change (redis
# restarted with the new maxmemory), name the exporter with the cause, leave every file of the
# exporter as it was (not even its root-owned env file is published) and not restart it, not
# say "gitlab Reconfigured!", count only what it published, and exit non-zero. The next run,
# with the home writable again, converges the exporter. Needs root.
. "$SRCDIR/test/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v unshare >/dev/null || fail "unshare (util-linux) is needed"

export SVWAIT=60
PORT=$(free_port)
EXPORTER_PORTS=$(exporter_ports) # once: new ports each run would change redis-exporter too
RB=$T_ROOT/etc/gitlab/gitlab.rb
H=$T_ROOT/var/opt/gitlab/gitlab-exporter
YML=$H/gitlab-exporter.yml
ENVF=$T_ROOT/opt/gitlab/etc/gitlab-exporter/env/GEN
SOCK=$T_ROOT/var/opt/gitlab/redis/redis.socket
mkdir -p "$T_ROOT/etc/gitlab"
write_rb() {
	cat >"$RB" <<EOF
redis['enable'] = true
redis['maxmemory'] = '$1'
$EXPORTER_PORTS
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
gitlab_exporter['memory_threshold'] = $2
gitlab_exporter['env'] = { 'GEN' => '$2' }
$(only_services gitlab_exporter redis redis_exporter)
EOF
	chmod 600 "$RB"
}
pid_of() { status_pid "$SV_DIR/$1/supervise/status"; }
maxmemory() { ctl exec redis -- redis-cli -s "$SOCK" config get maxmemory 2>/dev/null | sed -n 2p; }

write_rb 10mb 1001
out=$(ctl reconfigure 2>&1) || fail "first reconfigure: $out"
[ "$(maxmemory)" = 10485760 ] || fail "redis maxmemory is $(maxmemory), want 10mb"
grep -q "memory_threshold: 1001" "$YML" || fail "yml: $(cat "$YML")"
EXP=$(pid_of gitlab-exporter)
REDIS=$(pid_of redis)
YML_BEFORE=$(cat "$YML")

note "the exporter's home is read-only for the run; Redis and the exporter both change"
write_rb 20mb 1002
export GITLAB_CTL T_ROOT H
out=$(unshare -m sh -c 'mount --bind "$H" "$H" && mount -o remount,bind,ro "$H" &&
	exec "$GITLAB_CTL" --root "$T_ROOT" reconfigure' 2>&1) &&
	fail "reconfigure succeeded though the exporter's files were not written: $out"
printf '%s\n' "$out" | grep -q "gitlab-exporter: cannot write $H/.*: Read-only file system" ||
	fail "the exporter and the cause are not named: $out"
printf '%s\n' "$out" | grep -q 'gitlab Reconfigured!' && fail "a failed run said Reconfigured: $out"
[ "$(maxmemory)" = 20971520 ] || fail "the Redis change was not applied: maxmemory $(maxmemory); $out"
[ "$(pid_of redis)" != "$REDIS" ] || fail "redis was not restarted for its change"
[ "$(cat "$YML")" = "$YML_BEFORE" ] || fail "the exporter's YAML changed"
[ "$(cat "$ENVF")" = 1001 ] || fail "the exporter's env was published without its YAML: $(cat "$ENVF")"
[ "$(pid_of gitlab-exporter)" = "$EXP" ] || fail "the exporter was restarted on its old or half-new files"
[ -z "$(find "$H" "${ENVF%/*}" -name '.*gitlab-ctl-tmp*')" ] || fail "temps left: $(ls -A "$H" "${ENVF%/*}")"
# The count is of what was published: Redis' config, not the exporter's YAML and env.
n=$(printf '%s\n' "$out" | sed -n 's|^\([0-9]*\)/[0-9]* resources updated.*|\1|p')
[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "summary counts what was not published: $out"
note "failed run: $(printf '%s\n' "$out" | grep -E 'cannot write|resources' | tr '\n' ' ')"

note "the home writable again: the exporter converges"
out=$(ctl reconfigure 2>&1) || fail "recovery: $out"
grep -q "memory_threshold: 1002" "$YML" || fail "yml not updated on recovery"
[ "$(cat "$ENVF")" = 1002 ] || fail "env not updated on recovery"
until_true 100 eval '[ "$(pid_of gitlab-exporter)" != "$EXP" ]' || fail "the exporter was not restarted"
