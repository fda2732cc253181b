#!/usr/bin/env bash
# tools/ab-trees in a scratch git repository: a NAME without a patch is REV as it is, a NAME
# with one gets it applied, a NAME a+b gets both in turn (and stops when a part has no patch),
# the output is the SMLA_SUITE_BASELINE value, a patch that does not apply stops it, and no
# NAME exits 2. Then tools/ab-patches-check in a second scratch repository: a pending patch
# passes, also when only the working tree has it applied, or in a copy without git metadata; a
# stale or landed one fails. Then every patch of the project's tools/ab-patches must be pending
# in this checkout: an experiment goes stale the day main changes the lines it edits (refresh
# it then), and a landed one must leave the folder. Run by ctest (tests/CMakeLists.txt).
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
# commit_all REPO MESSAGE: commits everything in the scratch repository REPO.
commit_all() {
  git -C "$1" add -A
  git -C "$1" -c user.name=t -c user.email=t@t commit -q -m "$2"
}
git -C "$repo" init -q
commit_all "$repo" scratch

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

check=$(dirname "$ab_trees")/ab-patches-check
pending=$dir/pending
mkdir -p "$pending/tools/ab-patches" "$pending/src"
printf 'one\n' >"$pending/src/value.txt"
cp "$repo/tools/ab-patches/two.patch" "$repo/tools/ab-patches/stale.patch" \
  "$pending/tools/ab-patches/"
git -C "$pending" init -q
commit_all "$pending" scratch
out=$("$check" "$pending" 2>&1)
expect "a stale patch is named" '^FAIL: stale\.patch no longer applies' "$out"
reject "a pending patch is not" 'two\.patch' "$out"
expect_exit "a stale patch fails the check" 1 "$check" "$pending"
rm "$pending/tools/ab-patches/stale.patch"
commit_all "$pending" "stale removed"
expect_exit "pending patches pass" 0 "$check" "$pending"
printf 'two\n' >"$pending/src/value.txt"  # two.patch applied to the working tree only
out=$("$check" "$pending" 2>&1)
expect "applied to the working tree" '^note: two\.patch is applied to the working tree only' \
  "$out"
expect_exit "a patch applied to the working tree only passes" 0 "$check" "$pending"
copy=$dir/copy
mkdir -p "$copy"
cp -r "$pending/src" "$pending/tools" "$copy/"
expect "applied in a copy without git" '^note: two\.patch is applied to these sources' \
  "$("$check" "$copy" 2>&1)"
commit_all "$pending" "two landed"
expect "a landed patch is named" '^FAIL: two\.patch is applied and the last commit holds it' \
  "$("$check" "$pending" 2>&1)"
expect_exit "a landed patch fails the check" 1 "$check" "$pending"
expect_exit "no PROJECT_DIR" 2 "$check"

out=$("$check" "$project" 2>&1) || {
  echo "FAIL: some patch of $project/tools/ab-patches is stale or landed:"
  echo "$out"
  failures=$((failures + 1))
}

[ "$failures" -eq 0 ] && echo "PASS: ab-trees" || exit 1
