# The parsed catalog is kept in <install>/var/catalog.cache: written by a run over an unchanged
# catalog (root's, 0600), reused (not rewritten) by the next; a catalog with errors is reported
# at file:line and never cached; a cache that is a link, another account's or truncated is
# ignored and replaced by root's own, the link's target untouched.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out
ERR=$T_ROOT/err
VAR=$T_ROOT/opt/gitlab/var
CACHE=$VAR/catalog.cache
mkdir -p "$T_ROOT/etc/gitlab" "$VAR"
chmod 755 "$VAR"
{ echo "gitlab_exporter['listen_port'] = 9168"; only_services gitlab_exporter; } >"$T_ROOT/etc/gitlab/gitlab.rb"
# The installed catalog (the checkout's may sit in a directory the service accounts cannot
# enter): a file changed in the last two seconds is never cached, so wait until the install's
# files are older than that.
OLD_DATA=$GITLAB_CTL_DATADIR
settled() { [ -z "$(find "$OLD_DATA/sv" -newerct '3 seconds ago' -print -quit)" ]; }
until_true 100 settled || fail "the installed catalog keeps changing"
inode() { stat -c %i "$CACHE"; }

note "first run writes the cache, the second reuses it"
expect_rc 0 ctl check-config
[ -f "$CACHE" ] && [ ! -L "$CACHE" ] || fail "no cache written"
[ "$(stat -c '%a %u' "$CACHE")" = "600 0" ] || fail "cache mode/owner: $(stat -c '%a %u' "$CACHE")"
I1=$(inode)
expect_rc 0 ctl check-config
has "$OUT" "gitlab.rb OK"
[ "$(inode)" = "$I1" ] || fail "a hit rewrote the cache"

note "a broken catalog: the error at its file:line, and nothing cached"
cp -R "$OLD_DATA" "$T_ROOT/data"
GITLAB_CTL_DATADIR=$T_ROOT/data
printf 'nonsense = 1;\n' >>"$T_ROOT/data/sv/redis.conf"
expect_rc 1 ctl check-config
has "$ERR" "$T_ROOT/data/sv/redis.conf:"
has "$ERR" "unknown key 'nonsense'"
expect_rc 1 ctl check-config # the error again, from a parse
has "$ERR" "unknown key 'nonsense'"
[ "$(inode)" = "$I1" ] || fail "a catalog with errors was cached"
GITLAB_CTL_DATADIR=$OLD_DATA

note "a link in its place: not followed, replaced; its target untouched"
cp "$CACHE" "$T_ROOT/decoy"
rm "$CACHE"
ln -s "$T_ROOT/decoy" "$CACHE"
expect_rc 0 ctl check-config
[ -f "$CACHE" ] && [ ! -L "$CACHE" ] || fail "the link is still there"
cmp -s "$CACHE" "$T_ROOT/decoy" || fail "replaced by something else than the same cache"
[ "$(stat -c %h "$T_ROOT/decoy")" = 1 ] || fail "decoy linked"

note "another account's cache: ignored and replaced by root's"
chown 65534:65534 "$CACHE"
expect_rc 0 ctl check-config
[ "$(stat -c %u "$CACHE")" = 0 ] || fail "foreign cache kept"

note "a truncated cache: ignored and written whole again"
SIZE=$(stat -c %s "$CACHE")
truncate -s $((SIZE / 2)) "$CACHE"
expect_rc 0 ctl check-config
has "$OUT" "gitlab.rb OK"
[ "$(stat -c %s "$CACHE")" = "$SIZE" ] || fail "truncated cache not rewritten"
