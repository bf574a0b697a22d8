# Fault suite: kill -9 at every step of a reconfigure that changes env, config and
# log settings together, then one plain reconfigure: the files are all new, the running
# service has the new env (no drift), no temp files are left, and exactly one runsvdir
# wrapper runs. Kill points: every rename/renameat/renameat2 (the publishing steps and the
# pending records), every fsync, every open of supervise/control (the restart) and the first
# reads of supervise/status, N = 1.. until the run completes without reaching the N-th call.
# The service is a light one (a catalog copy with /bin/sh sleeping, its env from the envdir,
# a rendered config file): each kill point costs two reconfigures, not two Ruby starts.
. "$SRCDIR/test/integration/lib.sh"
command -v strace >/dev/null || fail "strace is needed (scripts/setup installs it)"

DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/templates" "$DATA/"
# The light service's own config template: the exporter's needs the other services.
cat >"$DATA/templates/light.yml" <<'EOF2'
server:
  name: {{yaml server_name}}
  listen_address: {{yaml listen_address}}
  listen_port: {{int listen_port}}
EOF2
cat >"$DATA/sv/light.conf" <<'EOF2'
name = "light";
config_name = "light";
enable_default = true;
settings = (
  { name = "enable";         type = "bool";   default = true; },
  { name = "home";           type = "path";   default = "{{data_dir}}/light"; },
  { name = "log_directory";  type = "path";   default = "{{log_dir}}/light"; },
  { name = "env_directory";  type = "path";   default = "{{install_dir}}/etc/light/env"; },
  { name = "server_name";    type = "string"; default = "webrick"; },
  { name = "listen_address"; type = "string"; default = "127.0.0.1"; },
  { name = "listen_port";    type = "port";   default = 9999; },
  { name = "env";            type = "env"; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "/bin/sh", "-c", "exec sleep 100000" ];
templates = (
  { src = "light.yml"; dest = "{{home}}/light.yml"; mode = "0600"; owner = "service"; }
);
EOF2
export GITLAB_CTL_DATADIR=$DATA
RB=$T_ROOT/etc/gitlab/gitlab.rb
SVC=$SV_DIR/light
ENVDIR=$T_ROOT/opt/gitlab/etc/light/env
YML=$T_ROOT/var/opt/gitlab/light/light.yml
LOGCONF=$T_ROOT/var/log/gitlab/light/config
export SVWAIT=30

# write_rb GEN: env FOO, a setting of the rendered config and svlogd_num all follow GEN.
write_rb() {
	cat >"$RB" <<EOF2
light['listen_port'] = $((20000 + $1))
light['env'] = { 'FOO' => 'gen$1' }
logging['svlogd_num'] = $((10 + $1))
EOF2
}

environ_foo() {
	tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^FOO=//p'
}

# exactly one runsvdir for this root: found by its command line, only to count it
count_runsvdirs() {
	for _c in /proc/[0-9]*/cmdline; do
		tr '\0' ' ' <"$_c" 2>/dev/null | grep -q "^runsvdir -P $SERVICE_DIR " && echo x
	done | wc -l
}

# Temp files of the tree writer (".NAME.gitlab-ctl-tmp.XXXXXX") anywhere under the root.
temp_files() {
	find "$T_ROOT" -name '.*.gitlab-ctl-tmp.*' -print 2>/dev/null
}
# The stale-temp cleanup is the tree writer's; older builds do not have it.
CHECK_TEMPS=0
grep -q 'stale temp file' "$GITLAB_CTL" && CHECK_TEMPS=1

GEN=0
write_rb $GEN
out=$(ctl reconfigure 2>&1) || fail "first reconfigure failed: $out"

tried=0
converged=0
# converge_after KIND N: a reconfigure killed at the N-th KIND call, then a plain one.
# Returns 1 when the killed run never got there (no more kill points of this kind).
converge_after() {
	GEN=$((GEN + 1))
	write_rb $GEN
	case $1 in
	rename) set -- "$1" "$2" -e trace=rename,renameat,renameat2 \
		-e inject=rename,renameat,renameat2:signal=KILL:when=$2 ;;
	fsync) set -- "$1" "$2" -e trace=fsync,fdatasync -e inject=fsync,fdatasync:signal=KILL:when=$2 ;;
	control | status) set -- "$1" "$2" -e trace=openat -P "$SVC/supervise/$1" \
		-e inject=openat:signal=KILL:when=$2 ;;
	esac
	_kind=$1 _n=$2
	shift 2
	strace -f -qq -o /dev/null "$@" "$GITLAB_CTL" --root "$T_ROOT" reconfigure >/dev/null 2>&1 &&
		_rc=0 || _rc=$?
	set -- "$_kind" "$_n"
	[ "$_rc" = 0 ] && return 1
	tried=$((tried + 1))
	out=$(ctl reconfigure 2>&1) || fail "$1 kill point $2: the next reconfigure failed: $out"
	[ "$(cat "$ENVDIR/FOO")" = "gen$GEN" ] || fail "$1 kill point $2: env file not new"
	grep -q "listen_port: $((20000 + GEN))" "$YML" || fail "$1 kill point $2: config file not new"
	grep -qx "n$((10 + GEN))" "$LOGCONF" || fail "$1 kill point $2: log config not new"
	# (no readiness check: the run script takes a moment to exec the service with its env)
	until_true 100 eval '[ "$(environ_foo "$(status_pid "$SVC/supervise/status")")" = "gen$GEN" ]' || true
	_pid=$(status_pid "$SVC/supervise/status")
	_have=$(environ_foo "$_pid")
	[ "$_have" = "gen$GEN" ] ||
		fail "$1 kill point $2: pid $_pid runs with FOO=$_have, want gen$GEN (drift); output: $out"
	_n=$(count_runsvdirs)
	[ "$_n" = 1 ] || fail "$1 kill point $2: $_n runsvdir processes for this root"
	if [ "$CHECK_TEMPS" = 1 ]; then
		_t=$(temp_files)
		[ -z "$_t" ] || fail "$1 kill point $2: temp files left: $_t"
	fi
	[ -z "$(ls -A "$T_ROOT/opt/gitlab/var/pending")" ] ||
		fail "$1 kill point $2: pending work left: $(ls -A "$T_ROOT/opt/gitlab/var/pending")"
	converged=$((converged + 1))
	return 0
}

# status: read while waiting for the restart; polled, so only its first few reads.
for kind in rename fsync control status; do
	n=1
	max=40
	[ $kind = status ] && max=4
	while [ $n -le $max ] && converge_after $kind $n; do
		n=$((n + 1))
	done
	[ $kind = status ] || [ $n -le $max ] || fail "more than $max $kind kill points"
	note "$kind: $((n - 1)) kill points"
done
[ "$tried" -gt 2 ] || fail "only $tried kill points reached: the injection does not work"
[ "$CHECK_TEMPS" = 1 ] || note "temp files not checked: this build's tree writer has no stale-temp cleanup"
note "kill points tried: $tried, converged: $converged"
echo "ok: $converged/$tried kill points converged"
