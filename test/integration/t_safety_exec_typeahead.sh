# `gitlab-ctl exec SVC -- cmd` at a terminal never hangs on input the command does not read
# (issue 29 row 10): root types (here: a pty driver writes) 35 KB while the command sleeps and
# never reads; when it exits, the relay restores the terminal (cooked, echo) and exits with
# its status, and what was typed for it is not left for root's shell. Before the fix the
# relay blocked writing into the full pty for ever, the terminal left raw.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (switches to a service account)"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: $PY missing"; exit 77; }
light_catalog
test_service acct
: >"$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 0 ctl reconfigure

cat >"$T_ROOT/typeahead.py" <<'PYEOF'
import fcntl, os, pty, select, signal, sys, termios, time
out, cmd = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
fl = fcntl.fcntl(fd, fcntl.F_GETFL)
fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)
typed = b"x" * 1023 + b"\n"
todo, buf, sent, t0 = 35 * 1024, b"", 0, time.time()
status = None
while time.time() - t0 < 40:
    want_w = sent < todo and b"rc=" not in buf
    r, w, _ = select.select([fd], [fd] if want_w else [], [], 0.2)
    if w:
        try:
            sent += os.write(fd, typed[: min(len(typed), todo - sent)])
        except BlockingIOError:
            pass
    if r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        buf += data
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = st
        break
# What the child wrote just before it exited may still sit in the pty: read it to the end
# (EIO once the slave side is closed), or the last lines are missed.
while status is not None:
    r, _, _ = select.select([fd], [], [], 2)
    try:
        data = os.read(fd, 65536) if r else b""
    except OSError:
        data = b""
    if not data:
        break
    buf += data
if status is None:
    os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
open(out, "wb").write(buf)
print("typed %d bytes; %s after %.1f s" % (sent, "hung" if status is None else "ended", time.time() - t0))
sys.exit(0 if status is not None else 1)
PYEOF

note "35 KB typed at exec'd sleep 3 (which never reads): the relay ends when sleep does"
rc=0
"$PY" "$T_ROOT/typeahead.py" "$T_ROOT/tty.out" sh -c \
	"$GITLAB_CTL --root $T_ROOT exec acct -- sh -c 'sleep 3; exit 5'; echo \"rc=\$?\"; stty -a; echo stty-done" \
	>"$OUT" 2>&1 || rc=$?
cat "$OUT"
[ "$rc" = 0 ] || fail "the exec relay hung on typed input: $(cat "$OUT")"
tr -d '\r' <"$T_ROOT/tty.out" >"$T_ROOT/tty.lf"
has "$T_ROOT/tty.lf" "rc=5"
has "$T_ROOT/tty.lf" "stty-done"
note "root's terminal after exec: $(grep -o -- '-\?icanon\|-\?echo ' "$T_ROOT/tty.lf" | tr '\n' ' ')"
grep -q -- '-icanon' "$T_ROOT/tty.lf" && fail "exec left root's terminal raw (-icanon)"
grep -q ' icanon' "$T_ROOT/tty.lf" || fail "no icanon in stty -a: $(cat "$T_ROOT/tty.lf")"
echo "ok t_safety_exec_typeahead"
