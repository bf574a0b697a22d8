# inspect does not take an answer on the service's port from another process as proof
# (an orphan of a dead runsv can keep answering /metrics: that is no healthy service).
. "$SRCDIR/test/integration/lib.sh"

DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$GITLAB_CTL_DATADIR/templates" "$DATA/"
PORT=$(free_port)
cat >"$DATA/sv/quiet.conf" <<EOF2
name = "quiet";
config_name = "quiet";
enable_default = true;
settings = (
  { name = "enable";         type = "bool";   default = true; },
  { name = "home";           type = "path";   default = "{{data_dir}}/quiet"; },
  { name = "log_directory";  type = "path";   default = "{{log_dir}}/quiet"; },
  { name = "env_directory";  type = "path";   default = "{{install_dir}}/etc/quiet/env"; },
  { name = "listen_address"; type = "string"; default = "127.0.0.1"; },
  { name = "listen_port";    type = "port";   default = $PORT; },
  { name = "env";            type = "env"; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "/bin/sleep", "100000" ];
check = "http:/metrics";
EOF2
export GITLAB_CTL_DATADIR=$DATA
: >"$T_ROOT/etc/gitlab/gitlab.rb"
chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"

# Another process answers HTTP 200 on the service's port.
foreign() {
	ruby -rsocket -e '
		s = TCPServer.new("127.0.0.1", ARGV[0].to_i)
		loop { c = s.accept; c.readpartial(4096) rescue nil
		       c.write("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"); c.close }' "$PORT" &
	FOREIGN=$!
	track_pid $FOREIGN
	until_true 100 listening || fail "the foreign server did not listen"
}
listening() { ruby -rsocket -e 'TCPSocket.new("127.0.0.1", ARGV[0].to_i)' "$PORT" 2>/dev/null; }
foreign

# reconfigure's pre-flight refuses the held port and starts nothing.
SVWAIT=5 ctl reconfigure >"$T_ROOT/out" 2>&1 && fail "reconfigure accepted a port held by another process: $(cat "$T_ROOT/out")"
grep -q "port $PORT is in use by pid $FOREIGN" "$T_ROOT/out" || fail "reconfigure did not name the port's holder: $(cat "$T_ROOT/out")"
# The holder comes after the service started (it never listens): inspect must not trust it.
kill "$FOREIGN"
wait_gone "$FOREIGN" || fail "foreign server did not stop"
SVWAIT=2 ctl reconfigure >"$T_ROOT/out" 2>&1 && fail "reconfigure called a service ready that never listened: $(cat "$T_ROOT/out")"
foreign
ctl status quiet | grep -q '^run: quiet: (pid' || fail "quiet is not running: $(ctl status quiet)"

out=$(ctl inspect quiet 2>&1) && fail "inspect passed with a foreign process on the port: $out"
echo "$out" | grep -q "held by pid $FOREIGN" || fail "inspect did not name the holder: $out"
ctl stop quiet >/dev/null
echo "ok t_inspect_foreign"
