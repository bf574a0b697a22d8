#!/bin/sh
# doc/gitlab-ctl.8 renders without any groff warning, and its COMMANDS section lists exactly
# the commands of `gitlab-ctl help`, each with the usage `gitlab-ctl help COMMAND` prints.
. "$SRCDIR/test/integration/lib.sh"
page=$SRCDIR/doc/gitlab-ctl.8

groff -ww -man -Tutf8 "$page" >"$T_ROOT/out" 2>"$T_ROOT/err" || fail "groff failed"
[ -s "$T_ROOT/err" ] && { cat "$T_ROOT/err"; fail "groff -ww warns"; }
MANWIDTH=80 man -l "$page" >"$T_ROOT/man.txt" 2>"$T_ROOT/err" || fail "man -l failed"
[ -s "$T_ROOT/err" ] && { cat "$T_ROOT/err"; fail "man -l warns"; }
for section in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS "EXIT STATUS" ENVIRONMENT FILES \
	EXAMPLES "SEE ALSO"; do
	grep -q "^$section\$" "$T_ROOT/man.txt" || fail "no $section section in the rendered page"
done
for word in SVWAIT GITLAB_CTL_ROOT GITLAB_CTL_DATADIR --root --version --show-secrets \
	--dry-run --diff --json --from-config; do
	grep -q -e "$word" "$T_ROOT/man.txt" || fail "the page does not mention $word"
done

# One word on global options: they may follow the command (t_check_config runs -c after it).
grep -q '^Global options may come before or after the command' "$page" || fail "the page does not say global options may follow the command"
! grep -qiE '(must|should) (come|stand|be given|appear) before' "$page" || fail "the page also says options must come first"

# The man page side: the tag line after each .TP in COMMANDS that starts with a bold
# command name (option tags start with \fB\-), font escapes removed.
sed -n '/^\.SH COMMANDS/,/^\.SH /{/^\.TP/{n;p;};}' "$page" | grep '^\\fB[a-z]' |
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' | sort >"$T_ROOT/man.usages"

# The program side: the command list of `help`, and each command's usage line.
"$GITLAB_CTL" help | sed -n '/^commands:/,${s/^  *\([a-z][a-z0-9-]*\) .*/\1/p;}' >"$T_ROOT/names"
[ -s "$T_ROOT/names" ] || fail "gitlab-ctl help lists no command"
while read -r name; do
	"$GITLAB_CTL" help "$name" >"$T_ROOT/help" || fail "gitlab-ctl help $name failed"
	sed -n '1{s/^usage: gitlab-ctl \[--root DIR\] \[-c FILE\] //;s/ *$//;p;}' "$T_ROOT/help"
done <"$T_ROOT/names" | sort >"$T_ROOT/help.usages"

if ! diff -u "$T_ROOT/help.usages" "$T_ROOT/man.usages"; then
	fail "doc/gitlab-ctl.8 COMMANDS (+) and gitlab-ctl help (-) disagree"
fi
echo "ok: $(wc -l <"$T_ROOT/names") commands agree with the man page"
