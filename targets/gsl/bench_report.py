#!/usr/bin/env python3
"""Merges the per-function `numfuzz triage --format json` reports (schema 3) of a GSL benchmark run.

    bench_report.py RESULTS_DIR

RESULTS_DIR is what scripts/bench-gsl.sh writes: config.json and triage/<tool>/<function>/triage.json
(tool = numfuzz, and afl when the run had --afl). Prints the summary and writes
RESULTS_DIR/report.md and RESULTS_DIR/report.json.

A finding is a (site, kind) pair, identified by the `key` numfuzz writes (kind, source path, line,
column, operation): a helper such as gsl_sf_exp_mult_err_e reached from twenty functions counts
once. Merged over the functions that reach it:
- a bug when it is a bug in some function's report (its exception reaches a declared result of
  that function, Inf/NaN unreported or wrong against the mpmath reference, and it is the root);
- its consequence is the worst over the functions (escapes > handled > absorbed); wrong when some
  function's reference verdict on it is wrong; input-borne when it is in every function.
The report leads with the bug list, then the counts beside the raw (site, kind) count, then the
known bugs of targets/gsl/known-bugs.tsv (found? in the bug list? how fast?).

The harnesses of GSL's internal functions (internal-functions.tsv: bug reports called them
directly) are outside the paper's benchmark: their findings are not in the counts or the bug
list, and serve only the known bugs that no public function reaches, which say so when found
through them.
"""

import json
import math
import os
import re
import sys

import shadow_agreement

KINDS = ["Overflow", "Underflow", "DivByZero", "Invalid"]
CONSEQUENCES = ["escapes", "handled", "coincident", "absorbed"]

# The NumFuzz paper (APSEC 2022), GSL 2.7.1: findings at 10 minutes per function, 3 runs;
# 331 is the union of all its runs.
PAPER = {"Overflow": 77, "Underflow": 182, "DivByZero": 4, "Invalid": 1, "total": 264, "union": 331,
         "functions": 154}

TOOL_NAMES = {"numfuzz": "numfuzz", "afl": "afl-fuzz", "afl-underflow": "afl-fuzz (Underflow trapped too)"}

# Source paths are absolute paths into the unpacked Debian source tree; the report shows them
# relative to GSL's top directory (specfunc/exp.c).
SOURCE_MARK = "gsl-2.7.1+dfsg/"

HERE = os.path.dirname(os.path.abspath(__file__))


def internal_functions():
    """The names in internal-functions.tsv (build.sh harnesses them beside the public ones)."""
    with open(os.path.join(HERE, "internal-functions.tsv")) as fh:
        return {line.split("\t")[0] for line in fh if line.strip() and not line.startswith("#")}


INTERNAL = internal_functions()


def short_path(path):
    i = path.find(SOURCE_MARK)
    return path[i + len(SOURCE_MARK):] if i >= 0 else path


def report_of(results, tool, fn):
    """The triage report of one function's campaign (None when there is none)."""
    for path in (os.path.join(results, "triage", tool, fn, "triage.json"),
                 os.path.join(results, "triage", tool, fn + ".json")):
        if os.path.exists(path):
            with open(path) as fh:
                return json.load(fh)
    return None


def fields_text(fields):
    return ", ".join(f["value"] for f in fields)


def results_text(results):
    primary = [r["value"] for r in results if r["index"] is not None]
    named = [f"{r['name']} {r['value']}" for r in results if r["index"] is None]
    text = ", ".join(primary) or "-"
    return text + (f" ({', '.join(named)})" if named else "")


def ordinariness(fields):
    """As numfuzz triage orders bugs (fuzzer/src/triage/inputs/ordinariness.rs): (edge, magnitude), where
    magnitude is the largest |log10 |x|| over the fields and edge marks a NaN, infinite or
    subnormal float field (the 4-ulp margin at the format's limits is approximated by 1e-12)."""
    edge, mag = False, 0.0
    for f in fields:
        try:
            x = float(f["value"])
        except ValueError:
            continue
        if f["type"].startswith("f"):
            tiny = {"f32": 1.1754943508222875e-38, "f64": 2.2250738585072014e-308}.get(f["type"], 3.3621e-4932)
            big = {"f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308}.get(f["type"], 1.1897e4932)
            if math.isnan(x) or math.isinf(x) or (x != 0 and abs(x) < tiny * (1 + 1e-12)) or abs(x) >= big * (1 - 1e-12):
                edge = True
            if x != 0 and math.isfinite(x):
                mag = max(mag, abs(math.log10(abs(x))))
        else:
            mag = max(mag, math.log10(abs(x) + 1))
    return (edge, mag)


def site_of(f):
    loc = f["location"]
    return f"{short_path(loc['path'])}:{loc['line']}:{loc['column']}"


def new_merged(f):
    return {"kind": f["kind"], "site": site_of(f), "op": f["operation"]["op"], "file": os.path.basename(f["location"]["path"]),
            "line": f["location"]["line"], "functions": [], "bug_in": [], "consequence": None, "classes": set(),
            "wrong": False, "input_borne": True, "silent": False, "first_seen_ms": None, "bug": None, "example": None,
            "bug_inputs": 0, "roots": set()}


def load_tool(results, tool, functions):
    """Merged findings of one tool (key -> merged), per-function counts, problems and hangs."""
    merged, per_function, problems, hangs, schema, unexplained = {}, {}, {}, [], set(), []
    for fn in functions:
        report = report_of(results, tool, fn)
        if report is None:
            per_function[fn] = None
            continue
        schema.add(report.get("schema_version"))
        bugs = set(report.get("bugs", []))
        by_id = {f["id"]: f for f in report["findings"]}
        counts = {k: 0 for k in KINDS}
        counts["bugs"] = len(bugs) + len(report.get("unexplained", []))
        for u in report.get("unexplained", []):
            unexplained.append({"function": fn, "input": fields_text(u["input"]["fields"]),
                                "returned": results_text(u["results"]), "input_count": u["input_count"],
                                "origins": [site_of(by_id[o]) + f" {by_id[o]['kind']}" for o in u["origins"] if o in by_id],
                                "order": ordinariness(u["input"]["fields"])})
        for f in report["findings"]:
            counts[f["kind"]] += 1
            key = f.get("key") or f"{f['kind']} {f['location']['path']}:{f['location']['line']}:{f['location']['column']} {f['operation']['op']}"
            m = merged.setdefault(key, new_merged(f))
            m["functions"].append(fn)
            m["classes"].add(f.get("class", "unjudged"))
            if f.get("root") and f["root"] != f["id"] and f["root"] in by_id:
                m["roots"].add(f"{by_id[f['root']]['kind']} {site_of(by_id[f['root']])}")
            c = f.get("consequence")
            if c is not None and (m["consequence"] is None or CONSEQUENCES.index(c) < CONSEQUENCES.index(m["consequence"])):
                m["consequence"] = c
            ref = f.get("reference")
            m["wrong"] |= bool(ref and ref["verdict"] == "wrong")
            m["input_borne"] &= bool(f.get("input_borne"))
            m["silent"] |= f["status"] == "silent"
            if f["first_seen_ms"] is not None:
                m["first_seen_ms"] = f["first_seen_ms"] if m["first_seen_ms"] is None else min(m["first_seen_ms"], f["first_seen_ms"])
            if m["example"] is None:
                m["example"] = {"function": fn, "expression": f["operation"]["expression"]}
            if f["id"] in bugs:
                m["bug_in"].append(fn)
                m["bug_inputs"] += f["input_count"]
                shown = f["minimized"] or f["input"]
                # One example per entry over every function it explains: the most ordinary.
                if m["bug"] is None or ordinariness(shown["fields"]) < m["bug"]["order"]:
                    m["bug"] = {
                        "order": ordinariness(shown["fields"]),
                        "root_by": f.get("root_by"),
                        "via": f.get("via"),
                        "function": fn,
                        "input": fields_text(shown["fields"]),
                        "minimized": f["minimized"] is not None,
                        "expression": f["minimized"]["expression"] if f["minimized"] else f["operation"]["expression"],
                        "returned": results_text(f["minimized"]["results"] if f["minimized"] else f["results"]),
                        "reference": ref,
                        "first_seen_ms": f["first_seen_ms"],
                        "chain": [f"{c['kind']} at {site_of(c)}" for c in by_id.values()
                                  if c["root"] == f["id"] and c["id"] != f["id"]],
                    }
        per_function[fn] = counts
        s = report["summary"]
        if s["crashes"] or s["hangs"] or s["not_reproduced"]:
            problems[fn] = {"crashes": s["crashes"], "hangs": s["hangs"], "not_reproduced": s["not_reproduced"]}
        for h in report.get("hangs", []):
            hangs.append({"function": fn, "frame": h.get("frame"), "input": fields_text(h["input"]["fields"]),
                          "first_seen_ms": h["first_seen_ms"]})
    for m in merged.values():
        m["classes"] = sorted(m["classes"])
        m["roots"] = sorted(m["roots"])
    unexplained.sort(key=lambda u: u["order"])
    return merged, per_function, problems, hangs, schema, unexplained


def tally(merged):
    """Counts per kind and in total: raw (site, kind) findings, bugs, consequences, wrong, input-borne."""
    t = {k: {"findings": 0, "bugs": 0, "escapes": 0, "wrong": 0, "absorbed": 0, "handled": 0, "input_borne": 0,
             "coincident": 0, "silent": 0} for k in KINDS + ["total"]}
    for m in merged.values():
        for row in (t[m["kind"]], t["total"]):
            row["findings"] += 1
            row["bugs"] += m["bug"] is not None
            row["wrong"] += m["wrong"]
            row["silent"] += m["silent"]
            if m["input_borne"]:
                row["input_borne"] += 1
            elif m["consequence"] in ("escapes", "absorbed", "handled", "coincident"):
                row[m["consequence"]] += 1
    return t


def known_bugs(merged, hangs, internal):
    """targets/gsl/known-bugs.tsv, each row matched against the findings and hangs; a row that no
    public function reaches also against the internal harnesses' findings (`internal`)."""
    rows = []
    with open(os.path.join(HERE, "known-bugs.tsv")) as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            bid, source, kind, site, reached_by, given_input, note = (line.rstrip("\n").split("\t") + [""] * 7)[:7]
            file, _, line_no = site.partition(":")
            line_no = int(line_no)
            row = {"id": bid, "source": source, "kind": kind, "site": site, "note": note, "found": False,
                   "public": reached_by != "none", "through_internal": False,
                   "functions": [], "in_bug_list": False, "classes": [], "first_seen_ms": None}
            if kind == "Hang":
                for h in hangs:
                    fr = h["frame"] or {}
                    if os.path.basename(fr.get("file") or "") == file and fr.get("line") == line_no:
                        row["found"] = True
                        row["functions"].append(h["function"])
                        t = h["first_seen_ms"]
                        if t is not None and (row["first_seen_ms"] is None or t < row["first_seen_ms"]):
                            row["first_seen_ms"] = t
            else:
                pools = [merged] + ([internal] if reached_by == "none" else [])
                for m in (m for pool in pools for m in pool.values()):
                    if m["kind"] == kind and m["file"] == file and m["line"] == line_no:
                        row["through_internal"] |= not row["found"] and any(f in INTERNAL for f in m["functions"])
                        row["found"] = True
                        row["functions"] += m["functions"]
                        row["in_bug_list"] |= m["bug"] is not None
                        row["classes"] += m["classes"]
                        t = m["first_seen_ms"]
                        if t is not None and (row["first_seen_ms"] is None or t < row["first_seen_ms"]):
                            row["first_seen_ms"] = t
            row["functions"] = sorted(set(row["functions"]))
            row["classes"] = sorted(set(row["classes"]))
            rows.append(row)
    return rows


def short_decimal(text):
    """A reference decimal at 8 significant digits (`6.5716465e307`); as given when not a number."""
    try:
        return f"{float(text):.8g}"
    except ValueError:
        return text


def seconds(ms):
    return "-" if ms is None else f"{ms / 1000:.1f} s"


def md_cell(text):
    return str(text).replace("|", "\\|")


def counts_table(tools, data):
    head = ["kind"]
    for tool in tools:
        name = TOOL_NAMES[tool]
        head += [f"{name} (site, kind)", "bugs", "escapes", "wrong", "absorbed", "handled", "input-borne"]
    head.append("paper NumFuzz")
    rows = [head, ["---"] * len(head)]
    for kind in KINDS + ["total"]:
        row = [kind if kind != "total" else "**total**"]
        for tool in tools:
            c = data[tool]["tally"][kind]
            row += [str(c[k]) for k in ("findings", "bugs", "escapes", "wrong", "absorbed", "handled", "input_borne")]
        row.append(str(PAPER[kind]) + (f" (union of runs: {PAPER['union']})" if kind == "total" else ""))
        rows.append(row)
    row = ["functions with >= 1 finding"]
    for tool in tools:
        d = data[tool]
        row += [f"{d['functions_with_findings']} / {d['functions_done']}"] + [""] * 6
    row.append(f"{PAPER['functions']} functions fuzzed")
    rows.append(row)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def returned_rank(text):
    """0 a finite (wrong) value, 1 a NaN, 2 an infinity, as numfuzz triage orders bugs."""
    first = text.split(" (")[0].lower()
    return 2 if "inf" in first else 1 if "nan" in first else 0


def bug_table(merged, unexplained):
    """One entry per root site over every function: most ordinary example first; then the
    non-finite results whose cause is not isolated."""
    bugs = sorted((m for m in merged.values() if m["bug"] is not None),
                  key=lambda m: (m["bug"]["order"], returned_rank(m["bug"]["returned"]), m["site"]))
    lines = ["| # | kind | site | functions | inputs | example input | operation | returned | reference | root | chain |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n, m in enumerate(bugs, 1):
        b = m["bug"]
        ref = b["reference"]
        ref_text = "-" if not ref else f"{short_decimal(ref['value'])} ({ref['verdict']})"
        fns = sorted(set(m["bug_in"]))
        fn = ", ".join(fns[:3]) + (f" (+{len(fns) - 3} more)" if len(fns) > 3 else "")
        root = f"{b['root_by']}, via {b['via']}" if b.get("root_by") else "-"
        lines.append("| " + " | ".join(md_cell(x) for x in [
            n, m["kind"], m["site"], fn, m["bug_inputs"], b["input"] + (" (minimised)" if b["minimized"] else ""),
            f"`{b['expression']}`", b["returned"], ref_text, root, "<br>".join(b["chain"]) or "-"]) + " |")
    for k, u in enumerate(unexplained, len(bugs) + 1):
        lines.append("| " + " | ".join(md_cell(x) for x in [
            k, "non-finite result", "cause not isolated", u["function"], u["input_count"], u["input"], "-",
            u["returned"], "-", "no single repair", "<br>".join(u["origins"]) or "-"]) + " |")
    return bugs, "\n".join(lines)


def instance_stats(results, tool, fn):
    """The fuzzer_stats of every instance of the tool's campaign of `fn`, as dicts of strings."""
    top = os.path.join(results, "campaigns", tool, fn)
    for dirpath, _, files in os.walk(top, followlinks=True):
        if "fuzzer_stats" not in files:
            continue
        stats = {}
        with open(os.path.join(dirpath, "fuzzer_stats")) as fh:
            for line in fh:
                key, _, value = line.partition(":")
                stats[key.strip()] = value.strip()
        yield stats


def stat_sum(results, tool, functions, key):
    """The integer `key` summed over the tool's campaigns of `functions`."""
    total = 0
    for fn in functions:
        for stats in instance_stats(results, tool, fn):
            try:
                total += int(stats.get(key, 0))
            except ValueError:
                continue
    return total


def campaign_speed(results, tool, functions):
    """(executions, seconds) summed over the tool's campaigns of `functions` (numfuzz's and
    afl-fuzz's fuzzer_stats share the execs_done and run_time keys)."""
    return stat_sum(results, tool, functions, "execs_done"), stat_sum(results, tool, functions, "run_time")


def short_key(key):
    """A finding key with its source path cut to the file's directory and name."""
    return re.sub(r"\S*/([^/\s]+/[^/\s]+:\d+:\d+)", r"\1", key)


def geometric_mean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else 0


def rates(results, tools, functions):
    """Each tool's exec/s on each function: {tool: {function: exec/s}} (0 where it did not run)."""
    speed = {t: {fn: campaign_speed(results, t, [fn]) for fn in functions} for t in tools}
    return {t: {fn: (e / s if s else 0) for fn, (e, s) in speed[t].items()} for t in tools}


# Issue 54's floor: no function's campaign slower than afl-fuzz's on the same harness, and a
# geometric mean of at least this many times afl-fuzz's exec/s per function.
FLOOR_MEAN = 5.0


def floor_line(rate, functions, data):
    """The per-function floor against afl-fuzz (the NumFuzz paper's baseline, the first AFL++
    tool): how many functions fall below 1x, which (slowest first), and the geometric mean;
    then the functions where an AFL++ run's triage counted more bugs than numfuzz's. None
    without afl-fuzz."""
    if "afl" not in rate:
        return None
    ratios = {fn: rate["numfuzz"][fn] / rate["afl"][fn] for fn in functions
              if rate["afl"][fn] and rate["numfuzz"][fn]}
    below = sorted((r, fn) for fn, r in ratios.items() if r < 1)
    mean = geometric_mean(list(ratios.values()))
    listed = ", ".join(f"{fn} {r:.2f}×" for r, fn in below) or "none"
    return (f"floor against afl-fuzz (numfuzz's exec/s ≥ afl-fuzz's on every function, geometric mean ≥ "
            f"{FLOOR_MEAN:g}×): {len(below)} of {len(ratios)} functions below it ({listed}); geometric mean "
            f"{mean:.2f}× ({'met' if not below and mean >= FLOOR_MEAN else 'not met'}); "
            f"{fewer_bugs_text(data, functions)}.")


def fewer_bugs_text(data, functions):
    """The functions where some AFL++ tool's triage counted more bugs than numfuzz's."""
    def bugs(tool, fn):
        counts = data[tool]["per_function"].get(fn)
        return counts["bugs"] if counts else 0
    fewer = []
    for fn in functions:
        rivals = {t: bugs(t, fn) for t in data if t != "numfuzz"}
        best = max(rivals, key=rivals.get, default=None)
        if best is not None and rivals[best] > bugs("numfuzz", fn):
            fewer.append(f"{fn} {bugs('numfuzz', fn)} against {TOOL_NAMES[best]}'s {rivals[best]}")
    return (f"bugs: numfuzz found fewer than an AFL++ run on {len(fewer)} of {len(functions)} functions"
            + (f" ({', '.join(fewer)})" if fewer else ""))


def tools_table(results, tools, data, functions):
    """Each tool's speed and bugs beside numfuzz's, and the bugs (root sites) only one found.
    Speed twice: all executions over all campaign seconds (the fast functions weigh most), and
    the geometric mean over the functions of numfuzz's exec/s over the tool's."""
    bug_keys = {t: {k for k, m in data[t]["merged"].items() if m["bug"] is not None} for t in tools}
    speed = {t: {fn: campaign_speed(results, t, [fn]) for fn in functions} for t in tools}
    rate = rates(results, tools, functions)
    total = {t: tuple(map(sum, zip(*speed[t].values()))) if functions else (0, 0) for t in tools}
    nf_rate = total["numfuzz"][0] / total["numfuzz"][1] if total["numfuzz"][1] else 0
    lines = ["| tool | functions | executions | exec/s (one core) | numfuzz's exec/s ÷ this: all | per function "
             "(geometric mean) | findings | bugs | bugs no other tool found |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in tools:
        execs, secs = total[t]
        r = execs / secs if secs else 0
        per_fn = geometric_mean([rate["numfuzz"][fn] / rate[t][fn] for fn in functions
                                 if rate[t][fn] and rate["numfuzz"][fn]])
        others = set().union(*(bug_keys[o] for o in tools if o != t))
        lines.append("| " + " | ".join(str(x) for x in [
            TOOL_NAMES[t], data[t]["functions_done"], execs, f"{r:.0f}",
            f"{nf_rate / r:.2f}×" if r else "-", f"{per_fn:.2f}×" if per_fn else "-",
            data[t]["tally"]["total"]["findings"], data[t]["tally"]["total"]["bugs"],
            len(bug_keys[t] - others)]) + " |")
    lines += ["", "Bugs only one tool found (the root sites no other tool counted as bugs; where another tool "
              "recorded the same exception as a consequence of another root, that is said):", ""]
    for t in tools:
        others = set().union(*(bug_keys[o] for o in tools if o != t))
        only = sorted(bug_keys[t] - others)
        lines.append(f"- {TOOL_NAMES[t]} ({len(only)}): "
                     + (", ".join(f"`{short_key(k)}`{seen_by_others(data, tools, t, k)}" for k in only) or "none"))
    return "\n".join(lines + ["", speed_by_function(results, tools, rate, functions)])


def seen_by_others(data, tools, tool, key):
    """How the other tools recorded a bug only `tool` counted: the same exception under another
    root (numfuzz keeps one entry per defect: a DivByZero and an Overflow of one division are
    one), or nothing."""
    seen = []
    for o in (o for o in tools if o != tool):
        m = data[o]["merged"].get(key)
        if m is not None:
            under = f" under {', '.join(m['roots'])}" if m["roots"] else ""
            seen.append(f"{TOOL_NAMES[o]}: {', '.join(m['classes'])}{under}")
    return f" ({'; '.join(seen)})" if seen else ""


def speed_by_function(results, tools, rate, functions):
    """Each function's exec/s per tool, numfuzz's share of precise runs and where its time went
    (fuzzer_stats' *_ms: precise runs, runs whose flags sent them through the special-result
    pass that spared the re-run, the local-search stage): where the per-function mean comes
    from."""
    others = [t for t in tools if t != "numfuzz"]
    head = ["function", "numfuzz exec/s", "precise runs", "time: precise runs / spared runs / search"] \
        + [f"{TOOL_NAMES[t]} exec/s" for t in others] + [f"÷ {TOOL_NAMES[t]}" for t in others]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]

    def ratio(fn, t):
        return rate["numfuzz"][fn] / rate[t][fn] if rate[t][fn] else 0

    first = others[0] if others else None
    for fn in sorted(functions, key=lambda fn: ratio(fn, first) if first else 0):
        execs = stat_sum(results, "numfuzz", [fn], "execs_done")
        precise = stat_sum(results, "numfuzz", [fn], "precise_runs")
        row = [fn, f"{rate['numfuzz'][fn]:.0f}", f"{100 * precise / execs:.0f} %" if execs else "-",
               time_shares(results, fn)]
        row += [f"{rate[t][fn]:.0f}" for t in others]
        row += [f"{ratio(fn, t):.2f}×" if ratio(fn, t) else "-" for t in others]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join([SPEED_CAPTION, ""] + lines)


def time_shares(results, fn):
    """numfuzz's time on `fn` in precise runs, spared runs and local search, in % of its
    campaign's seconds ("-" for campaigns of a numfuzz that did not count them)."""
    ms = {k: stat_sum(results, "numfuzz", [fn], k) for k in ("precise_runs_ms", "spared_runs_ms", "search_ms")}
    seconds = stat_sum(results, "numfuzz", [fn], "run_time")
    if not seconds or not any(ms.values()):
        return "-"
    return " / ".join(f"{v / (10 * seconds):.0f} %" for v in ms.values())


SPEED_CAPTION = ("Speed by function, slowest ratio first. An afl-fuzz run ends at the first trapped exception; "
                 "a numfuzz run goes to the end, and runs again precisely when it raised one, so where inputs "
                 "raise most and run long the tools do not run comparable work. numfuzz's time columns are its "
                 "fuzzer_stats' precise_runs_ms, spared_runs_ms and search_ms over the campaign's seconds "
                 "(docs: guides/campaigns.md, \"Where the time goes\").")


def known_table(rows):
    lines = ["| id | source | kind | site | found | in bug list | time to find | functions | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        found = ("yes (internal harness)" if r["through_internal"] else "yes") if r["found"] else "no"
        if r["kind"] == "Hang":
            listed = "- (a hang, not an exception)"
        elif not r["found"]:
            listed = "-"
        elif r["in_bug_list"]:
            listed = "yes"
        else:
            listed = "no (" + ", ".join(r["classes"]) + ")"
        fns = ", ".join(r["functions"][:4]) + (f" (+{len(r['functions']) - 4})" if len(r["functions"]) > 4 else "")
        lines.append("| " + " | ".join(md_cell(x) for x in [
            r["id"], r["source"], r["kind"], r["site"], found, listed, seconds(r["first_seen_ms"]), fns or "-", r["note"]]) + " |")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_report.py RESULTS_DIR")
    results = sys.argv[1]
    with open(os.path.join(results, "config.json")) as fh:
        cfg = json.load(fh)
    internal = [fn for fn in cfg["functions"] if fn in INTERNAL]
    functions = [fn for fn in cfg["functions"] if fn not in INTERNAL]
    tools = ["numfuzz"] + (["afl"] if cfg.get("afl") else [])
    # afl-fuzz on its own persistent and CmpLog builds runs twice: exceptions but Underflow
    # trapped, then Underflow too (scripts/bench-gsl.sh --afl).
    if cfg.get("afl") and cfg.get("afl_build") == "persistent-cmplog":
        tools.append("afl-underflow")
    data = {}
    for tool in tools:
        merged, per_function, problems, hangs, schema, unexplained = load_tool(results, tool, functions)
        done = [fn for fn in functions if per_function[fn] is not None]
        data[tool] = {
            "merged": merged, "per_function": per_function, "problems": problems, "hangs": hangs,
            "unexplained": unexplained,
            "tally": tally(merged), "schema": sorted(s for s in schema if s is not None),
            "functions_done": len(done),
            "functions_with_findings": sum(1 for fn in done if sum(per_function[fn][k] for k in KINDS) > 0),
        }
    nf = data["numfuzz"]
    total = nf["tally"]["total"]
    internal_merged = load_tool(results, "numfuzz", internal)[0]
    known = known_bugs(nf["merged"], nf["hangs"], internal_merged)
    bugs, bugs_md = bug_table(nf["merged"], nf["unexplained"])

    intro = (
        f"GSL 2.7.1 special functions: {len(functions)} harnesses x {cfg['seconds']} s "
        f"({cfg['jobs']} parallel job(s), one core each){', numfuzz and afl-fuzz' if cfg.get('afl') else ''}"
        f"{'; numfuzz run ' + ' '.join(cfg['run_args']) if cfg.get('run_args') else ''}; "
        "triage with the taint builds (consequences) and the mpmath oracle (targets/gsl/oracle.py).\n"
        "A finding is a unique (site, kind) over ALL functions (a site is one operation in GSL's source, "
        "file:line:col). A bug is an exception that makes a function return a non-finite value without "
        "reporting an error, or a value mpmath says is wrong, and is the root of that (no earlier exception "
        "feeds it); escapes/handled/absorbed is what it did to the declared results (worst over the "
        "functions reaching it); wrong: some function's result for it is wrong against the reference.\n"
        f"Paper: NumFuzz on {PAPER['functions']} GSL functions, 10 min each, 3 runs.\n")
    bug_lines = len({(m["file"], m["line"]) for m in nf["merged"].values() if m["bug"] is not None})
    not_isolated = len(nf["unexplained"])
    headline = (f"numfuzz: {total['bugs']} bugs (on {bug_lines} source lines; one entry per root site over every function)"
                f"{f', and {not_isolated} non-finite results whose cause is not isolated' if not_isolated else ''}"
                f" out of {total['findings']} unique (site, kind) findings "
                f"({total['escapes']} escape, {total['wrong']} wrong, {total['absorbed']} absorbed, "
                f"{total['handled']} handled, {total['input_borne']} input-borne).")
    found = [r for r in known if r["found"]]
    public = [r for r in known if r["public"]]
    known_line = (f"known bugs (targets/gsl/known-bugs.tsv): {len(found)} of {len(known)} found "
                  f"({sum(r['found'] for r in public)} of the {len(public)} that a public function reaches; "
                  f"{sum(r['through_internal'] for r in known)} of the {len(known) - len(public)} others through "
                  f"the {len(internal)} harnesses of internal functions), "
                  f"{sum(r['in_bug_list'] for r in known)} in the bug list.")
    summary = counts_table(tools, data)
    floor = floor_line(rates(results, tools, functions), functions, data)
    print(intro)
    print(headline)
    print(known_line)
    if floor:
        print(floor)
    print()
    print(summary)

    md = [f"# GSL benchmark ({os.path.basename(os.path.normpath(results))})", "", intro, f"**{headline}**", ""]
    if floor:
        md += [f"**{floor[0].upper()}{floor[1:]}**", ""]
    md += [
          f"## Bugs ({len(bugs) + not_isolated})", "", "The roots: each exception that makes the function return a non-finite "
          "or wrong value without reporting it, with its minimal input, what GSL returned, mpmath's value, and the "
          "findings downstream of it.", "", bugs_md, "", "## Counts", "", summary, "",
          f"## Known bugs ({len(found)} of {len(known)} found)", "", known_table(known), ""]
    if len(tools) > 1:
        md += ["## Tools", "", "The same functions for the same time each, every tool's findings triaged by numfuzz "
               "triage on the numfuzz-cc build against the same oracle" +
               (" (afl-fuzz: persistent mode and CmpLog on afl-clang-fast builds, exceptions trapped as crashes)"
                if cfg.get("afl_build") == "persistent-cmplog" else " (afl-fuzz: forkserver on the numfuzz-cc builds)")
               + ".", "", tools_table(results, tools, data, functions), ""]
    md += shadow_agreement.section(results)
    md += ["## Per function", "", "| function | bugs | " + " | ".join(
        f"{TOOL_NAMES[t]} O/U/D/I" for t in tools) + " |", "|---|---|" + "---|" * len(tools)]
    for fn in functions:
        cells = []
        for t in tools:
            k = data[t]["per_function"][fn]
            cells.append("–" if k is None else "/".join(str(k[x]) for x in KINDS))
        k0 = nf["per_function"][fn]
        md.append(f"| {fn} | {'–' if k0 is None else k0['bugs']} | " + " | ".join(cells) + " |")
    md += ["", "## All findings (numfuzz)", "", "| kind | site | operation | class(es) | consequence | functions | example |",
           "|---|---|---|---|---|---|---|"]
    for key, m in sorted(nf["merged"].items(), key=lambda kv: (KINDS.index(kv[1]["kind"]), kv[1]["site"])):
        ex = m["example"]
        fns = ", ".join(sorted(set(m["functions"])))
        md.append(f"| {m['kind']} | {m['site']} | {m['op']} | {', '.join(m['classes'])} | {m['consequence'] or '-'} | "
                  f"{fns} | {ex['function']}: `{md_cell(ex['expression'])}` |")
    for t in tools:
        if data[t]["problems"]:
            md += ["", f"## Crashes, hangs, not reproduced ({TOOL_NAMES[t]})", "", "| function | crashes | hangs | "
                   "not reproduced |", "|---|---|---|---|"]
            for fn, p in sorted(data[t]["problems"].items()):
                md.append(f"| {fn} | {p['crashes']} | {p['hangs']} | {p['not_reproduced']} |")
    with open(os.path.join(results, "report.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")

    out = {"config": cfg, "paper": PAPER, "known_bugs": known, "floor": floor, "tools": {}}
    for t in tools:
        d = data[t]
        out["tools"][TOOL_NAMES[t]] = {
            "summary": d["tally"],
            "triage_schema_versions": d["schema"],
            "functions_done": d["functions_done"],
            "functions_with_findings": d["functions_with_findings"],
            "per_function": d["per_function"],
            "problems": d["problems"],
            "hangs": d["hangs"],
            "bugs": [dict({k: v for k, v in m["bug"].items() if k != "order"}, kind=m["kind"], site=m["site"],
                          functions=m["bug_in"], inputs=m["bug_inputs"])
                     for m in d["merged"].values() if m["bug"] is not None],
            "unexplained": [{k: v for k, v in u.items() if k != "order"} for u in d["unexplained"]],
            "findings": [dict({k: v for k, v in m.items() if k != "bug"}, key=key)
                         for key, m in sorted(d["merged"].items())],
        }
    with open(os.path.join(results, "report.json"), "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print(f"\nbench-gsl: wrote {os.path.join(results, 'report.md')} and report.json")


if __name__ == "__main__":
    main()
