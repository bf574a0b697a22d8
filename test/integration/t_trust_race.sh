# t_trust's item 2 (a hard-linked config) in its race form: while reconfigure runs, the
# service account keeps swapping its config between a same-content copy of mode 0644 (so
# that a mode fix is due) and a hard link to another account's file. Root must never chmod or chown that
# file. Bounded: a fixed number of reconfigure runs. Needs root.
. "$SRCDIR/test/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
id git >/dev/null 2>&1 || useradd --system --user-group --no-create-home git 2>/dev/null ||
	id git >/dev/null || fail "no git account"

OUT=$(mktemp -d /tmp/gitlab-ctl-race-out.XXXXXX)
SWAPPER=""
trap '_r=$?; set +e; [ -n "$SWAPPER" ] && kill "$SWAPPER" 2>/dev/null; rm -rf "$OUT"; (exit $_r); t_cleanup' EXIT
chmod 755 "$OUT"
H=$T_ROOT/var/opt/gitlab/gitlab-exporter
YML=$H/gitlab-exporter.yml
RB=$T_ROOT/etc/gitlab/gitlab.rb
mkdir -p "$T_ROOT/etc/gitlab"
printf "gitlab_exporter['listen_address'] = '127.0.0.1'\ngitlab_exporter['listen_port'] = %s\n%s\n" \
	"$(free_port)" "$(only_services gitlab_exporter)" >"$RB"
chmod 600 "$RB"
out=$(ctl reconfigure 2>&1) || fail "reconfigure: $out"

# The victim: another account's file that git may hard-link (read-write for it, so
# fs.protected_hardlinks allows the link), with the config's content.
cp "$YML" "$OUT/victim"
chown nobody "$OUT/victim"
chmod 666 "$OUT/victim"
before=$(stat -c '%a %u:%g' "$OUT/victim")
cp "$YML" "$H/.good" && chown git "$H/.good"

# The swapper, as git, until the stop file appears (and killed by pid on exit).
runuser -u git -- sh -c '
	while [ ! -e "$1/stop" ]; do
		cp "$2/.good" "$2/.c" && chmod 644 "$2/.c" && mv -f "$2/.c" "$3"
		ln -f "$1/victim" "$2/.l" && mv -f "$2/.l" "$3"
	done' swapper "$OUT" "$H" "$YML" &
SWAPPER=$!

runs=0
while [ "$runs" -lt 8 ]; do
	ctl reconfigure >"$T_ROOT/out" 2>&1 || fail "reconfigure $runs failed: $(cat "$T_ROOT/out")"
	runs=$((runs + 1))
	[ "$(stat -c '%a %u:%g' "$OUT/victim")" = "$before" ] ||
		fail "run $runs chmodded or chowned the victim: $(stat -c '%a %U:%G' "$OUT/victim")"
done
touch "$OUT/stop"
wait_gone "$SWAPPER" 100 || kill "$SWAPPER"
SWAPPER=""
note "$runs reconfigure runs against the swapper; the victim kept $before"
