#!/bin/sh
# contrib/bash-completion/gitlab-ctl, sourced in bash: commands come from the binary's help,
# options per command, services from the root's service/ directory (--root or GITLAB_CTL_ROOT).
. "$SRCDIR/test/integration/lib.sh"
command -v bash >/dev/null || fail "bash is needed"
mkdir -p "$T_ROOT/bin"
ln -s "$GITLAB_CTL" "$T_ROOT/bin/gitlab-ctl"

# complete WORD...: the candidates for the last word, sorted, one per line.
complete_words() {
	PATH="$T_ROOT/bin:$PATH" bash -c '
		. "$SRCDIR/contrib/bash-completion/gitlab-ctl" || exit 1
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_gitlab_ctl
		printf "%s\n" "${COMPREPLY[@]}"
	' complete "$@" | sort
}
expect() { # expect "WORDS" "CANDIDATES"
	# shellcheck disable=SC2086 # $1 is the command line, split into words on purpose
	got=$(complete_words $1 | tr '\n' ' ')
	[ "${got% }" = "$2" ] || fail "completing '$1': got '${got% }', want '$2'"
}

expect "gitlab-ctl st" "start status stop"
expect "gitlab-ctl re" "reconfigure remove-accounts restart restart-except"
expect "gitlab-ctl --root /tmp gr" "graceful-kill"
expect "gitlab-ctl help sh" "show-config"
expect "gitlab-ctl reconfigure --d" "--diff --dry-run"
expect "gitlab-ctl show-config --" "--json --show-secrets"
expect "gitlab-ctl check-config --s" "--strict"
expect "gitlab-ctl --ver" "--verbose --version"

# Every command of `gitlab-ctl help` is offered.
"$GITLAB_CTL" help | sed -n '/^commands:/,${s/^  *\([a-z][a-z0-9-]*\) .*/\1/p;}' |
	sort >"$T_ROOT/want"
complete_words gitlab-ctl "" | grep -v '^help$' >"$T_ROOT/got"
diff -u "$T_ROOT/want" "$T_ROOT/got" || fail "completion and help list different commands"

# Services: enabled ones from <root>/opt/gitlab/service, for --root and GITLAB_CTL_ROOT.
mkdir -p "$SERVICE_DIR" "$SV_DIR/zz-probe"
ln -s ../sv/zz-probe "$SERVICE_DIR/zz-probe"
expect "gitlab-ctl --root $T_ROOT restart zz" "zz-probe"
expect "gitlab-ctl restart --root $T_ROOT zz" "zz-probe"
(
	GITLAB_CTL_ROOT=$T_ROOT
	export GITLAB_CTL_ROOT
	expect "gitlab-ctl status zz" "zz-probe"
)
unset GITLAB_CTL_ROOT
expect "gitlab-ctl status zz" ""
# Catalog services from `gitlab-ctl service-list` (GITLAB_CTL_DATADIR names the catalog).
expect "gitlab-ctl --root $T_ROOT inspect --json gitlab-e" "gitlab-exporter"
expect "gitlab-ctl --root $T_ROOT exec --from-config node" "node-exporter"
echo "ok: completion"
