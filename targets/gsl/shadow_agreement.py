#!/usr/bin/env python3
"""The shadow build against the mpmath oracle over a benchmark run.

Each campaign's triage (with --oracle and the harness's shadow build beside it) judged every
input whose primary result came out Inf or NaN unreported both ways and wrote the verdict pairs
and the disagreements into its triage.json (`shadow_agreement`). This sums them over the
functions: the confusion table (oracle verdict x shadow verdict, `-` where a reference did not
judge), the agreement on the inputs both judged, and every disagreement.

    shadow_agreement.py RESULTS_DIR        (a results/gsl-* or results/fdlibm-* directory)
"""
import json
import os
import sys

VERDICTS = ["wrong", "unreported-range", "undefined", "right", None]


def name(verdict):
    return verdict or "-"


def collect(results):
    """(pairs {(oracle, shadow): inputs}, disagreements [(function, entry)], functions compared)."""
    pairs, disagreements, functions = {}, [], 0
    base = os.path.join(results, "triage", "numfuzz")
    for fn in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        path = os.path.join(base, fn, "triage.json")
        try:
            with open(path) as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            continue
        agreement = doc.get("shadow_agreement")
        if not agreement:
            continue
        functions += 1
        for p in agreement["pairs"]:
            key = (p["oracle"], p["shadow"])
            pairs[key] = pairs.get(key, 0) + p["inputs"]
        disagreements += [(fn, d) for d in agreement["disagreements"]]
    return pairs, disagreements, functions


def table(pairs):
    head = "| mpmath \\ shadow | " + " | ".join(name(v) for v in VERDICTS) + " | total |"
    rows = [head, "|---" * (len(VERDICTS) + 2) + "|"]
    for o in VERDICTS:
        cells = [pairs.get((o, s), 0) for s in VERDICTS]
        rows.append(f"| {name(o)} | " + " | ".join(str(c) for c in cells) + f" | {sum(cells)} |")
    return "\n".join(rows)


def headline(pairs, functions):
    both = sum(n for (o, s), n in pairs.items() if o and s)
    agreed = sum(n for (o, s), n in pairs.items() if o and o == s)
    total = sum(pairs.values())
    wrong_by_shadow_only = sum(n for (o, s), n in pairs.items() if s == "wrong" and o in ("right", "unreported-range"))
    return (f"shadow vs mpmath over {functions} functions: {total} escaping inputs, {both} judged by both, "
            f"{agreed} alike ({100.0 * agreed / max(both, 1):.1f} %); {wrong_by_shadow_only} that mpmath calls right "
            f"or unreported-range judged wrong by the shadow.")


def disagreement_rows(disagreements):
    rows = ["| function | input | returned | mpmath | shadow |", "|---|---|---|---|---|"]
    for fn, d in disagreements:
        def judged(j):
            return "-" if j is None else f"{j['value']} ({j['verdict']})"
        rows.append(f"| {fn} | {d['input']} | {d['returned']} | {judged(d['oracle'])} | {judged(d['shadow'])} |")
    return "\n".join(rows)


def section(results):
    """Markdown lines for a benchmark report (empty without any shadow agreement)."""
    pairs, disagreements, functions = collect(results)
    if not functions:
        return []
    return ["## The shadow build against mpmath", "", headline(pairs, functions), "", table(pairs), "",
            f"Disagreements ({len(disagreements)}):", "", disagreement_rows(disagreements), ""]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: shadow_agreement.py RESULTS_DIR")
    pairs, disagreements, functions = collect(sys.argv[1])
    if not functions:
        sys.exit(f"shadow_agreement.py: no triage in {sys.argv[1]} has a shadow_agreement "
                 "(triage needs --oracle and the harnesses' .shadow builds beside them)")
    print(headline(pairs, functions))
    print()
    print(table(pairs))
    print()
    print(disagreement_rows(disagreements))


if __name__ == "__main__":
    main()
