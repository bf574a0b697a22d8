#!/bin/sh
# The gitlab.rb files README's "Many nodes" section shows pass check-config as they are, with
# the certificate files they name in place and the md5 hashes they leave to the operator
# filled in, without a warning: a key renamed or a check added later cannot leave the front door wrong.
. "$SRCDIR/test/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "# needs root (the accounts' readability checks)"; exit 77; }
chmod 755 "$T_ROOT"
mkdir -p "$T_ROOT/etc/gitlab/tls"
for _f in db1.pem db1.key ca.pem patroni.pem patroni.key; do
	echo x >"$T_ROOT/etc/gitlab/tls/$_f"
	chmod 644 "$T_ROOT/etc/gitlab/tls/$_f"
done
HASH=md5$(printf 'secretgitlab' | md5sum | cut -c1-32)
awk '/^## Many nodes/ { on = 1; next } /^## / { on = 0 }
	on && /^```ruby$/ { n++; f = sprintf("%s/ex%d.rb", dir, n); inb = 1; next }
	inb && /^```$/ { inb = 0; close(f); next }
	inb { print > f }' dir="$T_ROOT" "$SRCDIR/README.md"
n=0
for _rb in "$T_ROOT"/ex*.rb; do
	[ -f "$_rb" ] || fail "no gitlab.rb example in README's Many nodes section"
	n=$((n + 1))
	sed "s/<gitlab-ctl pg-password-md5 gitlab>/$HASH/" "$_rb" >"$T_ROOT/etc/gitlab/gitlab.rb"
	chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
	out=$(ctl check-config 2>&1) || fail "README example $n does not pass check-config: $out"
	printf '%s\n' "$out" | tail -1 | grep -q ' 0 warnings)$' || fail "README example $n warns: $out"
	note "example $n: $(printf '%s\n' "$out" | tail -1)"
done
[ "$n" -ge 3 ] || fail "only $n examples in README's Many nodes section"
echo ok
