# reconfigure safety: two concurrent reconfigures both succeed and leave one consistent
# tree; a syntax error (or an error found while rendering) changes no byte, mode or owner
# of the tree and restarts nothing.
. "$SRCDIR/test/integration/lib.sh"

PORT=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$RB" <<EOF2
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
gitlab_exporter['env'] = { 'GREETING' => 'hello' }
$(only_services gitlab_exporter)
EOF2
SVC=$SV_DIR/gitlab-exporter
svpid() { status_pid "$SVC/supervise/status"; }
# --- two reconfigures at once on a fresh root ---------------------------------------------
ctl reconfigure >"$T_ROOT/out1" 2>&1 &
p1=$!
ctl reconfigure >"$T_ROOT/out2" 2>&1 &
p2=$!
wait "$p1" || fail "first concurrent reconfigure failed: $(cat "$T_ROOT/out1")"
wait "$p2" || fail "second concurrent reconfigure failed: $(cat "$T_ROOT/out2")"
# (the first run waits for the exporter to answer, so the second one finds the lock held)
cat "$T_ROOT/out1" "$T_ROOT/out2" | grep -q '^waiting for another reconfigure (pid [0-9][0-9]*)\.\.\.$' ||
	fail "no waiting message: $(cat "$T_ROOT/out1" "$T_ROOT/out2")"
for f in out1 out2; do
	grep -q '^gitlab Reconfigured!$' "$T_ROOT/$f" || fail "$f: $(cat "$T_ROOT/$f")"
done
out=$(ctl reconfigure) || fail "third reconfigure failed: $out"
printf '%s\n' "$out" | grep -Eq '^0/[0-9]+ resources updated' || fail "tree not converged: $out"
[ "$(od -An -tu1 -j19 -N1 "$SVC/supervise/status" | tr -d ' ')" = 1 ] || fail "not running"
PID=$(svpid)

# --- a syntax error changes nothing -------------------------------------------------------
# Everything reconfigure manages; not runit's supervise/ state, logs, or our own locks.
snapshot() {
	(cd "$T_ROOT" && find ./opt ./var -path ./opt/gitlab/var -prune -o -name supervise -prune \
		-o -name current -prune -o -print0 | sort -z |
		xargs -0 stat -c '%n %a %u %g %s %Y %F' &&
		find ./opt ./var -path ./opt/gitlab/var -prune -o -name supervise -prune -o \
			-name current -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
}
before=$(snapshot)
cp "$RB" "$T_ROOT/good.rb"
cat >>"$RB" <<'EOF2'
gitlab_exporter['listen_port'] = 9999
gitlab_exporter['env'] = { 'X' => 'unterminated }
EOF2
out=$(ctl reconfigure 2>&1) && fail "reconfigure accepted a syntax error: $out"
printf '%s\n' "$out" | grep -q 'gitlab.rb:[0-9]*:[0-9]*: error' || fail "no located error: $out"
after=$(snapshot)
[ "$after" = "$before" ] || fail "the tree changed after a syntax error: $(printf "%s\n" "$before" >"$T_ROOT/b"; printf "%s\n" "$after" | diff "$T_ROOT/b" - )"
[ "$(svpid)" = "$PID" ] || fail "service restarted after a syntax error"

# an error found only while rendering (not by the parser) changes nothing either
cp "$T_ROOT/good.rb" "$RB"
echo "logging['svlogd_prefix'] = \"evil\nn1\"" >>"$RB"
out=$(ctl reconfigure 2>&1) && fail "reconfigure accepted a newline in a log directive: $out"
[ "$(snapshot)" = "$before" ] || fail "the tree changed after a render error"
cp "$T_ROOT/good.rb" "$RB"
out=$(ctl reconfigure) || fail "good config rejected: $out"
printf '%s\n' "$out" | grep -Eq '^0/[0-9]+ resources updated' || fail "good config changed things: $out"
