#!/usr/bin/env python3
"""Two GSL benchmark runs side by side, for ablations (`-- --no-local-search`) and regressions.

    bench_compare.py RUN_A RUN_B

Each RUN is a results/gsl-* directory of scripts/bench-gsl.sh (its config.json, triage/ and
campaigns/). Both runs are merged again over the public functions that BOTH triaged, with
bench_report.py's rules, so a run cut short compares fairly. Prints, in Markdown:
- the counts of each run (bugs, findings by consequence, known bugs, executions, and the
  local-search stage's share of them from each campaign's fuzzer_stats);
- the same counts over two groups of functions: those where the stage took more than a fifth of
  some run's executions (slow targets, where a descent is expensive), and the others;
- the bugs (site, kind) that only one run found, with the functions that reach them.
"""

import json
import os
import sys

from bench_report import INTERNAL, known_bugs, load_tool, tally

# A function whose campaign gave the stage more than this share of its executions, in either run.
STAGE_HEAVY = 0.2


def slice_execs(plot_data):
    """Executions over every slice of a campaign that `run-all --budget` resumed: each slice's
    plot_data rows count from 0 again, so a slice's last row before the count falls is added."""
    total = last = 0
    with open(plot_data) as fh:
        for line in fh:
            cols = [c.strip() for c in line.split(",")]
            if line.startswith("#") or len(cols) < 12:
                continue
            execs = int(cols[11])
            if execs < last:
                total += last
            last = execs
    return total + last


def campaign_stats(run, fn):
    """Executions and search_execs of a function's numfuzz campaign (summed over its instances).
    Under `--budget`, fuzzer_stats holds the last slice only: the executions then come from
    plot_data over every slice, and the stage's executions are the last slice's scaled to them."""
    execs = search = 0
    top = os.path.join(run, "campaigns", "numfuzz", fn)
    for instance in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        path = os.path.join(top, instance, "fuzzer_stats")
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            stats = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in fh if ":" in line)}
        done = int(stats.get("execs_done") or 0)
        stage = int(stats.get("search_execs") or 0)
        plot = os.path.join(top, instance, "plot_data")
        every = slice_execs(plot) if os.path.exists(plot) else 0
        if every > done:
            stage = round(stage * every / done) if done else 0
            done = every
        execs += done
        search += stage
    return execs, search


def load_run(run):
    try:
        with open(os.path.join(run, "config.json")) as fh:
            cfg = json.load(fh)
    except (OSError, ValueError) as e:
        sys.exit(f"bench_compare.py: cannot read {run}/config.json ({e}); is {run} a bench-gsl run?")
    return cfg


def done_functions(run, cfg):
    return {fn for fn in cfg["functions"] if os.path.exists(os.path.join(run, "triage", "numfuzz", fn, "triage.json"))}


def bug_keys(merged):
    return {(m["kind"], m["site"]): m for m in merged.values() if m["bug"] is not None}


def summary_row(merged, stats, functions):
    t = tally(merged)["total"]
    execs = sum(stats[fn][0] for fn in functions)
    search = sum(stats[fn][1] for fn in functions)
    lines = len({(m["file"], m["line"]) for m in merged.values() if m["bug"] is not None})
    return [t["bugs"], lines, t["findings"], t["escapes"], t["wrong"], t["absorbed"], t["handled"],
            t["input_borne"], f"{execs / 1e6:.1f} M", f"{100 * search / execs:.1f} %" if execs else "-"]


HEADER = ["bugs", "bug lines", "findings", "escape", "wrong", "absorbed", "handled", "input-borne",
          "executions", "stage share"]


def table(rows):
    out = ["| run | " + " | ".join(HEADER) + " |", "|---|" + "---|" * len(HEADER)]
    out += [f"| {name} | " + " | ".join(str(c) for c in row) + " |" for name, row in rows]
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench_compare.py RUN_A RUN_B (two results/gsl-* directories of scripts/bench-gsl.sh)")
    runs = sys.argv[1:]
    cfgs = [load_run(r) for r in runs]
    both = done_functions(runs[0], cfgs[0]) & done_functions(runs[1], cfgs[1])
    common = sorted(fn for fn in both if fn not in INTERNAL)
    internal = sorted(fn for fn in both if fn in INTERNAL)
    if not common:
        sys.exit("bench_compare.py: the two runs have no triaged function in common")
    def time_of(c):
        if str(c.get("budget")) == "1":
            return f"--budget of {c['seconds']} s x {len(c['functions'])}"
        return f"{c['seconds']} s"

    names = [f"{chr(ord('A') + i)}: {os.path.basename(os.path.normpath(r))}"
             f" ({' '.join(c.get('run_args') or []) or 'default'}, {time_of(c)})" for i, (r, c) in enumerate(zip(runs, cfgs))]
    stats = [{fn: campaign_stats(r, fn) for fn in common} for r in runs]
    heavy = sorted(fn for fn in common
                   if any(s[fn][0] and s[fn][1] / s[fn][0] > STAGE_HEAVY for s in stats))
    light = [fn for fn in common if fn not in heavy]
    loaded = [load_tool(r, "numfuzz", common) for r in runs]
    merged = [m for m, *_ in loaded]

    print(f"# GSL runs compared over the {len(common)} functions both triaged\n")
    print(table([(n, summary_row(m, s, common)) for n, m, s in zip(names, merged, stats)]))
    found = [[k["id"] for k in known_bugs(m, hangs, load_tool(r, "numfuzz", internal)[0]) if k["found"]]
             for r, (m, _, _, hangs, *_) in zip(runs, loaded)]
    for n, f in zip(names, found):
        print(f"\n{n[:1]}: known bugs found: {len(f)} ({', '.join(f)})")
    for label, group in [(f"stage-heavy functions (the stage took > {STAGE_HEAVY:.0%} of a run's executions)", heavy),
                         ("the other functions", light)]:
        if not group:
            continue
        print(f"\n## {len(group)} {label}\n")
        sub = [load_tool(r, "numfuzz", group)[0] for r in runs]
        print(table([(n[:1], summary_row(m, s, group)) for n, m, s in zip(names, sub, stats)]))
    keys = [bug_keys(m) for m in merged]
    for i, j in ((0, 1), (1, 0)):
        only = sorted(set(keys[i]) - set(keys[j]), key=lambda k: (k[1], k[0]))
        print(f"\n## Bugs only in {names[i][:1]} ({len(only)})\n")
        for key in only:
            m = keys[i][key]
            fns = sorted(set(m["bug_in"]))
            print(f"- {key[0]} at {key[1]} ({m['op']}): {', '.join(fns)}")


if __name__ == "__main__":
    main()
