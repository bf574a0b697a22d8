# Issue 29 row 4, the validator half: a '%' in a remote_write or receivers URL password makes
# promtool/amtool refuse the file and quote the URL back (Go's "parse \"https://u:p%zz@h\":
# invalid URL escape \"%zz\""). check-config, reconfigure (--dry-run too) and upgrade (what
# postinst runs, into apt's term.log) print the refusal at its gitlab.rb line with the tool's
# output redacted by the rendered file's secret spans: neither the password nor a piece of it
# appears, while what the file shows in the clear (a receiver's name) still does.
. "$SRCDIR/test/integration/lib.sh"

for b in /usr/bin/promtool /usr/bin/amtool /usr/bin/prometheus /usr/bin/prometheus-alertmanager; do
	[ -x "$b" ] || { echo "SKIP: $b missing (scripts/setup installs it)"; exit 77; }
done
OUT=$T_ROOT/out
ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
{
	only_services prometheus alertmanager
	echo "prometheus['enable'] = true"
	echo "prometheus['listen_address'] = 'localhost:$(free_port)'"
	echo "alertmanager['enable'] = true"
	echo "alertmanager['listen_address'] = 'localhost:$(free_port)'"
	echo "prometheus['remote_write'] = [ { 'url' => 'https://bob:Wr1te%zzPass@remote.example/api/v1/write' } ]"
	echo "alertmanager['receivers'] = [ { 'name' => 'pager-hook', 'webhook_configs' => [ { 'url' => 'https://amy:Hook%qqSecret@hook.example/x' } ] } ]"
} >"$RB"
PW=$(grep -n remote_write "$RB" | cut -d: -f1)
RC=$(grep -n "'receivers'" "$RB" | cut -d: -f1)

# none FILE...: no password, nor a piece the tools quote, in any of them.
none() {
	for f in "$@"; do
		for s in 'Wr1te%zzPass' 'Wr1te' 'zzPass' '%zz' 'Hook%qqSecret' 'qqSecret' '%qq' 'bob:' 'amy:'; do
			lacks "$f" "$s"
		done
	done
}

note "check-config: refused at the lines, redacted"
expect_rc 1 ctl check-config
none "$OUT" "$ERR"
has "$ERR" "$RB:$PW: error: prometheus['remote_write']: promtool refuses"
has "$ERR" "$RB:$RC: error: alertmanager['receivers']: amtool refuses"
has "$ERR" 'invalid URL escape "[REDACTED]"'
has "$ERR" "FAILED: parse \"[REDACTED]\""

note "check-config --json: the same, redacted"
expect_rc 1 ctl check-config --json
none "$OUT" "$ERR"
has "$OUT" "[REDACTED]"

note "reconfigure, its dry run and upgrade: the same, nothing written"
for verb in "reconfigure --dry-run" "reconfigure" "upgrade"; do
	# shellcheck disable=SC2086 # the verb's words
	expect_rc 1 ctl $verb
	none "$OUT" "$ERR"
	has "$ERR" "$RB:$PW: error: prometheus['remote_write']: promtool refuses"
	has "$ERR" "validation failed: nothing was written"
done
[ ! -e "$T_ROOT/var/opt/gitlab/prometheus/prometheus.yml" ] || fail "a refused file was published"

note "a clear value the tool quotes stays readable"
sed -i '/remote_write/d; /receivers/d' "$RB"
echo "alertmanager['receivers'] = [ { 'name' => 'pager-hook', 'webhook_configs' => [ { 'url' => 'https://amy:Hook%qqSecret@hook.example/x' } ] } ]" >>"$RB"
echo "alertmanager['routes'] = [ { 'receiver' => 'no-such-receiver' } ]" >>"$RB"
sed -i 's/Hook%qqSecret/HookSecret/' "$RB"
expect_rc 1 ctl check-config
lacks "$ERR" "HookSecret"
has "$ERR" '"no-such-receiver"'
