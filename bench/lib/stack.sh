# bench/lib/stack.sh: sourced by the benches of the full single-node stack (every service
# Omnibus runs by default, from an empty gitlab.rb): a network namespace of its own for the
# defaults' fixed ports, fresh roots, and stopping their runsvdir wrapper by its pid.
# The sourcing script sets STACK_NAME and runs from the checkout's top directory.

stack_require() {
	[ "$(id -u)" = 0 ] || { echo "bench/$STACK_NAME: run as root" >&2; exit 1; }
	command -v strace >/dev/null || { echo "bench/$STACK_NAME: needs strace (sh scripts/setup)" >&2; exit 1; }
}

# stack_netns_up: inside `unshare -n`, the loopback the services listen on.
stack_netns_up() { ip link set lo up; }

# stack_new_root: a fresh root in $R with an empty gitlab.rb, registered for stack_cleanup.
STACK_ROOTS=""
stack_new_root() {
	R=$(mktemp -d "/tmp/gitlab-ctl-bench-$STACK_NAME.XXXXXX")
	chmod 755 "$R"
	mkdir -p "$R/etc/gitlab"
	: >"$R/etc/gitlab/gitlab.rb"
	STACK_ROOTS="$STACK_ROOTS $R"
}

# stack_stop_root ROOT: TERM to the wrapper from its pidfile (it stops services and logs),
# wait up to 30 s, remove the root.
stack_stop_root() {
	_w=$(head -n1 "$1/opt/gitlab/var/runsvdir.pid" 2>/dev/null || true)
	[ -n "$_w" ] && kill -TERM "$_w" 2>/dev/null || true
	_n=0
	while [ -n "$_w" ] && kill -0 "$_w" 2>/dev/null && [ $_n -lt 300 ]; do sleep 0.1; _n=$((_n + 1)); done
	rm -rf "$1"
}

stack_cleanup() {
	set +e
	for _r in $STACK_ROOTS; do [ -d "$_r" ] && stack_stop_root "$_r"; done
}
