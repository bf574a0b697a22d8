#!/bin/sh
# Reconfigures of three roots side by side on a machine that lacks the account they share (a
# cluster's nodes in namespaces of one host, a fresh CI machine): one creates it, the others
# find it made, and none fails on useradd's "already exists" or its busy lock file. They take
# turns under a lock only root can open.
# The account is this test's own (gctla<pid>, group gctlb<pid>), removed on exit.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || exit 77
command -v useradd >/dev/null || exit 77
U=gctla$$
G=gctlb$$
! getent passwd "$U" >/dev/null && ! getent group "$G" >/dev/null || exit 77
BASE=$T_ROOT
node_root() { # node_root N: point lib.sh's root variables at node N
	T_ROOT=$BASE/n$1
	PIDFILE=$T_ROOT/opt/gitlab/var/runsvdir.pid
	SV_DIR=$T_ROOT/opt/gitlab/sv
}
stop_nodes() {
	for _n in 1 2 3; do
		node_root "$_n"
		stop_root
	done
	T_ROOT=$BASE
}
trap '_r=$?; set +e; stop_nodes; drop_accounts_named "$U" "$G"; (exit $_r); t_cleanup' EXIT

DATA=$BASE/data
mkdir -p "$DATA/sv"
cp -R "$SRCDIR/templates" "$DATA/"
test_service light
export GITLAB_CTL_DATADIR=$DATA
for n in 1 2 3; do
	mkdir -p "$BASE/n$n/etc/gitlab"
	printf "user['username'] = '%s'\nuser['group'] = '%s'\n" "$U" "$G" >"$BASE/n$n/etc/gitlab/gitlab.rb"
done

note "three first reconfigures at once, one account between them"
for n in 1 2 3; do
	"$GITLAB_CTL" --root "$BASE/n$n" reconfigure >"$BASE/rc$n.out" 2>&1 </dev/null &
	eval "rc_pid$n=\$!"
done
for n in 1 2 3; do
	eval "_p=\$rc_pid$n"
	wait "$_p" || { cat "$BASE/rc$n.out" >&2; fail "node $n's reconfigure failed"; }
done
made=$(cat "$BASE"/rc?.out | grep -c "^create user $U\$")
[ "$made" = 1 ] || { cat "$BASE"/rc?.out >&2; fail "the user was created $made times"; }
[ "$(cat "$BASE"/rc?.out | grep -c "^create group $G\$")" = 1 ] || fail "the group was not created once"
# The turns' lock is root's own 0600 file: a service account cannot open it to hold them up.
[ "$(stat -c '%U %a %F' /run/gitlab-ctl-accounts.lock)" = "root 600 regular empty file" ] ||
	fail "the account lock is $(stat -c '%U %a %F' /run/gitlab-ctl-accounts.lock)"
uid=$(id -u "$U") || fail "no account $U"
for n in 1 2 3; do
	node_root "$n"
	P=$(status_pid "$SV_DIR/light/supervise/status")
	[ "$P" != 0 ] && [ "$(awk '/^Uid:/ {print $2}' "/proc/$P/status")" = "$uid" ] ||
		fail "node $n's light does not run as $U"
done
T_ROOT=$BASE
echo "ok: side-by-side reconfigures share the account one of them created"
