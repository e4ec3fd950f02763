#!/usr/bin/env bash
# End-to-end checks of the xlite command line: exit codes, stdout/stderr, flags.
set -u
XLITE="$1"
ROOT="$2"
fails=0
passes=0
check() {  # name, condition result
  if [ "$2" -eq 0 ]; then passes=$((passes+1)); else fails=$((fails+1)); echo "FAIL: $1"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$XLITE" opt "$ROOT/examples/mlp.hlo" > "$tmp/long.txt" 2> "$tmp/err.txt"
check "opt exits 0 on a valid module" $?
cmp -s "$ROOT/examples/mlp.hlo" "$tmp/long.txt"
check "canonical long form reprints byte-identical" $?

"$XLITE" opt --print=short "$ROOT/examples/mlp.hlo" > "$tmp/short.txt"
check "--print=short exits 0" $?
grep -q '^  ROOT relu = f32\[8,128\]{1,0} maximum(add, zeros)$' "$tmp/short.txt"
check "short form omits operand shapes and %" $?

"$XLITE" opt --syntax_sugar_async_ops=false "$ROOT/examples/async_copy.hlo" > "$tmp/generic.txt"
check "--syntax_sugar_async_ops=false exits 0" $?
grep -q 'async-start(' "$tmp/generic.txt" && grep -q 'calls=%cc-start.wrapped' "$tmp/generic.txt"
check "generic async form printed with calls=" $?
"$XLITE" opt "$tmp/generic.txt" | grep -q 'custom-call-start('
check "generic form parses back and prints with sugar" $?

cat "$ROOT/examples/mlp.hlo" | "$XLITE" opt - > /dev/null
check "reads stdin with -" $?

printf 'HloModule m\nENTRY e {\n  ROOT x = f32[] bogus()\n}\n' > "$tmp/bad.hlo"
"$XLITE" opt "$tmp/bad.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 1 ] && [ ! -s "$tmp/out.txt" ] && grep -q "bad.hlo:3:18: unknown opcode 'bogus'" "$tmp/err.txt"
check "bad input: exit 1, file:line:col on stderr, nothing on stdout" $?

"$XLITE" opt --print=medium "$ROOT/examples/mlp.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "print must be long or short" "$tmp/err.txt"
check "bad flag value rejected" $?

"$XLITE" opt --verify=false "$ROOT/examples/mlp.hlo" > /dev/null
check "--verify=false accepted" $?

"$XLITE" opt "$tmp/missing.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "cannot open" "$tmp/err.txt"
check "missing file is a clear error" $?

printf 'HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n}\n' > "$tmp/badshape.hlo"
"$XLITE" opt "$tmp/badshape.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "verifier: instruction 'n' (negate) in computation 'e': declared shape f32\[5\]" "$tmp/err.txt"
check "verifier runs by default and names instruction, computation, rule" $?
"$XLITE" opt --verify=false "$tmp/badshape.hlo" > /dev/null
check "--verify=false skips the verifier" $?

"$XLITE" opt "$ROOT/examples/add.mlir" > "$tmp/add.hlo" 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q ' add(f32\[2\]{0} %constant.1, f32\[2\]{0} %constant.2)' "$tmp/add.hlo" &&
  grep -q 'custom_call_target="check.expect_eq"' "$tmp/add.hlo"
check "opt lowers a StableHLO .mlir file to HLO" $?
"$XLITE" opt "$tmp/add.hlo" > /dev/null
check "the lowered HLO parses back" $?

"$XLITE" translate --to=stablehlo "$ROOT/examples/add.mlir" > "$tmp/add_generic.mlir"
[ $? -eq 0 ] && grep -q '^    %2 = "stablehlo.add"(%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>$' \
  "$tmp/add_generic.mlir"
check "translate prints generic MLIR with renumbered values" $?
"$XLITE" translate --to=stablehlo "$tmp/add_generic.mlir" | cmp -s - "$tmp/add_generic.mlir"
check "translate output is a fixpoint" $?
"$XLITE" run "$tmp/add_generic.mlir" > /dev/null 2>&1
check "translated program still passes its check" $?

printf 'func.func @main() -> tensor<f32> {\n  %%0 = stablehlo.add %%x, %%x : tensor<f32>\n  return %%0 : tensor<f32>\n}\n' > "$tmp/bad.mlir"
"$XLITE" opt "$tmp/bad.mlir" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 1 ] && [ ! -s "$tmp/out.txt" ] && grep -q "bad.mlir:2:22: use of undefined value %x" "$tmp/err.txt"
check "opt on bad .mlir: exit 1, file:line:col on stderr" $?
"$XLITE" translate --to=stablehlo "$tmp/bad.mlir" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 1 ] && [ ! -s "$tmp/out.txt" ] && grep -q "bad.mlir:2:22: use of undefined value %x" "$tmp/err.txt"
check "translate on bad .mlir: exit 1, file:line:col on stderr" $?

printf 'func.func @main(%%a: tensor<?xf32>) -> tensor<?xf32> {\n  return %%a : tensor<?xf32>\n}\n' > "$tmp/dyn.mlir"
"$XLITE" opt "$tmp/dyn.mlir" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 3 ] && grep -q "unsupported" "$tmp/err.txt"
check "opt on unsupported StableHLO exits 3" $?

{ cat "$ROOT/examples/add.mlir"; echo "// -----"; cat "$tmp/bad.mlir"; } > "$tmp/split.mlir"
"$XLITE" translate --to=stablehlo --split-input-file "$tmp/split.mlir" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q '^// -----$' "$tmp/out.txt" && grep -q '"stablehlo.add"' "$tmp/out.txt" &&
  grep -q "split.mlir:12:22: use of undefined value %x" "$tmp/err.txt"
check "translate --split-input-file: chunks, lines relative to the file" $?
"$XLITE" opt --split-input-file "$tmp/split.mlir" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q '^HloModule' "$tmp/out.txt" && grep -q "split.mlir:12:22" "$tmp/err.txt"
check "opt --split-input-file lowers each chunk" $?

"$XLITE" translate --to=hlo "$ROOT/examples/add.mlir" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "to must be stablehlo" "$tmp/err.txt"
check "translate rejects an unknown --to" $?
"$XLITE" translate --frobnicate "$ROOT/examples/add.mlir" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "unknown flag '--frobnicate'" "$tmp/err.txt"
check "translate rejects unknown flags" $?
"$XLITE" translate --to=stablehlo "$tmp/missing.mlir" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "cannot open" "$tmp/err.txt"
check "translate: missing file is a clear error" $?

printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  dead = f32[2] negate(p)\n  ROOT r = f32[2] exponential(p)\n}\n' > "$tmp/dce.hlo"
"$XLITE" opt --passes=dce --xlite_verify_each_pass --xlite_pass_timing "$tmp/dce.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 0 ] && ! grep -q dead "$tmp/out.txt" && grep -q '^dce .* yes$' "$tmp/err.txt"
check "opt --passes=dce removes dead code and prints pass timing" $?
"$XLITE" run --backend=cpu --xlite_pass_timing "$tmp/dce.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q '^fusion .*cpu-fusion' "$tmp/err.txt" &&
  grep -q '^plan-memory .*cpu-backend' "$tmp/err.txt" &&
  grep -q '^jit-compile (kernels: 1) .*cpu-backend' "$tmp/err.txt" && grep -q '^total ' "$tmp/err.txt"
check "run --xlite_pass_timing times the CPU compiler's passes and backend steps" $?
"$XLITE" opt --passes=dce,nope "$tmp/dce.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "unknown pass 'nope' (known: .*dce" "$tmp/err.txt"
check "opt --passes names the known passes on a typo" $?

rm -rf "$tmp/dumps"
XLA_FLAGS="--xla_dump_to=$tmp/dumps --xla_dump_hlo_pass_re=.*" "$XLITE" opt --passes=dce,cse "$tmp/dce.hlo" > /dev/null &&
  [ -f "$tmp/dumps/module_0001.m.before_optimizations.txt" ] &&
  [ -f "$tmp/dumps/module_0001.m.0001.opt.after_dce.before_cse.txt" ] &&
  [ -f "$tmp/dumps/module_0001.m.0002.opt.after_cse.before_pipeline-end.txt" ] &&
  [ -f "$tmp/dumps/module_0001.m.after_optimizations.txt" ] &&
  [ "$(ls "$tmp/dumps" | grep -c '\.after_.*\.before_')" -eq 2 ]
check "XLA_FLAGS dumps: XLA's file names, one snapshot per pass" $?
"$XLITE" opt --pipeline=simplify --xlite_verify_each_pass "$tmp/dce.hlo" > "$tmp/out.txt" &&
  ! grep -q dead "$tmp/out.txt"
check "opt --pipeline=simplify" $?
cat > "$tmp/chain.hlo" <<'EOF'
HloModule chain
ENTRY e {
  x = f32[64] parameter(0)
  c = f32[] constant(2)
  b = f32[64] broadcast(c), dimensions={}
  m = f32[64] multiply(x, b)
  ROOT n = f32[64] negate(m)
}
EOF
rm -rf "$tmp/cpudumps"
"$XLITE" opt --pipeline=cpu --xla_dump_to="$tmp/cpudumps" "$tmp/chain.hlo" > "$tmp/out.txt" &&
  grep -q "is_scheduled=true" "$tmp/out.txt" &&
  grep -q "fusion(f32\[64\]{0} %x), kind=kLoop, calls=%fused_computation" "$tmp/out.txt" &&
  [ -f "$tmp/cpudumps/module_0001.chain.cpu_after_optimizations.txt" ] &&
  diff -q "$tmp/cpudumps/module_0001.chain.cpu_after_optimizations.txt" "$tmp/out.txt" > /dev/null
check "opt --pipeline=cpu prints cpu_after_optimizations (one fusion, scheduled)" $?
"$XLITE" opt --pipeline=cpu --passes=dce "$tmp/chain.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -ne 0 ] && grep -q "takes no other passes" "$tmp/err.txt"
check "opt --pipeline=cpu refuses other passes" $?

cat > "$tmp/acc.mlir" <<'EOF'
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.exponential"(%arg0) {
    result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-5, rtol = 0.000000e+00, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>
  } : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}
EOF
"$XLITE" translate --serialize --target=1.8.0 "$tmp/acc.mlir" -o "$tmp/acc.mlir.bc" 2> "$tmp/err.txt"
[ $? -eq 1 ] && [ ! -e "$tmp/acc.mlir.bc" ] &&
  grep -q "stablehlo.exponential: attribute 'result_accuracy' with a non-default value needs vhlo.exponential_v2 (StableHLO >= 1.9.0); target 1.8.0 only has vhlo.exponential_v1" "$tmp/err.txt"
check "serialize: a downgrade the target cannot express fails naming op, attribute, versions; no file" $?
"$XLITE" translate --serialize --target=1.9.0 "$tmp/acc.mlir" -o "$tmp/acc.mlir.bc" &&
  "$XLITE" translate "$tmp/acc.mlir.bc" | grep -q 'result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05'
check "serialize at 1.9.0 keeps result_accuracy" $?
"$XLITE" translate --serialize --target=0.8.0 "$tmp/acc.mlir" 2>&1 | grep -q "outside the supported window 0.9.0 to 1.20.0"
check "serialize: target outside the window is refused" $?

# StableHLO portable artifacts (VHLO bytecode), when the shared corpus is there.

# xlite memory: the report, XLA's dump file names, errors.
"$XLITE" memory "$ROOT/examples/mlp.hlo" > "$tmp/mem.txt" 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q '^Memory plan of module ' "$tmp/mem.txt" &&
  grep -q '^Lower bound (the checker, this schedule): ' "$tmp/mem.txt" &&
  grep -q '^Entry parameters (' "$tmp/mem.txt"
check "memory prints xlite's report" $?
rm -rf "$tmp/memdumps"
"$XLITE" memory --xla_dump_to="$tmp/memdumps" "$ROOT/examples/mlp.hlo" > /dev/null &&
  (for suffix in before_optimizations.txt cpu_after_optimizations.txt \
      cpu_after_optimizations-buffer-assignment.txt cpu_after_optimizations-memory-usage-report.txt \
      xlite-memory-report.txt xlite-memory-timeline.tsv xlite-memory-timeline.svg; do
    ls "$tmp/memdumps"/module_0001.*."$suffix" > /dev/null 2>&1 || exit 1
  done)
check "memory --xla_dump_to writes XLA's file names and xlite's report" $?
grep -q '^BufferAssignment:$' "$tmp"/memdumps/module_0001.*.cpu_after_optimizations-buffer-assignment.txt &&
  grep -q 'is_scheduled=true' "$tmp"/memdumps/module_0001.*.cpu_after_optimizations.txt &&
  head -1 "$tmp"/memdumps/module_0001.*.xlite-memory-timeline.tsv | grep -q '^step	computation	instruction'
check "memory dumps: buffer assignment, scheduled module, timeline" $?
printf 'HloModule m, buffer_donor={ (1, {}) }\nENTRY e {\n  p = f32[4] parameter(0)\n  q = s32[2] parameter(1)\n  ROOT n = f32[4] negate(p)\n}\n' > "$tmp/donor.hlo"
"$XLITE" memory --xlite_strict_donation "$tmp/donor.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 1 ] && [ ! -s "$tmp/out.txt" ] && grep -q 'xlite_strict_donation: 1 donated parameter element is unusable: parameter 1 {} s32\[2\]' "$tmp/err.txt"
check "--xlite_strict_donation makes an unusable donation an error" $?
"$XLITE" memory "$tmp/donor.hlo" | grep -q 'donated (buffer_donor) but unused: no output has its shape and layout'
check "memory reports an unused donation" $?
"$XLITE" memory --xlite_memory_limit=1000 "$ROOT/examples/mlp.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 4 ] && grep -q 'the memory limit of 1000 bytes cannot be met: the schedule.s peak is 439296 bytes' "$tmp/err.txt" &&
  grep -q 'rematerialization: limit 1000 bytes; peak 439296 bytes -> 439296 bytes (NOT met)' "$tmp/out.txt"
check "memory --xlite_memory_limit: a limit below the floor is an error naming the peak, after the report" $?
printf 'HloModule m, is_scheduled=true\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  x = f32[1000] broadcast(p), dimensions={}\n  y = f32[1000] exponential(x)\n  big = f32[10000] broadcast(p), dimensions={}\n  zero = f32[] constant(0)\n  s = f32[] reduce(big, zero), dimensions={0}, to_apply=add\n  sb = f32[1000] broadcast(s), dimensions={}\n  w = f32[1000] add(x, sb)\n  ROOT v = f32[1000] add(w, y)\n}\n' > "$tmp/remat.hlo"
"$XLITE" memory --xlite_memory_limit=45000 "$tmp/remat.hlo" > "$tmp/out.txt" &&
  grep -q 'peak 48012 bytes -> 44012 bytes (met)' "$tmp/out.txt" &&
  grep -q '%x in %e: recomputed as %x.remat' "$tmp/out.txt"
check "memory --xlite_memory_limit: the report lists what was recomputed" $?
"$XLITE" memory --print=everything "$ROOT/examples/mlp.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q -- "--print takes report, module" "$tmp/err.txt"
check "memory: bad --print rejected" $?
printf 'HloModule m\nENTRY e {\n  p = f32[?] parameter(0)\n  ROOT n = f32[?] negate(p)\n}\n' > "$tmp/unbounded.hlo"
"$XLITE" memory "$tmp/unbounded.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 3 ] && grep -q 'unbounded dimension' "$tmp/err.txt"
check "memory: unbounded dimension is unsupported (exit 3), named" $?
VHLO="$ROOT/../shared/corpus/vhlo"
if [ -d "$VHLO" ]; then
  for v in 0_9_0 1_20_0; do
    "$XLITE" translate --deserialize "$VHLO/stablehlo_legalize_to_vhlo.$v.mlir.bc" > "$tmp/de.txt" &&
      "$XLITE" translate "$VHLO/stablehlo_legalize_to_vhlo.$v.mlir" > "$tmp/src.txt" &&
      cmp -s "$tmp/de.txt" "$tmp/src.txt"
    check "translate --deserialize $v golden prints as its source program" $?
  done
  "$XLITE" translate --deserialize "$VHLO/invalid_vhlo_future.mlir.bc" > "$tmp/out.txt" 2> "$tmp/err.txt"
  [ $? -eq 1 ] && [ ! -s "$tmp/out.txt" ] && grep -q "unregistered operation 'vhlo.constant_v99'" "$tmp/err.txt"
  check "an op from the future: exit 1, named, nothing printed" $?
  "$XLITE" translate --print-stablehlo-version "$VHLO/vhlo_emit_version_api.1_1_0.mlir.bc" |
    grep -q '^// Reading portable artifact with StableHLO version: 1.1.0$'
  check "--print-stablehlo-version reads the producer" $?
  "$XLITE" run "$VHLO/vhlo_emit_version_api.1_1_0.mlir.bc" > "$tmp/out.txt" 2>&1 && grep -q '^out0 = f32\[\]' "$tmp/out.txt"
  check "run accepts .mlir.bc" $?
  "$XLITE" opt --pipeline=simplify "$VHLO/vhlo_emit_version_api.1_1_0.mlir.bc" | grep -q 'add('
  check "opt accepts .mlir.bc" $?
  "$XLITE" translate --serialize --target=1.4.0 "$VHLO/stablehlo_legalize_to_vhlo.0_9_0.mlir" -o "$tmp/a.mlir.bc" &&
    "$XLITE" translate --deserialize "$tmp/a.mlir.bc" > "$tmp/de.txt" &&
    "$XLITE" translate "$VHLO/stablehlo_legalize_to_vhlo.0_9_0.mlir" | cmp -s - "$tmp/de.txt"
  check "translate --serialize --target=1.4.0 round trip" $?
else
  echo "SKIPPED LOUDLY: no VHLO corpus at $VHLO (portable-artifact CLI checks)"
fi

printf 'HloModule m\nENTRY e {\n  a = s32[3] constant({...})\n  b = s32[3] constant({...})\n  ROOT s = s32[3] add(a, b)\n}\n' > "$tmp/elided.hlo"
"$XLITE" run --print_literals "$tmp/elided.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q '^out0 = s32\[3\] {3, 5, 7}$' "$tmp/out.txt" &&
  [ "$(grep -c 'were elided' "$tmp/err.txt")" -eq 1 ] && grep -q 'fake values: a, b$' "$tmp/err.txt"
check "run fills constant({...}) as XLA does, with one warning naming them" $?

# The CPU backend (the default) and its flags.
"$XLITE" run --reference_platform=interpreter --iterations=3 "$ROOT/examples/mlp.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q '^out0 = f32\[8,128\]' "$tmp/out.txt" &&
  grep -q 'compiled in .* ms; 3 iteration(s), median .* ms (cpu, ' "$tmp/err.txt" &&
  grep -q 'against the interpreter: match' "$tmp/err.txt" && grep -q '^out0: matches' "$tmp/err.txt"
check "run compiles by default and checks against --reference_platform=interpreter" $?
"$XLITE" run --backend=interpreter "$ROOT/examples/mlp.hlo" 2>&1 | grep -q 'median .* ms (interpreter)'
check "run --backend=interpreter keeps the interpreter" $?
"$XLITE" run --xlite_profile --xlite_cpu_threads=1 "$ROOT/examples/mlp.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q '(cpu, 1 threads; Execute on argument buffers made once)' "$tmp/err.txt" && grep -q 'kLibrary .*(dot)' "$tmp/err.txt"
check "run --xlite_profile prints time per thunk; --xlite_cpu_threads sets the budget" $?
"$XLITE" run --xlite_cpu_concurrent_executor=false --reference_platform=interpreter \
  "$ROOT/examples/mlp.hlo" 2>&1 | grep -q 'against the interpreter: match'
check "run --xlite_cpu_concurrent_executor=false runs the thunks in order" $?
"$XLITE" run --xlite_cpu_concurrent_executor=maybe "$ROOT/examples/mlp.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "xlite_cpu_concurrent_executor must be true or false" "$tmp/err.txt"
check "run rejects --xlite_cpu_concurrent_executor=maybe" $?
"$XLITE" run --xla_dump_to="$tmp/dump" --xlite_poison_dead_slices "$ROOT/examples/mlp.hlo" > /dev/null 2>&1 &&
  ls "$tmp/dump" | grep -q 'before_optimizations.txt$' &&
  ls "$tmp/dump" | grep -q 'after_optimizations.txt$' &&
  ls "$tmp/dump" | grep -q 'buffer-assignment.txt$' &&
  ls "$tmp/dump" | grep -q 'ir-with-opt.ll$' && ls "$tmp/dump" | grep -q 'xlite-thunks.txt$' &&
  ls "$tmp/dump" | grep -q '\.thunk_sequence\.txt$' &&
  ls "$tmp/dump" | grep -q '\.thunk_sequence_after_thunk_passes\.txt$'
check "run --xla_dump_to writes the HLO, the buffer assignment, the LLVM IR and the thunks" $?
"$XLITE" run --xlite_cpu_enable_command_buffer=false --reference_platform=interpreter \
  "$ROOT/examples/mlp.hlo" 2>&1 | grep -q 'against the interpreter: match'
check "run --xlite_cpu_enable_command_buffer=false runs without command buffers" $?
"$XLITE" run --xlite_cpu_enable_command_buffer=maybe "$ROOT/examples/mlp.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "xlite_cpu_enable_command_buffer must be true or false" "$tmp/err.txt"
check "run rejects --xlite_cpu_enable_command_buffer=maybe" $?
printf 'HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  id = u32[] partition-id()\n  f = f32[] convert(id)\n  b = f32[4] broadcast(f), dimensions={}\n  y = f32[4] add(x, b)\n  ROOT r = f32[4] all-reduce(y), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add\n}\n' > "$tmp/ar.hlo"
"$XLITE" run --replicas=2 --partitions=2 --reference_platform=interpreter "$tmp/ar.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q '^device 3 (replica 1, partition 1):$' "$tmp/out.txt" &&
  grep -q '^d3_out0 = f32\[4\]' "$tmp/out.txt" && grep -q '(cpu, 4 devices, ' "$tmp/err.txt" &&
  [ "$(grep -c 'against the interpreter: match' "$tmp/err.txt")" -eq 4 ]
check "run --replicas --partitions runs compiled on 4 devices and checks each against the interpreter" $?
printf 'HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(x), replica_groups={}, to_apply=add\n}\n' > "$tmp/ar1.hlo"
"$XLITE" run --reference_platform=interpreter "$tmp/ar1.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q 'against the interpreter: match' "$tmp/err.txt"
check "run: a 1 x 1 module's collectives run as groups of one" $?
printf 'HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] custom-call(x), custom_call_target="no_such_target"\n}\n' > "$tmp/cc.hlo"
"$XLITE" run "$tmp/cc.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 3 ] && grep -q "custom-call 'r'" "$tmp/err.txt"
check "run: what the CPU backend cannot compile is exit 3 naming the instruction" $?
"$XLITE" run --backend=gpu "$ROOT/examples/mlp.hlo" > /dev/null 2>&1
[ $? -eq 1 ]
check "run rejects an unknown --backend" $?
for bad in --xlite_cpu_threads=abc --iterations=-1 --iterations=0 --replicas=100000000000 \
    "--replicas=4611686018427387904 --partitions=4" "--replicas=64 --partitions=65" \
    "--backend=cpu --max_seconds=5" "--backend=cpu --max_elements=100"; do
  # shellcheck disable=SC2086
  "$XLITE" run --backend=interpreter $bad "$ROOT/examples/mlp.hlo" > /dev/null 2> "$tmp/err.txt"
  [ $? -eq 1 ] && grep -q "^xlite run: " "$tmp/err.txt"
  check "run rejects $bad with a message, exit 1" $?
done
"$XLITE" run --reference_platform=interpreter --max_seconds=60 "$ROOT/examples/mlp.hlo" > /dev/null 2>&1
check "run --max_seconds bounds the reference interpreter of a compiled run" $?

# Host transfers: --infeed blocks (consecutive arrays per tuple block), outfeed values
# printed and saved with --outfeed, the same on both backends.
cat > "$tmp/blocks.hlo" <<'EOF'
HloModule make_blocks
ENTRY e {
  a = f32[3] constant({1, 2, 3})
  b = s32[] constant(7)
  c = f32[3] constant({10, 20, 30})
  d = s32[] constant(8)
  e = f32[3] constant({100, 200, 300})
  f = s32[] constant(9)
  ROOT t = (f32[3], s32[], f32[3], s32[], f32[3], s32[]) tuple(a, b, c, d, e, f)
}
EOF
"$XLITE" run --backend=interpreter --output="$tmp/blocks.npz" "$tmp/blocks.hlo" > /dev/null 2>&1
check "run --output writes the infeed blocks" $?
for backend in cpu interpreter; do
  "$XLITE" run --backend=$backend --infeed="$tmp/blocks.npz" --outfeed="$tmp/outfeed_$backend.npz" \
    "$ROOT/examples/infeed_loop.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
  [ $? -eq 0 ] && grep -q '^out0 = f32\[3\] {111, 222, 333}$' "$tmp/out.txt" \
    && grep -q '^outfeed0 = f32\[3\] {1, 2, 3}$' "$tmp/out.txt" \
    && grep -q '^outfeed2 = f32\[3\] {111, 222, 333}$' "$tmp/out.txt" && [ -s "$tmp/outfeed_$backend.npz" ]
  check "run --backend=$backend --infeed loops over the blocks and prints the outfeed" $?
done
# The arrays, not the archives: a zip entry records when it was written.
python3 -c 'import sys, zipfile
a, b = (zipfile.ZipFile(f) for f in sys.argv[1:])
sys.exit(sorted((i.filename, a.read(i)) for i in a.infolist()) !=
         sorted((i.filename, b.read(i)) for i in b.infolist()))' \
  "$tmp/outfeed_cpu.npz" "$tmp/outfeed_interpreter.npz"
check "--outfeed files of both backends hold identical arrays" $?
"$XLITE" run --infeed="$tmp/blocks.npz" --iterations=2 --reference_platform=interpreter \
  "$ROOT/examples/infeed_loop.hlo" > "$tmp/out.txt" 2> "$tmp/err.txt"
[ $? -eq 0 ] && grep -q 'against the interpreter: match' "$tmp/err.txt" \
  && [ "$(grep -c '^outfeed' "$tmp/out.txt")" -eq 3 ]
check "run --infeed with --iterations and the reference interpreter" $?
"$XLITE" run "$ROOT/examples/infeed_loop.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "infeed 'in': no infeed block for device 0" "$tmp/err.txt"
check "run without --infeed: the infeed names itself, exit 1" $?
"$XLITE" run --infeed="$tmp/outfeed_cpu.npz" "$ROOT/examples/infeed_loop.hlo" > /dev/null 2> "$tmp/err.txt"
[ $? -eq 1 ] && grep -q "not a multiple of the 2 arrays of one (f32\[3\], s32\[\]) infeed block" "$tmp/err.txt"
check "run --infeed with arrays that do not fill whole blocks, exit 1" $?
printf 'HloModule m\nENTRY e {\n  t = token[] after-all()\n  in = (s32[2], token[]) infeed(t)\n  ROOT x = s32[2] get-tuple-element(in), index=0\n}\n' > "$tmp/one_infeed.hlo"
for backend in cpu interpreter; do
  "$XLITE" run --backend=$backend --infeed="$tmp/blocks.npz" "$tmp/one_infeed.hlo" > /dev/null 2> "$tmp/err.txt"
  [ $? -eq 1 ] && grep -q "infeed 'in': the next infeed block of device 0 has shape f32\[3\] but the infeed reads s32\[2\]" "$tmp/err.txt"
  check "run --backend=$backend: an infeed block of the wrong shape names both shapes" $?
done

echo "cli: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
