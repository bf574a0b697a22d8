# An env value that is wrong only in combination with a default, or that was
# computed from a gitlab.rb setting, is blamed on the gitlab.rb line that set
# it, not on the catalog line of the default (golden messages).
. "$SRCDIR/test/integration/lib.sh"

OUT="$T_ROOT/out"
ERR="$T_ROOT/err"
RB="$T_ROOT/gitlab.rb"

# blamed WANT: check-config exits 1 and its first line on stderr is exactly WANT.
blamed() {
	expect_rc 1 ctl -c "$RB" check-config
	_first=$(head -n 1 "$ERR")
	[ "$_first" = "$1" ] || { cat "$ERR" >&2; fail "want: $1"; }
}

note "a ratio that conflicts with the catalog's other ratio: the user's entry is blamed"
cat >"$RB" <<'RB'
external_url 'http://gitlab.example.com'
gitlab_exporter['env'] = {
  'RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO' => '0.5'
}
RB
blamed "$RB:3:42: error: RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO=0.5 must be less than RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO, which is 0.111 here by default: set both"
grep -qF "'RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO' => '0.5'" "$ERR" || fail "the gitlab.rb line is not shown"
! grep -q 'sv/gitlab-exporter.conf' "$ERR" || fail "still blamed on the catalog: $(cat "$ERR")"

note "both written in gitlab.rb: the maximum is blamed, as before"
cat >"$RB" <<'RB'
gitlab_exporter['env'] = {'RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO' => '0.5',
                          'RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO' => '0.4'}
RB
blamed "$RB:2:66: error: RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO=0.4 must be greater than RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO (0.5); Ruby would ignore it"

note "MALLOC_CONF set in gitlab.rb: jemalloc's own words, at the gitlab.rb value"
printf "gitlab_exporter['env'] = {'MALLOC_CONF' => 'bogus'}\n" >"$RB"
expect_rc 1 ctl -c "$RB" check-config
case $(head -n 1 "$ERR") in
"$RB:1:44: error: MALLOC_CONF: "*" refuses it: "*) ;;
*) cat "$ERR" >&2; fail "MALLOC_CONF not blamed at $RB:1:44" ;;
esac

note "a Go runtime value Go would not read, over the catalog's default: refused at its gitlab.rb value"
printf "node_exporter['env'] = {'GOMEMLIMIT' => '16MB'}\n" >"$RB"
blamed "$RB:1:41: error: GOMEMLIMIT=16MB is not a size Go reads (bytes, or an integer with B, KiB, MiB, GiB or TiB; or off); the service would stop at start"
printf "prometheus['env'] = {'GOGC' => '50%%'}\n" >"$RB"
blamed "$RB:1:32: error: GOGC=50% is not an integer (a percentage) or off; Go would ignore it"

note "a computed env value (redis-exporter's REDIS_PASSWORD from redis['monitor_password']): the setting's line, not echoed"
{
	echo "redis_exporter['enable'] = true"
	printf "redis['monitor_password'] = '%s'\n" "$(head -c 140000 /dev/zero | tr '\0' p)"
} >"$RB"
blamed "$RB:2:29: error: REDIS_PASSWORD: the variable is 140016 bytes as NAME=value; execve refuses more than 131072 (MAX_ARG_STRLEN), so the service could never start"
! grep -q 'sv/redis-exporter.conf' "$ERR" || fail "still blamed on the catalog: $(head -c 300 "$ERR")"
! grep -q 'pppppppp' "$ERR" || fail "the secret's line was echoed"

note "diagnostics in position order: the env error of line 1 (found last) before line 2's warning"
cat >"$RB" <<'RB'
gitlab_exporter['env'] = {'RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO' => '0.5'}
gitlab_exporter['listen_prot'] = 9168
RB
expect_rc 1 ctl -c "$RB" check-config
grep -E '^[^ ].*: (error|warning):' "$ERR" >"$T_ROOT/heads"
[ "$(cat "$T_ROOT/heads")" = "$RB:1:66: error: RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO=0.5 must be less than RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO, which is 0.111 here by default: set both
$RB:2:17: warning: gitlab_exporter['listen_prot'] is not a setting gitlab-ctl knows; ignored (did you mean 'listen_port'?)" ] ||
	{ cat "$ERR" >&2; fail "not in position order"; }
