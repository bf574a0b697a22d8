# . netns.sh, before lib.sh: the test runs again in a network namespace of its own (loopback
# up), so the fixed ports of Omnibus' defaults are its alone. Where it cannot (not root, no
# unshare or ip): exit 77, or, with T_NETNS_OPTIONAL=1, go on in the machine's namespace.
if [ -z "${T_NETNS:-}" ]; then
	_nn=""
	[ "$(id -u)" = 0 ] || _nn="a network namespace needs root"
	[ -n "$_nn" ] || { command -v unshare >/dev/null && command -v ip >/dev/null; } || _nn="no unshare or ip"
	[ -n "$_nn" ] || unshare -n true 2>/dev/null || _nn="cannot make a network namespace here"
	[ -n "$_nn" ] || T_NETNS=1 exec unshare -n sh "$0" "$@"
	[ -n "${T_NETNS_OPTIONAL:-}" ] || { echo "SKIP: $_nn"; exit 77; }
else
	ip link set lo up || { echo "FAIL: cannot bring lo up in the namespace" >&2; exit 1; }
fi
