#!/bin/sh
# The package's whole life on a Debian host, in a throwaway system that leaves this machine as it
# found it: build the .deb twice (the second a newer version whose run template changed), unpack
# a cached Debian bookworm tarball (test/lifecycle/mkchroot.sh, made by mmdebstrap on the first
# run) into the test's root, and run test/lifecycle/scenario.sh chrooted there as pid 1 of new
# pid and mount namespaces: every process in it dies with the namespace, and its mounts (proc,
# dev, run, tmp) are never seen outside. The scenario installs with apt-get, reconfigures the
# default paths, removes, reinstalls, upgrades, and purges (see it for the assertions).
# Needs root, unshare (util-linux) and mmdebstrap (scripts/setup); the first run also needs
# Debian's mirror. A missing piece FAILS the test, saying which: it never skips.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" = 0 ] || fail "t_lifecycle needs root (dpkg in a chroot, namespaces)"
command -v unshare >/dev/null || fail "unshare (util-linux) is not installed"
command -v mmdebstrap >/dev/null || fail "mmdebstrap is not installed: run scripts/setup"
command -v dpkg-buildflags >/dev/null || fail "dpkg-dev is not installed"
command -v cpack >/dev/null || fail "cpack (cmake) is not installed"

R=$T_ROOT/chroot
# The mount namespace dies with its last process, taking its mounts with it; should one still
# show under $R, removing $R would reach into them: keep it and say so.
lc_cleanup() {
	_rc=$?
	set +e # the (exit) below must not end the trap under set -e
	if grep -q " $R" /proc/self/mounts 2>/dev/null; then
		echo "FAIL: mounts left under $R; not removing $T_ROOT" >&2
		exit 1
	fi
	(exit "$_rc")
	t_cleanup
}
trap lc_cleanup EXIT

t0=$(date +%s)
note "build the package from a copy of the tree, then a newer one with a changed run template"
SRC=$T_ROOT/src
BUILD=$T_ROOT/build-deb
mkdir -p "$SRC"
(cd "$SRCDIR" && tar --exclude='./build*' --exclude=./.git --exclude=./demo-root -cf - .) |
	(cd "$SRC" && tar -xf -)
sh "$SRC/contrib/debian/build-deb" "$BUILD" >"$T_ROOT/build.log" 2>&1 ||
	{ tail -n 40 "$T_ROOT/build.log"; fail "build-deb"; }
deb1=$(ls "$BUILD"/gitlab-ctl_*.deb)
[ -f "$deb1" ] || fail "no .deb in $BUILD"
mv "$deb1" "$T_ROOT/" && deb1=$T_ROOT/$(basename "$deb1")
version=$(dpkg-deb -f "$deb1" Version)
printf '# lifecycle test: package 2\n' >>"$SRC/templates/run"
sh "$SRC/contrib/debian/build-deb" "$BUILD" -DGITLAB_CTL_PACKAGE_VERSION="$version+lc2" \
	>>"$T_ROOT/build.log" 2>&1 || { tail -n 40 "$T_ROOT/build.log"; fail "build-deb 2"; }
deb2=$(ls "$BUILD"/gitlab-ctl_*+lc2_*.deb)
[ -f "$deb2" ] || fail "no second .deb in $BUILD"
dpkg --compare-versions "$(dpkg-deb -f "$deb2" Version)" gt "$version" || fail "deb2 is not newer"

note "the package's relations"
dep=$(dpkg-deb -f "$deb1" Depends)
depends_on() { printf '%s\n' "$dep" | tr ',' '\n' | sed 's/^ *//;s/ .*//' | grep -qx "$1"; }
for p in runit libjemalloc2 libconfig9 libbsd0 libc6 passwd ruby ruby-sinatra ruby-webrick ruby-pg \
	ruby-redis ruby-sidekiq ruby-connection-pool; do
	depends_on "$p" || fail "Depends lacks $p: $dep"
done
[ "$(dpkg-deb -f "$deb1" Conflicts)" = "gitlab-ce, gitlab-ee" ] || fail "Conflicts"
[ "$(dpkg-deb -f "$deb1" Replaces)" = "gitlab-ce, gitlab-ee" ] || fail "Replaces"
dpkg-deb -f "$deb1" Suggests | grep -q postgresql-15 || fail "Suggests lacks postgresql-15"
for s in postinst prerm postrm; do
	dpkg-deb -I "$deb1" "$s" >/dev/null 2>&1 || fail "the package has no $s"
done
t1=$(date +%s)

note "a Debian bookworm system with the package's dependencies (cached)"
# What apt would fetch for the package, so that the chroot installs it without the network, and
# curl, with which the scenario asks /metrics (the package itself needs no curl).
pkgs=$( (dpkg-deb -f "$deb1" Depends; echo ,; dpkg-deb -f "$deb1" Recommends; echo , curl) |
	tr ',' '\n' | sed 's/|.*//;s/(.*//;s/^ *//;s/ *$//' | grep -v '^$' | sort -u | tr '\n' ' ')
dpkg-deb -f "$deb1" Recommends Depends | grep -qw curl && fail "the package still wants curl"
# shellcheck disable=SC2086
tarball=$(sh "$SRCDIR/test/lifecycle/mkchroot.sh" $pkgs) || fail "cannot make the chroot (above)"
mkdir "$R"
tar -C "$R" -xf "$tarball" || fail "cannot unpack $tarball"
t2=$(date +%s)
mkdir -p "$R/lifecycle"
cp "$deb1" "$deb2" "$SRCDIR/test/lifecycle/scenario.sh" "$SRCDIR/test/lifecycle/fake-systemctl.sh" \
	"$R/lifecycle/"
port=$(free_port)

note "the scenario, chrooted, as pid 1 of its own pid and mount namespaces, with a clean env"
# shellcheck disable=SC2016
set +e
unshare --mount --pid --fork --propagation private --mount-proc="$R/proc" sh -c '
	set -e
	mount --rbind /dev "$1/dev"
	mount -t tmpfs -o mode=755 tmpfs "$1/run"
	mount -t tmpfs -o mode=1777 tmpfs "$1/tmp"
	exec chroot "$1" /usr/bin/env -i TERM=dumb /bin/sh /lifecycle/scenario.sh "$2" "$3" "$4"
	' sh "$R" \
	"/lifecycle/$(basename "$deb1")" "/lifecycle/$(basename "$deb2")" "$port"
rc=$?
set -e
t3=$(date +%s)
echo "# times: build $((t1 - t0)) s, chroot $((t2 - t1)) s, scenario $((t3 - t2)) s"
[ "$rc" = 0 ] || fail "the scenario failed (exit $rc)"
echo "ok: the package's life in a chroot"
