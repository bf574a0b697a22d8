# An account never reaches root's terminal. Reproduces the attack as it was done: root
# types `gitlab-ctl reconfigure` and `restart` at a terminal (a pty here), the service's
# check_command and a setup step run an injector AS THE ACCOUNT that tries TIOCSTI (push a
# command line into root's shell) on /dev/tty and on fds 0-2; the injected command would
# create a file only root can create. Also: what a check or step prints reaches the
# terminal escaped and a step's stderr is not "an update"; a unix-socket check's answer is
# escaped; `exec SVC -- cmd` at a terminal runs the account on a pty of its own; exec
# without a terminal keeps its stdio and its pid and leaves the terminal.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (switches to service accounts)"; exit 77; }
command -v script >/dev/null || fail "script(1) missing (util-linux, see scripts/setup)"
PY=/usr/bin/python3
[ -x "$PY" ] || fail "$PY missing (see scripts/setup)"
STI=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)
note "TIOCSTI for unprivileged processes: legacy_tiocsti=$STI"

OUT=$T_ROOT/out
ERR=$T_ROOT/err
DATA=$T_ROOT/data
BIN=$T_ROOT/bin
MARK=$T_ROOT/injected-as-root # in a root-owned 0755 directory: an account cannot create it
mkdir -p "$DATA/sv" "$BIN" "$T_ROOT/etc/gitlab"
chmod 755 "$BIN"
cp -R "$SRCDIR/templates" "$DATA/"
export GITLAB_CTL_DATADIR=$DATA
: >"$T_ROOT/etc/gitlab/gitlab.rb"

# The injector, run as the account: report what it could do to a terminal in REPORT.
cat >"$T_ROOT/inject.c" <<'EOF'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *err(int e)
{
	return e == ENXIO ? "ENXIO" : e == EPERM ? "EPERM" : e == ENOTTY ? "ENOTTY" :
	       e == EIO ? "EIO" : e == EBADF ? "EBADF" : e == EACCES ? "EACCES" : strerror(e);
}

static void sti(FILE *r, const char *what, int fd, const char *line)
{
	for (const char *c = line; *c; c++)
		if (ioctl(fd, TIOCSTI, c) == -1) {
			fprintf(r, "%s TIOCSTI: %s\n", what, err(errno));
			return;
		}
	fprintf(r, "%s TIOCSTI: pushed\n", what);
}

int main(int argc, char **argv)
{
	char line[4200];
	FILE *r = argc == 3 ? fopen(argv[1], "a") : NULL;
	if (r == NULL)
		return 2;
	snprintf(line, sizeof line, "touch %s\n", argv[2]);
	fprintf(r, "uid %d sid==pid %d\n", (int)getuid(), getsid(0) == getpid());
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	fprintf(r, "/dev/tty open: %s\n", fd == -1 ? err(errno) : "opened");
	if (fd != -1)
		sti(r, "/dev/tty", fd, line);
	for (int i = 0; i <= 2; i++) {
		char what[8];
		snprintf(what, sizeof what, "fd %d", i);
		fprintf(r, "%s isatty: %d\n", what, isatty(i));
		sti(r, what, i, line);
	}
	return 0;
}
EOF
cc -o "$BIN/inject" "$T_ROOT/inject.c" || fail "cannot build the injector"
chmod 755 "$BIN/inject"

# Root at its terminal: run CMD... in a shell on a fresh pty; once CMD is done, that shell
# reads further lines from the terminal, as root's interactive shell would (an injected line
# would run there, as root). The pty's whole output goes to OUTFILE.
cat >"$T_ROOT/atty.py" <<'EOF'
import os, pty, select, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
buf = b""
def pump(want):
    global buf
    end = time.time() + 240
    while want is None or want not in buf:
        r, _, _ = select.select([fd], [], [], max(0, end - time.time()))
        if not r:
            open(out, "wb").write(buf)
            sys.exit("atty: no %r on the terminal" % want)
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        if not data:
            return
        buf += data
until = os.environ.get("ATTY_UNTIL")
if until:
    # A command that does not end (tail): until its output shows that text.
    pump(until.encode())
    os.kill(pid, 15)
    pump(None)
    os.waitpid(pid, 0)
    open(out, "wb").write(buf)
    sys.exit(0)
pump(b"ctl-done")
# Anything pushed into the terminal's input is ahead of this line: once its output shows,
# every injected line has run.
os.write(fd, b"echo END-$((6*7))\n")
pump(b"END-42")
os.write(fd, b"exit\n")
pump(None)
os.waitpid(pid, 0)
open(out, "wb").write(buf)
EOF
atty() {
	_out=$1
	shift
	"$PY" "$T_ROOT/atty.py" "$_out" sh -c '"$@"; echo "ctl-done $?"; exec sh' sh "$@" ||
		{ cat "$_out" >&2; fail "atty $*"; }
}

# acct: its check_command and one setup step inject; another step prints escapes on stdout
# once (a change) and on stderr every run (a NOTICE: not a change).
cat >"$DATA/sv/acct.conf" <<EOF
name = "acct";
config_name = "acct";
enable_default = true;
settings = (
  { name = "enable";        type = "bool"; default = true; },
  { name = "home";          type = "path"; default = "{{data_dir}}/acct"; },
  { name = "log_directory"; type = "path"; default = "{{log_dir}}/acct"; },
  { name = "env_directory"; type = "path"; default = "{{install_dir}}/etc/acct/env"; },
  { name = "env";           type = "env"; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "/bin/sh", "-c", "printf 'log \\033]0;x\\007 end-of-log\\n'; exec sleep 100000" ];
check_command = [ "$BIN/inject", "{{home}}/check.report", "$MARK" ];
setup = (
  { name = "inject"; when = "after_ready";
    command = [ "$BIN/inject", "{{home}}/step.report", "$MARK" ]; },
  { name = "noisy"; when = "after_ready";
    command = [ "/bin/sh", "-c", "printf 'NOTICE: \\\\033]0;pwned\\\\007\\\\rhidden\\\\n' >&2; [ -e {{home}}/did ] || { touch {{home}}/did; printf 'created \\\\033]52;c;dG91Y2ggL3RtcC94Cg==\\\\007 \\\\033[2K\\\\n'; }" ]; }
);
EOF
HOME_A=$T_ROOT/var/opt/gitlab/acct
ESC=$(printf '\033')

no_raw_escape() {
	! grep -q "$ESC" "$1" || { od -c "$1" | head -40 >&2; fail "$2: a raw ESC reached the terminal"; }
}

note "reconfigure and restart typed at a terminal: the account's TIOCSTI never reaches root"
atty "$OUT" "$GITLAB_CTL" --root "$T_ROOT" reconfigure
has "$OUT" "ctl-done 0"
atty "$T_ROOT/out2" "$GITLAB_CTL" --root "$T_ROOT" restart acct
has "$T_ROOT/out2" "ctl-done 0"
[ ! -e "$MARK" ] || fail "an account pushed a command into root's terminal: it ran as root"
for r in check step; do
	f=$HOME_A/$r.report
	[ -s "$f" ] || fail "the injector did not run from the $r"
	note "$r: $(sort -u "$f" | tr '\n' ';')"
	grep -q '^uid 0 ' "$f" && fail "the $r ran as root: $(cat "$f")"
	has "$f" "sid==pid 1"
	lacks "$f" "/dev/tty open: opened"
	has "$f" "/dev/tty open: ENXIO"
	lacks "$f" "isatty: 1"
	lacks "$f" "TIOCSTI: pushed"
done

note "what the check and the steps print reaches the terminal escaped"
no_raw_escape "$OUT" "reconfigure"
has "$OUT" 'acct setup noisy: created \x1b]52;c;dG91Y2ggL3RtcC94Cg==\x07 \x1b[2K'
has "$OUT" 'acct setup noisy said: NOTICE: \x1b]0;pwned\x07\x0dhidden'

note "a step's stderr each run is shown, not counted: a second run updates nothing"
expect_rc 0 ctl reconfigure
has "$OUT" "0/"
has "$OUT" "resources updated"
lacks "$OUT" "acct setup noisy:"
has "$ERR" 'acct setup noisy said: NOTICE: \x1b]0;pwned\x07\x0dhidden'
no_raw_escape "$ERR" "second reconfigure"

note "the probe behind ./check, at a terminal, shows a failing check's output escaped"
cp "$DATA/sv/acct.conf" "$T_ROOT/acct.conf.good"
sed -i 's|^check_command = .*|check_command = [ "/bin/sh", "-c", "printf '"'"'\\\\033]0;x\\\\007 down\\\\n'"'"'; exit 1" ];|' "$DATA/sv/acct.conf"
atty "$T_ROOT/out3" sh -c 'cd "$1" && ./check' sh "$SV_DIR/acct"
has "$T_ROOT/out3" 'exited 1: \x1b]0;x\x07 down'
no_raw_escape "$T_ROOT/out3" "./check"
cp "$T_ROOT/acct.conf.good" "$DATA/sv/acct.conf"

note "tail at a terminal: the service's log lines escaped"
ATTY_UNTIL=end-of-log "$PY" "$T_ROOT/atty.py" "$T_ROOT/out4" "$GITLAB_CTL" --root "$T_ROOT" tail acct ||
	{ cat "$T_ROOT/out4" >&2; fail "tail at a terminal"; }
has "$T_ROOT/out4" 'log \x1b]0;x\x07 end-of-log'
no_raw_escape "$T_ROOT/out4" "tail"

note "exec SVC -- cmd at a terminal: the account gets a pty of its own, relayed"
script -qec "tty; $GITLAB_CTL --root $T_ROOT exec acct -- sh -c 'tty; id -u; echo hi; printf \"\\033]0;t\\007\\n\"; exit 3'" /dev/null >"$OUT" 2>&1 </dev/null &&
	fail "exec's status not passed on"
tr -d '\r' <"$OUT" >"$T_ROOT/out.lf"
ROOT_TTY=$(grep -o '/dev/pts/[0-9]*' "$T_ROOT/out.lf" | sed -n 1p)
CHILD_TTY=$(grep -o '/dev/pts/[0-9]*' "$T_ROOT/out.lf" | sed -n 2p)
[ -n "$ROOT_TTY" ] || fail "no tty for root: $(cat "$OUT")"
[ -n "$CHILD_TTY" ] || fail "the account has no terminal: $(cat "$OUT")"
[ "$CHILD_TTY" != "$ROOT_TTY" ] || fail "the account got root's terminal $ROOT_TTY"
has "$T_ROOT/out.lf" "hi"
grep -qx 0 "$T_ROOT/out.lf" && fail "exec ran the command as root"
has "$T_ROOT/out.lf" '\x1b]0;t\x07'
no_raw_escape "$OUT" "exec relay"
script -qec "$GITLAB_CTL --root $T_ROOT exec acct -- sh -c 'exit 3'" /dev/null >"$OUT" 2>&1 </dev/null || rc=$?
[ "${rc:-0}" = 3 ] || fail "exec at a terminal exited ${rc:-0}, want the command's 3"

note "exec at a terminal: TIOCSTI by the account lands on its own pty, never in root's shell"
rm -f "$HOME_A/exec.report"
atty "$OUT" "$GITLAB_CTL" --root "$T_ROOT" exec acct -- "$BIN/inject" "$HOME_A/exec.report" "$MARK"
[ ! -e "$MARK" ] || fail "exec: an account pushed a command into root's terminal"
has "$HOME_A/exec.report" "/dev/tty open: opened"
note "exec: $(tr '\n' ';' <"$HOME_A/exec.report")"

note "exec without a terminal (runsv, a container): stdio and pid kept, no controlling terminal"
cat >"$T_ROOT/notty.sh" <<EOF
"$GITLAB_CTL" --root "$T_ROOT" exec acct -- /bin/sh -c 'echo \$\$; ls -l /proc/self/fd/1; cat /dev/tty' </dev/null >"$T_ROOT/notty.out" 2>"$T_ROOT/notty.err" &
echo \$! >"$T_ROOT/notty.pid"
wait
EOF
script -qec "sh $T_ROOT/notty.sh" /dev/null >/dev/null 2>&1 </dev/null || true
[ "$(head -n1 "$T_ROOT/notty.out")" = "$(cat "$T_ROOT/notty.pid")" ] ||
	fail "exec without a terminal forked: $(cat "$T_ROOT/notty.out") vs $(cat "$T_ROOT/notty.pid")"
has "$T_ROOT/notty.out" "$T_ROOT/notty.out"
has "$T_ROOT/notty.err" "No such device or address"
# A job of root's interactive shell leads its process group, so it cannot start a session:
# it gives the terminal up instead.
cat >"$T_ROOT/job.sh" <<EOF
"$GITLAB_CTL" --root "$T_ROOT" exec acct -- /bin/sh -c 'set -- \$(cat /proc/\$\$/stat); echo "pgrp=\$5 pid=\$1 tty=\$7"; cat /dev/tty' </dev/null >"$T_ROOT/job.out" 2>"$T_ROOT/job.err"
EOF
script -qec "bash --norc -i $T_ROOT/job.sh" /dev/null >/dev/null 2>&1 </dev/null || true
grep -Eq '^pgrp=([0-9]+) pid=\1 tty=0$' "$T_ROOT/job.out" ||
	fail "a shell's job kept the terminal: $(cat "$T_ROOT/job.out" "$T_ROOT/job.err")"
has "$T_ROOT/job.err" "No such device or address"

note "a unix-socket check's answer is escaped"
cat >"$BIN/answer.py" <<'EOF'
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(5)
while True:
    c, _ = s.accept()
    try:
        c.recv(100)
        c.sendall(b"\x1b]0;owned\x07\x1b[31mHELLO\r\n")
    except OSError:
        pass
    c.close()
EOF
chmod 644 "$BIN/answer.py"
cat >"$DATA/sv/talker.conf" <<EOF
name = "talker";
config_name = "talker";
enable_default = true;
settings = (
  { name = "enable";        type = "bool"; default = true; },
  { name = "home";          type = "path"; default = "{{data_dir}}/talker"; },
  { name = "log_directory"; type = "path"; default = "{{log_dir}}/talker"; },
  { name = "env_directory"; type = "path"; default = "{{install_dir}}/etc/talker/env"; },
  { name = "env";           type = "env"; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "$PY", "$BIN/answer.py", "{{home}}/sock" ];
check = "unix:{{home}}/sock";
check_send = "PING\\r\\n";
check_expect = "+PONG";
EOF
SVWAIT=3 expect_rc 1 ctl reconfigure
no_raw_escape "$ERR" "socket check"
no_raw_escape "$OUT" "socket check"
# One probe (what ./check runs): the reason of one whole attempt.
expect_rc 1 ctl probe talker
has "$ERR" 'talker: answered "\x1b]0;owned\x07\x1b[31mHELLO", not "+PONG"'
no_raw_escape "$ERR" "probe"
note "ok"
