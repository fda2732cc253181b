#!/usr/bin/env bash
# tools/ab-trees in a scratch git repository: a NAME without a patch is REV as it is, a NAME
# with one gets it applied, a NAME a+b gets both in turn (and stops when a part has no patch),
# the output is the SMLA_SUITE_BASELINE value, a patch that does not apply stops it, and no
# NAME exits 2. Then every patch of the project's tools/ab-patches must
# apply to this checkout's sources: a pending experiment goes stale the day main changes the
# lines it edits (refresh it then), and a landed one must leave the folder. Run by ctest
# (tests/CMakeLists.txt).
#
# Usage: test_ab_trees.sh AB_TREES PROJECT_SOURCE_DIR
set -u
ab_trees=$1 project=$2
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

repo=$dir/repo
mkdir -p "$repo/tools/ab-patches" "$repo/src"
cp "$ab_trees" "$repo/tools/ab-trees"
printf 'one\n' >"$repo/src/value.txt"
# write_patch NAME FROM TO: tools/ab-patches/NAME.patch turns src/value.txt's line FROM into
# TO, after a description (lines that patch skips).
write_patch() {
  printf '# the experiment %s\n\n--- a/src/value.txt\n+++ b/src/value.txt\n@@ -1 +1 @@\n-%s\n+%s\n' \
    "$1" "$2" "$3" >"$repo/tools/ab-patches/$1.patch"
}
write_patch two one two
write_patch three two three
write_patch stale three four
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -m scratch

out=$("$repo/tools/ab-trees" HEAD plain two 2>&1)
expect "prints the baseline list" '^\.ab-base/plain:\.ab-base/two$' "$out"
expect "plain: REV as it is" '^one$' "$(cat "$repo/.ab-base/plain/src/value.txt" 2>&1)"
expect "two: its patch applied" '^two$' "$(cat "$repo/.ab-base/two/src/value.txt" 2>&1)"
# A second run replaces the trees rather than patching a patched tree again.
"$repo/tools/ab-trees" HEAD two >/dev/null 2>&1
expect "two again: patched once" '^two$' "$(cat "$repo/.ab-base/two/src/value.txt" 2>&1)"
out=$("$repo/tools/ab-trees" HEAD two+three 2>&1)
expect "two+three: the combined tree" '^\.ab-base/two\+three$' "$out"
expect "two+three: both patches in turn" '^three$' \
  "$(cat "$repo/.ab-base/two+three/src/value.txt" 2>&1)"
expect_exit "a combination with a part that has no patch" 1 "$repo/tools/ab-trees" HEAD two+none
expect_exit "a patch that does not apply" 1 "$repo/tools/ab-trees" HEAD stale
expect_exit "no NAME" 2 "$repo/tools/ab-trees" HEAD

for patch_file in "$project"/tools/ab-patches/*.patch; do
  [ -e "$patch_file" ] || continue
  if ! patch -d "$project" -p1 --dry-run --forward --quiet <"$patch_file" >/dev/null 2>&1; then
    echo "FAIL: $(basename "$patch_file") no longer applies to $project: refresh it," \
      "or remove it if it has landed"
    failures=$((failures + 1))
  fi
done

[ "$failures" -eq 0 ] && echo "PASS: ab-trees" || exit 1
