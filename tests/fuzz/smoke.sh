#!/usr/bin/env bash
# Runs the HLO parser fuzzer for a fixed time, seeded from the XLA corpus.
#
#   bash tests/fuzz/smoke.sh FUZZER SECONDS [extra libFuzzer flags...]
#
# Run from the repository root. Seeds: the *.hlo files under
# ../shared/corpus/xla smaller than 64 KiB, copied into a temporary corpus dir
# (new inputs libFuzzer finds go there too and are deleted afterwards).
# Dictionary: tests/fuzz/hlo.dict. Crash/leak/timeout/oom reproducers go to
# fuzz-artifacts/, and so does the full libFuzzer log (fuzz-<stamp>.log).
#
# Exits 0 when the run finished cleanly, non-zero when libFuzzer found a
# crash, leak, timeout or OOM (or failed to run). Skips with exit 0 when the
# corpus folder is absent.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 FUZZER SECONDS [extra libFuzzer flags...]" >&2
  exit 2
fi
FUZZER=$1
SECONDS_TO_RUN=$2
shift 2

# Defaults fuzz the HLO parser; the MLIR reader sets FUZZ_CORPUS,
# FUZZ_SEED_NAME and FUZZ_DICT.
CORPUS_SRC=${FUZZ_CORPUS:-../shared/corpus/xla}
SEED_NAME=${FUZZ_SEED_NAME:-*.hlo}
DICT=${FUZZ_DICT:-tests/fuzz/hlo.dict}
ARTIFACTS=fuzz-artifacts
MAX_SEED_BYTES=65536

if [[ ! -d "$CORPUS_SRC" ]]; then
  echo "fuzz: SKIPPED: seed corpus folder $CORPUS_SRC not found (run from the repo root" \
       "with the shared corpus checked out next to it); not fuzzing." >&2
  echo "fuzz: skipped (no corpus)"
  exit 0
fi
if [[ ! -x "$FUZZER" ]]; then
  echo "fuzz: ERROR: fuzzer binary '$FUZZER' not found or not executable" \
       "(build it with: make fuzz-build)" >&2
  exit 1
fi
if [[ ! -f "$DICT" ]]; then
  echo "fuzz: ERROR: dictionary $DICT not found (run from the repo root)" >&2
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xlite-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CORPUS="$WORK/corpus"
mkdir -p "$CORPUS" "$ARTIFACTS"

# Seed corpus: small $SEED_NAME files, flattened into one folder.
nseeds=0
while IFS= read -r -d '' f; do
  rel=${f#"$CORPUS_SRC"/}
  cp "$f" "$CORPUS/${rel//\//__}"
  nseeds=$((nseeds + 1))
done < <(find "$CORPUS_SRC" -type f -name "$SEED_NAME" -size -"${MAX_SEED_BYTES}"c -print0)
echo "fuzz: $nseeds seed files (< $MAX_SEED_BYTES bytes) from $CORPUS_SRC," \
     "dictionary $DICT, ${SECONDS_TO_RUN}s"

# Only artifacts created by this run count.
list_artifacts() {
  find "$ARTIFACTS" -maxdepth 1 -type f \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort
}
before="$WORK/before.txt"
list_artifacts > "$before"

stamp=$(date +%Y%m%d-%H%M%S)
LOG="$ARTIFACTS/fuzz-$stamp.log"

# UBSan only reports by default; make undefined behaviour fatal so libFuzzer
# keeps the input. Callers may override it.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

start=$(date +%s)
"$FUZZER" "$CORPUS" \
  -max_total_time="$SECONDS_TO_RUN" \
  -timeout=10 \
  -rss_limit_mb=4096 \
  -max_len="$MAX_SEED_BYTES" \
  -dict="$DICT" \
  -detect_leaks=1 \
  -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/" \
  "$@" > "$LOG" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))

new="$WORK/new.txt"
list_artifacts | comm -13 "$before" - > "$new"
ncrash=$(wc -l < "$new" | tr -d ' ')

# libFuzzer's own summary.
grep -E '^INFO: (Loaded|seed corpus)|^#[0-9]+[[:space:]]+INITED' "$LOG" | head -n 5
done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$LOG" | tail -n 1)
[[ -n "$done_line" ]] && echo "$done_line"
grep -E '^stat::' "$LOG"
last_status=$(grep -E '^#[0-9]+' "$LOG" | tail -n 1)
[[ -n "$last_status" ]] && echo "last: $last_status"

runs=$(sed -nE 's/^stat::number_of_executed_units: ([0-9]+).*/\1/p' "$LOG" | tail -n 1)
if [[ -z "$runs" ]]; then
  runs=$(sed -nE 's/^Done ([0-9]+) runs.*/\1/p' "$LOG" | tail -n 1)
fi
if [[ -z "$runs" ]]; then
  runs=$(sed -nE 's/^#([0-9]+)[[:space:]].*/\1/p' "$LOG" | tail -n 1)
fi
runs=${runs:-0}
secs=$(sed -nE 's/^Done [0-9]+ runs in ([0-9]+) second.*/\1/p' "$LOG" | tail -n 1)
secs=${secs:-$elapsed}

if [[ "$ncrash" -gt 0 || $rc -ne 0 ]]; then
  echo "--- libFuzzer report (full log: $LOG) ---"
  # The first error report: its headline, the top of the stack (without
  # standard-library and libFuzzer frames), and libFuzzer's closing lines.
  awk '/^==[0-9]+==ERROR|^=== hlo_parser_fuzzer|runtime error:|^ERROR: libFuzzer/ {p=1}
       /^SUMMARY:/ {print; exit}
       p' "$LOG" \
    | grep -vE 'include/c\+\+/|in fuzzer::|__libc_start|in _start|in main ' \
    | head -n 40
  grep -E '^(MS: |artifact_prefix=|Test unit written)' "$LOG" | head -n 4
  if [[ "$ncrash" -gt 0 ]]; then
    echo "--- artifacts (reproduce with: $FUZZER <file>) ---"
    cat "$new"
  else
    echo "fuzz: libFuzzer exited with status $rc but left no artifact" >&2
    tail -n 20 "$LOG" >&2
  fi
  echo "fuzz: $runs runs in $secs s, $ncrash crashes (FAILED)"
  exit 1
fi

echo "fuzz: $runs runs in $secs s, 0 crashes (log: $LOG)"
exit 0
