#!/bin/sh
# issue 29 row 3 (rules/): Prometheus' account renames root's rules/ in its home and makes its
# own with a bad zz.rules and a fifo yy.rules. Root renders the rule and target files into its
# own directory (<install>/etc/prometheus, outside the home), prometheus.yml names only that,
# so promtool validates exactly what root rendered: a new prometheus.yml is still published, without
# stalling, and a pending gitlab-exporter change is applied.
. "$SRCDIR/test/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || exit 77
[ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ] || exit 77
E=$(free_port)
P=$(free_port)
RB=$T_ROOT/etc/gitlab/gitlab.rb
OUT=$T_ROOT/out
ERR=$T_ROOT/err
HOME_P=$T_ROOT/var/opt/gitlab/prometheus
YML=$T_ROOT/var/opt/gitlab/gitlab-exporter/gitlab-exporter.yml
mkdir -p "$T_ROOT/etc/gitlab"
write_rb() {
	{
		only_services gitlab_exporter prometheus
		echo "gitlab_exporter['listen_address'] = '127.0.0.1'"
		echo "gitlab_exporter['listen_port'] = $E"
		echo "prometheus['enable'] = true"
		echo "prometheus['listen_address'] = '127.0.0.1:$P'"
		echo "prometheus['scrape_targets'] = [ { 'targets' => ['127.0.0.1:9'] } ]"
		echo "gitlab_exporter['memory_threshold'] = $1"
		echo "prometheus['scrape_interval'] = $2"
	} >"$RB"
}
write_rb 700 15
expect_rc 0 ctl reconfigure
acct=$(stat -c %U "$HOME_P")

# What the account can do in its home: rename whatever is there, plant its own rules/.
[ -e "$HOME_P/rules" ] && mv "$HOME_P/rules" "$HOME_P/rules.root"
mkdir "$HOME_P/rules" "$HOME_P/targets.new"
printf 'groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: "((("\n' >"$HOME_P/rules/zz.rules"
mkfifo "$HOME_P/rules/yy.rules"
chown -R "$acct" "$HOME_P/rules" "$HOME_P/targets.new"

write_rb 701 16  # a new prometheus.yml: promtool checks it
_rc=0
timeout 120 "$GITLAB_CTL" --root "$T_ROOT" reconfigure >"$OUT" 2>"$ERR" || _rc=$?
[ "$_rc" -ne 124 ] || fail "reconfigure stalled on the fifo"
[ "$_rc" -eq 0 ] || { cat "$OUT" "$ERR" >&2; fail "reconfigure failed ($_rc) after the account planted rules"; }
grep -q "memory_threshold: 701\$" "$YML" || fail "the gitlab-exporter change was not applied"
grep -q "scrape_interval: 16s" "$HOME_P/prometheus.yml" || fail "the new prometheus.yml was not published"
# prometheus.yml names root's rule and target files only, all of them root-owned.
ruby -ryaml -e 'd = YAML.load_file(ARGV[0])
	files = d["rule_files"] + d["scrape_configs"].flat_map { |j| (j["file_sd_configs"] || []).flat_map { |f| f["files"] } }
	bad = files.select { |f| f.start_with?(ARGV[1] + "/") }
	abort "in the home: #{bad}" unless bad.empty?
	abort "no rule files" if d["rule_files"].empty?' "$HOME_P/prometheus.yml" "$HOME_P" ||
	fail "prometheus.yml names files in the account's home"
for f in "$T_ROOT/opt/gitlab/etc/prometheus/rules/gitlab-ctl.rules" "$T_ROOT/opt/gitlab/etc/prometheus/targets/gitlab-rb.yml"; do
	[ "$(stat -c %U "$f")" = root ] || fail "$f is not root's"
	[ "$(stat -c %U "$(dirname "$f")")" = root ] || fail "$(dirname "$f") is not root's"
done
exit 0
