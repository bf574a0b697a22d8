#!/bin/sh
# `exec --from-config` renders the service's config file from gitlab.rb: a container needs
# gitlab.rb alone. The home is created (owned by the service user), gitlab-exporter.yml is
# written 0600 for that user with the address and port of gitlab.rb, an unchanged file is not
# written again, and a link the service user planted there is replaced, never followed.
# A web password's bcrypt hash is made once and kept in reconfigure's record
# (<install>/var/secrets/bcrypt, root's 0600): a second start hashes nothing (web.yml and the
# record byte for byte and mtime the same), a changed password is hashed again, and a record
# that is not exactly 0600 is not used. A group shared by a needed service (Redis' socket)
# that this machine lacks, as in a container running the exporter alone, is left out with a
# warning.
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
redis['group'] = 'nogrp$$'
EOF
! getent group "nogrp$$" >/dev/null || exit 77
[ ! -e "$HOME_DIR" ] || fail "home exists before the test"

start() {
	"$GITLAB_CTL" --root "$T_ROOT" exec gitlab-exporter --from-config -c "$CONFIG" >"$T_ROOT/out" 2>&1 </dev/null &
	pid=$!
	track_pid "$pid"
}
metrics() { curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1; }
stop() {
	kill -TERM "$pid"
	wait_gone "$pid" 100 || {
		cat "$T_ROOT/out" "/proc/$pid/status" >&2 2>/dev/null || true
		fail "exporter pid $pid did not stop on TERM"
	}
}

note "from gitlab.rb alone: home and YAML are made, the exporter answers on gitlab.rb's port"
start
until_true 150 metrics || { cat "$T_ROOT/out"; fail "/metrics does not answer on port $port"; }
[ "$(stat -c '%U %a' "$HOME_DIR")" = "nobody 750" ] || fail "home is $(stat -c '%U %a' "$HOME_DIR")"
yml=$HOME_DIR/gitlab-exporter.yml
[ "$(stat -c '%U %a' "$yml")" = "nobody 600" ] || fail "YAML is $(stat -c '%U %a' "$yml")"
grep -q "$port" "$yml" || fail "the YAML lacks the port of gitlab.rb"
grep -q "create file $yml" "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "the write was not reported"; }
grep -q "no group nogrp$$ here.*not joined" "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "the absent group is not reported"; }
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

note "a web password: hashed at the first start only, kept in reconfigure's record"
NE=$T_ROOT/node.rb
cat >"$NE" <<EOF
node_exporter['username'] = 'nobody'
node_exporter['group'] = 'nogroup'
node_exporter['home'] = '$T_ROOT/srv/node'
node_exporter['web_password'] = 'first Secret 1'
EOF
WEB=$T_ROOT/opt/gitlab/etc/node-exporter/web.yml
REC=$T_ROOT/opt/gitlab/var/secrets/bcrypt
# The command after -- replaces node_exporter's: a start's own work, no server.
ne_start() {
	"$GITLAB_CTL" --root "$T_ROOT" exec node-exporter --from-config -c "$NE" -- /bin/true \
		>"$T_ROOT/out" 2>&1 </dev/null || { cat "$T_ROOT/out" >&2; fail "exec node-exporter"; }
}
hash_of() { sed -n 's/^  "gitlab-prometheus": "\(\$2b\$10\$[./A-Za-z0-9]\{53\}\)"$/\1/p' "$WEB"; }
ne_start
H1=$(hash_of)
[ -n "$H1" ] || fail "no bcrypt hash in web.yml: $(cat "$WEB")"
[ "$(stat -c '%U %a' "$REC")" = "root 600" ] || fail "the record is $(stat -c '%U %a' "$REC")"
grep -qF "$H1" "$REC" || fail "the hash is not in the record"
grep -q "first Secret" "$REC" "$WEB" && fail "the password itself was written"
rec1=$(sha256sum <"$REC")
state1=$(stat -c '%n %y' "$WEB" "$REC")
ne_start
[ "$(hash_of)" = "$H1" ] || fail "a second start hashed again: $H1 -> $(hash_of)"
[ "$(sha256sum <"$REC")" = "$rec1" ] || fail "a second start rewrote the record"
[ "$(stat -c '%n %y' "$WEB" "$REC")" = "$state1" ] || fail "a second start wrote web.yml or the record"
[ -s "$T_ROOT/out" ] && fail "a second start changed something: $(cat "$T_ROOT/out")"

note "a changed password is hashed again; the old one's hash stays kept"
sed -i 's/first Secret 1/second Secret 2/' "$NE"
ne_start
H2=$(hash_of)
[ -n "$H2" ] && [ "$H2" != "$H1" ] || fail "a changed password kept its hash: $H2"
grep -q "update file $WEB" "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "web.yml not updated"; }
grep -qF "$H2" "$REC" && grep -qF "$H1" "$REC" || fail "the record lacks a hash: $(wc -l <"$REC") lines"
sed -i 's/second Secret 2/first Secret 1/' "$NE"
ne_start
[ "$(hash_of)" = "$H1" ] || fail "the first password back got another hash"

note "a record not exactly 0600 is not used (and is replaced by one that is)"
chmod 644 "$REC"
ne_start
H3=$(hash_of)
[ -n "$H3" ] && [ "$H3" != "$H1" ] || fail "a 0644 record was used"
[ "$(stat -c '%U %a' "$REC")" = "root 600" ] || fail "the record is $(stat -c '%U %a' "$REC")"
ne_start
[ "$(hash_of)" = "$H3" ] || fail "the replaced record was not used"
echo "ok: exec --from-config renders the service's config from gitlab.rb"
