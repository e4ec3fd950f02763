#!/usr/bin/env bash
# numpy interop: a .npz written by numpy feeds `xlite run`, and the outputs
# xlite writes read back in numpy equal numpy's own computation.
set -euo pipefail
XLITE="$1"
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then
  echo "npz interop: SKIPPED loudly: /usr/bin/python3 has no numpy (scripts/install-deps.sh installs python3-numpy)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/m.hlo" <<'HLO'
HloModule interop
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  i = s32[4] parameter(2)
  c = c64[2] parameter(3)
  sum = f32[2,3] add(a, b)
  neg = s32[4] negate(i)
  cc = c64[2] multiply(c, c)
  ROOT t = (f32[2,3], s32[4], c64[2]) tuple(sum, neg, cc)
}
HLO
"$PY" - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
a = rng.standard_normal((2, 3)).astype(np.float32)
b = rng.standard_normal((2, 3)).astype(np.float32)
i = np.array([1, -2, 2**31 - 1, -2**31], dtype=np.int32)
c = np.array([1 + 2j, -3.5 + 0.25j], dtype=np.complex64)
np.savez(f"{d}/in.npz", a=a, b=b, i=i, c=c)
PY
"$XLITE" run --inputs="$tmp/in.npz" --output="$tmp/out.npz" "$tmp/m.hlo" > "$tmp/stdout.txt"
"$PY" - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
inp = np.load(f"{d}/in.npz")
out = np.load(f"{d}/out.npz")
assert list(out.keys()) == ["out0", "out1", "out2"], list(out.keys())
np.testing.assert_array_equal(out["out0"], inp["a"] + inp["b"])
with np.errstate(over="ignore"):
    np.testing.assert_array_equal(out["out1"], -inp["i"])
np.testing.assert_array_equal(out["out2"], inp["c"] * inp["c"])
assert out["out0"].dtype == np.float32 and out["out2"].dtype == np.complex64
print("npz interop: 1 passed, 0 failed")
PY
