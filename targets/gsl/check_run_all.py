#!/usr/bin/env python3
"""Does `numfuzz run-all`'s merged bug list match the benchmark's merge of the same reports?

    check_run_all.py OUT      (a `numfuzz run-all ... -o OUT` over GSL harnesses)

Reads OUT/report.json and merges OUT/triage/<function>.json again with bench_report.py's
load_tool (the merge bench-gsl.sh's report uses); prints both bug lists' sizes, the root sites
only one of them has, and exits 1 when they differ.
"""
import json
import os
import sys
import tempfile

from bench_report import load_tool


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_run_all.py OUT")
    out = os.path.abspath(sys.argv[1])
    with open(os.path.join(out, "report.json")) as fh:
        report = json.load(fh)
    functions = [f["function"] for f in report["functions"]]
    with tempfile.TemporaryDirectory() as results:
        os.makedirs(os.path.join(results, "triage"))
        os.symlink(os.path.join(out, "triage"), os.path.join(results, "triage", "numfuzz"))
        merged, _, _, _, _, unexplained = load_tool(results, "numfuzz", functions)
    bench = {key: sorted(set(m["bug_in"])) for key, m in merged.items() if m["bug"] is not None}
    run_all = {b["key"]: sorted(b["functions"]) for b in report["bugs"]}
    print(f"{len(functions)} functions: run-all {len(run_all)} bug entries + {len(report['unexplained'])} "
          f"unexplained; bench merge {len(bench)} + {len(unexplained)}")
    differ = 0
    for key in sorted(set(bench) | set(run_all)):
        if bench.get(key) != run_all.get(key):
            differ += 1
            print(f"  differs: {key}: bench {bench.get(key)}, run-all {run_all.get(key)}")
    if len(report["unexplained"]) != len(unexplained):
        differ += 1
    print("same bug list" if not differ else f"{differ} differences")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
