#!/bin/sh
# Reproducible build: one source tree built in two build directories with different paths
# gives byte-identical gitlab-ctl binaries, and neither build path is left in them
# (-ffile-prefix-map in CMakeLists.txt; without it the debug info differs).
. "$SRCDIR/test/integration/lib.sh"

build() {
	mkdir -p "$1"
	cmake -S "$SRCDIR" -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
		>"$T_ROOT/log" 2>&1 || { cat "$T_ROOT/log"; fail "configure in $1"; }
	cmake --build "$1" -j2 --target gitlab-ctl >>"$T_ROOT/log" 2>&1 ||
		{ tail -n 40 "$T_ROOT/log"; fail "build in $1"; }
}

b1=$T_ROOT/b1
b2=$T_ROOT/another/build/directory/with/a/longer/path
build "$b1"
build "$b2"

cmp "$b1/gitlab-ctl" "$b2/gitlab-ctl" || fail "the two builds differ"
for dir in "$T_ROOT" "$SRCDIR"; do
	if grep -q -a -F "$dir" "$b1/gitlab-ctl"; then
		fail "build path $dir is recorded in the binary"
	fi
done
# The binary carries debug info, so the comparison above covered it.
readelf -S "$b1/gitlab-ctl" | grep -q debug_info || fail "expected a build with debug info"
echo "ok: two builds are identical ($(wc -c <"$b1/gitlab-ctl") bytes)"
