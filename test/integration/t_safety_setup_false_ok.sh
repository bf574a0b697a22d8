#!/bin/sh
# No "ok" that is not true.
# - a service without a check whose command exits at once (after 0.3 s): reconfigure,
#   start and restart do not say it runs: they fail (it never ran one pid for a second),
#   while a service that stays up still gets "ok: run";
# - a before_start step that fails is not counted as an update, and the service it sets
#   up is not started (held down until a run's step passes): the summary of a run that
#   published nothing says 0/N.
. "$SRCDIR/test/integration/lib.sh"

light_catalog
: >"$T_ROOT/etc/gitlab/gitlab.rb"

test_service steady
test_service flaky cmd='sleep 0.3; exit 1' enable=false
# stepped: its one-time step fails (and makes nothing) until {{home}}/ok exists.
test_service stepped enable=false extra='setup = (
  { name = "prepare"; when = "before_start"; creates = "{{home}}/prepared";
    command = [ "/bin/sh", "-c", "[ -e {{home}}/ok ] && touch {{home}}/prepared" ]; }
);'

note "a service that stays up: ok"
export SVWAIT=20
expect_rc 0 ctl reconfigure
has "$OUT" "gitlab Reconfigured!"
expect_rc 0 ctl restart steady
has "$OUT" "ok: run: steady:"

note "a service that exits at once: reconfigure fails, start and restart do not say ok"
echo "flaky['enable'] = true" >"$T_ROOT/etc/gitlab/gitlab.rb"
SVWAIT=4 expect_rc 1 ctl reconfigure
lacks "$OUT" "gitlab Reconfigured!"
has "$ERR" "flaky:"
SVWAIT=4 expect_rc 1 ctl start flaky
lacks "$OUT" "ok: run: flaky"
SVWAIT=4 expect_rc 1 ctl restart flaky
lacks "$OUT" "ok: run: flaky"
has "$OUT" "flaky"

note "a failed one-time step counts as nothing and does not start its service"
printf "%s\n" "flaky['enable'] = false" "stepped['enable'] = true" >"$T_ROOT/etc/gitlab/gitlab.rb"
expect_rc 1 ctl reconfigure
has "$ERR" "stepped: setup step prepare:"
[ "$(status_pid "$SV_DIR/stepped/supervise/status")" = 0 ] || fail "stepped started"
expect_rc 1 ctl reconfigure
has "$OUT" "0/"
grep -Eq '^0/[0-9]+ resources updated' "$OUT" || { cat "$OUT"; fail "a failed step counted"; }
# Linked at runsvdir's first look, it is held down by reconfigure's own down file.
[ -e "$SV_DIR/stepped/down" ] || fail "stepped is not held down though its setup failed"
mkdir -p "$T_ROOT/var/opt/gitlab/stepped"
: >"$T_ROOT/var/opt/gitlab/stepped/ok"
expect_rc 0 ctl reconfigure
grep -Eq '^[1-9][0-9]*/[0-9]+ resources updated' "$OUT" || { cat "$OUT"; fail "the step not counted"; }
[ "$(status_pid "$SV_DIR/stepped/supervise/status")" != 0 ] || fail "stepped did not start once its step passed"
[ ! -e "$SV_DIR/stepped/down" ] || fail "stepped kept the down file"
echo "ok t_safety_setup_false_ok"
