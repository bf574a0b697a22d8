# alertmanager['admin_email'] mails through GitLab's SMTP settings, as Omnibus derives them
# (monitoring/libraries/prometheus.rb): without gitlab_rails['smtp_*'] check-config refuses
# at the admin_email line naming gitlab_rails['smtp_address'] (amtool: no global SMTP
# smarthost), before reconfigure; with them the published alertmanager.yml has the global
# smtp_smarthost (address:port), smtp_from, the login's username and password, and the
# default receiver's email_configs; alertmanager['global'] keys win; amtool passes it and
# Alertmanager serves with it. gitlab_rails' SMTP keys are read, not "ignored".
. "$SRCDIR/test/integration/lib.sh"

for b in /usr/bin/amtool /usr/bin/prometheus-alertmanager; do
	[ -x "$b" ] || { echo "SKIP: $b missing (scripts/setup installs it)"; exit 77; }
done
OUT=$T_ROOT/out
ERR=$T_ROOT/err
RB=$T_ROOT/etc/gitlab/gitlab.rb
AMYML=$T_ROOT/var/opt/gitlab/alertmanager/alertmanager.yml
mkdir -p "$T_ROOT/etc/gitlab"
A=$(free_port)
{
	only_services alertmanager
	echo "alertmanager['enable'] = true"
	echo "alertmanager['listen_address'] = 'localhost:$A'"
	echo "alertmanager['admin_email'] = 'ops@example.com'"
} >"$RB"
L=$(grep -n admin_email "$RB" | cut -d: -f1)

note "admin_email without SMTP settings: refused at its line, with the gitlab_rails keys to set"
expect_rc 1 ctl check-config
has "$ERR" "$RB:$L: error: alertmanager['admin_email']: amtool refuses the alertmanager.yml rendered with it: no global SMTP smarthost set; set gitlab_rails['smtp_enable'] = true and gitlab_rails['smtp_address']"
expect_rc 1 ctl check-config --json
has "$OUT" "\"hint\": \"set gitlab_rails['smtp_enable'] = true and gitlab_rails['smtp_address']"
expect_rc 1 ctl reconfigure
has "$ERR" "$RB:$L: error: alertmanager['admin_email']"
has "$ERR" "nothing was written"

note "smtp_enable without gitlab_email_from: the from address is named"
echo "gitlab_rails['smtp_enable'] = true" >>"$RB"
echo "gitlab_rails['smtp_address'] = 'smtp.example.com'" >>"$RB"
expect_rc 1 ctl check-config
has "$ERR" "$RB:$L: error: alertmanager['admin_email']: amtool refuses the alertmanager.yml rendered with it: no global SMTP from set; set gitlab_rails['gitlab_email_from']"

note "GitLab's SMTP settings: the receiver mails through them"
cat >>"$RB" <<'EOF'
gitlab_rails['smtp_port'] = 465
gitlab_rails['smtp_user_name'] = "smtp user"
gitlab_rails['smtp_password'] = "Sm7pPassw0rd"
gitlab_rails['smtp_authentication'] = "login"
gitlab_rails['gitlab_email_from'] = 'gitlab@example.com'
EOF
expect_rc 0 ctl check-config
has "$OUT" "gitlab.rb OK"
lacks "$ERR" "gitlab_rails" # read, not an ignored Omnibus setting
expect_rc 0 ctl reconfigure
lacks "$OUT" "Sm7pPassw0rd"
lacks "$ERR" "Sm7pPassw0rd"
yaml() { ruby -ryaml -e 'd = YAML.load_file(ARGV[0]); '"$1" "$AMYML"; }
yaml 'g = d["global"]; exit 1 unless g["smtp_smarthost"] == "smtp.example.com:465" &&
	g["smtp_from"] == "gitlab@example.com" && g["smtp_auth_username"] == "smtp user" &&
	g["smtp_auth_password"] == "Sm7pPassw0rd"' || fail "global SMTP: $(cat "$AMYML")"
yaml 'r = d["receivers"].find { |x| x["name"] == d["route"]["receiver"] };
	exit 1 unless r["email_configs"] == [{ "to" => "ops@example.com" }]' ||
	fail "default receiver: $(cat "$AMYML")"
amtool check-config "$AMYML" >"$OUT" 2>&1 || { cat "$OUT" >&2; fail "amtool check-config"; }
ready() { curl -fsS --max-time 2 -u "$(mon_auth)" "http://localhost:$A/-/ready" >/dev/null 2>&1; }
until_true 100 ready || fail "alertmanager not ready with the SMTP settings"

note "alertmanager['global'] wins over gitlab_rails; authentication other than login/plain sends none"
echo "alertmanager['global'] = { 'smtp_smarthost' => 'relay.example.com:25' }" >>"$RB"
echo "gitlab_rails['smtp_authentication'] = 'cram_md5'" >>"$RB"
expect_rc 0 ctl reconfigure
yaml 'g = d["global"]; exit 1 unless g["smtp_smarthost"] == "relay.example.com:25" &&
	g["smtp_from"] == "gitlab@example.com" && !g.key?("smtp_auth_password")' ||
	fail "global SMTP merged: $(cat "$AMYML")"
