#!/bin/sh
# In a container gitlab-ctl is PID 1 (`exec --from-config` as the entrypoint), so a pid-named
# move-aside name is the same every start. The service account plants
# .gitlab-exporter.yml.moved-aside.1 and a directory at gitlab-exporter.yml in its home (a
# volume: here a tmpfs of its own, so the root's var/ is on another file system): the start
# must still write the YAML and run the command, and the account's directory is kept beside
# it under a random name. Runs in a new pid and mount namespace (unshare). Needs root.
. "$SRCDIR/test/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v unshare >/dev/null || fail "unshare (util-linux) is needed"

PORT=$(free_port)
HOME_DIR=$T_ROOT/srv/exporter
YML=$HOME_DIR/gitlab-exporter.yml
CONFIG=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab" "$HOME_DIR" "$T_ROOT/opt/gitlab/var"
cat >"$CONFIG" <<EOF
gitlab_exporter['home'] = '$HOME_DIR'
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT
user['username'] = 'nobody'
user['group'] = 'nogroup'
$(only_services gitlab_exporter)
EOF
chmod 600 "$CONFIG"
chown nobody:nogroup "$HOME_DIR"
chmod 750 "$HOME_DIR"
as_nobody() { runuser -u nobody -- "$@"; }

# start: the entrypoint as PID 1 of a new pid namespace, the home a volume (tmpfs), and
# instead of the exporter the account shows the YAML it was given.
start() {
	export GITLAB_CTL T_ROOT CONFIG HOME_DIR YML
	unshare --pid --fork --mount-proc sh -c '
		mount -t tmpfs -o mode=0750,uid=$(id -u nobody),gid=$(id -g nobody) vol "$HOME_DIR" &&
		runuser -u nobody -- sh -c "$1" &&
		exec "$GITLAB_CTL" --root "$T_ROOT" exec gitlab-exporter --from-config -c "$CONFIG" \
			-- sh -c "echo pid \$\$; cat \"$YML\"; ls -A \"$HOME_DIR\""' sh "$1"
}

note "planted: .gitlab-exporter.yml.moved-aside.1 (and a directory at the YAML)"
out=$(start 'cd "$HOME_DIR" && : >.gitlab-exporter.yml.moved-aside.1 &&
	mkdir .gitlab-exporter.yml.moved-aside.2 && mkdir gitlab-exporter.yml &&
	echo mine >gitlab-exporter.yml/data' 2>&1) || fail "the start failed: $out"
printf '%s\n' "$out" | grep -q "^replace directory $YML with file" || fail "not said: $out"
printf '%s\n' "$out" | grep -q "^moved the directory at $YML to $HOME_DIR/\.gitlab-exporter\.yml\.moved-aside\.[A-Za-z0-9]\{6\}$" ||
	fail "not moved beside the file under a random name: $out"
printf '%s\n' "$out" | grep -q "listen_port: $PORT\|port: $PORT" || fail "the YAML was not written: $out"
printf '%s\n' "$out" | grep -qx "pid 1" || fail "not PID 1: $out"
printf '%s\n' "$out" | grep -qx ".gitlab-exporter.yml.moved-aside.1" || fail "the planted file is gone: $out"
[ ! -e "$T_ROOT/opt/gitlab/var/moved-aside" ] || [ -z "$(ls -A "$T_ROOT/opt/gitlab/var/moved-aside")" ] ||
	fail "moved across file systems: $(ls -A "$T_ROOT/opt/gitlab/var/moved-aside")"
note "$(printf '%s\n' "$out" | grep '^moved')"
