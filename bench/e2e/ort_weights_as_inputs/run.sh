#!/usr/bin/env bash
# ONNX Runtime's mlp_b32 with its weights as inputs beside xlite, alternating, ROUNDS rounds at 1
# and 2 threads. Needs `make bench-e2e` to have set up build/peers-run (onnxruntime-node, models).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
peers="$root/build/peers-run"
out="$root/build/ort-weights-as-inputs"
/usr/bin/python3 "$here/convert.py" "$peers" "$out"
for round in $(seq "${ROUNDS:-2}"); do
  for t in 1 2; do
    node "$here/bench.js" "$peers" "$out" "$t"
    (cd "$root" && build/bin/e2e_bench --threads="$t" --only=mlp_b32 2>/dev/null | grep -v '^#')
  done
done
