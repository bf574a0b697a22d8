# Shared helpers for integration tests; source it first:  . "$SRCDIR/test/integration/lib.sh"
#
# Each test gets a fresh private root in $T_ROOT (world-traversable so that a
# non-root service user can reach its home) and an installed copy of gitlab-ctl,
# its catalog, templates and exporter outside the checkout: services never
# execute anything from the checkout, which may sit in a directory the service
# users cannot traverse (a clone in `mktemp -d`, root's home). $GITLAB_CTL and
# $GITLAB_CTL_DATADIR name that copy. On exit, pass or fail, every
# process it started is stopped by pid: the `gitlab-ctl runsvdir` wrapper from
# its pidfile, runsvdir processes the test started itself, and, as a safety
# net, every pid recorded in the tree's supervise/status files.
set -eu
: "${GITLAB_CTL:?run under ctest}" "${SRCDIR:?run under ctest}"

T_ROOT=$(mktemp -d /tmp/gitlab-ctl-test.XXXXXX)
chmod 755 "$T_ROOT"
BUILD_CTL=$GITLAB_CTL # the build tree's binary, for tests about the build tree itself
# GITLAB_CTL_TEST_AS_IS=1 runs the given $GITLAB_CTL uninstalled (a test against another build).
# Under ctest (T_INSTALLED=1) the copy is the one the "installed" fixture made for the whole run
# (install_fixture.sh); a test run by hand installs its own into $T_ROOT/usr.
if [ -n "${BUILDDIR:-}" ] && [ -z "${GITLAB_CTL_TEST_AS_IS:-}" ]; then
	_inst=""
	if [ -n "${T_INSTALLED:-}" ]; then
		_inst=$(cat "$BUILDDIR/test-install.path" 2>/dev/null || true)
		case $_inst in /tmp/gitlab-ctl-install.??????) ;; *) _inst="" ;; esac
		[ -n "$_inst" ] && [ -d "$_inst" ] && [ ! -L "$_inst" ] && [ -O "$_inst" ] &&
			[ -x "$_inst/usr/bin/gitlab-ctl" ] || _inst=""
	fi
	if [ -n "$_inst" ]; then
		_inst=$_inst/usr
	else
		_inst=$T_ROOT/usr
		cmake --install "$BUILDDIR" --prefix "$_inst" --component Unspecified >"$T_ROOT/install.log" 2>&1 ||
			{ cat "$T_ROOT/install.log" >&2; rm -rf "$T_ROOT"; echo "FAIL: cmake --install" >&2; exit 1; }
	fi
	GITLAB_CTL=$_inst/bin/gitlab-ctl
	GITLAB_CTL_DATADIR=$_inst/share/gitlab-ctl
	export GITLAB_CTL GITLAB_CTL_DATADIR
fi
# ctest kills a test that outlives its TIMEOUT with SIGKILL, and then no trap runs and
# everything it started keeps running. So the test stops itself first: T_TIMEOUT (set by
# CMakeLists.txt from each test's TIMEOUT) less a minute for the clean-up, then SIGTERM to
# the test's children (a waiting gitlab-ctl) and to the test, whose trap stops the root.
# The watchdog ignores SIGTERM (it is one of those children) and polls every second, so it
# outlives a finished test by at most one; its output goes nowhere, so ctest never waits
# for it.
t_watchdog() {
	trap '' TERM
	_left=$1
	while [ "$_left" -gt 0 ] && kill -0 "$2" 2>/dev/null; do
		sleep 1
		_left=$((_left - 1))
	done
	kill -0 "$2" 2>/dev/null || return 0
	kill -TERM "$2" 2>/dev/null || true
	for _s in /proc/[0-9]*/stat; do
		_pp=$(awk '{ sub(/^.*\) /, ""); print $2 }' "$_s" 2>/dev/null) || continue
		[ "$_pp" = "$2" ] || continue
		_c=${_s%/stat}
		kill -TERM "${_c#/proc/}" 2>/dev/null || true
	done
}
if [ "${T_TIMEOUT:-0}" -gt 120 ]; then
	t_watchdog "$((T_TIMEOUT - 60))" $$ >/dev/null 2>&1 </dev/null &
fi
T_RUNSVDIRS=""   # runsvdir pids started directly by the test (stopped with HUP)
T_PIDS=""        # any other pids to stop
export SVWAIT="${SVWAIT:-15}"
PIDFILE="$T_ROOT/opt/gitlab/var/runsvdir.pid"
SERVICE_DIR="$T_ROOT/opt/gitlab/service"
SV_DIR="$T_ROOT/opt/gitlab/sv"

ctl() { "$GITLAB_CTL" --root "$T_ROOT" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

track_pid() { T_PIDS="$T_PIDS $1"; }

# Start runit's runsvdir on a directory, in the background, tracked for cleanup.
start_runsvdir() {
	runsvdir -P "$1" >/dev/null 2>&1 </dev/null &
	T_RUNSVDIRS="$T_RUNSVDIRS $!"
}

# alive PID: the process runs. A zombie does not: a process whose parent exited waits for
# pid 1 to reap it, and some machines' pid 1 never does (a container's or a VM's agent).
# One read of its state: with two looks (kill -0, then the status file) a zombie the shell
# reaped in between read as running.
alive() {
	_state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$_state" ] && [ "$_state" != Z ] && [ "$_state" != X ]
}

# wait_gone PID [TENTHS]: wait up to TENTHS/10 s for a process to exit.
wait_gone() {
	_n=${2:-100}
	while alive "$1" && [ "$_n" -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	! alive "$1"
}

# The pid runsv recorded in a supervise/status file (little-endian u32 at 12..15).
status_pid() {
	[ -s "$1" ] || { echo 0; return; }
	od -An -tu4 -j12 -N4 "$1" | tr -d ' '
}

# Every service and log pid currently recorded under the root.
recorded_pids() {
	for _st in "$SV_DIR"/*/supervise/status "$SV_DIR"/*/log/supervise/status; do
		[ -f "$_st" ] || continue
		_p=$(status_pid "$_st")
		[ "$_p" != 0 ] && echo "$_p"
	done
	return 0
}

stop_root() {
	_leftover="$T_PIDS $(recorded_pids | tr '\n' ' ')"
	# The port holders last: what listened on a reserved port is stopped first.
	_holders=$(cat "$T_ROOT/.port-holders" 2>/dev/null || true)
	if [ -s "$PIDFILE" ]; then
		_w=$(head -n1 "$PIDFILE")
		if [ -n "$_w" ] && alive "$_w"; then
			kill -TERM "$_w" 2>/dev/null || true
			wait_gone "$_w" 150 || kill -KILL "$_w" 2>/dev/null || true
		fi
	fi
	for _p in $T_RUNSVDIRS; do
		alive "$_p" || continue
		kill -HUP "$_p" 2>/dev/null || true
		wait_gone "$_p" 100 || kill -KILL "$_p" 2>/dev/null || true
	done
	# A runsv whose runsvdir is gone (a test killed it) would restart what we stop: first
	# the parents of what is left that are runsv processes working in this root's tree.
	for _p in $_leftover; do
		alive "$_p" || continue
		_pp=$(awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$_p/stat" 2>/dev/null) || continue
		[ "$_pp" != $$ ] && [ "$(cat "/proc/$_pp/comm" 2>/dev/null)" = runsv ] || continue
		case $(readlink "/proc/$_pp/cwd" 2>/dev/null) in
		"$T_ROOT"/*) kill -KILL "$_pp" 2>/dev/null || true ;;
		esac
	done
	for _p in $_leftover; do
		alive "$_p" || continue
		kill -TERM "$_p" 2>/dev/null || true
		wait_gone "$_p" 30 || kill -KILL "$_p" 2>/dev/null || true
	done
	for _p in $_holders; do kill -TERM "$_p" 2>/dev/null || true; done
}

t_cleanup() {
	_rc=$?
	set +e
	stop_root
	if [ "$_rc" -ne 0 ] && [ -n "${KEEP_ROOT:-}" ]; then
		echo "# kept $T_ROOT" >&2
	else
		rm -rf "$T_ROOT"
	fi
	exit "$_rc"
}
trap t_cleanup EXIT
trap 'echo "FAIL: stopped by a signal (the watchdog stops a test a minute before its ctest TIMEOUT)" >&2; exit 130' INT TERM

# until_true TENTHS CMD...: poll a condition for up to TENTHS/10 s.
until_true() {
	_n=$1
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# pg_home_pids HOME: processes working in a private root's PostgreSQL home (initdb,
# its postgres children), named there on their command line or working there. HOME
# must be an absolute path of a test root: an empty one would name every process.
pg_home_pids() {
	case $1 in /tmp/*/?*) ;; *) echo "pg_home_pids: refusing home '$1'" >&2; return 1 ;; esac
	for _d in /proc/[0-9]*; do
		_c=$(tr '\0' ' ' 2>/dev/null <"$_d/cmdline") || continue
		_w=$(readlink "$_d/cwd" 2>/dev/null) || _w=
		case "$_c $_w/" in *"$1/"*) echo "${_d#/proc/}" ;; esac
	done
	return 0
}

# stop_pg_home HOME: SIGKILL what pg_home_pids finds (a step or server a test left half-way).
stop_pg_home() {
	_ph=$(pg_home_pids "$1") || return 0
	for _p in $_ph; do kill -KILL "$_p" 2>/dev/null || true; done
}

# child_of PID: the first child of a process (the setup step a reconfigure runs).
child_of() { cat "/proc/$1/task/$1/children" 2>/dev/null | awk '{ print $1 }'; }

# free_port: a TCP port reserved for this test until it exits, the one way a test gets a port
# its services listen on. Every test on this machine, from any checkout, reserves in one shared
# directory: a port is this test's while its holder process keeps an flock on T_PORTS/PORT, and
# the holder takes it only when TCP and UDP binds on it succeed. So two tests running side by
# side never pick the same port, as a bind-and-close probe alone could. Ports come from below
# Linux's ephemeral range (32768-60999), where no outgoing connection takes one. The holder
# closes every descriptor it inherited (a heredoc's pipe would never end) and stops within a
# second of the test's end, even when ctest kills the test outright.
if [ "$(id -u)" = 0 ]; then T_PORTS=/run/gitlab-ctl-test-ports; else T_PORTS=${TMPDIR:-/tmp}/gitlab-ctl-test-ports-$(id -u); fi
T_PORT_HOLDER='
import errno, fcntl, os, socket, sys, time
port, lock, ok, test = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
os.closerange(3, 1 << 16)
fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind(("0.0.0.0", port))
except OSError:
    sys.exit(1)
open(ok, "w").close()
while True:
    try:
        os.kill(test, 0)
    except OSError as e:
        if e.errno == errno.ESRCH:
            break
    time.sleep(1)
'
free_port() {
	[ -d "$T_PORTS" ] || mkdir -m 0755 "$T_PORTS" 2>/dev/null || true
	[ -d "$T_PORTS" ] && [ ! -L "$T_PORTS" ] && [ -O "$T_PORTS" ] ||
		fail "free_port: $T_PORTS is not a directory of this account's"
	_fp_try=0
	while [ "$_fp_try" -lt 100 ]; do
		_fp_try=$((_fp_try + 1))
		_fp_p=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12000))
		_fp_ok=$T_ROOT/.port.$_fp_p
		# A port this test reserved before left its mark: that holder has the lock, this
		# one must not take the old mark for its own.
		rm -f "$_fp_ok"
		python3 -c "$T_PORT_HOLDER" "$_fp_p" "$T_PORTS/$_fp_p" "$_fp_ok" $$ </dev/null >/dev/null 2>&1 &
		_fp_pid=$!
		while [ ! -e "$_fp_ok" ] && alive "$_fp_pid"; do sleep 0.01; done
		if [ -e "$_fp_ok" ]; then
			echo "$_fp_pid" >>"$T_ROOT/.port-holders"
			echo "$_fp_p"
			return 0
		fi
		wait "$_fp_pid" 2>/dev/null || true
	done
	fail "free_port: no free port after 100 tries"
}

# Enabling Redis or PostgreSQL turns their exporters on at fixed ports (9121, 9187), and
# pre-flight refuses a port another process holds: tests that run side by side give them
# ports of their own with these gitlab.rb lines.
exporter_ports() {
	echo "redis_exporter['listen_address'] = 'localhost:$(free_port)'"
	echo "postgres_exporter['listen_address'] = 'localhost:$(free_port)'"
}

# only_services CONFIG_NAME...: gitlab.rb lines that turn off every service of the installed
# catalog except those named (by gitlab.rb name: gitlab_exporter, postgresql, redis, ...), so a
# test starts only what it checks whatever the catalog enables by default. Named services keep
# their defaults; the test still sets enable = true where it needs one the defaults leave off.
only_services() {
	for _os_f in "$GITLAB_CTL_DATADIR"/sv/*.conf; do
		_os_n=$(sed -n 's/^config_name = "\([a-z_]*\)";.*/\1/p' "$_os_f")
		[ -n "$_os_n" ] || continue
		case " $* " in *" $_os_n "*) continue ;; esac
		echo "${_os_n}['enable'] = false"
	done
}

# test_ca DIR: a throwaway CA in DIR (ca.pem, ca.key); test_cert DIR NAME SAN: NAME.pem and
# NAME.key signed by it, subjectAltName SAN ("DNS:localhost,IP:127.0.0.1"). Files 0644 in a 0755
# DIR, so service accounts read them (test certificates only).
test_ca() {
	mkdir -p "$1" && chmod 755 "$1" || fail "test_ca: $1"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca -keyout "$1/ca.key" \
		-out "$1/ca.pem" >/dev/null 2>&1 || fail "test_ca: openssl req"
	chmod 644 "$1/ca.key"
}
test_cert() {
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$1/$2.key" -out "$1/$2.csr" \
		>/dev/null 2>&1 || fail "test_cert $2: openssl req"
	printf 'subjectAltName=%s\n' "$3" >"$1/$2.ext"
	openssl x509 -req -in "$1/$2.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial -days 2 \
		-extfile "$1/$2.ext" -out "$1/$2.pem" >/dev/null 2>&1 || fail "test_cert $2: openssl x509"
	chmod 644 "$1/$2.key" "$1/$2.pem"
}

# mon_auth [ROOT]: "user:password" for curl -u against the Prometheus and Alertmanager of ROOT
# (default $T_ROOT) when gitlab.rb sets no web_password: the one gitlab-ctl generated and keeps.
mon_auth() {
	printf 'gitlab-prometheus:%s' "$(cat "${1:-$T_ROOT}/opt/gitlab/var/secrets/monitoring-web-password")"
}

# expect_rc RC CMD...: run CMD with stdout/stderr in $OUT/$ERR (the test sets both), check its
# exit status. has/lacks/empty FILE [TEXT]: assertions on such a file. A test may redefine them.
expect_rc() {
	_want=$1
	shift
	_rc=0
	"$@" >"${OUT:?}" 2>"${ERR:?}" || _rc=$?
	if [ "$_rc" -ne "$_want" ]; then
		cat "$OUT" "$ERR" >&2
		fail "$* exited $_rc, expected $_want"
	fi
}
has() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$1 lacks: $2"; }; }
lacks() { ! grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$1 has: $2"; }; }
empty() { [ ! -s "$1" ] || { cat "$1" >&2; fail "$1 is not empty"; }; }
# same FILE TEXT: FILE holds exactly TEXT (a golden message)
# tree_state DIR: every path below DIR with its type, mode, owner, size and mtime (ns), sorted,
# for a command that promises to write nothing (check-config, reconfigure --dry-run): a file
# made and removed again still shows in its directory's mtime. runsv's supervise/ and svlogd's
# own files (current, lock, state, newstate, rotated @...) belong to the running services.
tree_state() {
	(cd "$1" && find . \( -name supervise -o -name current -o -name lock -o -name state \
		-o -name newstate -o -name '@*' \) -prune -o -printf '%p %M %U %G %s %T@\n' | LC_ALL=C sort)
}
# same_state DIR BEFORE WHAT: fail, with the difference, unless tree_state DIR is BEFORE.
same_state() {
	_ss_now=$(tree_state "$1")
	[ "$_ss_now" = "$2" ] && return 0
	printf '%s\n' "$2" >"$T_ROOT/.state-before"
	printf '%s\n' "$_ss_now" | diff "$T_ROOT/.state-before" - >&2 || true
	rm -f "$T_ROOT/.state-before"
	fail "$3 changed $1"
}
same() { [ "$(cat "$1")" = "$2" ] || fail "$1: got
$(cat "$1")
want
$2"; }

# light_catalog: a private catalog in $DATA (the templates, no service yet; test_service adds
# them) used by every command, gitlab.rb's directory, and OUT and ERR for expect_rc.
light_catalog() {
	OUT=$T_ROOT/out
	ERR=$T_ROOT/err
	DATA=$T_ROOT/data
	mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
	cp -R "$SRCDIR/templates" "$DATA/"
	export GITLAB_CTL_DATADIR=$DATA
}

# test_service NAME [OPTION=VALUE...]: a cheap catalog entry in $DATA/sv/NAME.conf: the path
# settings every service has, PATH=/usr/bin:/bin, and `/bin/sh -c CMD` as its command.
# Options: cmd=CMD (default: exec sleep 100000; no double quotes), enable=false,
# settings=LINES (more settings), extra=LINES (more top-level keys: after, check_command...).
test_service() {
	_ts_name=$1
	shift
	_ts_enable=true _ts_cmd='exec sleep 100000' _ts_settings='' _ts_extra=''
	for _ts_o; do
		case $_ts_o in
		enable=*) _ts_enable=${_ts_o#enable=} ;;
		cmd=*) _ts_cmd=${_ts_o#cmd=} ;;
		settings=*) _ts_settings=${_ts_o#settings=} ;;
		extra=*) _ts_extra=${_ts_o#extra=} ;;
		*) fail "test_service: unknown option $_ts_o" ;;
		esac
	done
	cat >"$DATA/sv/$_ts_name.conf" <<EOF_TS
name = "$_ts_name";
config_name = "$_ts_name";
enable_default = $_ts_enable;
settings = (
  { name = "enable";        type = "bool"; default = $_ts_enable; },
  { name = "home";          type = "path"; default = "{{data_dir}}/$_ts_name"; },
  { name = "log_directory"; type = "path"; default = "{{log_dir}}/$_ts_name"; },
  { name = "env_directory"; type = "path"; default = "{{install_dir}}/etc/$_ts_name/env"; },$_ts_settings
  { name = "env";           type = "env"; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "/bin/sh", "-c", "$_ts_cmd" ];
$_ts_extra
EOF_TS
}

# hold_root_lock [TEXT]: a background shell holds the root's reconfigure lock (TEXT written
# into the file, "" to empty it; without TEXT the file is left as it is) until
# $T_ROOT/release appears. HOLDER is its pid (tracked).
hold_root_lock() {
	rm -f "$T_ROOT/held" "$T_ROOT/release"
	_hl_lock=$T_ROOT/opt/gitlab/var/reconfigure.lock
	(
		exec 9>>"$_hl_lock"
		flock -x 9
		if [ $# -gt 0 ]; then printf '%s' "${1:+$1
}" >"$_hl_lock"; fi
		: >"$T_ROOT/held"
		until_true 600 test -e "$T_ROOT/release"
	) &
	HOLDER=$!
	track_pid "$HOLDER"
	until_true 100 test -e "$T_ROOT/held" || fail "lock holder did not start"
}


# drop_accounts_named NAME...: delete each of a test's throwaway accounts and its group,
# retrying while a parallel test holds /etc/passwd's lock. Only names the test made.
drop_accounts_named() {
	for _da in "$@"; do
		for _try in 1 2 3 4 5 6 7 8 9 10; do
			getent passwd "$_da" >/dev/null || break
			userdel "$_da" 2>/dev/null || sleep 0.3
		done
		for _try in 1 2 3 4 5 6 7 8 9 10; do
			getent group "$_da" >/dev/null || break
			groupdel "$_da" 2>/dev/null || sleep 0.3
		done
	done
}
