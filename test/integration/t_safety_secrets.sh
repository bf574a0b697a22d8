#!/bin/sh
# Secrets are spans: --diff, --dry-run and show-config never print a secret value, even one
# the template escaped (a '"' in it, YAML's \"), nor the old value of a rotated or removed
# secret read back from the file on disk. Every check greps the whole output, stdout and
# stderr, for the value.
. "$SRCDIR/test/integration/lib.sh"

PORT=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
# $1: the Elasticsearch Authorization value (none: unset); $2: the API_TOKEN env value.
write_rb() {
	{
		echo "gitlab_exporter['listen_address'] = '127.0.0.1'"
		echo "gitlab_exporter['listen_port'] = $PORT"
		echo "gitlab_exporter['probe_elasticsearch'] = true"
		echo "gitlab_exporter['elasticsearch_url'] = 'http://127.0.0.1:9'"
		[ -n "$1" ] && echo "gitlab_exporter['elasticsearch_authorization'] = '$1'"
		echo "gitlab_exporter['env'] = { 'API_TOKEN' => '$2' }"
		only_services gitlab_exporter
	} >"$RB"
	chmod 600 "$RB"
}
# no_leak WHAT FILE WORD...: none of the words anywhere in FILE.
no_leak() {
	_what=$1 _f=$2
	shift 2
	for _w; do
		! grep -F -- "$_w" "$_f" >/dev/null || fail "$_what printed the secret $_w: $(cat "$_f")"
	done
}
YML=$T_ROOT/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml

# --- a secret with a quote: YAML escapes it, the output still shows none of it ---------
write_rb 'Bearer AAA1"QUOTED1' 'TOKA1"TOKB1'
ctl reconfigure --dry-run --diff >"$T_ROOT/out" 2>&1 || fail "dry run: $(cat "$T_ROOT/out")"
no_leak "--dry-run --diff" "$T_ROOT/out" AAA1 QUOTED1 TOKA1 TOKB1
grep -q '^+ *Authorization: \[REDACTED\]$' "$T_ROOT/out" ||
	fail "the Authorization line is not shown redacted: $(cat "$T_ROOT/out")"
ctl reconfigure --dry-run >"$T_ROOT/out" 2>&1 || fail "dry run: $(cat "$T_ROOT/out")"
no_leak "--dry-run" "$T_ROOT/out" AAA1 QUOTED1 TOKA1 TOKB1
for f in "" --json; do
	ctl show-config $f >"$T_ROOT/out" 2>&1 || fail "show-config $f: $(cat "$T_ROOT/out")"
	no_leak "show-config $f" "$T_ROOT/out" AAA1 QUOTED1 TOKA1 TOKB1
done
ctl show-config --show-secrets >"$T_ROOT/out" 2>&1
grep -q 'AAA1' "$T_ROOT/out" || fail "--show-secrets does not show the secret"

ctl reconfigure --diff >"$T_ROOT/out" 2>&1 || fail "reconfigure: $(cat "$T_ROOT/out")"
no_leak "reconfigure --diff" "$T_ROOT/out" AAA1 QUOTED1 TOKA1 TOKB1
# (the file holds the escaped value: what the exporter reads)
grep -qF 'Authorization: "Bearer AAA1\"QUOTED1"' "$YML" || fail "rendered: $(cat "$YML")"

# --- rotated: neither the old nor the new value ----------------------------------------
write_rb 'Bearer BBB2"ROTATED2' 'TOKC2"TOKD2'
ctl reconfigure --dry-run --diff >"$T_ROOT/out" 2>&1 || fail "dry run: $(cat "$T_ROOT/out")"
no_leak "--diff of a rotated secret" "$T_ROOT/out" AAA1 QUOTED1 TOKA1 TOKB1 BBB2 ROTATED2 TOKC2 TOKD2
grep -q "^update file $YML (content)" "$T_ROOT/out" || fail "no update: $(cat "$T_ROOT/out")"
grep -q '(secret changed)' "$T_ROOT/out" || fail "the change is not named: $(cat "$T_ROOT/out")"
# A public change in the same file is still shown, the secret line around it redacted.
echo "gitlab_exporter['memory_threshold'] = 777" >>"$RB"
ctl reconfigure --diff >"$T_ROOT/out" 2>&1 || fail "reconfigure: $(cat "$T_ROOT/out")"
no_leak "reconfigure --diff, rotated" "$T_ROOT/out" AAA1 QUOTED1 TOKA1 TOKB1 BBB2 ROTATED2 TOKC2 TOKD2
grep -q '^+  memory_threshold: 777$' "$T_ROOT/out" || fail "public change hidden: $(cat "$T_ROOT/out")"

# --- removed: the old value is on disk only; it is never printed -------------------------
write_rb '' 'TOKE3'
echo "gitlab_exporter['memory_threshold'] = 777" >>"$RB"
for args in "--dry-run --diff" "--diff"; do
	ctl reconfigure $args >"$T_ROOT/out" 2>&1 || fail "reconfigure $args: $(cat "$T_ROOT/out")"
	no_leak "reconfigure $args of a removed secret" "$T_ROOT/out" BBB2 ROTATED2 TOKC2 TOKD2 TOKE3
done
grep -q "^update file $YML (content)" "$T_ROOT/out" || fail "no update: $(cat "$T_ROOT/out")"
grep -q 'Authorization' "$YML" && fail "the removed secret is still rendered"
exit 0
