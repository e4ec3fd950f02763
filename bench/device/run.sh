#!/bin/bash
# Side by side on the device machine (see bench/RESULTS.md): XLA:CPU through jaxlib and xlite
# on the same modules, each pinned to cores 0 and 1, rounds alternating; then the peers'
# micro workloads (xlite's e2e_bench, oneDNN's dnnl_sgemm, the hand-written limits).
# Run there as:  bash .dev/run.sh [ROUNDS]  with .dev/pack.tar.xz and .dev/run.sh carried.
# Writes to $OUT: env.txt, xla.tsv, xlite.tsv, peers.tsv (peers' line format, rounds as a
# first column), parse.tsv (XLA's parser on xlite's optimized modules), err.txt.
set -u
rounds=${1:-3}
: "${OUT:?OUT names the folder whose files come back}"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/w && tar xJf "$here/pack.tar.xz" -C /tmp/w || { echo "untar failed"; exit 1; }
cd /tmp/w
# The packed libraries for xlite's programs only: jaxlib keeps the machine's own.
export XLITE_CORPUS=$PWD/corpus JAX_PLATFORMS=cpu
packed="env LD_LIBRARY_PATH=$PWD/lib"
pin="taskset -c 0,1"
{ date; uname -r; lscpu; for b in bin/*; do $packed ldd "$b" | grep "not found"; done;
  python3 -c "import jax; print('jax', jax.__version__)"; } > "$OUT/env.txt" 2>&1
echo "# limits before" > "$OUT/peers.tsv"
$pin timeout 60 $packed ./bin/limits --threads 2 >> "$OUT/peers.tsv" 2>> "$OUT/err.txt"
# XLA:CPU, restarted past a module that brings jaxlib down (linalg_solve's LAPACK custom
# calls, unregistered when the HLO does not come through jax.jit, segfault it).
xla_round() {
  local r=$1 start=0 out last rc
  while :; do
    out=$(mktemp)
    $pin timeout 300 python3 xla_cpu.py corpus 1.0 "" $start > "$out" 2>> "$OUT/err.txt"; rc=$?
    sed "s/^/r$r\t/" "$out" >> "$OUT/xla.tsv"
    last=$(grep -o "^# start [0-9]*" "$out" | tail -1 | awk '{print $3}')
    rm -f "$out"
    if [ $rc -eq 0 ] || [ -z "$last" ]; then break; fi
    echo -e "r$r\t# crashed at $last rc=$rc" >> "$OUT/xla.tsv"
    start=$((last + 1))
  done
}
for r in $(seq "$rounds"); do
  echo "== round $r $(date +%T)" >> "$OUT/err.txt"
  xla_round "$r"
  $pin timeout 200 $packed ./bin/cpu_bench --threads=2 --interpreter_cap_s=0 --run_budget_s=0.5 \
    --benchmark_filter='BM_Run/.*xlite-cpu|BM_Compile' 2> "cpu_bench.err" |
    grep -P "\txlite-(cpu|compile)|^# refused" | sed "s/^/r$r\t/" >> "$OUT/xlite.tsv"
  status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] || echo "cpu_bench round $r: exit $status" >> "$OUT/err.txt"
  grep -v "^cpu_bench: preparing\|^# skipped" cpu_bench.err >> "$OUT/err.txt"
done
# XLA's parser on xlite's optimized modules (its cpu_after_optimizations text).
mkdir -p printed
for f in corpus/jax/*/before_optimizations.txt corpus/xla/hlo_file/*.hlo; do
  name=$(basename "$(dirname "$f")"); case $f in *.hlo) name=$(basename "$f" .hlo) ;; esac
  timeout 60 $packed ./bin/xlite opt --pipeline=cpu "$f" > "printed/$name.txt" 2>> "$OUT/err.txt" ||
    { echo "xlite opt $name failed" >> "$OUT/err.txt"; rm -f "printed/$name.txt"; }
done
timeout 120 python3 xla_parse.py printed/*.txt > "$OUT/parse.tsv" 2>> "$OUT/err.txt"
echo "== peers $(date +%T)" >> "$OUT/err.txt"
$pin timeout 120 $packed ./bin/e2e_bench --threads=1,2 >> "$OUT/peers.tsv" 2>> "$OUT/err.txt"
for t in 1 2; do
  $pin timeout 60 $packed ./bin/gemm_peers --lib dnnl --threads $t >> "$OUT/peers.tsv" 2>> "$OUT/err.txt"
done
echo "# limits after" >> "$OUT/peers.tsv"
$pin timeout 60 $packed ./bin/limits --threads 2 >> "$OUT/peers.tsv" 2>> "$OUT/err.txt"
echo "== done $(date +%T)" >> "$OUT/err.txt"
