# `cmake --install build --prefix DIR`, as the README says, writes nothing outside DIR (and
# DESTDIR): checked with a DESTDIR, so that even a regression writes only below the test's
# root and never the host's /opt/gitlab. The configured prefix (a package build) still gets
# the embedded/bin link, under DESTDIR.
. "$SRCDIR/test/integration/lib.sh"
: "${BUILDDIR:?run under ctest}"

D=$T_ROOT/dest
DESTDIR=$D cmake --install "$BUILDDIR" --prefix /gitlab-ctl-prefix >"$T_ROOT/log" 2>&1 ||
	{ cat "$T_ROOT/log"; fail "cmake --install failed"; }
outside=$(cd "$D" && find . ! -type d | grep -v '^\./gitlab-ctl-prefix/' || true)
[ -z "$outside" ] || fail "--prefix wrote outside it: $outside"
grep -q "Skipping: $D/opt/gitlab/embedded/bin/gitlab-exporter" "$T_ROOT/log" ||
	fail "no word on the skipped link: $(cat "$T_ROOT/log")"
[ -x "$D/gitlab-ctl-prefix/bin/gitlab-ctl" ] || fail "no binary under the prefix"

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILDDIR/CMakeCache.txt")
rm -rf "$D"
DESTDIR=$D cmake --install "$BUILDDIR" >"$T_ROOT/log" 2>&1 || { cat "$T_ROOT/log"; fail "install failed"; }
[ -L "$D/opt/gitlab/embedded/bin/gitlab-exporter" ] ||
	fail "the configured prefix ($prefix) lost the embedded link: $(cat "$T_ROOT/log")"
echo ok
