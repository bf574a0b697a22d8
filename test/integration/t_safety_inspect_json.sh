# inspect --json shows what a service's own account can write (its process environment,
# which it can rewrite through /proc/PID/mem) through the one JSON escaper: DEL and C1
# controls, raw or UTF-8 encoded, reach the document as \u00XX, never as bytes a terminal
# obeys (0x9b is an 8-bit CSI). The text form already escaped them; both are checked.
. "$SRCDIR/test/integration/lib.sh"

OUT=$T_ROOT/out
ERR=$T_ROOT/err
DATA=$T_ROOT/data
mkdir -p "$DATA/sv" "$T_ROOT/etc/gitlab"
cp -R "$GITLAB_CTL_DATADIR/templates" "$DATA/"
# The service starts itself with a variable the env directory does not name: EVIL, DEL,
# raw CSI (0x9b), UTF-8 CSI (U+009B), raw ST (0x9c). inspect lists it as unexpected.
test_service hostile cmd="exec env \$(printf 'EVIL\\177\\233\\302\\233\\234=1') sleep 100000"
export GITLAB_CTL_DATADIR=$DATA
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF
$(only_services hostile)
EOF
chmod 600 "$T_ROOT/etc/gitlab/gitlab.rb"

expect_rc 0 ctl reconfigure
running() { ctl status hostile | grep -q '^run: hostile: (pid'; }
until_true 100 running || fail "hostile is not running: $(ctl status hostile)"
pid=$(status_pid "$SV_DIR/hostile/supervise/status")
has_evil() { tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^EVIL'; }
until_true 100 has_evil || fail "the service's environment lacks the planted name"

# raw FILE: whether FILE holds a DEL or a C1 byte (no valid UTF-8 in these documents has one)
raw() { [ "$(LC_ALL=C tr -d '\177\200-\237' <"$1" | wc -c)" != "$(wc -c <"$1")" ]; }

expect_rc 1 ctl inspect --json hostile
raw "$OUT" && fail "inspect --json printed raw DEL/C1 bytes: $(od -c "$OUT" | head -20)"
has "$OUT" '"env_unexpected": ["EVIL\u007f\u009b\u009b\u009c"'
ruby -rjson -e 'r = JSON.parse(STDIN.read); n = r[0]["env_unexpected"][0]
	abort "decoded: #{n.inspect}" unless n == "EVIL\u007f\u009b\u009b\u009c"' <"$OUT" ||
	fail "inspect --json is not the JSON of the name: $(cat "$OUT")"

expect_rc 1 ctl inspect hostile
raw "$OUT" && fail "inspect printed raw DEL/C1 bytes: $(od -c "$OUT" | head -20)"
has "$OUT" 'unexpected: EVIL\x7f\x9b\xc2\x9b\x9c'
ctl stop hostile >/dev/null
note ok
