#!/usr/bin/env python3
"""Reference oracle for examples/mathlib (numfuzz triage --oracle, protocol in the README).

Reads one JSON request per line ({"function", "inputs", "results"}) and answers one line
{"results": [...]}: the true value of each primary result as a decimal string, "inf"/"-inf",
"nan" where it is undefined, or null where this oracle does not know it. Named results (the
error estimate "result.err") are answered null. Python's standard library only: the formulas
are rewritten so that no intermediate value overflows or underflows before the true one does
(a value beyond the double range is answered "inf", which numfuzz reads as out of range).
"""
import json
import math
import sys


def exp_or_inf(v):
    """e^v, or inf where it overflows a double."""
    return math.exp(v) if v < 709.78 else math.inf


def exp_ratio(x):
    if x == 0:
        return math.inf
    return exp_or_inf(math.log(2) + x - 2 * math.log(abs(x)))


def log_sigmoid(x):
    # log(1 / (1 + e^-x)) = -log1p(e^-x), with e^-x large written as -x - log1p(e^x).
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def hypotf(x, y):
    return math.hypot(x, y)


def harmonic_mean(x, y):
    if x + y == 0:
        return math.nan
    # 2xy/(x+y) = 2 / (1/x + 1/y): no product of two large numbers.
    if x == 0 or y == 0:
        return 0.0
    return 2 / (1 / x + 1 / y)


def pow_int(x, n):
    if x == 0 and n < 0:
        return math.nan
    try:
        return math.pow(x, n)
    except OverflowError:
        return math.copysign(math.inf, x) if n % 2 else math.inf


FUNCTIONS = {
    "ml_exp_ratio": lambda a: exp_ratio(a[0]),
    "ml_log_sigmoid": lambda a: log_sigmoid(a[0]),
    "ml_hypotf": lambda a: hypotf(a[0], a[1]),
    "ml_harmonic_mean_e": lambda a: harmonic_mean(a[0], a[1]),
    "ml_pow_int_e": lambda a: pow_int(a[0], int(a[1])),
}


def answer(request):
    n = len(request["results"])
    f = FUNCTIONS.get(request["function"])
    try:
        args = [float(v) for v in request["inputs"]]
    except ValueError:
        return [None] * n
    if f is None or not all(math.isfinite(a) for a in args):
        return [None] * n
    try:
        value = f(args)
    except (ValueError, ZeroDivisionError, OverflowError):
        value = None
    text = None if value is None else repr(float(value))
    # The primary result comes first (index 0); the named ones are not judged.
    return [text if r.get("name") is None else None for r in request["results"]]


for line in sys.stdin:
    print(json.dumps({"results": answer(json.loads(line))}), flush=True)
