# probe SERVICE without a running service: usage, unknown names, not running, a broken config.
. "$SRCDIR/test/integration/lib.sh"

OUT="$T_ROOT/out"
ERR="$T_ROOT/err"

note "usage: exactly one service name, not an option"
expect_rc 2 ctl probe
has "$ERR" "usage: gitlab-ctl probe SERVICE"
expect_rc 2 ctl probe -v
has "$ERR" "usage: gitlab-ctl probe SERVICE"
expect_rc 2 ctl probe redis extra

note "a name the catalog does not have"
expect_rc 1 ctl probe no-such-service
has "$ERR" "probe: no service no-such-service in the catalog"

note "a catalog service that is not supervised: not running (no supervise/status)"
expect_rc 1 ctl probe redis
has "$ERR" "redis: not running"

note "a broken gitlab.rb: the error with its location, not ready"
mkdir -p "$T_ROOT/etc/gitlab"
printf 'redis["port"] = \n' >"$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 1 ctl probe redis
has "$ERR" "gitlab.rb:"
echo "ok: probe"
