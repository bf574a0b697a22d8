# check-config and show-config on good, Omnibus-style and broken configurations.
. "$SRCDIR/test/integration/lib.sh"

OUT="$T_ROOT/out"
ERR="$T_ROOT/err"
CONF="$T_ROOT/etc/gitlab/gitlab.rb" # the default config under --root
mkdir -p "$T_ROOT/etc/gitlab"

note "no config file: all defaults, with a warning"
expect_rc 0 ctl check-config
has "$ERR" "no configuration file"
has "$OUT" "gitlab.rb OK"

note "the shipped example"
expect_rc 0 ctl -c "$SRCDIR/etc/gitlab.rb" check-config
has "$OUT" "gitlab.rb OK"
lacks "$ERR" "error"
expect_rc 0 ctl check-config -c "$SRCDIR/etc/gitlab.rb" # -c after the command too

note "a whole Omnibus gitlab.rb: warnings only"
OMNIBUS="$SRCDIR/test/fixtures/omnibus-gitlab.rb"
if [ -f "$OMNIBUS" ]; then
	expect_rc 0 ctl -c "$OMNIBUS" check-config
	has "$ERR" "warning: ignoring 34 Omnibus settings this build does not manage: consul, external_url, git_data_dirs, gitaly, gitlab_pages, gitlab_rails, gitlab_shell, mattermost, ... and 26 more (-v: each one)"
	lacks "$ERR" "error:"
	expect_rc 0 ctl -c "$OMNIBUS" show-config
else
	note "SKIP: $OMNIBUS not written yet"
fi

note "broken configs: exit 1 with file:line:col"
bad() { # bad NAME 'file:line:col: error: text' <content
	cat >"$T_ROOT/$1.rb"
	expect_rc 1 ctl -c "$T_ROOT/$1.rb" check-config
	has "$ERR" "$T_ROOT/$1.rb:$2"
	lacks "$OUT" "OK"
	expect_rc 1 ctl -c "$T_ROOT/$1.rb" show-config
	has "$ERR" "$T_ROOT/$1.rb:$2"
	[ ! -s "$OUT" ] || fail "show-config printed a configuration despite errors"
}
bad port "2:34: error: gitlab_exporter['listen_port'] must be an integer or numeric string, not array" <<'EOF'
external_url 'https://gitlab.example.com'
gitlab_exporter['listen_port'] = [9168]
EOF
bad opaque "3:35: error: gitlab_exporter['env'] uses Ruby that gitlab-ctl cannot evaluate: write a literal value (a string, number, true/false, array or hash)" <<'EOF'
# Ruby under a managed setting cannot be evaluated
gitlab_rails['env'] = { 'X' => ENV['Y'] }
gitlab_exporter['env'] = { 'X' => ENV['Y'] }
EOF
bad gc "1:53: error: RUBY_GC_HEAP_INIT_SLOTS=80_000 is not an integer" <<'EOF'
gitlab_exporter['env']['RUBY_GC_HEAP_INIT_SLOTS'] = '80_000'
EOF
bad ratio "2:63: error: RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO=0.05 must be greater than" <<'EOF'
gitlab_exporter['env']['RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO'] = 0.1
gitlab_exporter['env']['RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO'] = 0.05
EOF
bad mallocconf "1:41: error: MALLOC_CONF: unknown jemalloc option 'dirty_decay'" <<'EOF'
gitlab_exporter['env']['MALLOC_CONF'] = 'dirty_decay:0'
EOF
bad preload "1:40: error: LD_PRELOAD: /nonexistent/libjemalloc.so.2" <<'EOF'
gitlab_exporter['env']['LD_PRELOAD'] = '/nonexistent/libjemalloc.so.2'
EOF
bad parse "2:" <<'EOF'
gitlab_exporter['enable'] = true
gitlab_exporter['home'] = '/unterminated
EOF
has "$ERR" "error"

note "an explicit -c FILE that does not exist is an error"
expect_rc 1 ctl -c "$T_ROOT/nonexistent.rb" check-config

note "show-config: LD_PRELOAD points at a file that exists"
rm -f "$CONF"
expect_rc 0 ctl show-config
preload=$(sed -n 's/^[[:space:]]*"LD_PRELOAD=\(.*\)",*$/\1/p' "$OUT")
[ -n "$preload" ] || { cat "$OUT" >&2; fail "no LD_PRELOAD in show-config"; }
[ -f "$preload" ] || fail "LD_PRELOAD=$preload does not exist"
has "$OUT" "gitlab-exporter = {"
# Omnibus' defaults: with no gitlab.rb every single-node service of the catalog is enabled;
# only the HA ones (etcd, patroni, pgbouncer and its watcher, sentinel and its exporter) wait
# for their roles, as in Omnibus
for s in alertmanager node-exporter postgres-exporter postgresql prometheus redis redis-exporter; do
	has "$OUT" "$s = {"
done
same_disabled=$(sed -n 's/^[[:space:]]*# \([a-z-]*\): disabled .*/\1/p' "$OUT" | tr '\n' ' ')
[ "$same_disabled" = "etcd patroni pgbouncer pgbouncer-watcher sentinel sentinel-exporter " ] || { cat "$OUT" >&2; fail "disabled by default: $same_disabled"; }
has "$OUT" "\"MALLOC_CONF=narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0,background_thread:true,tcache:false\""
has "$OUT" "home = \"$T_ROOT/var/opt/gitlab/gitlab-exporter\"" # defaults are root-prefixed

note "show-config: secrets redacted unless --show-secrets"
cat >"$CONF" <<'EOF'
gitlab_exporter['env'] = { 'SECRET_TOKEN' => 'hunter2-value', 'PLAIN' => 'visible' }
node_exporter['enable'] = true
node_exporter['flags'] = { 'collector.systemd' => true }
EOF
expect_rc 0 ctl show-config
has "$OUT" '"SECRET_TOKEN=[REDACTED]"'
has "$OUT" '"PLAIN=visible", # '"$CONF"':1' # where gitlab.rb set it
lacks "$OUT" "hunter2-value"
has "$OUT" "node-exporter = {"
has "$OUT" '"--collector.systemd"'
expect_rc 0 ctl show-config --show-secrets
has "$OUT" '"SECRET_TOKEN=hunter2-value"'
expect_rc 0 ctl show-config node-exporter
lacks "$OUT" "gitlab-exporter = {"
expect_rc 1 ctl show-config no-such-service

note "patroni and the plain postgresql never both run: refused at the enable gitlab.rb wrote"
printf "etcd['enable'] = true\npatroni['enable'] = true\npostgresql['enable'] = true\n" >"$T_ROOT/both.rb"
expect_rc 1 ctl -c "$T_ROOT/both.rb" check-config
has "$ERR" "both.rb:3:24: error: postgresql['enable']: postgresql and patroni run the same data"
has "$ERR" "turn one off (patroni['enable'] = false, or roles that pick one)"
note "as Omnibus: patroni_role with postgres_role, or patroni['enable'] with it, runs Patroni only"
for _r in "roles(['patroni_role', 'postgres_role'])" "roles(['postgres_role'])
patroni['enable'] = true"; do
	printf '%s\n' "$_r" >"$T_ROOT/both.rb"
	expect_rc 0 ctl -c "$T_ROOT/both.rb" show-config
	has "$OUT" "# postgresql: disabled"
	has "$OUT" "patroni = {"
done

note "a broken catalog is reported with its file and line"
mkdir -p "$T_ROOT/data/sv"
cp "$SRCDIR/sv/"*.conf "$T_ROOT/data/sv/"
echo 'colour = "blue";' >>"$T_ROOT/data/sv/node-exporter.conf"
line=$(wc -l <"$T_ROOT/data/sv/node-exporter.conf")
GITLAB_CTL_DATADIR="$T_ROOT/data" expect_rc 1 ctl check-config
has "$ERR" "$T_ROOT/data/sv/node-exporter.conf:$line: error: unknown key 'colour'"

note "ok"
