# The accounts of one root are never another's (issue 29 row 11). `--root R remove-accounts`
# deletes only accounts whose home is under R's data dir: an account the host's own
# reconfigure made (home /var/opt/gitlab, /var/opt/gitlab/solo) is kept, one this root's
# reconfigure made goes. `uninstall` honours SVWAIT when a service ignores TERM (the
# wrapper's own grace is the SVWAIT it started with). The accounts are throwaway ones of
# this test (gctlh<pid>...), never the machine's; a light catalog names only them.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (creates and deletes accounts)"; exit 77; }
OUT=$T_ROOT/out
ERR=$T_ROOT/err
U=gctlh$$   # user['username']
O=gctlho$$  # solo's own account
drop_accounts() { drop_accounts_named "$U" "$O"; }
trap '_r=$?; set +e; stop_root; drop_accounts; (exit $_r); t_cleanup' EXIT
mkaccount() { # NAME HOME: a system account as useradd -r made it for the host's data dir
	for _try in 1 2 3 4 5 6 7 8 9 10; do
		useradd -r -M -U -d "$2" -s /usr/sbin/nologin "$1" 2>/dev/null && return 0
		sleep 0.3
	done
	fail "cannot create $1"
}

DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/templates" "$DATA/"
test_service light
test_service solo settings='
  { name = "username"; type = "string"; default = "nobody-here"; },
  { name = "group";    type = "string"; default = "nobody-here"; },'
export GITLAB_CTL_DATADIR=$DATA
RB=$T_ROOT/etc/gitlab/gitlab.rb
printf "user['username'] = '%s'\nuser['group'] = '%s'\nsolo['username'] = '%s'\nsolo['group'] = '%s'\n" \
	"$U" "$U" "$O" "$O" >"$RB"

note "the host's accounts (homes in /var/opt/gitlab) survive --root R remove-accounts"
mkaccount "$U" /var/opt/gitlab
mkaccount "$O" /var/opt/gitlab/solo
expect_rc 0 ctl remove-accounts
getent passwd "$U" >/dev/null || fail "--root remove-accounts deleted the host's account $U"
getent passwd "$O" >/dev/null || fail "--root remove-accounts deleted the host's account $O"
has "$OUT" "keep user $U: not created by reconfigure"
has "$OUT" "keep user $O: not created by reconfigure"
has "$OUT" "0 accounts removed"
drop_accounts

note "accounts this root's reconfigure made have homes under its data dir, and go"
expect_rc 0 ctl reconfigure
[ "$(getent passwd "$U" | cut -d: -f6)" = "$T_ROOT/var/opt/gitlab" ] ||
	fail "home of $U: $(getent passwd "$U")"
[ "$(getent passwd "$O" | cut -d: -f6)" = "$T_ROOT/var/opt/gitlab/solo" ] ||
	fail "home of $O: $(getent passwd "$O")"

note "uninstall with SVWAIT=3 while a service ignores TERM: about 3 s, not the wrapper's 30"
test_service stubborn cmd="trap '' TERM; while :; do sleep 1; done"
printf "%s\n" "stubborn['username'] = '$U'" "stubborn['group'] = '$U'" >>"$RB"
expect_rc 0 ctl reconfigure
SP=$(status_pid "$SV_DIR/stubborn/supervise/status")
[ "$SP" != 0 ] || fail "stubborn does not run"
t0=$(date +%s)
SVWAIT=3 expect_rc 0 ctl uninstall
t1=$(date +%s)
note "uninstall took $((t1 - t0)) s"
[ $((t1 - t0)) -le 8 ] || fail "uninstall with SVWAIT=3 took $((t1 - t0)) s"
wait_gone "$SP" 100 || fail "stubborn $SP still runs after uninstall"

note "remove-accounts of this root deletes them"
expect_rc 0 ctl remove-accounts
has "$OUT" "remove user $U"
has "$OUT" "remove user $O"
getent passwd "$U" >/dev/null && fail "$U still exists"
getent passwd "$O" >/dev/null && fail "$O still exists"
echo "ok t_safety_accounts"
