#!/bin/bash
# Packs what bench/device/run.sh needs on the device machine into .dev/pack.tar.xz
# (git-ignored through .git/info/exclude; the device tool carries it):
#   bin/     cpu_bench, e2e_bench, xlite (stripped), the peers' limits and gemm_peers
#   lib/     every shared library they load but glibc's; libz3 and libicudata are
#            replaced by empty stand-ins (LLVM never calls Z3, libxml2 never needs ICU's
#            data here, and together they are 15 MB of the 64 MiB a call may carry)
#   corpus/  the JAX programs and XLA's CPU benchmark modules (what cpu_bench runs)
#   xla_cpu.py, xla_parse.py
# Usage: bench/device/pack.sh [BUILD_DIR]   (after `ninja -C build cpu_bench e2e_bench`)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
corpus=$root/../shared/corpus
peers=$root/../shared/bench/peers/cpp
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,lib,corpus/jax,corpus/xla/hlo_file} "$root/.dev"
exclude=$(git -C "$root" rev-parse --git-path info/exclude)
case $exclude in /*) ;; *) exclude=$root/$exclude ;; esac
grep -qx '/.dev/' "$exclude" 2>/dev/null || echo '/.dev/' >> "$exclude"
cp "$build/bin/cpu_bench" "$build/bin/e2e_bench" "$build/bin/xlite" "$stage/bin/"
strip "$stage"/bin/*
# The peers, built for the device's CPU (Emerald Rapids runs -march=sapphirerapids code), not
# for this host's.
flags=(-std=c++20 -O3 -march=sapphirerapids -mprefer-vector-width=512 -fopenmp)
g++ "${flags[@]}" -ffast-math -I/usr/include/eigen3 "$peers/limits.cpp" -o "$stage/bin/limits"
g++ "${flags[@]}" -I/usr/include/eigen3 -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  "$peers/gemm_peers.cpp" -o "$stage/bin/gemm_peers" -lopenblas -ldnnl
strip "$stage/bin/limits" "$stage/bin/gemm_peers"
if ldd "$stage"/bin/* | grep -q "not found"; then
  ldd "$stage"/bin/* | grep "not found" >&2
  exit 1
fi
for lib in $(ldd "$stage"/bin/* | awk '/=>/ {print $3}' | sort -u); do
  case $(basename "$lib") in
    libc.so* | libm.so* | libmvec.so* | ld-linux* | libpthread.so* | libdl.so* | librt.so*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
echo 'const char icudt72_dat[64] = {0};' > "$stage/icu.c"
gcc -shared -fPIC -Wl,-soname,libicudata.so.72 -o "$stage/lib/libicudata.so.72" "$stage/icu.c"
echo '' > "$stage/z3.c"
gcc -shared -fPIC -Wl,-soname,libz3.so.4 -o "$stage/lib/libz3.so.4" "$stage/z3.c"
rm "$stage"/*.c
cp -r "$corpus"/jax/* "$stage/corpus/jax/"
for f in "$corpus"/xla/hlo_file/xla__backends__cpu__benchmarks__hlo__*.hlo; do
  case $f in *gemma* | *xnn.*) continue ;; esac  # multi-GB arguments; already optimized
  cp "$f" "$stage/corpus/xla/hlo_file/"
done
cp "$root/bench/device/xla_cpu.py" "$root/bench/device/xla_parse.py" "$stage/"
(cd "$stage" && tar cf - bin lib corpus xla_cpu.py xla_parse.py | xz -T0 -9 > "$root/.dev/pack.tar.xz")
cp "$root/bench/device/run.sh" "$root/.dev/run.sh"
ls -la "$root/.dev/pack.tar.xz"
