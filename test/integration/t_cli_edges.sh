# The command line's edges: help, usage errors, trailing global options, a bad --root.
. "$SRCDIR/test/integration/lib.sh"

OUT="$T_ROOT/out"
ERR="$T_ROOT/err"

note "-h and --help: the usage on stdout, success"
expect_rc 0 "$GITLAB_CTL" -h
has "$OUT" "usage:"
empty "$ERR"
expect_rc 0 "$GITLAB_CTL" --help
has "$OUT" "usage:"

note "no command: the usage on stderr, status 2; a bad global option: one line saying so"
expect_rc 2 "$GITLAB_CTL"
has "$ERR" "usage:"
empty "$OUT"
expect_rc 2 "$GITLAB_CTL" --no-such-option status
same "$ERR" "gitlab-ctl: unknown option '--no-such-option' (see gitlab-ctl help)"
expect_rc 2 "$GITLAB_CTL" -x status
same "$ERR" "gitlab-ctl: unknown option '-x' (see gitlab-ctl help)"
expect_rc 2 "$GITLAB_CTL" --root
same "$ERR" "gitlab-ctl: option '--root' needs an argument"
expect_rc 2 "$GITLAB_CTL" -c
same "$ERR" "gitlab-ctl: option '-c' needs an argument"

note "a command's own help, -h or --help anywhere before --"
expect_rc 0 ctl status -h
has "$OUT" "status"
empty "$ERR"
expect_rc 0 ctl tail redis --help
has "$OUT" "tail"

note "global options after the command: --config=FILE, and one missing its argument"
mkdir -p "$T_ROOT/etc/gitlab"
printf 'redis["port"] = \n' >"$T_ROOT/bad.rb"
expect_rc 1 ctl check-config --config="$T_ROOT/bad.rb"
has "$ERR" "bad.rb:1:"
expect_rc 2 ctl check-config --root
has "$ERR" "option '--root' needs an argument"
expect_rc 2 ctl status -c
has "$ERR" "option '-c' needs an argument"

note "a --root that does not exist: named in the error"
expect_rc 1 "$GITLAB_CTL" --root "$T_ROOT/no-such-root" status
has "$ERR" "root $T_ROOT/no-such-root"
expect_rc 1 "$GITLAB_CTL" status --root="$T_ROOT/no-such-root"
has "$ERR" "root $T_ROOT/no-such-root"
echo "ok: cli"
