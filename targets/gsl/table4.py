#!/usr/bin/env python3
"""The NumFuzz paper's Table IV over several bench-gsl runs: for each of its 7 exceptions (the
T4-* rows of known-bugs.tsv) and GSL bug 52359, the time to first find it in each run and the
median over the runs (a run that missed it counts as slower than every budget).

    python3 targets/gsl/table4.py RESULTS_DIR [RESULTS_DIR ...] [--json]

Each RESULTS_DIR is a finished `scripts/bench-gsl.sh` run (its report.json).
"""
import json
import os
import statistics
import sys

ROWS = ("T4-", "B52359")


def runs_of(dirs):
    runs = []
    for d in dirs:
        path = os.path.join(d, "report.json")
        try:
            with open(path) as fh:
                report = json.load(fh)
        except (OSError, ValueError) as e:
            sys.exit(f"table4.py: cannot read {path} ({e}); is {d} a finished bench-gsl run?")
        runs.append({r["id"]: r for r in report["known_bugs"] if r["id"].startswith(ROWS)})
    return runs


def median_ms(times):
    """Median of first-seen times, None (not found) ranking above any time; None when the
    median run did not find it."""
    ranked = sorted(times, key=lambda t: (t is None, t or 0))
    if len(ranked) % 2:
        return ranked[len(ranked) // 2]
    lo, hi = ranked[len(ranked) // 2 - 1], ranked[len(ranked) // 2]
    return None if lo is None or hi is None else statistics.mean([lo, hi])


def table(runs):
    ids = list(runs[0])
    out = []
    for i in ids:
        rows = [run.get(i) for run in runs]
        times = [r["first_seen_ms"] if r and r["found"] else None for r in rows]
        first = next(r for r in rows if r)
        out.append({
            "id": i,
            "kind": first["kind"],
            "site": first["site"],
            "times_ms": times,
            "found_in": sum(t is not None for t in times),
            "median_ms": median_ms(times),
        })
    return out


def seconds(ms):
    return "not found" if ms is None else f"{ms / 1000:.2f} s"


def markdown(rows, n):
    head = "| id | kind | site | " + " | ".join(f"run {k + 1}" for k in range(n)) + " | found in | median |"
    lines = [head, "|" + "---|" * (n + 5)]
    for r in rows:
        cells = [r["id"], r["kind"], r["site"], *map(seconds, r["times_ms"]),
                 f"{r['found_in']} of {n}", seconds(r["median_ms"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    as_json = "--json" in argv
    dirs = [a for a in argv if a != "--json"]
    if not dirs or any(a.startswith("-") for a in dirs):
        sys.exit("usage: table4.py RESULTS_DIR [RESULTS_DIR ...] [--json]")
    runs = runs_of(dirs)
    rows = table(runs)
    if as_json:
        print(json.dumps({"runs": dirs, "rows": rows}, indent=1))
    else:
        print(markdown(rows, len(runs)))


if __name__ == "__main__":
    main(sys.argv[1:])
