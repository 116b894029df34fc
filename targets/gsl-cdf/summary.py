#!/usr/bin/env python3
"""The figures of a gsl-cdf benchmark run, as Markdown.

    summary.py OUT [OUT_X87]

OUT is a `numfuzz run-all ... --oracle targets/gsl-cdf/oracle.py` directory triaged with the
x87 shadow and the MPFR build beside every harness (the ladder); OUT_X87, when given, the same
campaigns re-triaged with the .mpfr binaries moved aside (the x87 shadow alone). For each: the
bugs and the not-judged escapes (report.json), and over every OUT/triage/F/triage.json the
`shadow_agreement` summed: escaping inputs, those the shadow judged, those both judged, those
judged alike, the confusion table (oracle verdict x shadow verdict, `-` where one did not judge)
every disagreement, and why the shadow left the other escaping inputs unjudged (each reason
with its numbers and sites stripped, counted, beside the oracle's verdicts on those inputs).
"""
import json
import os
import re
import struct
import sys

VERDICTS = ["wrong", "unreported-range", "undefined", "right", None]


def name(v):
    return v or "-"


def load(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def collect(out):
    per, pairs, inside_pairs, disagreements, unjudged = [], {}, {}, [], []
    base = os.path.join(out, "triage")
    for fn in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        doc = load(os.path.join(base, fn, "triage.json"))
        if doc is None:
            continue
        classes = doc.get("summary", {}).get("classes", {})
        not_judged = sum(1 for f in doc.get("findings", []) if f.get("class") == "not-judged")
        agreement = doc.get("shadow_agreement") or {"inputs": 0, "judged_by_both": 0, "agreed": 0,
                                                    "pairs": [], "disagreements": []}
        inside = agreement.get("in_domain") or {"inputs": 0, "judged_by_both": 0, "agreed": 0}
        shadow_judged = sum(p["inputs"] for p in agreement["pairs"] if p["shadow"])
        oracle_judged = sum(p["inputs"] for p in agreement["pairs"] if p["oracle"])
        per.append(dict(function=fn, findings=doc.get("summary", {}).get("findings"),
                        bugs=classes.get("bug", doc.get("summary", {}).get("bugs")), not_judged=not_judged,
                        inputs=agreement["inputs"], shadow_judged=shadow_judged, oracle_judged=oracle_judged,
                        both=agreement["judged_by_both"], agreed=agreement["agreed"],
                        inside_inputs=inside["inputs"], inside_both=inside["judged_by_both"],
                        inside_agreed=inside["agreed"], judged_by=agreement.get("judged_by")))
        for into, of in ((pairs, agreement["pairs"]), (inside_pairs, inside.get("pairs", []))):
            for p in of:
                key = (p["oracle"], p["shadow"])
                into[key] = into.get(key, 0) + p["inputs"]
        disagreements += [(fn, d) for d in agreement["disagreements"]]
        unjudged += [(fn, u) for u in agreement.get("unjudged", [])]
    return per, pairs, inside_pairs, disagreements, unjudged


def reason_kind(why):
    """A reason with its values, sites and names stripped: what kind of limit it was."""
    if not why:
        return "(no reason given)"
    text = re.sub(r"\b[\w./-]+\.(c|h|cc|cpp):\d+(:\d+)?", "SITE", why)
    text = re.sub(r"(?<!\w)[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", "N", text)
    text = re.sub(r"`[^`]*`", "OP", text)
    return text[:140]


def reasons(unjudged):
    """Markdown: the kinds of reason, most common first, with the oracle's verdicts."""
    kinds = {}
    for _, u in unjudged:
        row = kinds.setdefault(reason_kind(u.get("why")), {})
        key = name(u.get("oracle")) + ("" if u.get("in_domain", True) else " (outside)")
        row[key] = row.get(key, 0) + 1
    lines = ["Escaping inputs the shadow left unjudged, by reason (%d; oracle's verdicts beside):" % len(unjudged), ""]
    for kind, row in sorted(kinds.items(), key=lambda kv: -sum(kv[1].values())):
        lines.append("- %d: %s (%s)" % (sum(row.values()), kind,
                                        ", ".join("%s %d" % kv for kv in sorted(row.items()))))
    return lines


FIELD = {"f64": ("<d", 8), "f32": ("<f", 4), "u32": ("<I", 4), "i32": ("<i", 4), "u64": ("<Q", 8), "i64": ("<q", 8)}


def fields(out, fn, rel):
    """The input's fields as text, read with the harness's signature (packed, in order)."""
    doc = load(os.path.join(out, "triage", fn, "triage.json")) or {}
    types = re.findall(r"([a-z]+[0-9]+)(?:[\[(][^\])]*[\])])?", doc.get("signature") or "")
    try:
        with open(os.path.join(out, "campaigns", fn, rel), "rb") as fh:
            data = fh.read()
    except OSError:
        return "?"
    vals, at = [], 0
    for t in types:
        fmt, size = FIELD.get(t, ("<d", 8))
        chunk = data[at:at + size].ljust(size, b"\0")
        vals.append(repr(struct.unpack(fmt, chunk)[0]))
        at += size
    return "(" + ", ".join(vals) + ")"


def pct(a, b):
    return "%.1f %%" % (100.0 * a / b) if b else "n/a"


def table(pairs):
    rows = ["| mpmath \\ shadow | " + " | ".join(name(v) for v in VERDICTS) + " | total |",
            "|---" * (len(VERDICTS) + 2) + "|"]
    for o in VERDICTS:
        cells = [pairs.get((o, s), 0) for s in VERDICTS]
        rows.append("| %s | %s | %d |" % (name(o), " | ".join(str(c) for c in cells), sum(cells)))
    return "\n".join(rows)


def describe(out, title):
    lines = ["## %s (`%s`)" % (title, out), ""]
    report = load(os.path.join(out, "report.json"))
    if report:
        s = report.get("summary", {})
        lines.append("run-all: %s bugs over %s functions (%s with a report), %s findings; other classes: %s; failed: %s"
                     % (s.get("bugs"), s.get("functions"), s.get("reported"), s.get("findings"),
                        ", ".join("%s %d" % kv for kv in sorted(report.get("rest", {}).items())),
                        ", ".join("%s (%s)" % (f.get("function"), f.get("why")) for f in report.get("failed", [])) or "none"))
        lines.append("")
    per, pairs, inside_pairs, disagreements, unjudged = collect(out)
    inputs_of = {(fn, d.get("input")): fields(out, fn, d.get("input", "")) for fn, d in disagreements}
    t = {k: sum(r[k] or 0 for r in per) for k in ("findings", "bugs", "not_judged", "inputs", "shadow_judged",
                                                  "oracle_judged", "both", "agreed", "inside_inputs",
                                                  "inside_both", "inside_agreed")}
    wrong_on_right = sum(n for (o, s_), n in pairs.items() if o == "right" and s_ == "wrong")
    lines.append("Escaping inputs (primary result Inf or NaN, unreported, finite fields): %d; judged by the shadow "
                 "(x87%s): %d (%s); by the oracle: %d (%s); by both: %d, alike: %d (%s); judged `wrong` by the "
                 "shadow where mpmath says `right`: %d."
                 % (t["inputs"], "" if "alone" in title else " + MPFR", t["shadow_judged"],
                    pct(t["shadow_judged"], t["inputs"]), t["oracle_judged"], pct(t["oracle_judged"], t["inputs"]),
                    t["both"], t["agreed"], pct(t["agreed"], t["both"]), wrong_on_right))
    judged_by = {}
    for r in per:
        for source, n in (r["judged_by"] or {}).items():
            judged_by[source] = judged_by.get(source, 0) + n
    if judged_by:
        names = {"shadow": "the x87 build", "mpfr": "its MPFR rung", "domain": "the harnesses' declared domains"}
        lines.append("")
        lines.append("Judged by the shadow side, by what judged: %s." % ", ".join(
            "%s %d" % (names.get(k, k), n) for k, n in sorted(judged_by.items(), key=lambda kv: -kv[1])))
    lines.append("")
    lines.append("Inside the declared domains: %d escaping inputs; judged by both: %d, alike: %d (%s); judged `wrong` "
                 "by the shadow where mpmath says `right`: %d."
                 % (t["inside_inputs"], t["inside_both"], t["inside_agreed"], pct(t["inside_agreed"], t["inside_both"]),
                    sum(1 for _, d in disagreements if d.get("in_domain") and (d.get("oracle") or {}).get("verdict")
                        == "right" and (d.get("shadow") or {}).get("verdict") == "wrong")))
    lines += ["", "All escaping inputs:", "", table(pairs)]
    if inside_pairs:
        lines += ["", "Inside the declared domains:", "", table(inside_pairs)]
    lines += ["", "| function | findings | bugs | not-judged | escaping inputs | shadow judged | both | alike |",
              "|---|---|---|---|---|---|---|---|"]
    for r in per:
        lines.append("| %s | %s | %s | %s | %d | %d | %d | %d |" % (r["function"], r["findings"], r["bugs"], r["not_judged"],
                                                                  r["inputs"], r["shadow_judged"], r["both"], r["agreed"]))
    lines.append("| total | %d | %d | %d | %d | %d | %d | %d |" % (t["findings"], t["bugs"], t["not_judged"], t["inputs"],
                                                                 t["shadow_judged"], t["both"], t["agreed"]))
    if disagreements:
        lines += ["", "Disagreements (function, input, returned, mpmath, shadow):", ""]
        for fn, d in disagreements:
            o, s_ = d.get("oracle") or {}, d.get("shadow") or {}
            lines.append("- %s%s: returned %s; mpmath %s (%s); shadow %s (%s%s)%s"
                         % (fn, inputs_of[(fn, d.get("input"))], d.get("returned"), o.get("value"), o.get("verdict"),
                            s_.get("value"), s_.get("verdict"), ", " + s_["source"] if s_.get("source") else "",
                            "" if d.get("in_domain", True) else " (outside the declared domains)"))
    if unjudged:
        lines += [""] + reasons(unjudged)
    if report and report.get("bugs"):
        lines += ["", "Bugs (root site: functions; example reference):", ""]
        for b in report["bugs"]:
            ex = b.get("example") or {}
            ref = ex.get("reference") or {}
            lines.append("- `%s` in %s: %s (%s, by %s)" % (b.get("key"), ", ".join(b.get("functions", [])),
                                                           ref.get("value"), ref.get("verdict"), ref.get("source")))
    return "\n".join(lines)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    parts = [describe(sys.argv[1], "x87 shadow + MPFR ladder")]
    if len(sys.argv) == 3:
        parts.append(describe(sys.argv[2], "x87 shadow alone"))
    print("\n\n".join(parts))


if __name__ == "__main__":
    main()
