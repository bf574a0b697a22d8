#!/bin/sh
# Install layout: configure a copy of the tree for /usr, install it into a DESTDIR staging
# directory, move the copy away, and bring gitlab-exporter up with the staged binary, catalog,
# templates and exporter alone (GITLAB_CTL_DATADIR points at the staged data dir, since the
# compiled-in /usr/share/gitlab-ctl is not installed on this machine).
. "$SRCDIR/test/integration/lib.sh"

SRC=$T_ROOT/src
BUILD=$T_ROOT/build
STAGE=$T_ROOT/stage
DATA=$STAGE/usr/share/gitlab-ctl
BIN=$STAGE/usr/bin/gitlab-ctl

note "copy the source tree, build gitlab-ctl for prefix /usr, install into DESTDIR"
mkdir -p "$SRC"
(cd "$SRCDIR" && tar --exclude='./build*' --exclude=./.git --exclude=./demo-root -cf - .) |
	(cd "$SRC" && tar -xf -)
cmake -S "$SRC" -B "$BUILD" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF >"$T_ROOT/log" 2>&1 ||
	{ cat "$T_ROOT/log"; fail "configure"; }
cmake --build "$BUILD" -j2 --target gitlab-ctl docs >>"$T_ROOT/log" 2>&1 ||
	{ tail -n 40 "$T_ROOT/log"; fail "build"; }
DESTDIR=$STAGE cmake --install "$BUILD" --prefix /usr >>"$T_ROOT/log" 2>&1 ||
	{ tail -n 40 "$T_ROOT/log"; fail "install"; }
mv "$SRC" "$T_ROOT/gone"

note "the staged layout"
for f in usr/bin/gitlab-ctl usr/share/gitlab-ctl/sv/gitlab-exporter.conf \
	usr/share/gitlab-ctl/templates/run usr/share/man/man8/gitlab-ctl.8.gz \
	usr/share/bash-completion/completions/gitlab-ctl usr/share/doc/gitlab-ctl/copyright \
	usr/share/doc/gitlab-ctl/changelog.gz usr/share/doc/gitlab-ctl/examples/gitlab.rb; do
	[ -s "$STAGE/$f" ] || fail "not installed: /$f"
done
[ -x "$DATA/exporter/gitlab-exporter" ] || fail "bundled exporter not installed executable"
[ "$(readlink "$STAGE/opt/gitlab/embedded/bin/gitlab-exporter")" = \
	/usr/share/gitlab-ctl/exporter/gitlab-exporter ] || fail "embedded/bin/gitlab-exporter link"
gzip -dc "$STAGE/usr/share/man/man8/gitlab-ctl.8.gz" | cmp -s - "$SRCDIR/doc/gitlab-ctl.8" ||
	fail "installed man page differs from doc/gitlab-ctl.8"
unit=$STAGE/usr/lib/systemd/system/gitlab-runsvdir.service
[ -s "$unit" ] || fail "systemd unit not installed"
grep -q '@' "$unit" && fail "unsubstituted placeholder in the systemd unit"
grep -qx 'ExecStart=/usr/bin/gitlab-ctl runsvdir' "$unit" || fail "the unit does not run /usr/bin/gitlab-ctl"
if grep -q -a -F -e "$T_ROOT/gone" -e "$SRC" -e "$SRCDIR/" "$BIN"; then
	fail "the installed binary refers to a source tree"
fi
# With no override, the binary finds the data dir installed next to it (<bindir>/../share), and
# copied away from it, looks where it was configured to, not at any source tree.
env -u GITLAB_CTL_DATADIR "$BIN" --root "$T_ROOT" check-config >"$T_ROOT/out" 2>&1 ||
	{ cat "$T_ROOT/out"; fail "the staged binary does not find its staged catalog"; }
if [ ! -e /usr/share/gitlab-ctl ]; then
	mkdir "$T_ROOT/alone" && cp "$BIN" "$T_ROOT/alone/"
	env -u GITLAB_CTL_DATADIR "$T_ROOT/alone/gitlab-ctl" --root "$T_ROOT" check-config >"$T_ROOT/out" 2>&1 &&
		fail "check-config found a catalog with nothing installed in /usr/share/gitlab-ctl"
	grep -q /usr/share/gitlab-ctl "$T_ROOT/out" || { cat "$T_ROOT/out"; fail "compiled datadir"; }
fi

note "reconfigure with the installed files only"
port=$(free_port)
mkdir -p "$T_ROOT/etc/gitlab"
cat >"$T_ROOT/etc/gitlab/gitlab.rb" <<EOF
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = $port
$(only_services gitlab_exporter)
EOF
export GITLAB_CTL_DATADIR="$DATA"
"$BIN" --root "$T_ROOT" reconfigure >"$T_ROOT/out" 2>&1 || { cat "$T_ROOT/out"; fail "reconfigure"; }
grep -q "gitlab Reconfigured!" "$T_ROOT/out" || fail "no 'gitlab Reconfigured!'"
[ "$(readlink "$T_ROOT/opt/gitlab/embedded/bin/gitlab-exporter")" = "$DATA/exporter/gitlab-exporter" ] ||
	fail "reconfigure did not link the staged exporter"
grep -q -F "$BIN" "$SV_DIR/gitlab-exporter/run" || fail "run script does not exec the installed binary"

running() { "$BIN" --root "$T_ROOT" status gitlab-exporter | grep -q '^run: gitlab-exporter: (pid'; }
until_true 150 running || { "$BIN" --root "$T_ROOT" status; fail "gitlab-exporter not running"; }
metrics() { curl -fsS "http://127.0.0.1:$port/metrics" >"$T_ROOT/metrics" 2>/dev/null; }
until_true 150 metrics || fail "/metrics does not answer on port $port"
grep -q '^ruby_' "$T_ROOT/metrics" || fail "/metrics has no ruby_ metrics"
pid=$(status_pid "$SV_DIR/gitlab-exporter/supervise/status")
tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$T_ROOT/opt/gitlab/embedded/bin/gitlab-exporter web -c" ||
	fail "pid $pid is not the exporter"
echo "ok: installed gitlab-ctl runs gitlab-exporter (pid $pid) from $STAGE"
