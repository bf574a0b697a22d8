# A hostile env value (single and double quotes, $(...), backticks, a backslash and a
# newline) goes from gitlab.rb through the envdir and the run script into the service's
# environment byte for byte, and executes nothing on the way.
. "$SRCDIR/test/integration/lib.sh"

PORT=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
MARK=/tmp/gitlab-ctl-pwned.$$
rm -f "$MARK" "$MARK.2"
mkdir -p "$T_ROOT/etc/gitlab"
# The Ruby value: q'uote "dq" $(touch MARK) `touch MARK.2` a\b <newline> end
cat >"$RB" <<'EOF2'
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = PORT
gitlab_exporter['env'] = { 'NASTY' => "q'uote \"dq\" $(touch MARK) `touch MARK.2` a\\b\nend", 'PLAIN' => 'x' }
EOF2
only_services gitlab_exporter >>"$RB"
sed -i "s|PORT|$PORT|; s|MARK|$MARK|g" "$RB"
WANT=$(printf "q'uote \"dq\" \$(touch %s) \`touch %s.2\` a\\\\b\nend" "$MARK" "$MARK")
SVC=$SV_DIR/gitlab-exporter
ENVDIR=$T_ROOT/opt/gitlab/etc/gitlab-exporter/env

env_hex() {
	ruby -e 'e = File.binread("/proc/#{ARGV[0]}/environ").split("\0").find { |x| x.start_with?(ARGV[1] + "=") }
		 exit 1 unless e
		 print e.sub(/\A[^=]*=/, "").unpack1("H*")' "$1" "$2"
}
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }

out=$(ctl reconfigure 2>&1) || fail "reconfigure failed: $out"
[ "$(od -An -tu1 -j19 -N1 "$SVC/supervise/status" | tr -d ' ')" = 1 ] || fail "not running"
PID=$(status_pid "$SVC/supervise/status")
[ "$(od -An -tx1 -v "$ENVDIR/NASTY" | tr -d ' \n')" = "$(hex "$WANT")" ] ||
	fail "NASTY differs in the envdir"
[ "$(env_hex "$PID" PLAIN)" = "$(hex x)" ] || fail "PLAIN not in /proc/$PID/environ"
[ "$(env_hex "$PID" NASTY)" = "$(hex "$WANT")" ] || fail "NASTY differs in /proc/$PID/environ"
# the run script holds no config value unquoted: it names the envdir, not the values
grep -q 'touch' "$SVC/run" && fail "an env value was pasted into the run script"
# The service holds the value in its environ (checked above), so every shell between
# gitlab.rb and its execve has finished: a $(...) or `...` evaluated on the way has run.
if [ -e "$MARK" ] || [ -e "$MARK.2" ]; then
	rm -f "$MARK" "$MARK.2"
	fail "a config value was executed"
fi
out=$(ctl reconfigure) || fail "second reconfigure failed: $out"
printf '%s\n' "$out" | grep -Eq '^0/[0-9]+ resources updated' || fail "not idempotent: $out"
