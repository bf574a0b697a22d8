# Pre-flight: reconfigure runs check-config's checks (command present and executable by its
# account, TCP port free or the service's own) before it writes or stops anything. A failure
# names the gitlab.rb line (the setting that chose the command's path, else the enable), the Debian
# package or the port's holder and a fix, and changes
# nothing: no tree on a fresh root, and a working exporter keeps running with the same pid.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"

# --- a missing binary: blamed on the line that enabled the service, package named ----------
DATA=$T_ROOT/data
mkdir -p "$DATA/sv"
cp -R "$GITLAB_CTL_DATADIR/templates" "$GITLAB_CTL_DATADIR/exporter" "$DATA/"
cp "$GITLAB_CTL_DATADIR"/sv/*.conf "$DATA/sv/"
cat >"$DATA/sv/pgtest.conf" <<'EOF2'
name = "pgtest";
config_name = "pgtest";
package = "postgresql-99";
enable_default = false;
settings = (
  { name = "enable";        type = "bool"; default = false; },
  { name = "home";          type = "path"; default = "{{data_dir}}/pgtest"; },
  { name = "log_directory"; type = "path"; default = "{{log_dir}}/pgtest"; },
  { name = "env_directory"; type = "path"; default = "{{install_dir}}/etc/pgtest/env"; },
  { name = "env";           type = "env"; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "/nonexistent-gitlab-ctl-test/bin/postgres", "-D", "{{home}}" ];
EOF2
P1=$(free_port)
cat >"$RB" <<EOF2
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $P1
# the database
pgtest['enable'] = true
$(only_services gitlab_exporter pgtest)
EOF2
want="$RB:4: error: pgtest: command /nonexistent-gitlab-ctl-test/bin/postgres not found: install the Debian package postgresql-99 (apt-get install postgresql-99)"
GITLAB_CTL_DATADIR=$DATA expect_rc 1 ctl check-config
has "$ERR" "$want"
GITLAB_CTL_DATADIR=$DATA expect_rc 1 ctl reconfigure
[ "$(head -n1 "$ERR")" = "$want" ] || fail "reconfigure: $(cat "$ERR")"
has "$ERR" "gitlab-ctl reconfigure: pre-flight failed: nothing was changed"
[ ! -e "$T_ROOT/opt/gitlab/sv" ] && [ ! -e "$T_ROOT/opt/gitlab/service" ] ||
	fail "a failed pre-flight wrote the tree: $(find "$T_ROOT/opt" | head)"
[ ! -e "$PIDFILE" ] || fail "a failed pre-flight started runsvdir"

# --- the exporter's port, held by another process ---------------------------------------------
{ head -n 2 "$RB" && only_services gitlab_exporter; } >"$RB.new" && mv "$RB.new" "$RB"
expect_rc 0 ctl reconfigure
SVC=$SV_DIR/gitlab-exporter
PID=$(status_pid "$SVC/supervise/status")
[ "$PID" != 0 ] || fail "exporter not running"
# held by the exporter itself: fine
expect_rc 0 ctl reconfigure
has "$OUT" "0/"
P2=$(free_port)
ruby -rsocket -e 's = TCPServer.new("127.0.0.1", ARGV[0].to_i); $stdout.puts "up"; $stdout.flush; sleep' \
	"$P2" this-argument-makes-the-command-line-longer-than-one-hundred-and-sixty-bytes-so-a-cut-would-show \
	>"$T_ROOT/holder.out" &
HOLDER=$!
track_pid "$HOLDER"
until_true 100 grep -q up "$T_ROOT/holder.out" || fail "holder did not start"
sed -i "s/= $P1\$/= $P2/" "$RB"
snapshot() { (cd "$T_ROOT" && find ./opt -path ./opt/gitlab/var -prune -o -name supervise -prune -o -type f -print0 | sort -z | xargs -0 sha256sum); }
before=$(snapshot)
expect_rc 1 ctl reconfigure
want="$RB:2: error: gitlab-exporter: port $P2 is in use by pid $HOLDER (ruby -rsocket -e s = TCPServer.new(\"127.0.0.1\", ARGV[0].to_i); \$stdout.puts \"up\"; \$stdout.flush; sleep $P2 this-argument-makes-the-command-line-longer-than-one-hundred-and-sixty-bytes-so-a-cut-would-show): stop that process, or set gitlab_exporter['listen_port'] to a free port"
[ "$(head -n1 "$ERR")" = "$want" ] || fail "got: $(cat "$ERR")"
[ "$(status_pid "$SVC/supervise/status")" = "$PID" ] || fail "the working exporter was restarted"
[ "$(snapshot)" = "$before" ] || { printf "%s\n" "$before" >"$T_ROOT/b"; snapshot | diff "$T_ROOT/b" - >&2; fail "the tree changed after a failed pre-flight"; }
# --- a relative command: looked up in the service's PATH as exec looks it up ---------------------
mkdir -p "$T_ROOT/p/plain" "$T_ROOT/p/run"
chmod 755 "$T_ROOT/p" "$T_ROOT/p/plain" "$T_ROOT/p/run"
printf '#!/bin/sh\n' >"$T_ROOT/p/plain/pathtest-prog"
printf '#!/bin/sh\n' >"$T_ROOT/p/run/pathtest-prog"
chmod 644 "$T_ROOT/p/plain/pathtest-prog"
chmod 755 "$T_ROOT/p/run/pathtest-prog"
pathtest() {
	sed -e 's/pgtest/pathtest/g' -e '/^package/d' -e "s|^base_env = .*|base_env = { PATH = \"$1\"; };|" \
		-e 's|^command = .*|command = [ "pathtest-prog" ];|' "$DATA/sv/pgtest.conf" >"$DATA/sv/pathtest.conf"
}
RB2=$T_ROOT/etc/gitlab/pathtest.rb
{ echo "pathtest['enable'] = true" && only_services; } >"$RB2"
# a file its account may not run is passed over for the next element, as exec passes it over
pathtest "$T_ROOT/p/plain:$T_ROOT/p/run"
GITLAB_CTL_DATADIR=$DATA expect_rc 0 ctl check-config -c "$RB2"
# only that file: named, and why
pathtest "$T_ROOT/p/plain"
GITLAB_CTL_DATADIR=$DATA expect_rc 1 ctl check-config -c "$RB2"
has "$ERR" "pathtest cannot run its command $T_ROOT/p/plain/pathtest-prog"
# a directory of that name is not the command
pathtest "$T_ROOT/p:$T_ROOT/p/plain"
mkdir "$T_ROOT/p/pathtest-prog"
GITLAB_CTL_DATADIR=$DATA expect_rc 1 ctl check-config -c "$RB2"
has "$ERR" "pathtest cannot run its command $T_ROOT/p/plain/pathtest-prog"
# an empty or relative element is not the current directory
pathtest ":.:run"
(cd "$T_ROOT/p" && GITLAB_CTL_DATADIR=$DATA expect_rc 1 ctl check-config -c "$RB2")
has "$ERR" "pathtest: command pathtest-prog not found"
rm -f "$DATA/sv/pathtest.conf"

# --- a command path chosen in gitlab.rb: blamed on that setting's line, both fixes named ---------
R3=$T_ROOT/chosen
mkdir -p "$R3/etc/gitlab"
cat >"$R3/etc/gitlab/gitlab.rb" <<EOF2
gitlab_exporter['listen_port'] = $(free_port)
postgresql['enable'] = true
postgresql['port'] = $(free_port)
postgresql['bin_dir'] = '/nonexistent-gitlab-ctl-test/bin'
gitlab_exporter['command'] = '/nonexistent-gitlab-ctl-test/gitlab-exporter'
$(only_services gitlab_exporter postgresql)
EOF2
RB3=$R3/etc/gitlab/gitlab.rb
want="$RB3:4: error: postgresql: command /nonexistent-gitlab-ctl-test/bin/postgres not found (postgresql['bin_dir'] on this line chose that path; postgresql is enabled on line 2): install the Debian package postgresql-15 (apt-get install postgresql-15), or set postgresql['bin_dir'] to the directory that holds postgres
$RB3:5: error: gitlab-exporter: command /nonexistent-gitlab-ctl-test/gitlab-exporter not found (gitlab_exporter['command'] on this line chose that path): set gitlab_exporter['command'] to the program's path"
rc=0
"$GITLAB_CTL" --root "$R3" check-config >"$OUT" 2>"$ERR" </dev/null || rc=$?
[ "$rc" = 1 ] || fail "check-config: exit $rc"
[ "$(head -n2 "$ERR")" = "$want" ] || fail "check-config: $(cat "$ERR")"
rc=0
"$GITLAB_CTL" --root "$R3" reconfigure >"$OUT" 2>"$ERR" </dev/null || rc=$?
[ "$rc" = 1 ] || fail "reconfigure: exit $rc"
[ "$(head -n2 "$ERR")" = "$want" ] || fail "reconfigure: $(cat "$ERR")"
has "$ERR" "gitlab-ctl reconfigure: pre-flight failed: nothing was changed"
[ ! -e "$R3/opt/gitlab/sv" ] && [ ! -e "$R3/opt/gitlab/service" ] ||
	fail "a failed pre-flight wrote the tree: $(find "$R3/opt" | head)"
echo ok
