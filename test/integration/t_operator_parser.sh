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

# accepted [-v] <gitlab.rb: exit 0, stderr exactly $WANT (FILE stands for the file's path).
accepted() {
	N=$((N + 1))
	_f="$T_ROOT/g$N.rb"
	{
		cat
		only_services gitlab_exporter
	} >"$_f"
	expect_rc 0 ctl -c "$_f" "$@" check-config
	_want=$(printf '%s\n' "$WANT" | sed "s|FILE|$_f|g")
	[ "$(cat "$ERR")" = "$_want" ] || { cat "$ERR" >&2; fail "case $N: want:
$_want"; }
	has "$OUT" "gitlab.rb OK: $_f"
}

note "if/unless/case around settings gitlab-ctl does not manage: skipped, one summary line"
WANT="FILE: warning: ignoring 2 Omnibus settings this build does not manage: gitlab_rails, user['uid'] (-v: each one)"
accepted <<'EOF'
if ENV['GITLAB_HOST'] == 'a'
  gitlab_rails['smtp_enable'] = true
  if node['fqdn'] == 'db1' then user['uid'] = 998 end
elsif File.exist?('/etc/gitlab/end')
  gitlab_rails['smtp_address'] = <<~EOS.strip
    end
  EOS
else
  gitlab_rails['smtp_enable'] = false
end
gitlab_exporter['enable'] = true
EOF

note "... modifiers, and -v details each one"
WANT="FILE:1:3: note: ignoring gitlab_rails: not managed by this build
    gitlab_rails['ldap_enabled'] = true unless node['fqdn'].nil?
    ^
FILE:2:1: note: ignoring external_url: not managed by this build
  external_url 'https://gitlab.example.com' if ENV['GITLAB_HOST'] == 'a'
  ^
FILE: warning: ignoring 2 Omnibus settings this build does not manage: external_url, gitlab_rails"
accepted -v <<'EOF'
  gitlab_rails['ldap_enabled'] = true unless node['fqdn'].nil?
external_url 'https://gitlab.example.com' if ENV['GITLAB_HOST'] == 'a'
EOF

note "... case/when"
WANT="FILE: warning: ignoring 1 Omnibus setting this build does not manage: nginx (-v: each one)"
accepted <<'EOF'
case node['hostname']
when 'x' then nginx['listen_port'] = 81
when 'y', 'z'
  nginx['listen_port'] = 82
else
  nginx['listen_port'] = 80
end
EOF

note "a managed setting inside a condition: refused at the condition, naming it and its line"
golden "2:1: error: gitlab-ctl does not evaluate conditions: gitlab_exporter['listen_port'] (line 4) is set inside 'if': write the value this host needs as a plain assignment, outside any condition" <<'EOF'
gitlab_rails['time_zone'] = 'UTC'
if node['fqdn'] == 'db1'
  gitlab_rails['smtp_enable'] = true
  gitlab_exporter['listen_port'] = 9200
end
EOF
golden "1:32: error: gitlab-ctl does not evaluate conditions: node_exporter['enable'] (line 1) is set inside 'unless': write the value this host needs as a plain assignment, outside any condition" <<'EOF'
node_exporter['enable'] = true unless ENV['NO_METRICS']
EOF
golden "1:1: error: gitlab-ctl does not evaluate conditions: postgresql['port'] (line 3) is set inside 'case': write the value this host needs as a plain assignment, outside any condition" <<'EOF'
case node['hostname']
when 'db1'
  postgresql['port'] = 5433
end
EOF

note "an 'if' without its 'end', an 'end' without its 'if'"
golden "2:1: error: 'if' has no matching 'end': add 'end' after its last statement" <<'EOF'
gitlab_exporter['enable'] = true
if ENV['GITLAB_HOST'] == 'a'
  gitlab_rails['smtp_enable'] = true
EOF
golden "3:1: error: unexpected 'end'" <<'EOF'
gitlab_rails['smtp_enable'] = true unless ENV['X']
  gitlab_rails['smtp_port'] = 25
end
EOF

note "Ruby the parser cannot skip keeps its error, naming the keyword"
golden "2:3: error: 'while' is not supported in gitlab.rb: conditions are not evaluated; write the settings this host needs as plain assignments" <<'EOF'
if ENV['X']
  while true
  end
end
EOF
golden "2:44: error: blocks ('do ... end') are not supported in gitlab.rb" <<'EOF'
case ENV['X']
when 'a' then gitlab_rails['x'] = [1].each do |y|
end
end
EOF

note "... and the refusal does not echo a modifier's line that may hold a secret"
golden "1:57: error: gitlab-ctl does not evaluate conditions: gitlab_exporter['env'] (line 1) is set inside 'if': write the value this host needs as a plain assignment, outside any condition" <<'EOF'
gitlab_exporter['env'] = { 'API_TOKEN' => 'VALSECRET' } if ENV['X']
EOF
lacks "$ERR" VALSECRET
