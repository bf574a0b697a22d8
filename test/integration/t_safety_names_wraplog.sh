#!/bin/sh
# Root's own log does not grow with what a service does. A service leaves 5,000 orphans (each
# of a group whose leader is gone, adopted by the runsvdir wrapper as subreaper; orphans.c), a
# few hundred at a time; the wrapper stops every one of them, but <install>/var/runsvdir.log lists only the
# first few of each 10 s and sums up the rest ("also stopped N ..."), so it stays small and
# still accounts for all of them. Then the log is filled past 1 MiB: the wrapper moves what it
# held to runsvdir.log.1 and the log starts again.
. "$SRCDIR/test/integration/lib.sh"

DATA=$T_ROOT/data
mkdir -p "$DATA" "$T_ROOT/etc/gitlab"
cp -R "$SRCDIR/sv" "$SRCDIR/templates" "$DATA/"
DONE=$T_ROOT/var/opt/gitlab/orphans/done # in its home: the service runs as git
N=${T_ORPHANS:-5000}
cc -O1 -o "$T_ROOT/orphans" "$SRCDIR/test/integration/orphans.c" || fail "cannot build the helper"
test_service orphans cmd="exec $T_ROOT/orphans $N $DONE"
export GITLAB_CTL_DATADIR=$DATA
only_services orphans >"$T_ROOT/etc/gitlab/gitlab.rb"
chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"
LOG=$T_ROOT/opt/gitlab/var/runsvdir.log

out=$(ctl reconfigure 2>&1) || fail "reconfigure: $out"
W=$(head -n 1 "$PIDFILE")
alive "$W" || fail "no wrapper"
# The orphans: the wrapper's children that orphans.c forked.
orphans() { ps -o comm= --ppid "$W" | grep -c '^orphans$' || true; }
note "the service leaves $N orphans"
until_true 2400 test -e "$DONE" || fail "the service did not finish making orphans ($(orphans) now)"
until_true 300 eval '[ "$(orphans)" = 0 ]' || fail "orphans left: $(orphans)"
# The window's summary follows within 10 s of its last line.
summed() { sed -n 's/.*runsvdir: also stopped \([0-9]*\) and killed [0-9]* more.*/\1/p' "$LOG" | awk '{ s += $1 } END { print s + 0 }'; }
listed() { grep -c 'runsvdir: stopping pid [0-9]* (orphans' "$LOG" || true; }
accounted() { [ $(($(listed) + $(summed))) -ge $N ]; }
until_true 300 accounted || fail "not every orphan is accounted for: $(listed) listed + $(summed) summed; $(tail -n 5 "$LOG")"
size=$(stat -c %s "$LOG")
note "runsvdir.log: $size bytes, $(wc -l <"$LOG") lines for $(listed) listed + $(summed) summed orphans"
[ "$size" -lt 16384 ] || fail "runsvdir.log grew with the orphans: $size bytes"

note "a log past 1 MiB moves to runsvdir.log.1"
head -c 1200000 /dev/zero | tr '\0' x >>"$LOG"
until_true 100 test -e "$LOG.1" || fail "no runsvdir.log.1 ($(stat -c %s "$LOG") bytes)"
# (the wrapper may cap it while the append is still going on: the rest starts the new log)
[ "$(stat -c %s "$LOG.1")" -ge 1048576 ] || fail "runsvdir.log.1 lacks what the log held"
[ "$(stat -c %s "$LOG")" -lt 1048576 ] || fail "the log was not emptied: $(stat -c %s "$LOG")"
grep -q "runsvdir: log reached [0-9]* bytes; what it held is in $LOG.1" "$LOG" || fail "not said: $(cat "$LOG")"
