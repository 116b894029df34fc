#!/usr/bin/env python3
"""What a replay costs per build: the campaign binary, the x87 shadow build, the MPFR build at
the ladder's two precisions (128 and 512 bits), each run on the same escaping inputs of a run-all
(the `+esc` crashes of every campaign), one process per input as triage runs them.

    python3 targets/gsl/replay_cost.py RUN_ALL_DIR HARNESS_BIN_DIR [--per-function N] [--seed S]

Prints, per build, the median and mean wall time of one replay and the total, and the ratio of
each to the campaign binary's. The builds' sizes are printed beside them. Run it on a quiet
machine: the figures are wall times.
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import time

BUILDS = [
    ("campaign binary", "", {}),
    ("x87 shadow", ".shadow", {}),
    ("MPFR, 128 bits", ".mpfr", {"NUMFUZZ_SHADOW_PRECISION": "128"}),
    ("MPFR, 512 bits", ".mpfr", {"NUMFUZZ_SHADOW_PRECISION": "512"}),
]


def escaping_inputs(run_all, per_function, rng):
    """(function, input path) of up to `per_function` escaping inputs of each campaign."""
    base = os.path.join(run_all, "campaigns")
    chosen = []
    for fn in sorted(os.listdir(base)):
        crashes = os.path.join(base, fn, "default", "crashes")
        if not os.path.isdir(crashes):
            continue
        names = sorted(n for n in os.listdir(crashes) if n.endswith("+esc"))
        rng.shuffle(names)
        chosen += [(fn, os.path.join(crashes, n)) for n in names[:per_function]]
    return chosen


def replay_seconds(binary, path, env):
    start = time.perf_counter()
    subprocess.run([binary, path], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=60, check=False)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_all")
    ap.add_argument("bins")
    ap.add_argument("--per-function", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    inputs = escaping_inputs(args.run_all, args.per_function, random.Random(args.seed))
    inputs = [(fn, p) for fn, p in inputs
              if all(os.path.exists(os.path.join(args.bins, fn + suffix)) for _, suffix, _ in BUILDS)]
    if not inputs:
        sys.exit("replay_cost.py: no escaping inputs with all four builds under %s and %s"
                 % (args.run_all, args.bins))
    base_env = dict(os.environ, NUMFUZZ_ABORT="0", NUMFUZZ_REPORT="json")
    times = {name: [] for name, _, _ in BUILDS}
    for fn, path in inputs:
        for name, suffix, extra in BUILDS:
            binary = os.path.join(args.bins, fn + suffix)
            times[name].append(replay_seconds(binary, path, dict(base_env, **extra)))
    functions = len({fn for fn, _ in inputs})
    print("%d escaping inputs of %d functions, one process each\n" % (len(inputs), functions))
    print("| build | median ms | mean ms | total s | x campaign binary (mean) | size of one harness (median MB) |")
    print("|---|---|---|---|---|---|")
    base_mean = statistics.mean(times[BUILDS[0][0]])
    for name, suffix, _ in BUILDS:
        t = times[name]
        sizes = [os.path.getsize(os.path.join(args.bins, fn + suffix)) for fn in {fn for fn, _ in inputs}]
        print("| %s | %.1f | %.1f | %.1f | %.2f | %.1f |" % (
            name, 1000 * statistics.median(t), 1000 * statistics.mean(t), sum(t),
            statistics.mean(t) / base_mean, statistics.median(sizes) / 1e6))


if __name__ == "__main__":
    main()
