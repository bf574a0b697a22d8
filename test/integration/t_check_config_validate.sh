# check-config runs the validation reconfigure runs before it publishes (engine/prepublish):
# the template's postgres_exporter['flags'] are refused at their gitlab.rb lines against the
# installed exporter's own --help, as are a mistyped node_exporter/redis_exporter flag; a
# scrape_configs duration promtool refuses is refused at its line; scrape_interval below the
# default timeout renders a timeout promtool accepts; and on each config check-config and
# reconfigure --dry-run agree (a check-config OK is a validation reconfigure passes).
. "$SRCDIR/test/integration/lib.sh"

for b in /usr/bin/promtool /usr/bin/amtool /usr/bin/prometheus /usr/bin/prometheus-postgres-exporter \
	/usr/bin/prometheus-node-exporter /usr/bin/prometheus-redis-exporter; do
	[ -x "$b" ] || { echo "SKIP: $b missing (scripts/setup installs it)"; exit 77; }
done
OUT=$T_ROOT/out
ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
P=$(free_port)

# agree RC: check-config and reconfigure --dry-run both exit RC on $RB.
agree() {
	expect_rc "$1" ctl check-config
	cp "$ERR" "$T_ROOT/check.err"
	expect_rc "$1" ctl reconfigure --dry-run
}

note "the gitlab.rb template's postgres_exporter['flags']: refused at their lines, before reconfigure"
{
	only_services postgres_exporter node_exporter redis_exporter
	echo "postgres_exporter['enable'] = true"
	echo "postgres_exporter['listen_address'] = 'localhost:$(free_port)'"
	echo "postgres_exporter['flags'] = {"
	echo " 'collector.stat_user_tables' => false,"
	echo " 'collector.postmaster' => true"
	echo "}"
	echo "node_exporter['enable'] = true"
	echo "node_exporter['listen_address'] = 'localhost:$(free_port)'"
	echo "node_exporter['flags'] = { 'collector.mountstatz' => true, 'no-collector.arp' => true }"
	echo "redis_exporter['enable'] = true"
	echo "redis_exporter['listen_address'] = 'localhost:$(free_port)'"
	echo "redis_exporter['flags'] = { 'namespace' => 'redis', 'redis.passwordd' => 'x' }"
} >"$RB"
L=$(grep -n "collector.stat_user_tables" "$RB" | cut -d: -f1)
agree 1
for f in "$T_ROOT/check.err" "$ERR"; do
	has "$f" "$RB:$L:"
	has "$f" "error: postgres_exporter['flags']: the installed /usr/bin/prometheus-postgres-exporter has no option --no-collector.stat_user_tables (its --help lists none such); remove the key 'collector.stat_user_tables'"
	has "$f" "$RB:$((L + 1)):"
	has "$f" "has no option --collector.postmaster (its --help lists none such); remove the key 'collector.postmaster'"
	has "$f" "error: node_exporter['flags']: /usr/bin/prometheus-node-exporter has no option --collector.mountstatz: did you mean 'collector.mountstats'?"
	has "$f" "error: redis_exporter['flags']: /usr/bin/prometheus-redis-exporter has no option --redis.passwordd: did you mean 'redis.password'?"
	lacks "$f" "no-collector.arp" # kingpin's negation of a boolean the binary lists
	lacks "$f" "namespace"
done
has "$ERR" "validation failed: nothing was written"
[ ! -e "$T_ROOT/var/opt/gitlab/postgres-exporter" ] || fail "a refused reconfigure wrote the exporter's home"

note "the flags the installed exporters take: OK"
sed -i '/collector.stat_user_tables/d; /collector.postmaster/d; s/mountstatz/mountstats/; s/passwordd/password/' "$RB"
agree 0
has "$OUT" "dry run"

note "a scrape_configs duration promtool refuses: refused at its line"
{
	only_services prometheus
	echo "prometheus['enable'] = true"
	echo "prometheus['listen_address'] = 'localhost:$P'"
	echo "prometheus['scrape_configs'] = ["
	echo "  { 'job_name' => 'app',"
	echo "    'scrape_interval' => '1 minute',"
	echo "    'static_configs' => [ { 'targets' => ['10.0.0.2:9100'] } ] }"
	echo "]"
} >"$RB"
L=$(grep -n "1 minute" "$RB" | cut -d: -f1)
agree 1
has "$T_ROOT/check.err" "$RB:$L: error: prometheus['scrape_configs']: promtool refuses the $T_ROOT/var/opt/gitlab/prometheus/prometheus.yml written from this line: not a valid duration string: \"1 minute\"; correct the value written here"
has "$ERR" "$RB:$L: error: prometheus['scrape_configs']: promtool refuses"

note "scrape_interval below the default timeout, scrape_timeout unset: the interval is the timeout"
{
	only_services prometheus
	echo "prometheus['enable'] = true"
	echo "prometheus['listen_address'] = 'localhost:$P'"
	echo "prometheus['scrape_interval'] = 5"
} >"$RB"
agree 0
expect_rc 0 ctl show-config prometheus
has "$OUT" "scrape_timeout = 5;"
echo "prometheus['scrape_interval'] = 60" >>"$RB"
expect_rc 0 ctl show-config prometheus
has "$OUT" "scrape_timeout = 15;" # Omnibus' default where it fits

note "a scrape_timeout set above the interval: refused at the scrape_timeout line"
echo "prometheus['scrape_interval'] = 5" >>"$RB"
echo "prometheus['scrape_timeout'] = 20" >>"$RB"
agree 1
has "$T_ROOT/check.err" "$RB:$(wc -l <"$RB"): error: prometheus['scrape_timeout']: promtool refuses the prometheus.yml rendered with it: global scrape timeout greater than scrape interval; set prometheus['scrape_timeout'] no higher than prometheus['scrape_interval']"
