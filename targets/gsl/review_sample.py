#!/usr/bin/env python3
"""Draws bugs at random from a GSL benchmark run, for a reader to judge by hand.

    review_sample.py RESULTS_DIR [COUNT] [--seed N]

The population is every per-function bug entry of the run (a root that one function's triage
put in its bug list; a site that is a bug in three functions is three entries, because each
function is a separate claim to check), outside the internal-function harnesses. Per draw it
prints what a reviewer needs without opening anything: the function, its minimal input, what
GSL returned, the reference and its verdict, the exception's site and expression, and how the
exception reached the result. The seed makes the draw reproducible (README: "Manual review").
"""

import argparse
import json
import os
import random

from bench_report import short_path
from gen_harnesses import INTERNAL


def bug_entries(results):
    """(function, finding) for every bug of every function's triage report, in a stable order."""
    base = os.path.join(results, "triage", "numfuzz")
    entries = []
    for fn in sorted(os.listdir(base)):
        path = os.path.join(base, fn, "triage.json")
        if fn in INTERNAL or not os.path.exists(path):
            continue
        with open(path) as fh:
            report = json.load(fh)
        by_id = {f["id"]: f for f in report["findings"]}
        entries += [(fn, by_id[b]) for b in report.get("bugs", []) if b in by_id]
    return entries


def fields_of(finding):
    shown = finding.get("minimized") or finding["input"]
    return ", ".join(f["value"] for f in shown["fields"])


def results_of(finding):
    shown = finding.get("minimized") or {}
    results = shown.get("results") or finding.get("results") or []
    return ", ".join((r["name"] or f"result {r['index']}") + " = " + r["value"] for r in results) or "no results"


def describe(fn, finding):
    loc = finding["location"]
    site = f"{short_path(loc['file'])}:{loc['line']}:{loc['column']}"
    ref = finding.get("reference") or {}
    verdict = f"{ref.get('verdict')} (mpmath {ref.get('value')})" if ref else "no reference"
    expr = (finding.get("minimized") or {}).get("expression") or finding["operation"]["expression"]
    return (f"{fn}({fields_of(finding)}): {results_of(finding)}; {verdict}\n"
            f"    {finding['kind']} at {site} `{expr}`, {finding['consequence']}"
            + (f" (also to {', '.join(finding['escapes_to'])})" if finding.get("escapes_to") else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("count", nargs="?", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    entries = bug_entries(args.results)
    drawn = random.Random(args.seed).sample(entries, min(args.count, len(entries)))
    print(f"{len(drawn)} of {len(entries)} per-function bug entries, seed {args.seed}")
    for i, (fn, finding) in enumerate(drawn, 1):
        print(f"{i:2}. {describe(fn, finding)}")


if __name__ == "__main__":
    main()
