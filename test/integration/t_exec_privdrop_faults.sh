# exec's privilege drop refuses to run the command when any step of it did not do what was
# asked: each credential call made to lie in turn by an LD_PRELOAD shim (fault_ids.c,
# built here with cc), and the command never runs. Without a fault the same command runs
# as the account, with only its group.
. "$SRCDIR/test/integration/lib.sh"
command -v cc >/dev/null || fail "cc is needed (build-essential)"

OUT=$T_ROOT/out
ERR=$T_ROOT/err
SHIM=$T_ROOT/fault_ids.so
cc -shared -fPIC -O1 -o "$SHIM" "$SRCDIR/test/integration/fault_ids.c" -ldl || fail "cannot build the shim"
ENVD=$T_ROOT/env
mkdir -p "$ENVD" "$T_ROOT/out.d"
chmod 777 "$T_ROOT/out.d"
printf '/usr/bin:/bin\n' >"$ENVD/PATH"

run() { # run FAULT MARK: exec touching out.d/MARK as nobody, the shim lying about FAULT
	GITLAB_CTL_FAULT=$1 LD_PRELOAD=$SHIM "$GITLAB_CTL" --root "$T_ROOT" exec --envdir "$ENVD" \
		--user nobody svc -- /bin/touch "$T_ROOT/out.d/$2"
}

note "no fault: the command runs as nobody"
expect_rc 0 run none ok
[ "$(stat -c %U "$T_ROOT/out.d/ok")" = nobody ] || fail "not created by nobody: $(ls -l "$T_ROOT/out.d")"

for f in setresgid:"exec: setgid " setresuid:"exec: setuid nobody" \
	getresuid:"exec: user nobody: ids did not change as asked" \
	getgroups:"exec: user nobody: ids did not change as asked" \
	regain:"exec: user nobody: could regain root after dropping it"; do
	fault=${f%%:*}
	msg=${f#*:}
	note "$fault lies: refused, nothing run"
	expect_rc 1 run "$fault" "$fault"
	has "$ERR" "$msg"
	[ -e "$T_ROOT/out.d/$fault" ] && fail "the command ran although $fault lied"
done
echo "ok t_exec_privdrop_faults"
