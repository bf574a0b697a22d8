# The installed copy of gitlab-ctl every integration test of a ctest run uses (the ctest fixture
# "installed", CMakeLists.txt): one `cmake --install` into a fresh, world-traversable directory
# (the checkout may sit in one the service accounts cannot enter), its path written to
# $BUILDDIR/test-install.path for lib.sh. Installs earlier runs made are removed once they are
# three hours old: a run still going in this build tree keeps the one it started with.
set -eu
: "${BUILDDIR:?run under ctest}"
LIST=$BUILDDIR/test-installs
if [ -f "$LIST" ]; then
	: >"$LIST.new"
	while read -r d; do
		case $d in /tmp/gitlab-ctl-install.??????) ;; *) continue ;; esac
		[ -d "$d" ] && [ ! -L "$d" ] || continue
		if [ -n "$(find "$d" -maxdepth 0 -mmin +180)" ]; then rm -rf "$d"; else echo "$d" >>"$LIST.new"; fi
	done <"$LIST"
	mv "$LIST.new" "$LIST"
fi
D=$(mktemp -d /tmp/gitlab-ctl-install.XXXXXX)
chmod 755 "$D"
echo "$D" >>"$LIST"
cmake --install "$BUILDDIR" --prefix "$D/usr" --component Unspecified >"$D/install.log" 2>&1 ||
	{ cat "$D/install.log" >&2; echo "FAIL: cmake --install" >&2; exit 1; }
echo "$D" >"$BUILDDIR/test-install.path.new"
mv "$BUILDDIR/test-install.path.new" "$BUILDDIR/test-install.path"
echo "# installed into $D/usr"
