# The lifecycle verbs' other paths, in a private root with a light catalog: usage errors,
# remove-accounts (refused while runsvdir runs; then deletes the account reconfigure made,
# and keeps one it did not make), uninstall waiting for a running reconfigure's lock,
# diff-config without a shipped template, upgrade when its reconfigure fails.
# The accounts are this test's own (gctlc<pid>, group gctlg<pid>, gctlk<pid>), removed on exit.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out
ERR=$T_ROOT/err
U=gctlc$$
G=gctlg$$
K=gctlk$$
O=gctlo$$ # solo's own account (a `username` setting, as gitlab-psql)
drop_accounts() { drop_accounts_named "$U" "$K" "$O" "$G"; }
trap '_r=$?; set +e; stop_root; drop_accounts; (exit $_r); t_cleanup' EXIT  # processes first: userdel refuses a busy account

DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/templates" "$DATA/"
test_service light
# light2: the same account, its program a copy of sleep that the test replaces as dpkg would.
sed -e 's/"light"/"light2"/g; s|/light"|/light2"|g' -e '/^command/d' "$DATA/sv/light.conf" >"$DATA/sv/light2.conf"
echo 'command = [ "{{gitlab_install_dir}}/bin/mysleep", "100000" ];' >>"$DATA/sv/light2.conf"
mkdir -p "$T_ROOT/opt/gitlab/bin"
cp /bin/sleep "$T_ROOT/opt/gitlab/bin/mysleep"
# solo: a service with an account of its own, whose home useradd gets is <data_dir>/solo.
sed -e 's/"light"/"solo"/g; s|/light"|/solo"|g' -e '/^settings = (/a\
  { name = "username"; type = "string"; default = "nobody-here"; },\
  { name = "group";    type = "string"; default = "nobody-here"; },' "$DATA/sv/light.conf" >"$DATA/sv/solo.conf"
export GITLAB_CTL_DATADIR=$DATA
RB=$T_ROOT/etc/gitlab/gitlab.rb
printf "user['username'] = '%s'\nuser['group'] = '%s'\nsolo['username'] = '%s'\nsolo['group'] = '%s'\n" \
	"$U" "$G" "$O" "$O" >"$RB"
SVC=$SV_DIR/light

note "usage errors: status 2 and the usage line"
for verb in uninstall remove-accounts diff-config upgrade; do
	expect_rc 2 ctl "$verb" --yes
	has "$ERR" "usage: gitlab-ctl [--root DIR] $verb"
done
expect_rc 2 ctl cleanse --no
has "$ERR" "usage: gitlab-ctl [--root DIR] cleanse [--yes]"

note "diff-config: a data directory without the shipped template is named"
expect_rc 2 ctl diff-config
has "$ERR" "the shipped template $DATA/etc/gitlab.rb"

note "a root never reconfigured: uninstall and cleanse have nothing to do"
expect_rc 0 ctl uninstall
has "$OUT" "runsvdir is not running"
expect_rc 0 ctl cleanse --yes
lacks "$OUT" "remove "

note "upgrade of a fresh root is its first reconfigure: creates the account"
note "remove-accounts is refused while runsvdir runs"
expect_rc 0 ctl upgrade
has "$OUT" "upgrade: no running service has a changed program"
has "$OUT" "create user $U"
getent passwd "$U" >/dev/null || fail "no account $U"
P=$(status_pid "$SVC/supervise/status")
[ "$(awk '/^Uid:/ {print $2}' "/proc/$P/status")" = "$(id -u "$U")" ] || fail "light does not run as $U"
expect_rc 1 ctl remove-accounts
has "$ERR" "'gitlab-ctl uninstall' first"
getent passwd "$U" >/dev/null || fail "refused, yet $U is gone"

note "upgrade whose reconfigure fails: says so and restarts nothing"
cp "$RB" "$T_ROOT/good.rb"
echo "light['enable'] = " >>"$RB"
expect_rc 1 ctl upgrade
has "$ERR" "upgrade: reconfigure failed; no service restarted for a changed program"
[ "$(status_pid "$SVC/supervise/status")" = "$P" ] || fail "upgrade restarted light"
cp "$T_ROOT/good.rb" "$RB"

note "upgrade after light2's program was replaced (renamed over): light2 restarted, light not"
P2=$(status_pid "$SV_DIR/light2/supervise/status")
[ "$P2" != 0 ] || fail "light2 not running"
cp /bin/sleep "$T_ROOT/opt/gitlab/bin/mysleep.new"
mv "$T_ROOT/opt/gitlab/bin/mysleep.new" "$T_ROOT/opt/gitlab/bin/mysleep"
expect_rc 0 ctl upgrade
has "$OUT" "restart light2 (pid $P2): $T_ROOT/opt/gitlab/bin/mysleep (deleted) changed since it started"
lacks "$OUT" "restart light "
N2=$(status_pid "$SV_DIR/light2/supervise/status")
[ "$N2" != 0 ] && [ "$N2" != "$P2" ] || fail "light2 not restarted ($P2 -> $N2)"
[ "$(status_pid "$SVC/supervise/status")" = "$P" ] || fail "upgrade restarted light"

note "a stopped service is not restarted by upgrade"
expect_rc 0 ctl stop light2
cp /bin/sleep "$T_ROOT/opt/gitlab/bin/mysleep.new"
mv "$T_ROOT/opt/gitlab/bin/mysleep.new" "$T_ROOT/opt/gitlab/bin/mysleep"
expect_rc 0 ctl upgrade
has "$OUT" "upgrade: no running service has a changed program"
[ "$(status_pid "$SV_DIR/light2/supervise/status")" = 0 ] || fail "upgrade started light2"

note "uninstall waits for a running reconfigure's lock"
hold_root_lock
"$GITLAB_CTL" --root "$T_ROOT" uninstall >"$T_ROOT/u.out" 2>"$T_ROOT/u.err" &  # $! is its pid
UN=$!
track_pid "$UN"
until_true 100 grep -qs 'waiting for another reconfigure' "$T_ROOT/u.err" ||
	fail "no waiting message: $(cat "$T_ROOT/u.err")"
alive "$P" || fail "uninstall stopped light while the lock was held"
: >"$T_ROOT/release"
wait "$UN" || fail "uninstall: $(cat "$T_ROOT/u.out" "$T_ROOT/u.err")"
wait "$HOLDER" || true
grep -q '^stop runsvdir (pid [0-9]*) and every service it supervises$' "$T_ROOT/u.out" ||
	fail "uninstall said: $(cat "$T_ROOT/u.out")"
wait_gone "$P" 100 || fail "light $P still runs after uninstall"

note "remove-accounts: only root; a configuration that does not load is reported"
expect_rc 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$GITLAB_CTL" --root "$T_ROOT" remove-accounts
has "$ERR" "remove-accounts: only root deletes accounts"
cp "$RB" "$T_ROOT/good.rb"
echo "light['enable'] = " >>"$RB"
expect_rc 1 ctl remove-accounts
has "$ERR" "gitlab.rb:5:"
cp "$T_ROOT/good.rb" "$RB"
getent passwd "$U" >/dev/null || fail "$U removed by a failed remove-accounts"

note "remove-accounts after uninstall: the accounts and their groups go, a service's own too"
getent passwd "$O" >/dev/null || fail "reconfigure did not create solo's account $O"
expect_rc 0 ctl remove-accounts
has "$OUT" "remove user $U"
has "$OUT" "remove group $G"
has "$OUT" "remove user $O"
has "$OUT" "3 accounts removed" # userdel takes solo's private group with it
getent passwd "$U" >/dev/null && fail "$U still exists"
getent group "$G" >/dev/null && fail "group $G still exists"
getent passwd "$O" >/dev/null && fail "solo's account $O still exists"
getent group "$O" >/dev/null && fail "solo's group $O still exists"
expect_rc 0 ctl remove-accounts
has "$OUT" "0 accounts removed"

note "an account reconfigure did not make (a login account) is kept"
for _try in 1 2 3 4 5 6 7 8 9 10; do
	useradd -M -d /nonexistent "$K" 2>/dev/null && break
	sleep 0.3
done
getent passwd "$K" >/dev/null || fail "cannot create $K"
printf "user['username'] = '%s'\nuser['group'] = '%s'\n" "$K" "$K" >"$RB"
expect_rc 0 ctl remove-accounts
has "$OUT" "keep user $K: not created by reconfigure (uid $(id -u "$K"), home /nonexistent)"
has "$OUT" "0 accounts removed"
getent passwd "$K" >/dev/null || fail "remove-accounts deleted $K"
echo "ok t_lifecycle_verbs_edges"
