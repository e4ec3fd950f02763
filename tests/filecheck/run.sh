#!/usr/bin/env bash
# HLO-in / CHECK-out tests, lit style: every "// RUN:" line of each
# tests/filecheck/<pass>/*.hlo runs with %s = the file, `xlite` = the binary
# under test and FileCheck = LLVM's FileCheck (Debian llvm-14-tools). The
# verifier runs after every pass (XLA_FLAGS=--xlite_verify_each_pass).
# Usage: run.sh XLITE_BINARY TESTS_DIR
set -uo pipefail
XLITE=$1
DIR=$2
FILECHECK=$(command -v FileCheck-14 || command -v FileCheck || ls /usr/lib/llvm-*/bin/FileCheck 2>/dev/null | head -1)
if [ -z "$FILECHECK" ] || [ ! -x "$FILECHECK" ]; then
  echo "FAIL: FileCheck not found (make deps installs llvm-14-tools)"
  exit 1
fi
export XLA_FLAGS=--xlite_verify_each_pass

declare -A passed failed
total_failed=0
for file in "$DIR"/*/*.hlo; do
  group=$(basename "$(dirname "$file")")
  mapfile -t runs < <(sed -n 's|^// RUN: ||p' "$file")
  ok=1
  if [ ${#runs[@]} -eq 0 ]; then
    echo "FAIL $file: no RUN line"
    ok=0
  fi
  for run in "${runs[@]}"; do
    cmd=${run//%s/$file}
    cmd=$(sed -E "s#(^|\\| *)xlite #\\1$XLITE #g; s#\\| *FileCheck #| $FILECHECK #g" <<<"$cmd")
    if ! output=$(bash -o pipefail -c "$cmd" 2>&1); then
      echo "FAIL $file"
      echo "  RUN: $run"
      sed 's/^/  /' <<<"$output" | head -40
      ok=0
    fi
  done
  if [ $ok -eq 1 ]; then
    passed[$group]=$((${passed[$group]:-0} + 1))
  else
    failed[$group]=$((${failed[$group]:-0} + 1))
    total_failed=$((total_failed + 1))
  fi
done

printf '%-28s %6s %6s\n' "filecheck tests" pass fail
for group in $(printf '%s\n' "${!passed[@]}" "${!failed[@]}" | sort -u); do
  printf '%-28s %6d %6d\n' "$group" "${passed[$group]:-0}" "${failed[$group]:-0}"
done
[ $total_failed -eq 0 ]
