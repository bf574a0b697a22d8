# Omnibus strictness: an unknown top-level name is an error with did-you-mean; names and keys
# Omnibus knows but this build does not manage (sv/omnibus-names.list, omnibus_keys) are one
# summary line, each one with -v; diagnostics come in position order. A whole
# Omnibus-template-shaped gitlab.rb gives a fixed, short report in check-config and
# reconfigure --dry-run.
# The whole template's dry-run pre-flights its services' fixed ports (9090, 9093, 9168): as
# root, in a network namespace of its own, so nothing else on the machine holds them.
T_NETNS_OPTIONAL=1
. "$SRCDIR/test/integration/netns.sh"
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"

cat >"$RB" <<'EOF2'
nginx['enable'] = false
postgres['enable'] = true
user['uid'] = 998
gitlab_exporter['listen_prot'] = 9168
EOF2
expect_rc 1 ctl check-config
same "$ERR" "$RB:2:1: error: postgres is not a name gitlab-ctl or Omnibus knows; did you mean 'postgresql'?
  postgres['enable'] = true
  ^
$RB:4:17: warning: gitlab_exporter['listen_prot'] is not a setting gitlab-ctl knows; ignored (did you mean 'listen_port'?)
  gitlab_exporter['listen_prot'] = 9168
                  ^
$RB: warning: ignoring 2 Omnibus settings this build does not manage: nginx, user['uid'] (-v: each one)
$RB: 1 error, 2 warnings"
expect_rc 1 ctl show-config --json
same "$OUT" "{\"ok\": false, \"error\": \"$RB: the configuration has errors\", \"diagnostics\": [
  {\"file\": \"$RB\", \"line\": 2, \"col\": 1, \"severity\": \"error\", \"message\": \"postgres is not a name gitlab-ctl or Omnibus knows; did you mean 'postgresql'?\", \"hint\": \"did you mean 'postgresql'?\"},
  {\"file\": \"$RB\", \"line\": 4, \"col\": 17, \"severity\": \"warning\", \"message\": \"gitlab_exporter['listen_prot'] is not a setting gitlab-ctl knows; ignored (did you mean 'listen_port'?)\", \"hint\": \"did you mean 'listen_port'?\"},
  {\"file\": \"$RB\", \"line\": 0, \"col\": 0, \"severity\": \"warning\", \"message\": \"ignoring 2 Omnibus settings this build does not manage: nginx, user['uid'] (-v: each one)\", \"hint\": null}]}"
# show-config repeats no warning: the errors, then one line pointing at check-config
same "$ERR" "$RB:2:1: error: postgres is not a name gitlab-ctl or Omnibus knows; did you mean 'postgresql'?
  postgres['enable'] = true
  ^
gitlab-ctl show-config: 2 config warnings: run gitlab-ctl check-config"
# check-config --json: the same diagnostics, with the counts
expect_rc 1 ctl check-config --json
same "$OUT" "{\"ok\": false, \"config\": \"$RB\", \"errors\": 1, \"warnings\": 2, \"strict\": false, \"diagnostics\": [
  {\"file\": \"$RB\", \"line\": 2, \"col\": 1, \"severity\": \"error\", \"message\": \"postgres is not a name gitlab-ctl or Omnibus knows; did you mean 'postgresql'?\", \"hint\": \"did you mean 'postgresql'?\"},
  {\"file\": \"$RB\", \"line\": 4, \"col\": 17, \"severity\": \"warning\", \"message\": \"gitlab_exporter['listen_prot'] is not a setting gitlab-ctl knows; ignored (did you mean 'listen_port'?)\", \"hint\": \"did you mean 'listen_port'?\"},
  {\"file\": \"$RB\", \"line\": 0, \"col\": 0, \"severity\": \"warning\", \"message\": \"ignoring 2 Omnibus settings this build does not manage: nginx, user['uid'] (-v: each one)\", \"hint\": null}]}"
# inspect --json on a configuration that does not load: the diagnostics too
expect_rc 1 ctl inspect --json gitlab-exporter
has "$OUT" "not set up yet: run gitlab-ctl reconfigure\", \"diagnostics\": ["
has "$OUT" "  {\"file\": \"$RB\", \"line\": 2, \"col\": 1, \"severity\": \"error\", \"message\": \"postgres is not a name gitlab-ctl or Omnibus knows; did you mean 'postgresql'?\", \"hint\": \"did you mean 'postgresql'?\"},"
# Omnibus' check-config -v VERSION: a clear word, then the usual check
expect_rc 1 ctl check-config -v 17.0
has "$ERR" "gitlab-ctl check-config: version 17.0: no version checks here (gitlab-ctl installs no GitLab); checking $RB only"
expect_rc 1 ctl -v check-config
has "$ERR" "$RB:1:1: note: ignoring nginx: not managed by this build"
has "$ERR" "$RB:3:6: note: ignoring user['uid']: not managed by this build"
[ "$(grep -c 'ignoring 2 Omnibus settings' "$ERR")" = 1 ] || fail "summary not once: $(cat "$ERR")"
# -v details the summary; it does not count its settings a second time
has "$ERR" "$RB: 1 error, 2 warnings"

# user[...] and logging[...]: gitlab-ctl reads some keys; Omnibus' others join the summary,
# a typo of one gitlab-ctl reads warns with the key it meant (an error under --strict)
{
	cat <<'EOF2'
user['uid'] = 998
user['usernme'] = 'git'
logging['udp_log_shipping_port'] = 514
logging['svlogd_sise'] = 1
EOF2
	only_services gitlab_exporter
} >"$RB"
expect_rc 0 ctl check-config
same "$ERR" "$RB:2:6: warning: user['usernme'] is not a setting gitlab-ctl knows; ignored (did you mean 'username'?)
  user['usernme'] = 'git'
       ^
$RB:4:9: warning: logging['svlogd_sise'] is not a setting gitlab-ctl knows; ignored (did you mean 'svlogd_size'?)
  logging['svlogd_sise'] = 1
          ^
$RB: warning: ignoring 2 Omnibus settings this build does not manage: user['uid'], logging['udp_log_shipping_port'] (-v: each one)"
expect_rc 1 ctl check-config --strict
has "$ERR" "$RB: 0 errors, 3 warnings (--strict: warnings are errors)"
expect_rc 0 ctl -v check-config
has "$ERR" "$RB:1:6: note: ignoring user['uid']: not managed by this build"
has "$ERR" "$RB:3:9: note: ignoring logging['udp_log_shipping_port']: not managed by this build"

# exec --from-config whose command names no program: the message names the setting to change
# (the catalog's own command works in a fresh root: t_exec_fresh)
R2=$T_ROOT/fresh
mkdir -p "$R2/etc/gitlab"
echo "gitlab_exporter['command'] = '/usr/lib/gitlab-ctl-none/gitlab-exporter'" >"$R2/etc/gitlab/gitlab.rb"
chmod 600 "$R2/etc/gitlab/gitlab.rb"
rc=0
"$GITLAB_CTL" --root "$R2" exec gitlab-exporter --from-config >"$OUT" 2>"$ERR" </dev/null || rc=$?
[ "$rc" = 127 ] || fail "exec of a missing command: exit $rc: $(cat "$ERR")"
has "$ERR" "gitlab-ctl exec: set gitlab_exporter['command'] to the program's path"

# A whole Omnibus gitlab.rb, every template key of the services gitlab-ctl runs and of user[...]
# and logging[...] included: 9 warnings in 24 lines (roles' application_role enables nothing
# here; each Omnibus key of a service gitlab-ctl runs that it does not apply warns at its line
# unless it is nil, Omnibus' own default;
# every other unmanaged name or key is summed up, the first 8 named).
cat "$SRCDIR/test/fixtures/omnibus-gitlab.rb" "$SRCDIR/test/fixtures/omnibus-service-keys.rb" >"$RB"
expect_rc 0 ctl check-config
[ "$(grep -c 'warning:' "$ERR")" = 9 ] || fail "check-config warnings: $(cat "$ERR")"
[ "$(wc -l <"$ERR")" = 24 ] || fail "check-config: $(wc -l <"$ERR") lines: $(cat "$ERR")"
[ "$(tail -n1 "$ERR")" = "$RB: warning: ignoring 34 Omnibus settings this build does not manage: consul, external_url, git_data_dirs, gitaly, gitlab_pages, gitlab_rails, gitlab_shell, mattermost, ... and 26 more (-v: each one)" ] ||
	fail "summary: $(tail -n1 "$ERR")"
# -v: the same line without the pointer, then one note each
expect_rc 0 ctl -v check-config
[ "$(grep -c ': note: ignoring ' "$ERR")" = 34 ] || fail "-v notes: $(grep -c ': note: ignoring ' "$ERR")"
grep -qxF "$RB: warning: ignoring 34 Omnibus settings this build does not manage: consul, external_url, git_data_dirs, gitaly, gitlab_pages, gitlab_rails, gitlab_shell, mattermost, ... and 26 more" "$ERR" ||
	fail "-v summary: $(grep 'Omnibus settings' "$ERR")"
has "$ERR" "note: ignoring user['git_user_email']: not managed by this build"
has "$OUT" "9 warnings)"
# show-config does not repeat them: one line pointing at check-config
expect_rc 0 ctl show-config
same "$ERR" "gitlab-ctl show-config: 9 config warnings: run gitlab-ctl check-config"
expect_rc 0 ctl reconfigure --dry-run
[ "$(grep -c 'warning:' "$ERR")" = 9 ] || fail "dry-run warnings: $(cat "$ERR")"
[ "$(wc -l <"$ERR")" = 24 ] || fail "dry-run: $(wc -l <"$ERR") lines: $(cat "$ERR")"
echo ok
