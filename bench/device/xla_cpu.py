# XLA:CPU (jaxlib, on the device machine) on the modules cpu_bench runs, in its line format:
#   <program>\txla-cpu@2t\t<median_ms>\t<runs/s> runs/s      (the process pinned to 2 cores)
#   <program>\txla-compile@1t\t<ms>\t<compiles/s> compiles/s\tfirst=<ms of the first compile>
#   # start <index> <program>                               (before each, for run.sh's restarts)
# Usage: python3 xla_cpu.py CORPUS [BUDGET_S [ONLY,SUBSTRINGS [START_INDEX]]]
# The HLO text goes through jaxlib's parser, hlo_to_stablehlo and compile_and_load
# (../shared/bench/xla_cpu_reference.md). Arguments: inputs.npz where the JAX program has one
# (as cpu_bench), else floats ~ N(0, 0.1) and integers 0 (as that reference). Each timed run
# gets freshly put arguments (donated ones are consumed); only execute and the wait are timed:
# 2 warm-ups, then runs until BUDGET_S (at least 5, at most 100). Compile time: the second
# compile_and_load of the module (warm, as cpu_bench's BM_Compile repeats its own).
import os, sys, time, glob, traceback, faulthandler
faulthandler.enable()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
import jax
import jax.extend.backend
from jax._src.lib import xla_client as xc
try:
    from jax._src.lib import _jax
except Exception:
    _jax = None

root = sys.argv[1]
budget_s = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
only = sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[3] else []
start_index = int(sys.argv[4]) if len(sys.argv) > 4 else 0
print("# jax", jax.__version__, "devices", jax.devices("cpu"), file=sys.stderr, flush=True)
backend = jax.extend.backend.get_backend("cpu")
dev = backend.local_devices()[0]


def parse(text):
    errs = []
    cands = []
    if _jax is not None and hasattr(_jax, "hlo_module_from_text"):
        cands.append(_jax.hlo_module_from_text)
    if hasattr(xc, "_xla") and hasattr(xc._xla, "hlo_module_from_text"):
        cands.append(xc._xla.hlo_module_from_text)
    try:
        import jaxlib._hlo as h
        cands.append(h.hlo_module_from_text)
    except Exception as e:
        errs.append(repr(e))
    if hasattr(xc, "hlo") and hasattr(xc.hlo, "hlo_module_from_text"):
        cands.append(xc.hlo.hlo_module_from_text)
    for f in cands:
        try:
            return f(text)
        except Exception as e:
            errs.append(repr(e)[:300])
    raise RuntimeError("no hlo_module_from_text worked: " + " | ".join(errs))


def to_stablehlo(proto):
    mods = [m for m in (getattr(_jax, "mlir", None), getattr(getattr(xc, "_xla", None), "mlir", None)) if m]
    errs = []
    for m in mods:
        try:
            return m.hlo_to_stablehlo(proto)
        except Exception as e:
            errs.append(repr(e)[:300])
    raise RuntimeError("hlo_to_stablehlo failed: " + " | ".join(errs))


def compile_shlo(shlo):
    if hasattr(backend, "compile_and_load"):
        return backend.compile_and_load(shlo, xc.DeviceList((dev,)), xc.CompileOptions())
    return backend.compile(shlo, xc.DeviceList((dev,)), xc.CompileOptions())


def compile_text(text):
    m = parse(text)
    proto = m.as_serialized_hlo_module_proto()
    shlo = to_stablehlo(proto)
    shapes = xc.XlaComputation(proto).program_shape().parameter_shapes()
    t0 = time.perf_counter()
    exe = compile_shlo(shlo)
    first = time.perf_counter() - t0
    return exe, shapes, first, shlo


def make_args(shapes, npz):
    if npz:
        z = np.load(npz)
        return [np.asarray(z["arg%d" % i]) for i in range(len(shapes))]
    rng = np.random.default_rng(0)
    out = []
    for s in shapes:
        dt = np.dtype(s.numpy_dtype())
        dims = s.dimensions()
        if dt.kind == "f" or dt.name in ("bfloat16",):
            out.append((rng.standard_normal(dims) * 0.1).astype(dt))
        else:
            out.append(np.zeros(dims, dt))
    return out


def run_once(exe, host_args):
    bufs = [jax.device_put(a, dev) for a in host_args]
    for b in bufs:
        b.block_until_ready()
    t0 = time.perf_counter()
    res = exe.execute_sharded(bufs)
    outs = res.disassemble_into_single_device_arrays()
    for o in outs:
        for a in (o if isinstance(o, (list, tuple)) else [o]):
            a.block_until_ready()
    return time.perf_counter() - t0


def programs():
    out = []
    for line in open(os.path.join(root, "jax", "manifest.tsv")):
        c = line.rstrip("\n").split("\t")
        if c[0] == "name":
            continue
        d = os.path.join(root, "jax", c[0])
        npz = os.path.join(d, "inputs.npz")
        out.append(("jax/" + c[0], os.path.join(d, "before_optimizations.txt"), npz if os.path.exists(npz) else ""))
    pre = "xla__backends__cpu__benchmarks__hlo__"
    for p in sorted(glob.glob(os.path.join(root, "xla", "hlo_file", pre + "*.hlo"))):
        out.append(("xla/" + os.path.basename(p)[len(pre):-4], p, ""))
    return out


for index, (name, path, npz) in enumerate(programs()):
    if index < start_index or (only and not any(o in name for o in only)):
        continue
    print("# start %d %s" % (index, name), flush=True)
    try:
        text = open(path).read()
        exe, shapes, first_compile, shlo = compile_text(text)
        t0 = time.perf_counter()
        exe2 = compile_shlo(shlo)
        second_compile = time.perf_counter() - t0
        del exe2
        args = make_args(shapes, npz)
        run_once(exe, args)
        run_once(exe, args)
        times = []
        start = time.perf_counter()
        while len(times) < 100 and (len(times) < 5 or time.perf_counter() - start < budget_s):
            times.append(run_once(exe, args))
        med = float(np.median(times)) * 1e3
        print("%s\txla-cpu@2t\t%.4f\t%.3f runs/s" % (name, med, 1e3 / med), flush=True)
        print("%s\txla-compile@1t\t%.4f\t%.3f compiles/s\tfirst=%.4f" %
              (name, second_compile * 1e3, 1 / second_compile, first_compile * 1e3), flush=True)
    except Exception as e:
        print("# xla-failed %s\t%s" % (name, repr(e)[:500].replace("\n", " ")), flush=True)
        traceback.print_exc(file=sys.stderr)
