#!/usr/bin/env python3
"""Merges the per-function `numfuzz triage --format json` reports of a GSL benchmark run.

    bench_report.py RESULTS_DIR

RESULTS_DIR is what scripts/bench-gsl.sh writes: config.json and triage/<tool>/<function>.json
(tool = numfuzz, and afl when the run had --afl). Prints the summary table and writes
RESULTS_DIR/report.md and RESULTS_DIR/report.json.

A finding is a (site, kind) pair; a site is a checked operation in GSL's source, identified
by file, line, column and operation. Findings are unique across ALL functions: a helper such as
gsl_sf_exp_mult_err_e reached from twenty functions counts once. A merged finding is silent
when at least one input of any function raised it and GSL still returned GSL_SUCCESS, handled
when every input that raised it got an error status.
"""

import json
import os
import sys

KINDS = ["Overflow", "Underflow", "DivByZero", "Invalid"]

# The NumFuzz paper (APSEC 2022), GSL 2.7.1: findings at 10 minutes per function, 3 runs;
# 331 is the union of all its runs.
PAPER = {"Overflow": 77, "Underflow": 182, "DivByZero": 4, "Invalid": 1, "total": 264, "union": 331,
         "functions": 154}
GOAL = PAPER["union"]

TOOL_NAMES = {"numfuzz": "numfuzz", "afl": "afl-fuzz"}

# Source paths in the site table are absolute paths into the unpacked Debian source tree;
# the report shows them relative to GSL's top directory (specfunc/exp.c).
SOURCE_MARK = "gsl-2.7.1+dfsg/"


def short_path(path):
    i = path.find(SOURCE_MARK)
    return path[i + len(SOURCE_MARK):] if i >= 0 else path


def finding_key(f):
    loc = f["location"]
    return (f["kind"], short_path(loc["path"] or loc["file"]), loc["line"], loc["column"], f["operation"]["op"])


def load_tool(results, tool, functions):
    """Merged findings of one tool: key -> {silent, functions, example}."""
    merged, per_function, problems = {}, {}, {}
    for fn in functions:
        path = os.path.join(results, "triage", tool, fn + ".json")
        if not os.path.exists(path):
            per_function[fn] = None
            continue
        with open(path) as fh:
            report = json.load(fh)
        kinds = {k: 0 for k in KINDS}
        for f in report["findings"]:
            key = finding_key(f)
            kinds[f["kind"]] += 1
            m = merged.setdefault(key, {"silent": False, "functions": [], "example": None, "nan_only": True})
            m["silent"] |= f["status"] == "silent"
            m["nan_only"] &= any(o.lower() == "nan" for o in f["operation"]["operands"])
            m["functions"].append(fn)
            if m["example"] is None or f["status"] == "silent":
                m["example"] = {"function": fn, "input": f["input"], "expression": f["operation"]["expression"],
                                "status": f["status"], "site_function": f["location"]["function"]}
        per_function[fn] = kinds
        s = report["summary"]
        if s["crashes"] or s["hangs"] or s["not_reproduced"]:
            problems[fn] = {"crashes": s["crashes"], "hangs": s["hangs"], "not_reproduced": s["not_reproduced"]}
    return merged, per_function, problems


def tally(merged):
    t = {k: {"findings": 0, "silent": 0, "handled": 0} for k in KINDS + ["total"]}
    for (kind, *_), m in merged.items():
        for row in (t[kind], t["total"]):
            row["findings"] += 1
            row["silent" if m["silent"] else "handled"] += 1
    # Invalid raised only by operations on a NaN operand: a signaling NaN from the input
    # propagating (IEEE 754 raises Invalid for it), not an invalid operation of GSL's own.
    t["Invalid"]["nan_operand_only"] = sum(1 for (k, *_), m in merged.items() if k == "Invalid" and m["nan_only"])
    return t


def table(cfg, tools, data):
    """The summary as Markdown (also readable on a terminal)."""
    head = ["kind"]
    for tool in tools:
        name = TOOL_NAMES[tool]
        head += [name, "silent", "handled"]
    head.append("paper NumFuzz")
    rows = [head, ["---"] * len(head)]
    for kind in KINDS + ["total"]:
        row = [kind if kind != "total" else "**total (site, kind)**"]
        for tool in tools:
            c = data[tool]["tally"][kind]
            row += [str(c["findings"]), str(c["silent"]), str(c["handled"])]
        row.append(str(PAPER[kind]) + (f" (union of runs: {PAPER['union']})" if kind == "total" else ""))
        rows.append(row)
    row = ["functions with >= 1 finding"]
    for tool in tools:
        d = data[tool]
        row += [f"{d['functions_with_findings']} / {d['functions_done']}", "", ""]
    row.append(f"{PAPER['functions']} functions fuzzed")
    rows.append(row)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_report.py RESULTS_DIR")
    results = sys.argv[1]
    with open(os.path.join(results, "config.json")) as fh:
        cfg = json.load(fh)
    functions = cfg["functions"]
    tools = ["numfuzz"] + (["afl"] if cfg.get("afl") else [])
    data = {}
    for tool in tools:
        merged, per_function, problems = load_tool(results, tool, functions)
        done = [fn for fn in functions if per_function[fn] is not None]
        data[tool] = {
            "merged": merged,
            "per_function": per_function,
            "problems": problems,
            "tally": tally(merged),
            "functions_done": len(done),
            "functions_with_findings": sum(1 for fn in done if sum(per_function[fn].values()) > 0),
        }

    summary = table(cfg, tools, data)
    n = data["numfuzz"]["tally"]["total"]["findings"]
    intro = (
        f"GSL 2.7.1 special functions: {len(functions)} harnesses x {cfg['seconds']} s "
        f"({cfg['jobs']} parallel job(s), one core each){', numfuzz and afl-fuzz' if cfg.get('afl') else ''}.\n"
        "Findings are unique (site, kind) pairs over ALL functions: a site is one operation in GSL's source "
        "(file:line:col); when several functions reach the same site, it counts once.\n"
        "silent: at least one input raised it and GSL returned GSL_SUCCESS; handled: every such input got an "
        "error status.\n"
        f"Paper: NumFuzz on {PAPER['functions']} GSL functions, 10 min each, 3 runs (drivers of one or two doubles, "
        "non-_e wrappers).\n")
    missing = {t: len(functions) - data[t]["functions_done"] for t in tools}
    notes = [f"{TOOL_NAMES[t]}: {data[t]['tally']['Invalid']['nan_operand_only']} of the "
             f"{data[t]['tally']['Invalid']['findings']} Invalid findings only ever had a NaN operand (a signaling NaN "
             "input propagating; IEEE 754 raises Invalid for it)." for t in tools]
    for t in tools:
        if missing[t]:
            notes.append(f"{TOOL_NAMES[t]}: {missing[t]} of {len(functions)} functions have no triage report yet.")
    verdict = (f"numfuzz: {n} unique (site, kind) findings, {data['numfuzz']['tally']['total']['silent']} silent; "
               f"goal >= {GOAL} (the union of the paper's runs at 10 min per function): "
               f"{'reached' if n >= GOAL else 'not reached'}.")
    print(intro)
    print(summary)
    print()
    for line in notes + [verdict]:
        print(line)

    md = [f"# GSL benchmark ({os.path.basename(os.path.normpath(results))})", "", intro, summary, "", *notes, verdict, ""]
    md += ["## Per function", "", "| function | " + " | ".join(
        f"{TOOL_NAMES[t]} O/U/D/I" for t in tools) + " |", "|---|" + "---|" * len(tools)]
    for fn in functions:
        cells = []
        for t in tools:
            k = data[t]["per_function"][fn]
            cells.append("–" if k is None else "/".join(str(k[x]) for x in KINDS))
        md.append(f"| {fn} | " + " | ".join(cells) + " |")
    md += ["", "## Findings (numfuzz)", "", "| kind | site | operation | status | functions | example |",
           "|---|---|---|---|---|---|"]
    for key in sorted(data["numfuzz"]["merged"], key=lambda k: (KINDS.index(k[0]), k[1:])):
        kind, path, line, col, op = key
        m = data["numfuzz"]["merged"][key]
        ex = m["example"]
        fns = ", ".join(sorted(set(m["functions"])))
        md.append(f"| {kind} | {path}:{line}:{col} | {op} | {'silent' if m['silent'] else 'handled'} | {fns} | "
                  f"{ex['function']}: `{ex['expression']}` |")
    for t in tools:
        if data[t]["problems"]:
            md += ["", f"## Crashes, hangs, not reproduced ({TOOL_NAMES[t]})", "", "| function | crashes | hangs | "
                   "not reproduced |", "|---|---|---|---|"]
            for fn, p in sorted(data[t]["problems"].items()):
                md.append(f"| {fn} | {p['crashes']} | {p['hangs']} | {p['not_reproduced']} |")
    with open(os.path.join(results, "report.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")

    out = {"config": cfg, "paper": PAPER, "goal": GOAL, "tools": {}}
    for t in tools:
        d = data[t]
        out["tools"][TOOL_NAMES[t]] = {
            "summary": d["tally"],
            "functions_done": d["functions_done"],
            "functions_with_findings": d["functions_with_findings"],
            "per_function": d["per_function"],
            "problems": d["problems"],
            "findings": [
                {"kind": k[0], "file": k[1], "line": k[2], "column": k[3], "op": k[4],
                 "status": "silent" if m["silent"] else "handled", "functions": sorted(set(m["functions"])),
                 "nan_operand_only": m["nan_only"],
                 "example": m["example"]}
                for k, m in sorted(d["merged"].items(), key=lambda kv: (KINDS.index(kv[0][0]), kv[0][1:]))
            ],
        }
    with open(os.path.join(results, "report.json"), "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print(f"\nbench-gsl: wrote {os.path.join(results, 'report.md')} and report.json")


if __name__ == "__main__":
    main()
