# gitlab-ctl exec --envdir: the target gets exactly the envdir's environment,
# missing LD_PRELOAD objects are warned about and dropped, inherited fds are
# closed, umask 077, chdir, signal dispositions reset, PATH searched in the new
# environment, shell-like exit codes, and (as root) the user/group switch.
. "$SRCDIR/test/integration/lib.sh"

JEMALLOC=$(sed -n 's/^#define GITLAB_CTL_JEMALLOC *"\(.*\)"$/\1/p' "$BUILDDIR/build_config.h")
[ -r "$JEMALLOC" ] || fail "jemalloc not found: '$JEMALLOC'"
ENVDIR=$T_ROOT/env
OUT=$T_ROOT/out
ERR=$T_ROOT/err
mkdir -p "$ENVDIR" "$T_ROOT/bin" "$T_ROOT/home"
chmod 755 "$ENVDIR" "$T_ROOT/bin" "$T_ROOT/home"
# A command only the envdir's PATH can find.
printf '#!/bin/sh\necho hello-from-envdir-path\n' >"$T_ROOT/bin/only-in-envdir-path"
chmod 755 "$T_ROOT/bin/only-in-envdir-path"

# Values as reconfigure writes them: whole file, no trailing newline added.
printf '%s' "$T_ROOT/bin:/usr/bin:/bin" >"$ENVDIR/PATH"
printf '%s' "$T_ROOT/home" >"$ENVDIR/HOME"
printf '%s' "/nonexistent/libjemalloc.so.2:$JEMALLOC" >"$ENVDIR/LD_PRELOAD"
printf '%s' 'dirty_decay_ms:0,muzzy_decay_ms:0' >"$ENVDIR/MALLOC_CONF"
printf 'line1\n  "double" '\''single'\'' $HOME `x` \\ \n\n' >"$ENVDIR/TRICKY"
: >"$ENVDIR/EMPTY"
printf 'ignored' >"$ENVDIR/.LD_PRELOAD.tmp"

ex() { ctl exec --envdir "$ENVDIR" gitlab-exporter "$@"; }

note "environment is exactly the envdir (sorted), byte for byte; missing preload dropped"
export LEAKED_FROM_PARENT=1
ex -- /bin/cat /proc/self/environ >"$OUT" 2>"$ERR" || fail "exec cat failed: $(cat "$ERR")"
{
	printf 'EMPTY=\0'
	printf 'HOME=%s\0' "$T_ROOT/home"
	printf 'LD_PRELOAD=%s\0' "$JEMALLOC"
	printf 'MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0\0'
	printf 'PATH=%s\0' "$T_ROOT/bin:/usr/bin:/bin"
	printf 'TRICKY=line1\n  "double" '\''single'\'' $HOME `x` \\ \n\n\0'
} >"$T_ROOT/expected"
cmp "$OUT" "$T_ROOT/expected" || {
	od -c "$OUT" | head -20
	fail "environment differs from the envdir"
}
[ "$(grep -c 'LD_PRELOAD' "$ERR")" = 1 ] || fail "want one LD_PRELOAD warning, got: $(cat "$ERR")"
grep -q '/nonexistent/libjemalloc.so.2: No such file or directory; dropped' "$ERR" ||
	fail "warning does not name the missing file: $(cat "$ERR")"

note "the preloaded jemalloc is really mapped in the target"
ex -- /bin/cat /proc/self/maps 2>/dev/null | grep -q 'libjemalloc' || fail "jemalloc not mapped"

note "a preload list with nothing missing is passed unchanged"
printf '%s' "$JEMALLOC" >"$ENVDIR/LD_PRELOAD"
ex -- /bin/cat /proc/self/environ 2>"$ERR" | tr '\0' '\n' | grep -qx "LD_PRELOAD=$JEMALLOC" ||
	fail "LD_PRELOAD changed"
[ ! -s "$ERR" ] || fail "unexpected stderr: $(cat "$ERR")"
printf '%s' "/nonexistent/only.so" >"$ENVDIR/LD_PRELOAD"
ex -- /bin/cat /proc/self/environ 2>"$ERR" | tr '\0' '\n' | grep -q '^LD_PRELOAD=' &&
	fail "LD_PRELOAD with only missing entries must be unset"
grep -q 'only.so' "$ERR" || fail "no warning for the only entry"
printf '%s' "$JEMALLOC" >"$ENVDIR/LD_PRELOAD"

note "inherited fds above 2 are closed"
exec 7</dev/null
# Control: without exec, a child inherits fd 7.
[ -e /proc/self/fd/7 ] || fail "control: fd 7 not open here"
/bin/ls /proc/self/fd >"$OUT"
grep -qx 7 "$OUT" || fail "control: fd 7 not inherited by a plain child"
ex -- /bin/ls /proc/self/fd >"$OUT" || fail "exec ls failed"
# ls itself holds one fd for the directory it lists.
[ "$(grep -cvx '[012]' "$OUT")" -le 1 ] || fail "fds leaked into the target: $(tr '\n' ' ' <"$OUT")"
grep -qx 7 "$OUT" && fail "fd 7 leaked into the target"
exec 7<&-

note "umask 077 and --chdir"
umask 022
[ "$(ex -- /bin/sh -c umask)" = 0077 ] || fail "umask is not 077"
[ "$(ctl exec --envdir "$ENVDIR" --chdir "$T_ROOT/home" svc -- /bin/pwd)" = "$T_ROOT/home" ] ||
	fail "chdir not done"
ctl exec --envdir "$ENVDIR" --chdir "$T_ROOT/nonexistent" svc -- /bin/true 2>"$ERR" &&
	fail "chdir to a missing dir must fail"
grep -q 'chdir' "$ERR" || fail "no chdir error message"

note "signal dispositions and mask are reset"
sigign() { awk '/^SigIgn:/ {print $2}' "$1"; }
(
	trap '' INT QUIT USR1
	cat /proc/self/status >"$T_ROOT/control-status"
	ex -- /bin/cat /proc/self/status >"$OUT"
)
[ "$(sigign "$T_ROOT/control-status")" != 0000000000000000 ] || fail "control: trap '' did not ignore"
[ "$(sigign "$OUT")" = 0000000000000000 ] || fail "ignored signals survived: $(sigign "$OUT")"
[ "$(awk '/^SigBlk:/ {print $2}' "$OUT")" = 0000000000000000 ] || fail "signals blocked"

note "PATH is searched in the new environment; exit codes like a shell"
[ "$(ex -- only-in-envdir-path)" = hello-from-envdir-path ] || fail "PATH of the envdir not used"
rc=0; ex -- no-such-command-x 2>"$ERR" || rc=$?
[ "$rc" = 127 ] || fail "not found: want 127, got $rc"
rc=0; ex -- /etc/hostname 2>"$ERR" || rc=$?
[ "$rc" = 126 ] || fail "not executable: want 126, got $rc"
rc=0; ex 2>"$ERR" || rc=$?
[ "$rc" = 2 ] || fail "no command: want usage error 2, got $rc"
rc=0; ctl exec --envdir "$ENVDIR" --from-config svc -- /bin/true 2>"$ERR" || rc=$?
[ "$rc" = 2 ] || fail "--envdir with --from-config: want 2, got $rc"
rc=0; ctl exec --envdir "$T_ROOT/nonexistent" svc -- /bin/true 2>"$ERR" || rc=$?
[ "$rc" = 1 ] || fail "missing envdir: want 1, got $rc"
grep -q 'nonexistent' "$ERR" || fail "missing envdir not named"
printf 'x' >"$ENVDIR/BAD-NAME"
rc=0; ex -- /bin/true 2>"$ERR" || rc=$?
[ "$rc" = 1 ] || fail "bad variable name: want 1, got $rc"
grep -q 'BAD-NAME' "$ERR" || fail "bad variable name not named: $(cat "$ERR")"
rm "$ENVDIR/BAD-NAME"
for args in "" "a b" "--envdir $ENVDIR svc --" "--no-such-option svc"; do
	rc=0
	# shellcheck disable=SC2086
	ctl exec $args 2>"$ERR" || rc=$?
	[ "$rc" = 2 ] || fail "exec $args: want usage error 2, got $rc"
	grep -q '^usage: gitlab-ctl exec' "$ERR" || fail "exec $args: no usage: $(cat "$ERR")"
done
printf '#!/bin/sh\n' >"$T_ROOT/bin/not-executable"
chmod 644 "$T_ROOT/bin/not-executable"
rc=0; ex -- not-executable 2>"$ERR" || rc=$?
[ "$rc" = 126 ] || fail "in PATH, not executable: want 126, got $rc"
grep -q 'found in PATH but not executable' "$ERR" || fail "message: $(cat "$ERR")"
note "an empty or relative PATH element is not the cwd (the service's home, its account's)"
mkdir "$T_ROOT/env-cwd" "$T_ROOT/home/bin"
chmod 755 "$T_ROOT/env-cwd" "$T_ROOT/home/bin"
printf '%s' ":bin:/usr/bin:/bin" >"$T_ROOT/env-cwd/PATH"
printf '#!/bin/sh\necho ran-from-cwd\n' >"$T_ROOT/home/in-home-only"
cp "$T_ROOT/home/in-home-only" "$T_ROOT/home/bin/in-home-only"
chmod 755 "$T_ROOT/home/in-home-only" "$T_ROOT/home/bin/in-home-only"
rc=0; ctl exec --envdir "$T_ROOT/env-cwd" --chdir "$T_ROOT/home" svc -- in-home-only \
	>"$OUT" 2>"$ERR" || rc=$?
[ "$rc" = 127 ] || fail "empty PATH element searched the cwd: rc $rc, $(cat "$OUT")"
grep -q 'in-home-only: not found in PATH=:bin:/usr/bin:/bin' "$ERR" || fail "message: $(cat "$ERR")"
rm -r "$T_ROOT/home/in-home-only" "$T_ROOT/home/bin"
note "an envdir without PATH: the command is searched in /usr/local/bin:/usr/bin:/bin"
mkdir "$T_ROOT/env-nopath"
chmod 755 "$T_ROOT/env-nopath"
[ "$(ctl exec --envdir "$T_ROOT/env-nopath" svc -- printenv)" = "" ] || fail "env not empty"
ctl exec --envdir "$T_ROOT/env-nopath" svc -- true || fail "true not found without PATH"
awk 'BEGIN { for (i = 0; i < 140000; i++) printf "x" }' >"$T_ROOT/env-nopath/HUGE"
rc=0; ctl exec --envdir "$T_ROOT/env-nopath" svc -- true 2>"$ERR" || rc=$?
[ "$rc" = 1 ] || fail "oversized value: want 1, got $rc"
grep -q 'HUGE: File too large' "$ERR" || fail "oversized value not named: $(cat "$ERR")"
# The command's own options are not ours.
[ "$(ex -- /bin/echo --user x -n)" = "--user x -n" ] || fail "command arguments mangled"

if [ "$(id -u)" = 0 ]; then
	# A test user with a supplementary group; created once and left in place.
	getent group gitlabctl-test-sup >/dev/null || groupadd --system gitlabctl-test-sup
	if ! getent passwd gitlabctl-test >/dev/null; then
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
			--user-group -G gitlabctl-test-sup gitlabctl-test
	fi
	# reconfigure (t_e2e) may have created the account without the extra group.
	n=50
	until id -Gn gitlabctl-test | tr ' ' '\n' | grep -qx gitlabctl-test-sup; do
		[ $n -gt 0 ] || fail "could not add gitlabctl-test to gitlabctl-test-sup"
		usermod -aG gitlabctl-test-sup gitlabctl-test 2>/dev/null || sleep 0.2 # /etc/group locked
		n=$((n - 1))
	done
	RUN_AS=gitlabctl-test
else
	RUN_AS=$(id -un)
fi

note "--from-config: env, user, home and command computed from gitlab.rb + catalog"
mkdir -p "$T_ROOT/etc/gitlab" "$T_ROOT/var/opt/gitlab/gitlab-exporter"
chmod -R 755 "$T_ROOT/var"
echo "gitlab_exporter['env'] = { 'EXTRA_VAR' => 'a \"b\" c', 'RUBY_GC_HEAP_INIT_SLOTS' => nil }" \
	>"$T_ROOT/etc/gitlab/gitlab.rb"
if [ "$(id -u)" = 0 ]; then
	echo "user['username'] = 'gitlabctl-test'" >>"$T_ROOT/etc/gitlab/gitlab.rb"
	echo "user['group'] = 'gitlabctl-test'" >>"$T_ROOT/etc/gitlab/gitlab.rb"
fi
ctl exec --from-config gitlab-exporter -- /bin/cat /proc/self/environ >"$OUT" 2>"$ERR" ||
	fail "exec --from-config failed: $(cat "$ERR")"
FC_ENV=$T_ROOT/fc-env
tr '\0' '\n' <"$OUT" >"$FC_ENV"
home=$T_ROOT/var/opt/gitlab/gitlab-exporter
grep -qx 'EXTRA_VAR=a "b" c' "$FC_ENV" || fail "user env missing: $(cat "$FC_ENV")"
grep -qx "HOME=$home" "$FC_ENV" || fail "HOME not the root-prefixed home"
grep -qx "LD_PRELOAD=$JEMALLOC" "$FC_ENV" || fail "LD_PRELOAD not the default"
grep -q '^MALLOC_CONF=' "$FC_ENV" || fail "MALLOC_CONF missing"
grep -q '^RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO=' "$FC_ENV" || fail "GC default missing"
grep -q '^RUBY_GC_HEAP_INIT_SLOTS=' "$FC_ENV" && fail "nil did not remove a default"
grep -q '^LEAKED_FROM_PARENT=' "$FC_ENV" && fail "parent environment leaked"
[ "$(LC_ALL=C sort "$FC_ENV")" = "$(cat "$FC_ENV")" ] || fail "env not sorted"
# Exactly what show-config says: the service's base_env + env, nothing else.
ctl show-config 2>/dev/null | awk '/^\tgitlab-exporter = \{/ {on = 1} on && /^\t\};/ {on = 0} on' |
	sed -n 's/^[[:space:]]*"\([A-Za-z_][A-Za-z0-9_]*=.*\)",\{0,1\}\( # [^"]*\)\{0,1\}$/\1/p' |
	sed 's/\\"/"/g; s/\\\\/\\/g' | LC_ALL=C sort >"$T_ROOT/show-config-env"
[ -s "$T_ROOT/show-config-env" ] || fail "no env found in show-config output"
cmp -s "$T_ROOT/show-config-env" "$FC_ENV" ||
	fail "exec --from-config env differs from show-config: $(diff "$T_ROOT/show-config-env" "$FC_ENV")"
ctl exec --from-config gitlab-exporter -- /bin/sh -c 'pwd; id -un' >"$OUT" 2>"$ERR" ||
	fail "$(cat "$ERR")"
[ "$(sed -n 1p "$OUT")" = "$home" ] || fail "--from-config did not chdir to home"
[ "$(sed -n 2p "$OUT")" = "$RUN_AS" ] || fail "--from-config runs as $(sed -n 2p "$OUT"), not $RUN_AS"
# Without a command: the service's command (a program of the host; missing here: 127, and named; the
# catalog's own, reconfigure's link, runs the bundled exporter even before it: t_exec_fresh).
cp "$T_ROOT/etc/gitlab/gitlab.rb" "$T_ROOT/missing.rb"
echo "gitlab_exporter['command'] = '/opt/gitlab/embedded/bin/no-exporter'" >>"$T_ROOT/missing.rb"
rc=0; ctl exec --from-config -c "$T_ROOT/missing.rb" gitlab-exporter 2>"$ERR" || rc=$?
[ "$rc" = 127 ] || fail "missing exporter: want 127, got $rc"
grep -q "exec: /opt/gitlab/embedded/bin/no-exporter: No such file" "$ERR" || fail "command not named: $(cat "$ERR")"
rc=0; ctl exec --from-config no-such-service -- /bin/true 2>"$ERR" || rc=$?
[ "$rc" = 1 ] || fail "unknown service: want 1, got $rc"
printf "gitlab_exporter['enable'] = \n" >"$T_ROOT/broken.rb"
rc=0; ctl exec --from-config -c "$T_ROOT/broken.rb" gitlab-exporter -- /bin/true 2>"$ERR" || rc=$?
[ "$rc" = 1 ] || fail "broken -c FILE: want 1, got $rc"
grep -q "broken.rb:1:" "$ERR" || fail "error does not name broken.rb:1: $(cat "$ERR")"

note "bare exec SERVICE: env from the service's envdir, the rest from the config"
SVC_ENVDIR=$T_ROOT/opt/gitlab/etc/gitlab-exporter/env
mkdir -p "$SVC_ENVDIR"
printf 'from-the-envdir' >"$SVC_ENVDIR/ONLY_IN_ENVDIR"
printf '%s' "$home" >"$SVC_ENVDIR/HOME"
ctl exec gitlab-exporter -- /bin/cat /proc/self/environ >"$OUT" 2>"$ERR" || fail "$(cat "$ERR")"
[ "$(tr '\0' '\n' <"$OUT")" = "$(printf 'HOME=%s\nONLY_IN_ENVDIR=from-the-envdir' "$home")" ] ||
	fail "bare exec env: $(tr '\0' ' ' <"$OUT")"
[ "$(ctl exec gitlab-exporter -- /bin/pwd)" = "$home" ] || fail "bare exec did not chdir home"

if [ "$(id -u)" = 0 ]; then
	note "as root: switch to the service user and its group"
	uid=$(id -u gitlabctl-test)
	gid=$(id -g gitlabctl-test)
	chmod 755 "$T_ROOT/home"
	ctl exec --envdir "$ENVDIR" --user gitlabctl-test --group gitlabctl-test --chdir "$T_ROOT/home" \
		svc -- /bin/cat /proc/self/status >"$OUT" || fail "exec as gitlabctl-test failed"
	[ "$(awk '/^Uid:/ {print $2, $3, $4, $5}' "$OUT")" = "$uid $uid $uid $uid" ] || fail "uid not dropped"
	[ "$(awk '/^Gid:/ {print $2, $3, $4, $5}' "$OUT")" = "$gid $gid $gid $gid" ] || fail "gid not set"
	groups_of() { awk '/^Groups:/ {for (i = 2; i <= NF; i++) print $i}' "$1" | sort -n | tr '\n' ' '; }
	sup=$(getent group gitlabctl-test-sup | cut -d: -f3)
	# Control: the account really is a member of the extra group (initgroups would add it).
	id -G gitlabctl-test | tr ' ' '\n' | grep -qx "$sup" || fail "control: not in gitlabctl-test-sup"
	note "only the service's group, as chpst -u user:group sets it"
	[ "$(groups_of "$OUT")" = "$gid " ] || fail "groups: want '$gid ', got '$(groups_of "$OUT")'"
	note "--groups adds exactly the named supplementary groups"
	ctl exec --envdir "$ENVDIR" --user gitlabctl-test --group gitlabctl-test \
		--groups gitlabctl-test-sup,gitlabctl-test svc -- /bin/cat /proc/self/status >"$OUT" ||
		fail "exec --groups failed"
	want=$(printf '%s\n' "$gid" "$sup" | sort -n | tr '\n' ' ')
	[ "$(groups_of "$OUT")" = "$want" ] || fail "--groups: want '$want', got '$(groups_of "$OUT")'"
	[ "$(awk '/^Gid:/ {print $2}' "$OUT")" = "$gid" ] || fail "--groups changed the primary group"
	note "--groups as root without --user: group and supplementary groups of root itself"
	ctl exec --envdir "$ENVDIR" --groups gitlabctl-test-sup svc -- /bin/cat /proc/self/status \
		>"$OUT" || fail "exec --groups without --user failed"
	[ "$(groups_of "$OUT")" = "$(printf '%s\n' 0 "$sup" | sort -n | tr '\n' ' ')" ] ||
		fail "root --groups: got '$(groups_of "$OUT")'"
	for bad in '' , 'gitlabctl-test-sup,' ',x' 'a,,b' no-such-group-x; do
		rc=0
		ctl exec --envdir "$ENVDIR" --user gitlabctl-test --groups "$bad" svc -- /bin/true \
			2>"$ERR" || rc=$?
		[ "$rc" = 1 ] || fail "--groups '$bad': want 1, got $rc"
		grep -q 'groups\|group' "$ERR" || fail "--groups '$bad': message: $(cat "$ERR")"
	done
	if unshare -U -r true 2>/dev/null; then
		note "a refused setgroups stops the exec before the command runs"
		# A user namespace mapped to root denies setgroups (/proc/self/setgroups: deny).
		for args in "--user root" "--group root"; do
			rc=0
			# shellcheck disable=SC2086
			unshare -U -r "$GITLAB_CTL" --root "$T_ROOT" exec --envdir "$ENVDIR" $args svc -- \
				/bin/sh -c "echo ran >$T_ROOT/ran" 2>"$ERR" || rc=$?
			[ "$rc" = 1 ] || fail "denied setgroups ($args): want 1, got $rc"
			grep -q 'Operation not permitted' "$ERR" || fail "denied setgroups: $(cat "$ERR")"
			[ ! -e "$T_ROOT/ran" ] || fail "the command ran although setgroups failed"
		done
	else
		note "skipped: no user namespaces here (unshare -U -r)"
	fi
	note "a non-root exec cannot add a group it does not have"
	rc=0
	ctl exec --envdir "$ENVDIR" --user nobody svc -- "$GITLAB_CTL" --root "$T_ROOT" exec \
		--envdir "$ENVDIR" --groups gitlabctl-test-sup svc -- /bin/true 2>"$ERR" || rc=$?
	[ "$rc" = 1 ] || fail "nobody adding a group: want 1, got $rc ($(cat "$ERR"))"
	grep -q 'only root can set groups' "$ERR" || fail "message: $(cat "$ERR")"
	note "chdir happens as the service user"
	mkdir -m 700 "$T_ROOT/private"
	ctl exec --envdir "$ENVDIR" --user gitlabctl-test --chdir "$T_ROOT/private" svc -- /bin/true \
		2>"$ERR" && fail "chdir into a root-only dir must fail as the service user"
	grep -q 'Permission denied' "$ERR" || fail "chdir error: $(cat "$ERR")"
	note "a non-root exec cannot switch to another user"
	rc=0
	ctl exec --envdir "$ENVDIR" --user nobody svc -- "$GITLAB_CTL" --root "$T_ROOT" exec \
		--envdir "$ENVDIR" --user root svc -- /bin/true 2>"$ERR" || rc=$?
	[ "$rc" = 1 ] || fail "nobody switching to root: want 1, got $rc ($(cat "$ERR"))"
	grep -q 'only root can switch users' "$ERR" || fail "message: $(cat "$ERR")"
	note "a non-root exec without --group cannot switch to the user's primary group either"
	rc=0
	ctl exec --envdir "$ENVDIR" --user nobody --group daemon svc -- "$GITLAB_CTL" --root "$T_ROOT" \
		exec --envdir "$ENVDIR" --user nobody svc -- /bin/true 2>"$ERR" || rc=$?
	[ "$rc" = 1 ] || fail "nobody:daemon to nobody's primary group: want 1, got $rc ($(cat "$ERR"))"
	grep -q "cannot run as nobody's primary group $(id -g nobody)" "$ERR" ||
		fail "message: $(cat "$ERR")"
	grep -q '(null)' "$ERR" && fail "message names a NULL group: $(cat "$ERR")"
	note "a non-root exec may stay who it is, and cannot take another group"
	ctl exec --envdir "$ENVDIR" --user nobody svc -- "$GITLAB_CTL" --root "$T_ROOT" exec \
		--envdir "$ENVDIR" --user nobody svc -- /bin/true 2>"$ERR" || fail "nobody as nobody: $(cat "$ERR")"
	rc=0
	ctl exec --envdir "$ENVDIR" --user nobody svc -- "$GITLAB_CTL" --root "$T_ROOT" exec \
		--envdir "$ENVDIR" --group gitlabctl-test svc -- /bin/true 2>"$ERR" || rc=$?
	[ "$rc" = 1 ] || fail "nobody to another group: want 1, got $rc"
	grep -q 'cannot run as group gitlabctl-test: only root can switch groups' "$ERR" ||
		fail "message: $(cat "$ERR")"
	rc=0; ctl exec --envdir "$ENVDIR" --user no-such-user-x svc -- /bin/true 2>"$ERR" || rc=$?
	[ "$rc" = 1 ] || fail "unknown user: want 1, got $rc"
else
	note "not root: running as oneself works, another user does not"
	ctl exec --envdir "$ENVDIR" --user "$(id -un)" svc -- /bin/true || fail "self user"
	ctl exec --envdir "$ENVDIR" --user root svc -- /bin/true 2>/dev/null && fail "switched to root"
fi
echo "ok t_exec"
