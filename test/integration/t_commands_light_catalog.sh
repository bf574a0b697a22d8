# The commands' edges, with a light catalog: check-config resolving a command through the
# service's PATH (and naming one it cannot find), show-config's escapes, options and a
# missing catalog, inspect of a non-HTTP service and its errors, tail of a disabled service
# and its option errors, status and control of services runsv does not supervise, a
# corrupt supervise/status, exec's group errors, service-list's errors.
. "$SRCDIR/test/integration/lib.sh"

light_catalog
# light: a command found through its PATH; its `note` setting goes into its env.
cat >"$DATA/sv/light.conf" <<'EOF2'
name = "light";
config_name = "light";
enable_default = true;
settings = (
  { name = "enable";        type = "bool";   default = true; },
  { name = "home";          type = "path";   default = "{{data_dir}}/light"; },
  { name = "log_directory"; type = "path";   default = "{{log_dir}}/light"; },
  { name = "env_directory"; type = "path";   default = "{{install_dir}}/etc/light/env"; },
  { name = "note";          type = "string"; default = "plain"; },
  { name = "count";         type = "string"; default = "12"; },
  { name = "env";           type = "env"; }
);
env = { NOTE = "{{note}}"; };
base_env = { PATH = "/nonexistent:/usr/bin:/bin"; };
command = [ "sleep", "100000" ];
EOF2
# ghost: disabled by default, its command nowhere on its PATH.
cat >"$DATA/sv/ghost.conf" <<'EOF2'
name = "ghost";
config_name = "ghost";
settings = (
  { name = "enable";        type = "bool";   default = false; },
  { name = "home";          type = "path";   default = "{{data_dir}}/ghost"; },
  { name = "log_directory"; type = "path";   default = "{{log_dir}}/ghost"; },
  { name = "env_directory"; type = "path";   default = "{{install_dir}}/etc/ghost/env"; },
  { name = "env";           type = "env"; }
);
env = { };
base_env = { PATH = "/nonexistent"; };
command = [ "no-such-program-anywhere" ];
EOF2
# tmpl: one rendered file whose destination is a setting; exec --from-config writes it.
cat >"$DATA/sv/tmpl.conf" <<'EOF2'
name = "tmpl";
config_name = "tmpl";
settings = (
  { name = "enable";        type = "bool";   default = false; },
  { name = "home";          type = "path";   default = "{{data_dir}}/tmpl"; },
  { name = "log_directory"; type = "path";   default = "{{log_dir}}/tmpl"; },
  { name = "env_directory"; type = "path";   default = "{{install_dir}}/etc/tmpl/env"; },
  { name = "env";           type = "env"; },
  { name = "dest";          type = "string"; default = "{{home}}/out.yml"; },
  { name = "greeting";      type = "string"; default = "hello"; }
);
env = { };
base_env = { PATH = "/usr/bin:/bin"; };
command = [ "/bin/true" ];
templates = ( { src = "tmpl.yml"; dest = "{{dest}}"; mode = "0640"; owner = "service"; } );
EOF2
echo 'greeting: {{yaml greeting}}' >"$DATA/templates/tmpl.yml"
RB=$T_ROOT/etc/gitlab/gitlab.rb
: >"$RB"
SVC=$SV_DIR/light

note "check-config: a relative command found on the service's PATH; one that is not is named"
expect_rc 0 ctl check-config
echo "ghost['enable'] = true" >"$RB"
expect_rc 1 ctl check-config
has "$ERR" "ghost: command no-such-program-anywhere not found"
: >"$RB"
expect_rc 2 ctl check-config extra
has "$ERR" "usage: gitlab-ctl check-config [-c FILE] [--strict]"
expect_rc 2 ctl check-config --show-secrets --json
has "$ERR" "usage: gitlab-ctl check-config [-c FILE] [--strict] [--json]"
expect_rc 2 ctl check-config --show-secrets
expect_rc 2 ctl show-config --bogus
has "$ERR" "usage: gitlab-ctl show-config [-c FILE] [--show-secrets] [--json] [SERVICE...]"

note "check-config: a home below a directory others can write, an svlogd processor likewise"
mkdir -p "$T_ROOT/var/opt/open" "$T_ROOT/evil"
chmod 777 "$T_ROOT/var/opt/open" "$T_ROOT/evil"
printf '#!/bin/sh\ncat\n' >"$T_ROOT/evil/filter"
chmod 755 "$T_ROOT/evil/filter"
echo "light['home'] = '/var/opt/open/light'" >"$RB"
expect_rc 1 ctl check-config
has "$ERR" "light['home']: root chowns the home: $T_ROOT/var/opt/open is writable by group or others"
echo "logging['svlogd_filter'] = '$T_ROOT/evil/filter'" >"$RB"
expect_rc 1 ctl check-config
has "$ERR" "light: svlogd (root) runs its processor: $T_ROOT/evil is writable by group or others"
: >"$RB"
rm -r "$T_ROOT/var/opt/open" "$T_ROOT/evil"

note "show-config -c FILE: a tab, a newline and a control byte escaped, in text and JSON"
printf "light['note'] = \"a\\\\tb\\\\nc\\\\001d\"\nlight['count'] = 'x12'\n" >"$T_ROOT/other.rb"
expect_rc 0 ctl show-config -c "$T_ROOT/other.rb" light
has "$OUT" 'a\tb\nc\x01d'
has "$OUT" 'x12'
expect_rc 0 ctl show-config --json -c "$T_ROOT/other.rb" light
has "$OUT" 'a\u0009b\u000ac\u0001d'
expect_rc 1 ctl show-config --json nosuch
has "$OUT" '"error": "nosuch: no such service in the catalog"'

note "no catalog: show-config and inspect say how to fix it"
GITLAB_CTL_DATADIR=$T_ROOT/none expect_rc 1 ctl show-config
has "$ERR" "$T_ROOT/none"
GITLAB_CTL_DATADIR=$T_ROOT/none expect_rc 1 ctl show-config --json
has "$OUT" "no service catalog (sv/)"
GITLAB_CTL_DATADIR=$T_ROOT/none expect_rc 1 ctl inspect light
has "$ERR" "$T_ROOT/none"

note "service-list: arguments refused; a broken catalog named; the catalog with enabled ones starred"
expect_rc 2 ctl service-list extra
has "$ERR" "service-list: takes no arguments"
mkdir -p "$T_ROOT/badcat/sv"
printf 'name = ;\n' >"$T_ROOT/badcat/sv/x.conf"
GITLAB_CTL_DATADIR=$T_ROOT/badcat expect_rc 1 ctl service-list
has "$ERR" "$T_ROOT/badcat/sv/x.conf:1"

note "status and control before anything runs: runsv not running, a bad option"
expect_rc 2 ctl status --bogus
mkdir -p "$SVC/supervise"
expect_rc 1 ctl start light
expect_rc 0 ctl reconfigure
P=$(status_pid "$SVC/supervise/status")
[ "$P" != 0 ] || fail "light not running"
expect_rc 0 ctl service-list
has "$OUT" "light*"
has "$OUT" "ghost"
lacks "$OUT" "ghost*"

note "inspect: a service without a listen address has no metrics to read; usage errors"
expect_rc 0 ctl inspect light
has "$OUT" "light"
has "$OUT" "metrics: no listen address configured"
expect_rc 0 ctl inspect --json light
has "$OUT" '"service": "light"'
expect_rc 2 ctl inspect light ghost
has "$ERR" "too many arguments (one SERVICE at most)"
expect_rc 2 ctl inspect -x
echo "light['enable'] = " >"$RB"
expect_rc 1 ctl inspect --json light
has "$OUT" "the configuration does not load"
: >"$RB"

note "inspect: env drift listed (variables the envdir has and the process lacks, and back)"
ENVDIR=$T_ROOT/opt/gitlab/etc/light/env
printf '1\n' >"$ENVDIR/ADDED"
printf '2\n' >"$ENVDIR/ADDED2"
mv "$ENVDIR/NOTE" "$T_ROOT/NOTE.saved"
expect_rc 1 ctl inspect --json light
has "$OUT" '"ADDED", "ADDED2"'
has "$OUT" '"NOTE"'
printf '1\n' >"$ENVDIR/bad-name"
expect_rc 1 ctl inspect light
has "$OUT" "env: unknown ($ENVDIR/bad-name"
expect_rc 1 ctl inspect --json light
has "$OUT" "\"env_error\": \"$ENVDIR/bad-name"
rm "$ENVDIR/bad-name" "$ENVDIR/ADDED" "$ENVDIR/ADDED2"
mv "$T_ROOT/NOTE.saved" "$ENVDIR/NOTE"
expect_rc 0 ctl inspect light

note "a corrupt supervise/status: named, not read as a state"
cp "$SVC/log/supervise/status" "$T_ROOT/status.bak"
printf 'short' >"$T_ROOT/bad-status"
# runsv rewrites its status only on a change: the log service's can be swapped for a moment
cp "$T_ROOT/bad-status" "$SVC/log/supervise/status.new"
mv "$SVC/log/supervise/status.new" "$SVC/log/supervise/status"
expect_rc 4 ctl status light # LSB "unknown": a state it cannot read
has "$OUT" "warning: light/log: unable to read supervise/status: bad format"
cp "$T_ROOT/status.bak" "$SVC/log/supervise/status"

note "tail: option errors; a disabled service's old log, until its reader goes away"
expect_rc 2 ctl tail -n many light
has "$ERR" "-n many: invalid"
expect_rc 2 ctl tail -x light
expect_rc 2 ctl tail light ghost
mkdir -p "$T_ROOT/var/log/gitlab/ghost"
printf 'ghost line one\nghost line two\n' >"$T_ROOT/var/log/gitlab/ghost/current"
# tail follows until its reader goes: head takes one line and exits; the next log line
# tail writes fails (SIGPIPE ignored, as a shell's `trap '' PIPE` leaves it), and tail
# exits by itself.
mkfifo "$T_ROOT/tailpipe"
head -n 1 <"$T_ROOT/tailpipe" >"$T_ROOT/tail.out" &
HEAD=$!
track_pid "$HEAD"
(
	trap '' PIPE
	exec "$GITLAB_CTL" --root "$T_ROOT" tail -n 1 ghost >"$T_ROOT/tailpipe"
) &
TAIL=$! # the subshell execs the binary: this is its pid
track_pid "$TAIL"
wait "$HEAD" || fail "head failed"
grep -qx 'ghost line two' "$T_ROOT/tail.out" || fail "tail -n 1 ghost printed: $(cat "$T_ROOT/tail.out")"
echo 'ghost line three' >>"$T_ROOT/var/log/gitlab/ghost/current"
until_true 100 sh -c "! kill -0 $TAIL 2>/dev/null" || {
	echo 'ghost line four' >>"$T_ROOT/var/log/gitlab/ghost/current"
	until_true 100 sh -c "! kill -0 $TAIL 2>/dev/null"
} || fail "tail still runs with nobody reading"
rc=0
wait "$TAIL" || rc=$?
[ "$rc" = 0 ] || fail "tail exited $rc, want 0: its reader went away, nothing failed"

note "exec --from-config: writes the service's files, then runs"
expect_rc 0 ctl exec --from-config tmpl -- /bin/cat "$T_ROOT/var/opt/gitlab/tmpl/out.yml"
has "$OUT" 'greeting: "hello"'
has "$ERR" "create file $T_ROOT/var/opt/gitlab/tmpl/out.yml"
echo "tmpl['dest'] = 'relative/out.yml'" >"$RB"
expect_rc 1 ctl exec --from-config tmpl -- /bin/true
has "$ERR" 'template tmpl.yml: destination "{{dest}}" is not an absolute path'
echo "tmpl['greeting'] = 'hi'" >"$RB"
echo 'greeting: {{nosuch_value}}' >"$DATA/templates/tmpl.yml"
expect_rc 1 ctl exec --from-config tmpl -- /bin/true
has "$ERR" "nosuch_value"
echo 'greeting: {{yaml greeting}}' >"$DATA/templates/tmpl.yml"
printf "user['username'] = 'gctl-nosuch-user'\nmanage_accounts['enable'] = false\n" >"$RB"
expect_rc 1 ctl exec --from-config tmpl -- /bin/true
has "$ERR" "tmpl: user 'gctl-nosuch-user' or group"
has "$ERR" "does not exist (create them in the image)"
: >"$RB"

note "exec: an unknown group, a --groups list too long"
expect_rc 0 ctl exec light -- /bin/sh -c 'echo "NOTE=$NOTE"'
has "$OUT" "NOTE=plain"
expect_rc 1 ctl exec --envdir "$ENVDIR" --user root --group no-such-group-x light -- /bin/true
has "$ERR" "no-such-group-x"
long=$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "grp%d,", i }')
expect_rc 1 ctl exec --envdir "$ENVDIR" --groups "$long" light -- /bin/true
has "$ERR" "exec: --groups: list too long"
# 33 distinct groups of the base system (gid < 100): one more than exec sets
many=$(getent group | awk -F: '$3 < 100 { print $1 }' | head -n 33 | paste -sd, -)
[ "$(echo "$many" | tr ',' '\n' | wc -l)" = 33 ] || fail "fewer than 33 system groups: $many"
expect_rc 1 ctl exec --envdir "$ENVDIR" --groups "$many" light -- /bin/true
has "$ERR" "exec: --groups: more than"
echo "ok t_commands_light_catalog"
