# check-config on an operator's common gitlab.rb mistakes: each message, golden, says
# what is wrong, where (file:line:col) and what to write instead.
. "$SRCDIR/test/integration/lib.sh"

OUT="$T_ROOT/out"
ERR="$T_ROOT/err"
N=0

# golden 'LINE:COL: error: MESSAGE' <gitlab.rb: exit 1, and that exact first line on stderr.
golden() {
	N=$((N + 1))
	_f="$T_ROOT/g$N.rb"
	cat >"$_f"
	expect_rc 1 ctl -c "$_f" check-config
	_first=$(head -n 1 "$ERR")
	[ "$_first" = "$_f:$1" ] || { cat "$ERR" >&2; fail "case $N: want: $_f:$1"; }
}

note "typographic quotes are named, with the ASCII quote to use"
golden "2:34: error: typographic quote U+2018 LEFT SINGLE QUOTATION MARK: use '" <<'EOF'
external_url 'https://gitlab.example.com'
gitlab_exporter['listen_port'] = ‘9168’
EOF
golden "1:37: error: typographic quote U+201C LEFT DOUBLE QUOTATION MARK: use \"" <<'EOF'
gitlab_exporter['listen_address'] = “localhost”
EOF

golden "1:34: error: unterminated string opened here: U+2019 RIGHT SINGLE QUOTATION MARK at 1:39 does not close it: use '" <<'EOF'
gitlab_exporter['listen_port'] = '9168’
gitlab_exporter['enable'] = true
EOF

note "'=>' where '=' belongs"
golden "1:27: error: use '=' to assign; '=>' is for hash entries" <<'EOF'
gitlab_exporter['enable'] => true
EOF

note "an unquoted size"
golden "1:22: error: 512mb is not a number: quote it: '512mb'" <<'EOF'
redis['maxmemory'] = 512mb
EOF

note "... but a value that may be a secret is not echoed"
golden "1:43: error: this value is not a number: quote it" <<'EOF'
gitlab_exporter['env'] = { 'API_TOKEN' => 512VALSECRET }
EOF
lacks "$ERR" VALSECRET

note "an unterminated string is blamed where it opens"
golden "1:14: error: unterminated string opened here: the quote at 2:14 closes it, and what follows does not parse" <<'EOF'
external_url 'https://gitlab.example.com
gitlab_rails['time_zone'] = 'UTC'
EOF

note "a missing ',' or '}' is named"
golden "2:16: error: expected ',' or '}' after the hash entry at 2:3, found \"'\"" <<'EOF'
gitlab_exporter['env'] = {
  'LANG' => 'C'
  'TZ' => 'UTC'
}
EOF
golden "1:41: error: expected ',' or '}' after the hash entry at 1:28, found 'gitlab_exporter'" <<'EOF'
gitlab_exporter['env'] = { 'LANG' => 'C'
gitlab_exporter['enable'] = true
EOF

note "Ruby in a managed setting: write a literal"
golden "1:22: error: redis['maxmemory'] uses Ruby that gitlab-ctl cannot evaluate: write a literal value (a string, number, true/false, array or hash)" <<'EOF'
redis['maxmemory'] = ENV.fetch('REDIS_MAXMEMORY')
EOF
