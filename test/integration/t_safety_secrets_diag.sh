#!/bin/sh
# A diagnostic never echoes a gitlab.rb line that holds a secret value: a misspelt secret
# setting or service, a non-literal secret value, a syntax error in one, and any other error
# on the line (or in the statement) of an API_TOKEN value. Position and message stay. The
# whole output (stdout and stderr) of check-config and reconfigure --dry-run is searched for
# the value: postinst's `gitlab-ctl upgrade` writes it into apt's term.log.
. "$SRCDIR/test/integration/lib.sh"

RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
n=0
# expect_quiet RUBY: the config is diagnosed (an error or a warning) without VALSECRET in it.
expect_quiet() {
	n=$((n + 1))
	printf '%s\n' "$1" >"$RB"
	chmod 600 "$RB"
	for cmd in check-config "reconfigure --dry-run"; do
		ctl $cmd >"$T_ROOT/out" 2>&1 || true
		grep -q 'gitlab.rb:[0-9]*:[0-9]*: \(error\|warning\)' "$T_ROOT/out" ||
			fail "case $n ($cmd): no located diagnostic: $(cat "$T_ROOT/out")"
		! grep -q VALSECRET "$T_ROOT/out" || fail "case $n ($cmd) echoed the secret: $(cat "$T_ROOT/out")"
		grep -q 'line not shown: it may hold a secret' "$T_ROOT/out" ||
			fail "case $n ($cmd): no note for the hidden line: $(cat "$T_ROOT/out")"
	done
}
expect_quiet "gitlab_exporter['evn']['API_TOKEN'] = 'VALSECRET1'"
expect_quiet "gitlab_exportr['env'] = { 'API_TOKEN' => 'VALSECRET2' }"
expect_quiet "gitlab_exporter['elasticsearch_authorisation'] = 'Bearer VALSECRET3'"
expect_quiet "gitlab_exporter['env']['API_TOKEN'] = 'VALSECRET4' + ENV['X']"
expect_quiet "gitlab_exporter['elasticsearch_authorization'] = \"Bearer #{x}VALSECRET5\""
expect_quiet "gitlab_exporter['env'] = { 'API_TOKEN' => 'VALSECRET6', 'BAD NAME' => 'x' }"
expect_quiet "gitlab_exporter['env'] = {
  'API_TOKEN' =>
     'VALSECRET7', 'BAD NAME' => 'x' }"
expect_quiet "gitlab_exporter['env'] = { 'API_TOKEN' => 'VALSECRET8"
expect_quiet "gitlab_exporter['env'] = { 'API_TOKEN' => 'x'VALSECRET11 }"
expect_quiet "gitlab_exporter['env']['API_TOKEN'] = 'x' VALSECRET12"
expect_quiet "gitlab_exporter['env'] = { 'API_TOKEN' => 'VALSECRET9', 'RUBY_GC_HEAP_INIT_SLOTS' => 'abc' }"

# A line without a secret is still echoed with its caret.
printf '%s\n' "gitlab_exporter['listen_port'] = 'abc'" >"$RB"
out=$(ctl check-config 2>&1) && fail "a bad port passed"
printf '%s\n' "$out" | grep -q "^  gitlab_exporter\['listen_port'\] = 'abc'$" || fail "no echo: $out"
exit 0
