# The C sources stay clang-format clean (the committed .clang-format) and
# cppcheck quiet, as the project's conventions ask; CI fails otherwise.
set -eu
: "${SRCDIR:?run under ctest}" "${BUILDDIR:?run under ctest}"
cd "$SRCDIR"
for tool in clang-format cppcheck; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (scripts/setup installs it)" >&2; exit 1; }
done
files=$(ls launcher/*.c launcher/*/*.c launcher/*/*.h test/unit/*.c test/unit/*.h test/fuzz/*.c test/fuzz/*.h 2>/dev/null)
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files
# shellcheck disable=SC2086
cppcheck --quiet --error-exitcode=1 --enable=warning,style,performance --inline-suppr \
	--suppress=missingIncludeSystem -I launcher -I "$BUILDDIR" launcher/
# A public function nothing in launcher/ calls is dead (tests alone do not keep one). A run of
# its own: cppcheck checks unusedFunction over the whole program only. config/catalog.c is left
# out while its loader is reworked (catalog_load is still called by tests only).
# shellcheck disable=SC2086
cppcheck --quiet --error-exitcode=1 --enable=unusedFunction --inline-suppr \
	--suppress=missingIncludeSystem --suppress=unusedFunction:launcher/config/catalog.c \
	-I launcher -I "$BUILDDIR" launcher/
# The stage folders: no upward include, no cycle (launcher/README.md).
sh scripts/check-layers .
# Stages never choose a stream (launcher/README.md): what they say goes through the command's
# diags. Comments aside, no file in render/ or engine/ names stdout or stderr.
streams=$(grep -nw 'stdout\|stderr' launcher/render/*.[ch] launcher/engine/*.[ch] |
	grep -v ':[0-9]*:[[:space:]]*/\?\*' || true)
[ -z "$streams" ] || { echo "FAIL: a stage names a stream: $streams" >&2; exit 1; }
echo "lint: $(echo "$files" | wc -l) files clang-format clean, cppcheck quiet"
