# Root never acts on what a service account controls. One section per numbered
# attack, in its deterministic form (the link, fifo or directory is in place before
# reconfigure runs), then stale temps, homes, and a trace showing that no command run
# with --root creates, chmods or chowns anything outside the root. Needs root.
. "$SRCDIR/test/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
id git >/dev/null 2>&1 || useradd --system --user-group --no-create-home git 2>/dev/null ||
	id git >/dev/null || fail "no git account"

# Files outside the root that attacks aim at; removed with the root.
OUT=$(mktemp -d /tmp/gitlab-ctl-trust-out.XXXXXX)
trap '_r=$?; set +e; rm -rf "$OUT"; (exit $_r); t_cleanup' EXIT
chmod 755 "$OUT"
as_git() { runuser -u git -- "$@"; }
# T_SOFT=1 (to check an older build by hand): report every failed check and go on.
if [ -n "${T_SOFT:-}" ]; then fail() { echo "FAIL: $*" | head -c 300 >&2; echo >&2; }; fi
H=$T_ROOT/var/opt/gitlab/gitlab-exporter
YML=$H/gitlab-exporter.yml
RB=$T_ROOT/etc/gitlab/gitlab.rb
PORT=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
# Two lines, every other service off on the second (the tests' own lines start at line 3).
good_rb() {
	cat >"$RB" <<EOF
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $PORT; $(only_services gitlab_exporter | paste -sd ';' -)
EOF
	chmod 600 "$RB"
}
mode_of() { stat -c '%a %U:%G %h %F' "$1"; }

# --- item 6: ".." in a path, symlinked directories inside the root ---------------------------
note "item 6: a home that climbs out of the root with .. is refused at its location"
mkdir "$OUT/shared" && chmod 1777 "$OUT/shared"
good_rb
echo "gitlab_exporter['home'] = \"$T_ROOT/var/opt/gitlab/../../../../..$OUT/shared\"" >>"$RB"
out=$(ctl check-config 2>&1) && fail "check-config accepted a home with ..: $out"
printf '%s\n' "$out" | grep -q "gitlab.rb:3:27: error: gitlab_exporter\['home'\] .*\"\.\.\"" ||
	fail "no located error for ..: $out"
out=$(ctl reconfigure 2>&1) && fail "reconfigure accepted a home with ..: $out"
[ "$(mode_of "$OUT/shared")" = "1777 root:root 2 directory" ] ||
	fail "a directory outside the root changed: $(mode_of "$OUT/shared")"
[ ! -e "$SV_DIR/gitlab-exporter" ] || fail "reconfigure wrote the tree before refusing"

note "item 6: a home outside the root is taken inside it"
good_rb
echo "gitlab_exporter['home'] = '$OUT/shared'" >>"$RB"
out=$(ctl show-config 2>&1) || fail "show-config: $out"
printf '%s\n' "$out" | grep -q "home = \"$T_ROOT$OUT/shared\";" || fail "home not inside the root: $out"

note "item 6: a symlinked directory below the root is not followed"
good_rb
mkdir -p "$T_ROOT/var/log" "$OUT/logs"
ln -s "$OUT/logs" "$T_ROOT/var/log/gitlab"
out=$(ctl check-config 2>&1) && fail "check-config accepted a symlinked log parent: $out"
printf '%s\n' "$out" | grep -q "$T_ROOT/var/log/gitlab is a symlink below the root" ||
	fail "the symlink is not named: $out"
out=$(ctl reconfigure 2>&1) && fail "reconfigure followed a symlinked directory: $out"
[ -z "$(ls -A "$OUT/logs")" ] || fail "reconfigure wrote through the symlink: $(ls -A "$OUT/logs")"
rm -rf "$T_ROOT/var/log/gitlab"

# --- item 1: a log directory (svlogd's config) inside the service's home ---------------------
note "item 1: log_directory inside the service account's home is refused"
good_rb
echo "gitlab_exporter['log_directory'] = \"$H/log\"" >>"$RB"
out=$(ctl check-config 2>&1) && fail "check-config accepted a log dir in the home: $out"
printf '%s\n' "$out" | grep -q "gitlab.rb:3:36: error: gitlab_exporter\['log_directory'\]: .*inside the home $H, which the account git owns" ||
	fail "no located error for the log dir: $out"
out=$(ctl reconfigure 2>&1) && fail "reconfigure accepted a log dir in the home: $out"
[ ! -e "$H" ] || fail "reconfigure wrote before refusing"

# --- item 4: an env_directory holding someone else's files ------------------------------------
note "item 4: an env directory with foreign files is refused before anything is written"
good_rb
ENV=$T_ROOT/opt/gitlab/etc/gitlab-exporter/env
mkdir -p "$ENV/sub"
echo keep >"$ENV/README"
echo keep >"$ENV/.hidden"
out=$(ctl check-config 2>&1) && fail "check-config accepted a foreign env dir: $out"
printf '%s\n' "$out" | grep -q "gitlab-exporter.conf:[0-9]*: error: gitlab_exporter\['env_directory'\]: $ENV holds .*, which gitlab-ctl did not write" ||
	fail "unclear error: $out"
out=$(ctl reconfigure 2>&1) && fail "reconfigure accepted a foreign env dir: $out"
printf '%s\n' "$out" | grep -q "$ENV holds .*, which gitlab-ctl did not write" || fail "unclear error: $out"
[ -f "$ENV/README" ] && [ -f "$ENV/.hidden" ] && [ -d "$ENV/sub" ] || fail "env dir contents lost"
[ ! -e "$SV_DIR/gitlab-exporter/run" ] || fail "half-applied: the run script was written"
rm -r "$ENV"

# --- a clean start, then item 7 (secrets) -----------------------------------------------------
note "the tree converges"
out=$(ctl reconfigure 2>&1) || fail "reconfigure: $out"
[ "$(mode_of "$H")" = "750 git:git 2 directory" ] || fail "home: $(mode_of "$H")"
[ "$(mode_of "$YML")" = "600 git:git 1 regular file" ] || fail "yml: $(mode_of "$YML")"
runuser -u nobody -- cat "$YML" >/dev/null 2>&1 && fail "another account can read the yml"

note "item 7: a secret setting is redacted by show-config and --diff"
SECRET='Bearer s3cr3t-value-7f1'
echo "gitlab_exporter['elasticsearch_authorization'] = '$SECRET'" >>"$RB"
out=$(ctl show-config 2>&1) || fail "show-config: $out"
printf '%s\n' "$out" | grep -q 'elasticsearch_authorization = "\[REDACTED\]";' || fail "not redacted: $out"
printf '%s\n' "$out" | grep -q "s3cr3t" && fail "show-config printed the secret"
ctl show-config --show-secrets | grep -q "$SECRET" || fail "--show-secrets hides it"
DD=$T_ROOT/datadir
mkdir -p "$DD" && cp -r "$SRCDIR/sv" "$SRCDIR/templates" "$SRCDIR/exporter" "$DD/"
printf 'elasticsearch:\n  authorization: {{yaml elasticsearch_authorization}}\n' \
	>>"$DD/templates/gitlab-exporter.yml"
out=$(GITLAB_CTL_DATADIR=$DD ctl reconfigure --dry-run 2>&1) || fail "dry run: $out"
printf '%s\n' "$out" | grep -q "s3cr3t" && fail "--dry-run printed the secret: $out"
printf '%s\n' "$out" | grep -q "^+  authorization: \[REDACTED\]$" || fail "not shown redacted: $out"
good_rb
echo "gitlab_exporter['elasticsearch_authorization'] = { 'h' => '$SECRET' }" >>"$RB"
out=$(ctl check-config 2>&1) && fail "check-config accepted a hash for a string"
printf '%s\n' "$out" | grep -q "gitlab.rb:3:50: error: .*must be a string" || fail "no error: $out"
printf '%s\n' "$out" | grep -q "s3cr3t" && fail "a diagnostic printed the secret: $out"
good_rb

# --- item 2: a hard link to a victim in place of the service's config ---------------------------
note "item 2: a hard-linked config is republished, the victim keeps its mode"
cp "$YML" "$OUT/victim" && chmod 644 "$OUT/victim"
rm "$YML" && ln "$OUT/victim" "$YML"
out=$(ctl reconfigure 2>&1) || fail "reconfigure: $out"
[ "$(stat -c %a "$OUT/victim")" = 644 ] || fail "the victim was chmodded: $(mode_of "$OUT/victim")"
[ "$(stat -c %U "$OUT/victim")" = root ] || fail "the victim was chowned"
[ "$(mode_of "$YML")" = "600 git:git 1 regular file" ] || fail "yml: $(mode_of "$YML")"
printf '%s\n' "$out" | grep -q "update file $YML (2 hard links: republished" || fail "not said: $out"

# --- items 3 and 5: a symlink, fifo or directory in place of the config ------------------------
echo "SECRET-ROOT-ONLY-LINE" >"$OUT/root-only" && chmod 600 "$OUT/root-only"
note "item 3/5: a symlink to a root-only file: --dry-run neither follows nor fails"
as_git sh -c "rm -f '$YML' && ln -s '$OUT/root-only' '$YML'"
out=$(ctl reconfigure --dry-run 2>&1) || fail "dry run blocked by a symlink: $out"
printf '%s\n' "$out" | grep -q SECRET-ROOT-ONLY && fail "--dry-run read through the symlink: $out"
printf '%s\n' "$out" | grep -q "^replace symlink $YML with file" || fail "not said: $out"
out=$(ctl reconfigure --diff 2>&1) || fail "reconfigure blocked by a symlink: $out"
printf '%s\n' "$out" | grep -q SECRET-ROOT-ONLY && fail "--diff read through the symlink: $out"
[ "$(mode_of "$YML")" = "600 git:git 1 regular file" ] || fail "yml: $(mode_of "$YML")"
[ "$(mode_of "$OUT/root-only")" = "600 root:root 1 regular file" ] || fail "target changed"
[ "$(cat "$OUT/root-only")" = SECRET-ROOT-ONLY-LINE ] || fail "target written"

note "item 3/5: a fifo: reconfigure neither blocks nor fails"
as_git sh -c "rm -f '$YML' && mkfifo '$YML'"
out=$(timeout 120 "$GITLAB_CTL" --root "$T_ROOT" reconfigure --diff 2>&1) ||
	fail "reconfigure blocked or failed on a fifo: $out"
printf '%s\n' "$out" | grep -q "^replace fifo $YML with file" || fail "not said: $out"
[ "$(mode_of "$YML")" = "600 git:git 1 regular file" ] || fail "yml: $(mode_of "$YML")"

note "item 5: a directory in the account's home is moved aside, not deleted"
as_git sh -c "rm -f '$YML' && mkdir '$YML' && echo mine >'$YML/data'"
out=$(ctl reconfigure 2>&1) || fail "reconfigure blocked by a directory: $out"
printf '%s\n' "$out" | grep -q "^replace directory $YML with file" || fail "not said: $out"
[ "$(mode_of "$YML")" = "600 git:git 1 regular file" ] || fail "yml: $(mode_of "$YML")"
[ "$(cat "$T_ROOT"/opt/gitlab/var/moved-aside/gitlab-exporter.gitlab-exporter.yml.*/data)" = mine ] ||
	fail "the account's data is gone"

# --- stale temps of killed runs ---------------------------------------------------------------
note "temp files of killed runs are removed, only ours"
touch "$H/.gitlab-exporter.yml.gitlab-ctl-tmp.Ab12Cd" "$ENV/.MALLOC_CONF.gitlab-ctl-tmp.x9Y8z7" \
	"$H/.gitlab-exporter.yml.keep" "$H/.gitlab-exporter.yml.Ab12Cd"
ln -s "$SV_DIR/gitlab-exporter" "$SERVICE_DIR/.gitlab-exporter.gitlab-ctl-tmp.4242"
out=$(ctl reconfigure 2>&1) || fail "reconfigure: $out"
for f in "$H/.gitlab-exporter.yml.gitlab-ctl-tmp.Ab12Cd" "$ENV/.MALLOC_CONF.gitlab-ctl-tmp.x9Y8z7" \
	"$SERVICE_DIR/.gitlab-exporter.gitlab-ctl-tmp.4242"; do
	[ ! -e "$f" ] && [ ! -L "$f" ] || fail "stale temp left: $f"
	printf '%s\n' "$out" | grep -q "^delete stale temp file $f$" || fail "not said: $f: $out"
done
[ -e "$H/.gitlab-exporter.yml.keep" ] || fail "a file not of our pattern was removed"
# The account's own dotfile that merely looks like a random suffix is its, not ours.
[ -e "$H/.gitlab-exporter.yml.Ab12Cd" ] || fail "the account's .gitlab-exporter.yml.Ab12Cd was removed"

# --- gitlab.rb that another account can edit ----------------------------------------------------
note "a gitlab.rb writable by others or owned by another account is refused, with the fix"
chmod 664 "$RB"
out=$(ctl check-config 2>&1) && fail "accepted a group-writable gitlab.rb"
printf '%s\n' "$out" | grep -q "chmod 600 $RB" || fail "no fix given: $out"
chmod 600 "$RB" && chown git "$RB"
out=$(ctl reconfigure 2>&1) && fail "reconfigure accepted a gitlab.rb owned by git"
printf '%s\n' "$out" | grep -q "chown root $RB" || fail "no fix given: $out"
chown root "$RB"
note "a gitlab.rb in a directory another account can write is refused, naming it"
chown git "$T_ROOT/etc/gitlab"
out=$(ctl check-config 2>&1) && fail "accepted gitlab.rb in a directory git owns"
printf '%s\n' "$out" | grep -q "is in $T_ROOT/etc/gitlab, which its owner can write.*chown root $T_ROOT/etc/gitlab" ||
	fail "no directory named: $out"
chown root "$T_ROOT/etc/gitlab" && chmod 775 "$T_ROOT/etc/gitlab"
out=$(ctl reconfigure 2>&1) && fail "reconfigure accepted gitlab.rb in a group-writable directory"
printf '%s\n' "$out" | grep -q "which group or others can write" || fail "no reason given: $out"
chmod 1777 "$T_ROOT/etc/gitlab"
ctl check-config >/dev/null 2>&1 || fail "refused gitlab.rb in a sticky directory: $(ctl check-config 2>&1)"
chmod 755 "$T_ROOT/etc/gitlab"
ln -s "$T_ROOT/etc/gitlab" "$T_ROOT/etc/gitlab-link" && mkdir "$T_ROOT/gitconf" && chown git "$T_ROOT/gitconf"
cp "$RB" "$T_ROOT/gitconf/gitlab.rb"
out=$(ctl -c "$T_ROOT/gitconf/gitlab.rb" check-config 2>&1) && fail "accepted gitlab.rb below a git-owned directory"
printf '%s\n' "$out" | grep -q "is in $T_ROOT/gitconf" || fail "no directory named: $out"
ctl -c "$T_ROOT/etc/gitlab-link/gitlab.rb" check-config >/dev/null 2>&1 ||
	fail "refused gitlab.rb through a symlink to a safe directory: $(ctl -c "$T_ROOT/etc/gitlab-link/gitlab.rb" check-config 2>&1)"

# --- nothing outside the root is created, chmodded or chowned ---------------------------------
note "no command run with --root changes anything outside it (strace)"
echo "gitlab_exporter['env'] = { 'TRACE' => '1' }" >>"$RB"
TR=$T_ROOT/trace
for cmd in "reconfigure --diff" check-config show-config status "stop" "start" "restart"; do
	# shellcheck disable=SC2086
	strace -f -qq -y -o "$TR.$(echo $cmd | tr ' ' _)" \
		-e trace=open,openat,creat,mkdir,mkdirat,chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat,rename,renameat,renameat2,unlink,unlinkat,symlink,symlinkat,link,linkat,truncate \
		"$GITLAB_CTL" --root "$T_ROOT" $cmd >"$TR.out" 2>&1 ||
		fail "$cmd failed under strace: $(cat "$TR.out")"
done
# Every mutating call's path: absolute, or relative to the fd strace -y resolved.
seen=$(cat "$TR".* | awk -v root="$T_ROOT" '
	/= -1 / { next }
	/^[0-9]+ +(open|openat)\(/ && !/O_CREAT|O_WRONLY|O_RDWR|O_TRUNC/ { next }
	{
		line = $0
		sub(/^[0-9]+ +/, "", line)
		name = line
		sub(/\(.*/, "", name)
		args = substr(line, index(line, "(") + 1)
		if (name == "fchmod" || name == "fchown") {
			p = args; sub(/^[0-9]+</, "", p); sub(/>.*/, "", p); check(p, line); next
		}
		base = ""
		if (match(args, /^(AT_FDCWD|[0-9]+)<[^>]*>, /)) {
			base = substr(args, RSTART, RLENGTH); sub(/^[^<]*</, "", base); sub(/>, $/, "", base)
			args = substr(args, RLENGTH + 1)
		}
		if (!match(args, /^"[^"]*"/)) next
		p = substr(args, 2, RLENGTH - 2)
		if (p !~ /^\// && base != "") p = base "/" p
		check(p, line)
	}
	function check(p, l) {
		if (index(p, root "/") == 1 || p == root) { print "IN " p; return }
		if (p ~ /^\/dev\/(null|tty|pts)|^\/proc\/|^memfd:/) return
		if (p ~ /\.gcda$/) return # a coverage build writes its counters (scripts/coverage)
		print "OUT " p " <- " l
	}
')
bad=$(printf '%s\n' "$seen" | grep '^OUT ' || true)
[ -z "$bad" ] || fail "outside the root: $bad"
# the trace saw the writes inside the root (the check is not vacuous)
for f in "$ENV/.TRACE." "$SV_DIR/gitlab-exporter/supervise/control"; do
	printf '%s\n' "$seen" | grep -q "^IN $f" || fail "trace missed $f: $seen"
done
