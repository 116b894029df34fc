#!/usr/bin/python3
"""A reference oracle for examples/exprel2.c (numfuzz triage --oracle, protocol in the README).

Reads one JSON request per line, answers the true value of exprel2(x) = 2 (e^x - 1 - x) / x^2,
computed with mpmath at 60 digits (Debian's python3-mpmath; /usr/bin/python3)."""
import json
import sys

import mpmath

mpmath.mp.dps = 60

for line in sys.stdin:
    request = json.loads(line)
    x = mpmath.mpf(request["inputs"][0])
    if not mpmath.isfinite(x):
        value = None
    elif x == 0:
        value = "1"
    else:
        value = mpmath.nstr(2 * (mpmath.exp(x) - 1 - x) / (x * x), 30)
    # One answer per declared result; exprel2 declares one.
    answers = [value] + [None] * (len(request["results"]) - 1)
    print(json.dumps({"results": answers}), flush=True)
