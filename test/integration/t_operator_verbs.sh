# Service arguments and Omnibus verbs: one resolver (did-you-mean, "not enabled", "not set up
# yet"), unknown commands exit 1, every error prefixed "gitlab-ctl CMD:", status --lsb,
# restart-except, tail -f and tail SERVICE/FILE, help CMD with exit codes. Exact messages.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out ERR=$T_ROOT/err
DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$GITLAB_CTL_DATADIR/templates" "$DATA/"
test_service alpha
test_service beta
test_service gamma enable=false
export GITLAB_CTL_DATADIR=$DATA
: >"$T_ROOT/etc/gitlab/gitlab.rb"

# --- before the first reconfigure ------------------------------------------------------------
expect_rc 1 ctl status
same "$ERR" "gitlab-ctl status: not set up yet: run gitlab-ctl reconfigure"
expect_rc 4 ctl status --lsb
expect_rc 1 ctl inspect
same "$ERR" "gitlab-ctl inspect: not set up yet: run gitlab-ctl reconfigure"
expect_rc 1 ctl inspect --json alpha
has "$OUT" "{\"service\": \"alpha\", \"ok\": false, \"error\": \"$T_ROOT/opt/gitlab/service: not set up yet: run gitlab-ctl reconfigure\"}"
expect_rc 1 ctl tail
same "$ERR" "gitlab-ctl tail: not set up yet: run gitlab-ctl reconfigure"
expect_rc 1 ctl tail alpha
same "$ERR" "gitlab-ctl tail: cannot read $T_ROOT/var/log/gitlab/alpha/current: no log directory $T_ROOT/var/log/gitlab/alpha yet: run gitlab-ctl reconfigure"
expect_rc 1 ctl exec alpah --from-config
same "$ERR" "gitlab-ctl exec: unknown service 'alpah' (known: alpha, beta, gamma); did you mean 'alpha'?"
expect_rc 2 ctl exec --nope alpha
[ "$(head -n 1 "$ERR")" = "gitlab-ctl exec: unknown option '--nope' (see gitlab-ctl help exec)" ] &&
	[ "$(wc -l <"$ERR")" = 2 ] || fail "exec --nope: $(cat "$ERR")"
expect_rc 1 ctl statsu
same "$ERR" "gitlab-ctl: unknown command 'statsu'; did you mean 'status'? (see gitlab-ctl help)"
expect_rc 1 ctl help nosuch
expect_rc 2 ctl tail -x
same "$ERR" "gitlab-ctl tail: unknown option '-x' (see gitlab-ctl help tail)"
expect_rc 2 ctl tail --lines
same "$ERR" "gitlab-ctl tail: option '--lines' needs an argument"
expect_rc 0 ctl help status
has "$OUT" "exit: without --lsb, the sum over services (as Omnibus): 0 run, 1 runsv not running,"
has "$OUT" "example: gitlab-ctl status --lsb postgresql"

expect_rc 0 ctl reconfigure
A=$(status_pid "$SV_DIR/alpha/supervise/status") B=$(status_pid "$SV_DIR/beta/supervise/status")
[ "$A" != 0 ] && [ "$B" != 0 ] || fail "not running: $(ctl status)"

# --- one resolver for every verb -------------------------------------------------------------
for verb in status restart stop hup; do
	expect_rc 1 ctl "$verb" nginx
	same "$ERR" "gitlab-ctl $verb: unknown service 'nginx' (known: alpha, beta, gamma)"
	expect_rc 1 ctl "$verb" gamma
	same "$ERR" "gitlab-ctl $verb: gamma is not enabled: set gamma['enable'] = true and run gitlab-ctl reconfigure"
done
expect_rc 1 ctl status alpah
same "$ERR" "gitlab-ctl status: unknown service 'alpah' (known: alpha, beta, gamma); did you mean 'alpha'?"
expect_rc 1 ctl inspect gamma
has "$ERR" "gitlab-ctl inspect: gamma is not enabled: set gamma['enable'] = true and run gitlab-ctl reconfigure"

# --- status --lsb ----------------------------------------------------------------------------
expect_rc 0 ctl status --lsb
expect_rc 0 ctl stop beta
expect_rc 3 ctl status --lsb
expect_rc 3 ctl status
expect_rc 0 ctl status --lsb alpha
expect_rc 0 ctl start beta
B=$(status_pid "$SV_DIR/beta/supervise/status")

# --- restart-except --------------------------------------------------------------------------
expect_rc 1 ctl restart-except nginx
same "$ERR" "gitlab-ctl restart-except: unknown service 'nginx' (known: alpha, beta, gamma)"
expect_rc 0 ctl restart-except alpha
[ "$(status_pid "$SV_DIR/alpha/supervise/status")" = "$A" ] || fail "restart-except restarted alpha"
[ "$(status_pid "$SV_DIR/beta/supervise/status")" != "$B" ] || fail "restart-except left beta"

# --- tail -f, tail SERVICE/FILE --------------------------------------------------------------
LOGD=$T_ROOT/var/log/gitlab/alpha
echo "first line" >"$LOGD/other.log"
"$GITLAB_CTL" --root "$T_ROOT" tail -f -n 1 alpha/other.log >"$T_ROOT/tail.out" 2>&1 &
TAILPID=$!
track_pid "$TAILPID"
until_true 100 grep -q "first line" "$T_ROOT/tail.out" || fail "tail SVC/FILE: $(cat "$T_ROOT/tail.out")"
echo "second line" >>"$LOGD/other.log"
until_true 100 grep -q "second line" "$T_ROOT/tail.out" || fail "tail did not follow"
kill "$TAILPID"
wait_gone "$TAILPID" || fail "tail did not stop"
expect_rc 2 ctl tail alpha/../x
same "$ERR" "gitlab-ctl tail: alpha/../x: write SERVICE/FILE, FILE a name in the service's log directory"

# --- after uninstall: the tree is there, runsvdir is not ------------------------------------
expect_rc 0 ctl uninstall
expect_rc 2 ctl status
same "$ERR" "gitlab-ctl status: runsvdir is not running: run gitlab-ctl reconfigure (or gitlab-ctl start) to start it"
has "$OUT" "fail: alpha: runsv not running"

# --- cleanse yes (Omnibus' spelling), then the resolver says what to do ----------------------
expect_rc 2 ctl cleanse no </dev/null
same "$ERR" "gitlab-ctl cleanse: unexpected argument 'no': only --yes (or Omnibus' 'yes') skips the question
usage: gitlab-ctl [--root DIR] cleanse [--yes]"
expect_rc 2 ctl uninstall now
same "$ERR" "gitlab-ctl uninstall: unexpected argument 'now': uninstall takes none
usage: gitlab-ctl [--root DIR] uninstall"
expect_rc 0 ctl cleanse yes </dev/null
expect_rc 1 ctl status
same "$ERR" "gitlab-ctl status: not set up yet: run gitlab-ctl reconfigure"
echo ok
