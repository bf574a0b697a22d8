# Fault suite: a reconfigure that changes env and log settings together fails
# part way, after the env file's temp is written and before the log config's is: on a full
# disk (ENOSPC: a 4 KiB tmpfs, already full, over the log directory), on a read-only one
# (EROFS: a read-only bind mount), and with too few file descriptors (EMFILE: ulimit -n).
# The mounts live in a private mount namespace (unshare -m), so nothing leaks out of the
# test. Each failed run must say so (no "gitlab Reconfigured!", non-zero exit, no count of
# files it did not write) and publish nothing of its batch: the env file keeps its old
# value and no temp file is left (tree.h: temps are renamed only once all are written and
# fsynced). The next plain run must converge: the exporter runs with the new env. (A run
# killed between the batch's renames, which leaves the env file already up to date for the
# next run, is t_faults_kill's.)
. "$SRCDIR/test/integration/lib.sh"
command -v unshare >/dev/null || fail "unshare (util-linux) is needed"

PORT=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
SVC=$SV_DIR/gitlab-exporter
ENVDIR=$T_ROOT/opt/gitlab/etc/gitlab-exporter/env
LOGDIR=$T_ROOT/var/log/gitlab/gitlab-exporter
mkdir -p "$T_ROOT/etc/gitlab"
export SVWAIT=30

write_rb() {
	cat >"$RB" <<EOF2
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
gitlab_exporter['env'] = { 'FOO' => 'gen$1' }
logging['svlogd_num'] = $((10 + $1))
$(only_services gitlab_exporter)
EOF2
}
environ_foo() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^FOO=//p'; }

write_rb 0
out=$(ctl reconfigure 2>&1) || fail "first reconfigure failed: $out"

GEN=0
# fault NAME SETUP: reconfigure with a new generation inside a mount namespace after SETUP
# (shell code run there first), expect failure, then recover with a plain run.
fault() {
	GEN=$((GEN + 1))
	write_rb $GEN
	out=$(unshare -m sh -c "$2"'
		exec "$GITLAB_CTL" --root "$T_ROOT" reconfigure' 2>&1) &&
		fail "$1: reconfigure succeeded despite the fault: $out"
	printf '%s\n' "$out" | grep -q 'gitlab Reconfigured!' && fail "$1: a failed run said Reconfigured: $out"
	printf '%s\n' "$out" | grep -q "$3" || fail "$1: the error does not say $3: $out"
	# The env file's temp was written, but nothing of the batch was published.
	printf '%s\n' "$out" | grep -Eq '^0/[0-9]+ resources updated' ||
		fail "$1: the summary counts what was not published: $out"
	note "$1: $(printf '%s\n' "$out" | grep -E 'cannot|resources' | tr '\n' ' ')"
	[ "$(cat "$ENVDIR/FOO")" = "gen$((GEN - 1))" ] ||
		fail "$1: the failed run published its env file: FOO=$(cat "$ENVDIR/FOO")"
	[ -z "$(ls -A "$ENVDIR" | grep '^\.')" ] || fail "$1: temp files left in $ENVDIR: $(ls -A "$ENVDIR")"
	recover "$1"
}

recover() {
	out=$(ctl reconfigure 2>&1) || fail "$1: the next reconfigure failed: $out"
	grep -qx "n$((10 + GEN))" "$LOGDIR/config" || fail "$1: log config not written on recovery"
	_pid=$(status_pid "$SVC/supervise/status")
	_have=$(environ_foo "$_pid")
	[ "$_have" = "gen$GEN" ] ||
		fail "$1: after recovery pid $_pid runs with FOO=$_have, want gen$GEN; output: $out"
	_insp=$(ctl inspect gitlab-exporter 2>&1) || fail "$1: inspect after recovery: $_insp"
	note "$1: recovered ($(printf '%s\n' "$out" | grep -E 'earlier run|resources' | tr '\n' ' '))"
}
export GITLAB_CTL T_ROOT LOGDIR

# ENOSPC: the log config cannot be written (the temp file is created, its write fails).
fault ENOSPC 'mount -t tmpfs -o size=4k,mode=0700 tmpfs "$LOGDIR" &&
	dd if=/dev/zero of="$LOGDIR/fill" bs=4096 count=1 2>/dev/null; true' 'out of disk\|No space'

# EROFS: the log directory is mounted read-only.
fault EROFS 'mount --bind "$LOGDIR" "$LOGDIR" && mount -o remount,bind,ro "$LOGDIR"' \
	'Read-only\|read-only'

# EMFILE: too few descriptors, at several limits; whatever step fails, the next run converges.
for n in 5 6 7 8 9 10 12; do
	GEN=$((GEN + 1))
	write_rb $GEN
	if out=$(ulimit -n $n && "$GITLAB_CTL" --root "$T_ROOT" reconfigure 2>&1); then
		note "EMFILE: ulimit -n $n: succeeded"
	else
		printf '%s\n' "$out" | grep -q 'gitlab Reconfigured!' &&
			fail "EMFILE $n: a failed run said Reconfigured: $out"
		note "EMFILE: ulimit -n $n: failed: $(printf '%s\n' "$out" | grep -v '^update\|^create' | head -n 2 | tr '\n' ' ')"
	fi
	recover "EMFILE $n"
done
