#!/usr/bin/env python3
"""The README's table "CPU backend: compiled vs interpreter vs XLA:CPU" in Markdown.

    bench/cpu_table.py --bench build/bench-cpu/cpu_bench.txt \
        --limits build/bench-cpu/limits-before.tsv build/bench-cpu/limits-after.tsv \
        [--corpus ../shared/corpus] [--reference ../shared/bench/xla_cpu_reference.md]

Reads cpu_bench's peers-format lines and '#' notes, the peers' `limits --threads 2`
output taken in the same run, XLA:CPU's figures (xla_cpu_reference.md's module table,
the JAX corpus's manifest.tsv) and scales XLA's figures by this machine's speed as
xla_cpu_reference.md's method 2 says: speed = sqrt((peak_here / peak_device) *
(triad_here / triad_device)), XLA's time expected here = figure / speed.
Standard library only.
"""
import argparse
import datetime
import math
import os
import platform
import re
import sys

PEER_LINE = re.compile(r"^([^#\t][^\t]*)\t([^\t@]+)@(\d+)t\t([0-9.]+)\t([0-9.eE+-]+) (.+)$")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def parse_bench(path):
    rows = {}  # (workload, impl, threads) -> median ms
    values = {}  # (workload, impl, threads) -> (value, unit)
    programs = {}  # name -> {key: value}
    refused = {}  # name -> error
    skipped = []  # (name, impl, reason)
    for line in read_lines(path):
        m = PEER_LINE.match(line)
        if m:
            key = (m.group(1), m.group(2), int(m.group(3)))
            rows[key] = float(m.group(4))
            values[key] = (float(m.group(5)), m.group(6))
            continue
        if line.startswith("# program "):
            name, *fields = line[len("# program "):].split("\t")
            programs[name] = dict(f.split("=", 1) for f in fields if "=" in f)
        elif line.startswith("# refused "):
            name, _, error = line[len("# refused "):].partition("\t")
            refused[name] = error
        elif line.startswith("# skipped "):
            parts = line[len("# skipped "):].split("\t")
            skipped.append((parts[0], parts[1] if len(parts) > 1 else "",
                            parts[2] if len(parts) > 2 else ""))
    return rows, values, programs, refused, skipped


def parse_limits(path):
    peak = triad = None
    for line in read_lines(path):
        m = PEER_LINE.match(line)
        if not m:
            continue
        if (m.group(1), m.group(2)) == ("peak_fma_fp32", "cpp-avx512-zmm-fma"):
            peak = float(m.group(5))
        elif (m.group(1), m.group(2)) == ("stream_triad_256MiB", "cpp-loop"):
            triad = float(m.group(5))
    if peak is None or triad is None:
        sys.exit(f"{path}: no peak_fma_fp32 cpp-avx512-zmm-fma / stream_triad_256MiB cpp-loop line")
    return peak, triad


def parse_reference(path):
    text = open(path, encoding="utf-8").read()
    peak = re.search(r"peak FMA \(zmm\)\s+\*\*([0-9.]+) GFLOP/s\*\*", text)
    triad = re.search(r"STREAM triad \(`cpp-loop`\)\s+\*\*([0-9.]+) GB/s\*\*", text)
    if not peak or not triad:
        sys.exit(f"{path}: cannot find the device host's peak FMA and STREAM triad")
    modules = {}
    for m in re.finditer(r"^\| `([^`]+)` \| ([0-9.]+) \| ([0-9.]+) \|\s*$", text, re.M):
        modules["xla/" + m.group(1)] = (float(m.group(2)), float(m.group(3)) * 1e3)
    return float(peak.group(1)), float(triad.group(1)), modules


def parse_manifest(path):
    out = {}
    lines = read_lines(path)
    header = lines[0].split("\t")
    for line in lines[1:]:
        cols = dict(zip(header, line.split("\t")))
        if "name" in cols and cols.get("xla_cpu_ms_2t"):
            out["jax/" + cols["name"]] = (float(cols["xla_cpu_ms_2t"]),
                                          float(cols["xla_compile_s"]) * 1e3)
    return out


def fmt_ms(ms):
    if ms is None:
        return "–"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3g}"


def fmt_ratio(r):
    if r is None:
        return "–"
    return f"{r:.0f}×" if r >= 10 else f"{r:.2g}×"


def cpu_model():
    try:
        for line in read_lines("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_flags():
    try:
        for line in read_lines("/proc/cpuinfo"):
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                wanted = [f for f in ("avx512f", "avx512_bf16", "amx_tile") if f in flags]
                return " ".join(wanted) if wanted else "no AVX-512"
    except OSError:
        pass
    return "flags unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, help="cpu_bench's stdout")
    ap.add_argument("--limits", nargs="*", default=[],
                    help="`limits --threads 2` outputs (none: XLA's figures stay unscaled)")
    ap.add_argument("--corpus", default=os.environ.get("XLITE_CORPUS", "../shared/corpus"))
    ap.add_argument("--reference", default=None,
                    help="xla_cpu_reference.md (default: CORPUS/../bench/xla_cpu_reference.md)")
    args = ap.parse_args()
    reference = args.reference or os.path.join(args.corpus, "..", "bench", "xla_cpu_reference.md")

    rows, values, programs, refused, skipped = parse_bench(args.bench)
    device_peak, device_triad, xla = parse_reference(reference)
    manifest = os.path.join(args.corpus, "jax", "manifest.tsv")
    if os.path.exists(manifest):
        xla.update(parse_manifest(manifest))
    speeds = []
    limits_text = []
    for path in args.limits:
        peak, triad = parse_limits(path)
        speeds.append(math.sqrt((peak / device_peak) * (triad / device_triad)))
        limits_text.append(f"peak FMA {peak:.1f} GFLOP/s, triad {triad:.1f} GB/s")
    speed = math.exp(sum(math.log(s) for s in speeds) / len(speeds)) if speeds else 1.0
    scaled = "scaled" if speeds else "device host, unscaled"

    out = []
    finished = datetime.datetime.fromtimestamp(os.path.getmtime(args.bench), datetime.timezone.utc)
    out.append(f"Measured {finished:%Y-%m-%d %H:%M} UTC (end of the run) on {cpu_model()} "
               f"({cpu_flags()}), {os.cpu_count()} cores, a shared KVM guest: expect ±30% noise.")
    out.append("")
    source = ("XLA:CPU's figures come from `../shared/bench/xla_cpu_reference.md` (XLA modules) "
              "and `../shared/corpus/jax/manifest.tsv` (JAX programs), measured on the device "
              "host pinned to 2 cores")
    if speeds:
        out.append(source + ", and are **scaled to this machine** (the reference's method 2): "
                   f"`limits --threads 2` here gave {'; then '.join(limits_text)} against the "
                   f"device host's {device_peak} GFLOP/s and {device_triad} GB/s, so speed = "
                   f"{' and '.join(f'{s:.3f}' for s in speeds)} (used: {speed:.3f}, their "
                   "geometric mean) and XLA's time expected here = figure ÷ speed (compile "
                   "times too).")
    else:
        out.append(source + ". **They are not scaled** (no `limits` output was given): "
                   "absolute times do not carry across machines.")
    out.append("")
    out.append(f"| program | thunks run | xlite compile ms | XLA compile ms ({scaled}) | "
               f"xlite 1t ms | xlite 2t ms | interpreter ms | XLA:CPU 2t ms ({scaled}) | "
               "xlite ÷ XLA | interpreter ÷ xlite | check |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    names = list(programs)
    ratios = []
    for name in names:
        info = programs[name]
        compile_ms = rows.get((name, "xlite-compile", 1))
        t1 = rows.get((name, "xlite-cpu", 1))
        t2 = rows.get((name, "xlite-cpu", 2))
        interp = rows.get((name, "xlite-interpreter", 1))
        figure = xla.get(name)
        xla_ms = figure[0] / speed if figure else None
        xla_compile = figure[1] / speed if figure else None
        best = min([t for t in (t1, t2) if t is not None], default=None)
        ratio = best / xla_ms if best is not None and xla_ms else None
        if ratio:
            ratios.append(ratio)
        vs_interp = interp / best if interp is not None and best else None
        if name in refused:
            check = "refused"
        else:
            check = info.get("check", "")
            if check.startswith("MISMATCH"):
                check = "**mismatch**"
            elif not check and interp is None:
                check = "no interpreter"
        if interp is None:
            why = next((r for n, i, r in skipped if n == name and "interpreter" in i), None)
            interp_cell = "> cap" if why and "exceeds" in why else "–"
        else:
            interp_cell = fmt_ms(interp)
        out.append("| " + " | ".join([
            f"`{name}`", info.get("thunks_run", "–").replace("?", "not counted"), fmt_ms(compile_ms), fmt_ms(xla_compile),
            fmt_ms(t1), fmt_ms(t2), interp_cell, fmt_ms(xla_ms) if figure else "not timed",
            fmt_ratio(ratio), fmt_ratio(vs_interp), check]) + " |")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        ordered = sorted(ratios)
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else math.sqrt(ordered[mid - 1] * ordered[mid])
        out.append(f"| geometric mean (median) over {len(ratios)} programs | | | | | | | | "
                   f"{fmt_ratio(geo)} ({fmt_ratio(median)}) | | |")
    out.append("")
    out.append("xlite ÷ XLA: the better of xlite's 1- and 2-thread medians over XLA's scaled "
               "2-core median. interpreter ÷ xlite: the interpreter's median over that same "
               "xlite time. check: the compiled outputs against the interpreter's on the same "
               "arguments (jax/README.md's tolerance; bf16 and f8 within 4 ulps, "
               "as fusions keep them in f32: runtime::ExcessPrecisionTolerance).")
    dispatch = sorted((w, i, t, ms, values[(w, i, t)][0]) for (w, i, t), ms in rows.items()
                      if w.startswith("dispatch_") and w.endswith("_thunk"))
    if dispatch:
        out.append("")
        out.append("Cost per thunk through `Executable::Execute` by executor (the slope between "
                   "a short and a long run, so the fixed cost of one Execute is left out):")
        out.append("")
        out.append("| workload | executor | threads | ns per thunk | ms per long run |")
        out.append("|---|---|---:|---:|---:|")
        for w, i, t, ms, value in dispatch:
            executor = i.rsplit("-", 1)[-1] if i.startswith("xlite-cpu-") else i
            out.append(f"| `{w}` | {executor} | {t} | {value:.1f} | {fmt_ms(ms)} |")
        fixed = sorted((t, ms) for (w, i, t), ms in rows.items()
                       if w == "execute_one_kernel" and i.endswith("sequential"))
        if fixed:
            out.append("")
            out.append("One `Execute` of a one-kernel module (the fixed cost: argument holds, "
                       "output and temp allocation, one thunk): " +
                       ", ".join(f"{ms * 1e3:.2f} µs at {t} thread{'s' if t > 1 else ''}"
                                 for t, ms in fixed) + ".")
    mismatches = [(n, i["check"]) for n, i in programs.items()
                  if i.get("check", "").startswith("MISMATCH") and n not in refused]
    if mismatches:
        out.append("")
        out.append("Compiled results that differ from the interpreter's:")
        out.append("")
        for name, check in mismatches:
            out.append(f"- `{name}`: {check[len('MISMATCH: '):]}")
    if refused:
        out.append("")
        out.append("Refused by the backend (compile or run error):")
        out.append("")
        for name, error in refused.items():
            out.append(f"- `{name}`: {error}")
    notes = [(n, i, r) for n, i, r in skipped if not (n in refused)]
    if notes:
        out.append("")
        out.append("Skipped:")
        out.append("")
        for name, impl, reason in notes:
            what = "not benchmarked" if impl == "all" else impl
            out.append(f"- `{name}` ({what}): {reason}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
