#!/bin/sh
# backup-etc, Omnibus' verb: one 0600 tar archive gitlab_config_<epoch>_<YYYY_MM_DD>.tar in a
# 0700 directory, holding gitlab.rb and the generated tree (links stored, never followed;
# runsv's supervise/ left out), a backup directory others can write refused with the reason,
# --delete-old-backups keeping the newest N. Exact messages.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out ERR=$T_ROOT/err
DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$GITLAB_CTL_DATADIR/templates" "$DATA/"
test_service alpha
export GITLAB_CTL_DATADIR=$DATA
echo "alpha['enable'] = true" >"$T_ROOT/etc/gitlab/gitlab.rb"
BK=$T_ROOT/etc/gitlab/config_backup

expect_rc 0 ctl reconfigure
# a link an account could have planted in the tree: stored as a link, its target never read
ln -s /etc/shadow "$SV_DIR/alpha/planted"

note "the default directory, made 0700; the archive 0600, named as Omnibus names it"
expect_rc 0 ctl backup-etc
A=$(ls "$BK")
case $A in gitlab_config_[0-9]*_[0-9][0-9][0-9][0-9]_[0-9][0-9]_[0-9][0-9].tar) ;; *) fail "name: $A" ;; esac
same "$OUT" "Configuration backup archive complete: $BK/$A"
empty "$ERR"
[ "$(stat -c %a "$BK")" = 700 ] || fail "directory mode $(stat -c %a "$BK")"
[ "$(stat -c %a "$BK/$A")" = 600 ] || fail "archive mode $(stat -c %a "$BK/$A")"
tar -tvf "$BK/$A" >"$T_ROOT/list"
has "$T_ROOT/list" " etc/gitlab/gitlab.rb"
has "$T_ROOT/list" " opt/gitlab/sv/alpha/run"
has "$T_ROOT/list" " opt/gitlab/sv/alpha/planted -> /etc/shadow"
grep -q '^l' "$T_ROOT/list" || fail "the planted link was not stored as a link"
lacks "$T_ROOT/list" "supervise"
lacks "$T_ROOT/list" "config_backup"
ls -A "$BK" | grep -q '\.tmp$' && fail "a temporary file was left"

note "-p: a directory others can write is refused, nothing written there"
mkdir -m 0777 "$T_ROOT/open"
expect_rc 1 ctl backup-etc -p "$T_ROOT/open"
same "$ERR" "gitlab-ctl backup-etc: refusing $T_ROOT/open: $T_ROOT/open is writable by group or others (only root may write to it and the directories above it)"
[ -z "$(ls -A "$T_ROOT/open")" ] || fail "wrote into a refused directory"
mkdir -m 0700 "$T_ROOT/nobody"
chown nobody "$T_ROOT/nobody"
expect_rc 1 ctl backup-etc -p "$T_ROOT/nobody"
has "$ERR" "gitlab-ctl backup-etc: refusing $T_ROOT/nobody: $T_ROOT/nobody "
ln -s "$BK" "$T_ROOT/link"
expect_rc 1 ctl backup-etc -p "$T_ROOT/link"
has "$ERR" "gitlab-ctl backup-etc: refusing $T_ROOT/link: $T_ROOT/link "
expect_rc 2 ctl backup-etc -p relative
same "$ERR" "gitlab-ctl backup-etc: -p relative: is not an absolute path"
expect_rc 2 ctl backup-etc -k 0
same "$ERR" "gitlab-ctl backup-etc: -k 0: too small (a count >= 1)"
expect_rc 2 ctl backup-etc --nope
same "$ERR" "gitlab-ctl backup-etc: unknown option '--nope' (see gitlab-ctl help backup-etc)"

note "--delete-old-backups -k 2 keeps the two newest of ours and nothing else is touched"
mkdir -m 0700 "$T_ROOT/mine"
for e in 1000 2000 3000; do : >"$T_ROOT/mine/gitlab_config_${e}_1970_01_01.tar"; done
: >"$T_ROOT/mine/notes.txt"
ln -s /etc/hostname "$T_ROOT/mine/gitlab_config_500_1970_01_01.tar"
expect_rc 0 ctl backup-etc -p "$T_ROOT/mine" --delete-old-backups -k 2
has "$OUT" "Removed 2 old configuration backups (keeping the newest 2)"
[ -e "$T_ROOT/mine/gitlab_config_3000_1970_01_01.tar" ] || fail "removed the second newest"
[ ! -e "$T_ROOT/mine/gitlab_config_2000_1970_01_01.tar" ] || fail "kept an old one"
[ -e "$T_ROOT/mine/notes.txt" ] || fail "removed a file that is not a backup"
[ -L "$T_ROOT/mine/gitlab_config_500_1970_01_01.tar" ] || fail "removed a link"

expect_rc 0 ctl help backup-etc
has "$OUT" "exit: 0 written; 1 refused or failed (nothing half written); 2 usage"
echo ok
