#!/bin/sh
# Omnibus' gitlab-ctl commands (files/gitlab-ctl-commands*/ of omnibus-gitlab): each one this
# build has is in `gitlab-ctl help`; each other one says it is an Omnibus command this build
# lacks and what to use instead, exit 1. pg-password-md5 USER as Omnibus': md5(password +
# USER) in hex; one line of stdin when stdin is not a terminal, asked twice without echo on
# a terminal, a mismatch refused; no USER: exit 1.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out ERR=$T_ROOT/err
# add_command / add_command_under_category names, omnibus-gitlab 17.x, and repmgr (its docs)
OMNIBUS="apply-sepolicy backup-etc check-config completion consul consul-download deploy-page
diff-config generate-secrets geo geo-replication-pause geo-replication-resume
get-postgresql-primary get-redis-master patroni pg-decomposition-migration pg-password-md5
pg-upgrade pgb-console pgb-kill pgb-notify pgb-resume pgb-suspend praefect
promotion-preflight-checks registry-database registry-garbage-collect remove-accounts
renew-le-certs replicate-geo-database repmgr restart-except revert-pg-upgrade set-geo-primary-node
set-replication-password upgrade upgrade-check write-pgpass"
expect_rc 0 ctl help
cp "$OUT" "$T_ROOT/help"
for c in $OMNIBUS; do
	if grep -qE "^  $c( |$)" "$T_ROOT/help"; then
		continue
	fi
	expect_rc 1 ctl "$c"
	has "$ERR" "gitlab-ctl: '$c' is an Omnibus command this build lacks: "
	lacks "$ERR" "unknown command"
done
note "pg-upgrade names what to do instead"
expect_rc 1 ctl pg-upgrade
has "$ERR" "pg_upgrade"
has "$ERR" "gitlab-ctl stop postgresql"
note "get-redis-master without a sentinel to ask: exit 1, saying what to set"
mkdir -p "$T_ROOT/etc/gitlab"
expect_rc 1 ctl get-redis-master
has "$ERR" "gitlab_rails['redis_sentinels']"

note "get-postgresql-primary without Patroni: exit 1, saying what to set"
expect_rc 1 ctl get-postgresql-primary
has "$ERR" "patroni['enable'] = true"
expect_rc 2 ctl get-postgresql-primary extra

note "pg-password-md5: stdin not a terminal"
printf 'secret\n' | ctl pg-password-md5 gitlab >"$OUT" 2>"$ERR" || fail "pg-password-md5 exited $?"
same "$OUT" "$(printf 'secretgitlab' | md5sum | cut -d' ' -f1)"
empty "$ERR"
printf 'p w\r\n' | ctl pg-password-md5 gitlab-psql >"$OUT" 2>"$ERR" || fail "pg-password-md5 (CRLF)"
same "$OUT" "$(printf 'p wgitlab-psql' | md5sum | cut -d' ' -f1)"
_rc=0
ctl pg-password-md5 </dev/null >"$OUT" 2>"$ERR" || _rc=$?
[ "$_rc" = 1 ] || fail "pg-password-md5 without USER exited $_rc"
has "$ERR" "salted with the user name"

note "pg-password-md5 on a terminal: asked twice, no echo; a mismatch is refused"
# tty.rb FIRST SECOND: run it on a pty, answer each prompt; print what the terminal showed.
cat >"$T_ROOT/tty.rb" <<'EOF'
require "pty"
require "expect"
out = +""
PTY.spawn(ENV["GITLAB_CTL"], "--root", ENV["T_ROOT"], "pg-password-md5", "gitlab") do |r, w, pid|
  [ARGV[0], ARGV[1]].each_with_index do |pw, i|
    prompt = i.zero? ? "Enter password: " : "Confirm password: "
    got = r.expect(prompt, 10) or abort "no prompt #{prompt.inspect}: #{out}"
    out << got[0]
    w.write("#{pw}\n")
  end
  begin
    r.each_char { |c| out << c }
  rescue Errno::EIO
  end
  Process.wait(pid)
  print out
  exit $?.exitstatus
end
EOF
export GITLAB_CTL T_ROOT
ruby "$T_ROOT/tty.rb" secret secret >"$OUT" 2>"$ERR" || fail "on a pty: exit $? $(cat "$OUT" "$ERR")"
has "$OUT" "Enter password: "
has "$OUT" "Confirm password: "
has "$OUT" "$(printf 'secretgitlab' | md5sum | cut -d' ' -f1)"
lacks "$OUT" "secret"
_rc=0
ruby "$T_ROOT/tty.rb" secret other >"$OUT" 2>"$ERR" || _rc=$?
[ "$_rc" = 1 ] || fail "a mismatch exited $_rc: $(cat "$OUT")"
has "$OUT" "do not match"
lacks "$OUT" "$(printf 'secretgitlab' | md5sum | cut -d' ' -f1)"
