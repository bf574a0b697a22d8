#!/bin/sh
# cleanse finishes whatever an account made in its home: git builds a directory tree 1,000
# levels deep (rmtree used to stop at 256 and fail the whole cleanse), with a link to a
# directory outside at the bottom. cleanse --yes must remove all of it, follow no link (the
# victim outside is kept) and say it is done. Needs root.
. "$SRCDIR/test/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }

PORT=$(free_port)
H=$T_ROOT/var/opt/gitlab/gitlab-exporter
mkdir -p "$T_ROOT/etc/gitlab" "$T_ROOT/victim"
echo keep >"$T_ROOT/victim/file"
printf "gitlab_exporter['listen_address'] = '127.0.0.1'\ngitlab_exporter['listen_port'] = %s\n%s\n" \
	"$PORT" "$(only_services gitlab_exporter)" >"$T_ROOT/etc/gitlab/gitlab.rb"
chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
out=$(ctl reconfigure 2>&1) || fail "reconfigure: $out"

note "git makes a tree 1,000 levels deep in its home"
DEEP=$(awk 'BEGIN { for (i = 0; i < 1000; i++) printf "d/"; }')
runuser -u git -- sh -c 'cd "$1" && mkdir -p "$2" && cd "$2" && echo x >f && ln -s "$3" victim' \
	sh "$H" "$DEEP" "$T_ROOT/victim" || fail "git could not build the tree"
[ "$(find "$H/d" -type d | wc -l)" = 1000 ] || fail "the tree is not 1000 deep"

out=$(ctl cleanse --yes 2>&1) || fail "cleanse did not finish: $(printf '%s\n' "$out" | tail -n 5)"
printf '%s\n' "$out" | grep -q "^gitlab-ctl cleansed" || fail "not said: $out"
[ ! -e "$T_ROOT/var/opt/gitlab" ] || fail "the data directory is left: $(find "$T_ROOT/var/opt/gitlab" | head -n 3)"
[ "$(cat "$T_ROOT/victim/file")" = keep ] || fail "the link at the bottom was followed"
