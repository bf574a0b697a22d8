# A careless home never takes another account's data (issue 29 row 6): a home that is,
# holds or lies inside another service's home, or is the data directory itself (or above
# it), is refused at its gitlab.rb line by check-config and by reconfigure, which then
# writes nothing and chowns nothing; the message names both services and both homes.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out
ERR=$T_ROOT/err
D=$T_ROOT/var/opt/gitlab
P1=$(free_port) P2=$(free_port) P3=$(free_port) P4=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
rb() {
	{
		only_services redis redis_exporter prometheus gitlab_exporter
		echo "redis['enable'] = true"
		echo "prometheus['enable'] = true"
		echo "prometheus['listen_address'] = 'localhost:$P1'"
		echo "redis_exporter['listen_address'] = 'localhost:$P2'"
		echo "gitlab_exporter['listen_port'] = $P3"
		echo "$1"
	} >"$T_ROOT/etc/gitlab/gitlab.rb"
}
LINE=$(($(only_services redis redis_exporter prometheus gitlab_exporter | wc -l) + 6))

note "the defaults: every home apart"
rb ""
expect_rc 0 ctl check-config

note "prometheus['home'] = Redis' home"
rb "prometheus['home'] = '$D/redis'"
expect_rc 1 ctl check-config
has "$ERR" "gitlab.rb:$LINE:22: error: prometheus['home']: $D/redis is also the home of redis ($D/redis, account"
expect_rc 1 ctl reconfigure
has "$ERR" "prometheus['home']: $D/redis is also the home of redis"
[ ! -e "$T_ROOT/opt/gitlab/sv" ] && [ ! -e "$D/redis" ] || fail "a refused reconfigure wrote the tree"

note "prometheus['home'] inside Redis' home"
rb "prometheus['home'] = '$D/redis/prom'"
expect_rc 1 ctl check-config
has "$ERR" "prometheus['home']: $D/redis/prom lies inside the home of redis ($D/redis, account"

note "prometheus['home'] = the data directory itself, or above it"
rb "prometheus['home'] = '$D'"
expect_rc 1 ctl check-config
has "$ERR" "prometheus['home']: $D is the data directory $D or above it"
has "$ERR" "prometheus['home']: $D holds the home of redis ($D/redis, account"
has "$ERR" "prometheus['home']: $D holds the home of gitlab_exporter ($D/gitlab-exporter, account"
rb "prometheus['home'] = '$T_ROOT/var/opt'"
expect_rc 1 ctl check-config
has "$ERR" "prometheus['home']: $T_ROOT/var/opt is the data directory $D or above it"
expect_rc 1 ctl reconfigure
[ ! -e "$T_ROOT/opt/gitlab/sv" ] || fail "a refused reconfigure wrote the tree"

note "a home that only shares a prefix is its own"
rb "prometheus['home'] = '$D/redis-prom'"
expect_rc 0 ctl check-config
echo "ok t_safety_homes"
