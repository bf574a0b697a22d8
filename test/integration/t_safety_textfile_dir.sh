#!/bin/sh
# issue 29 row 3 (textfile_collector): node-exporter's account replaces the textfile_collector
# directory in its home with a symlink, a fifo or a file. reconfigure then fails node-exporter
# only, naming the path: it does not follow the link, does not stall on the fifo, and the rest
# of the batch is published (a pending gitlab-exporter change is applied).
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || exit 77
[ -x /usr/bin/prometheus-node-exporter ] || exit 77
E=$(free_port)
N=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
YML=$T_ROOT/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml
TC=$T_ROOT/var/opt/gitlab/node-exporter/textfile_collector
mkdir -p "$T_ROOT/etc/gitlab"
write_rb() {
	{
		only_services gitlab_exporter node_exporter
		echo "gitlab_exporter['listen_address'] = '127.0.0.1'"
		echo "gitlab_exporter['listen_port'] = $E"
		echo "node_exporter['enable'] = true"
		echo "node_exporter['listen_address'] = '127.0.0.1:$N'"
		echo "gitlab_exporter['memory_threshold'] = $1"
	} >"$RB"
}
write_rb 700
expect_rc 0 ctl reconfigure
[ -d "$TC" ] && [ ! -L "$TC" ] || fail "no textfile_collector directory"
acct=$(stat -c %U "$TC")
mkdir -p "$T_ROOT/elsewhere"

n=701
for kind in symlink fifo file; do
	rm -rf "$TC"
	case $kind in
	symlink) ln -s "$T_ROOT/elsewhere" "$TC" ;;
	fifo) mkfifo "$TC" ;;
	file) echo planted >"$TC" ;;
	esac
	chown -h "$acct" "$TC"
	write_rb $n
	_rc=0
	timeout 120 "$GITLAB_CTL" --root "$T_ROOT" reconfigure >"$OUT" 2>"$ERR" || _rc=$?
	[ "$_rc" -ne 124 ] || fail "$kind: reconfigure stalled"
	[ "$_rc" -ne 0 ] || fail "$kind: reconfigure succeeded with node-exporter's directory replaced"
	grep -q "memory_threshold: $n\$" "$YML" ||
		fail "$kind: the gitlab-exporter change was not applied: $(cat "$ERR") $(grep memory_threshold "$YML")"
	has "$ERR" "node-exporter"
	has "$ERR" "$TC"
	lacks "$ERR" "cannot compare"
	[ -z "$(ls -A "$T_ROOT/elsewhere")" ] || fail "$kind: root wrote through the link"
	n=$((n + 1))
done
exit 0
