#!/bin/sh
# Redis' Omnibus roles and replication keys, without starting anything: redis_replica_role
# renders replicaof master_ip master_port and masterauth through redis.conf's quoting, a
# master renders no replicaof; both roles on one node is an error at the second role; a
# replica or sentinel node without master_ip / master_password, or a Redis node without a TCP
# port, is refused at its role; the master password is redacted in --diff.
. "$SRCDIR/test/integration/lib.sh"

R=$T_ROOT
OUT=$R/out ERR=$R/err
RB=$R/etc/gitlab/gitlab.rb
mkdir -p "$R/etc/gitlab"

rb() { printf '%s\n' "$@" >"$RB"; chmod 600 "$RB"; }

# both roles: the second is the error, at its column
rb "roles(['redis_master_role', 'redis_replica_role'])" "redis['port'] = 6379" \
	"redis['master_ip'] = '10.0.0.11'" "redis['password'] = 'pw'"
expect_rc 1 ctl check-config
has "$ERR" "$RB:1:29: error: roles 'redis_master_role' and 'redis_replica_role' are both given: a node is one of them (redis)"

# a replica without master_ip, master_password or a port: each at the role
rb "roles(['redis_replica_role'])"
expect_rc 1 ctl check-config
has "$ERR" "$RB:1:8: error: role 'redis_replica_role' needs redis['master_ip'] set"
has "$ERR" "$RB:1:8: error: role 'redis_replica_role' needs redis['master_password'] set"
has "$ERR" "$RB:1:8: error: role 'redis_replica_role' needs redis['port'] set"
rb "roles(['redis_sentinel_role'])"
expect_rc 1 ctl check-config
has "$ERR" "$RB:1:8: error: role 'redis_sentinel_role' needs redis['master_ip'] set"

# a replica: replicaof and masterauth (the password given as master_password, quoted)
rb "roles(['redis_replica_role'])" "redis['port'] = 6379" "redis['bind'] = '10.0.0.12'" \
	"redis['password'] = 'PW1'" "redis['master_ip'] = '10.0.0.11'" "redis['master_port'] = 6380" \
	"redis['master_password'] = 'MA\"STER'" "redis['announce_ip'] = '10.0.0.12'"
expect_rc 0 ctl check-config
expect_rc 0 ctl reconfigure --dry-run --diff
has "$OUT" '+replicaof "10.0.0.11" 6380'
has "$OUT" '+replica-announce-ip "10.0.0.12"'
has "$OUT" '+masterauth [REDACTED]'
lacks "$OUT" 'STER'
lacks "$OUT" 'PW1'
# a value that would break the line is quoted, not injected
rb "roles(['redis_replica_role'])" "redis['port'] = 6379" "redis['password'] = 'PW1'" \
	"redis['bind'] = '10.0.0.12'" "redis['master_ip'] = \"10.0.0.11\\nslaveof 6.6.6.6 1\""
expect_rc 0 ctl reconfigure --dry-run --diff
has "$OUT" '+replicaof "10.0.0.11\nslaveof 6.6.6.6 1" 6379'
lacks "$OUT" '+slaveof'

# a master: no replicaof, masterauth from redis['password'] (it may become a replica)
rb "roles(['redis_master_role'])" "redis['port'] = 6379" "redis['bind'] = '10.0.0.11'" \
	"redis['password'] = 'PW1'"
expect_rc 0 ctl reconfigure --dry-run --diff
lacks "$OUT" 'replicaof'
has "$OUT" '+masterauth [REDACTED]'
# beyond loopback without a password: refused at the bind line, as before
rb "roles(['redis_master_role'])" "redis['port'] = 6379" "redis['bind'] = '10.0.0.11'"
expect_rc 1 ctl check-config
has "$ERR" "$RB:3:"
# the exporter's Sidekiq probe through the sentinels: gitlab_rails' keys, both secrets redacted
rb "roles(['redis_replica_role'])" "redis['port'] = 6379" "redis['password'] = 'PW1'" \
	"redis['bind'] = '10.0.0.12'" "redis['master_ip'] = '10.0.0.11'" \
	"gitlab_exporter['enable'] = true" \
	"gitlab_rails['redis_sentinels'] = [ { 'host' => '10.0.0.11', 'port' => 26379 }, { 'host' => '10.0.0.13' } ]" \
	"gitlab_rails['redis_sentinels_password'] = 'SENT2'"
expect_rc 0 ctl check-config
lacks "$ERR" "gitlab_rails"
expect_rc 0 ctl reconfigure --dry-run --diff
has "$OUT" '+    redis_sentinels:'
has "$OUT" '+      - host: "10.0.0.11"'
has "$OUT" '+      - host: "10.0.0.13"'
has "$OUT" '+    redis_url: [REDACTED]'
has "$OUT" '+    redis_sentinel_password: [REDACTED]'
lacks "$OUT" 'SENT2'
lacks "$OUT" 'PW1'
expect_rc 0 ctl show-config gitlab-exporter
lacks "$OUT" 'SENT2'
echo "PASS"
