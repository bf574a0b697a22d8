#!/bin/sh
# Print the path of a Debian bookworm tarball holding what the gitlab-ctl package depends on,
# building it with mmdebstrap on the first call and reusing it after that. The cache key is the
# package list (and the suite), so a change of either builds a new tarball.
# usage: test/lifecycle/mkchroot.sh PACKAGE...
set -eu
cache=${GITLAB_CTL_TEST_CACHE:-/var/cache/gitlab-ctl-test}
suite=bookworm
mirror=${GITLAB_CTL_TEST_MIRROR:-http://deb.debian.org/debian}
pkgs=$(printf '%s\n' "$@" | sort -u | tr '\n' ',' | sed 's/,$//')
key=$(printf '%s %s %s\n' "$suite" "$mirror" "$pkgs" | sha256sum | cut -c1-16)
tarball=$cache/$suite-$key.tar
if [ -s "$tarball" ]; then
	echo "$tarball"
	exit 0
fi
command -v mmdebstrap >/dev/null || {
	echo "mkchroot: mmdebstrap is not installed (scripts/setup installs it)" >&2
	exit 1
}
mkdir -p "$cache"
# mmdebstrap picks the output format from the name: keep ".tar" last.
tmp=$cache/.tmp.$$.$suite-$key.tar
trap 'rm -f "$tmp"' EXIT
# A log per build: mmdebstrap's own output is long, the caller only needs it on failure.
if ! mmdebstrap --variant=apt --include="$pkgs" "$suite" "$tmp" "$mirror" \
	>"$cache/$suite-$key.log" 2>&1; then
	echo "mkchroot: mmdebstrap failed; last lines of $cache/$suite-$key.log:" >&2
	tail -n 20 "$cache/$suite-$key.log" >&2
	exit 1
fi
mv "$tmp" "$tarball"
trap - EXIT
echo "$tarball"
