#!/usr/bin/python3
"""Self-check of targets/fdlibm/oracle.py.

Runs oracle.py as a co-process speaking numfuzz's reference-oracle protocol on a few thousand
inputs per function (random doubles over wide ranges, special values, and the hard cases:
huge trigonometric arguments, pow near 1, Bessel functions near their zeros and at large x,
lgamma near its zeros) and compares each answer, rounded to double, with an independent
reference:

  * glibc's libm through ctypes (accurate to ~1 ulp for most of these functions);
  * rem_pio2: an exact rational reduction with pi from Machin's formula (big integers only);
  * kernel_sin/cos/tan: glibc sin/cos/tan of x, corrected to first order by the tail y.

Optionally (--fdlibm LIB.so, or --build-fdlibm which compiles one from Debian's
newlib-source into a scratch directory) the same inputs are run through newlib's fdlibm, the
library values are sent in the requests (as numfuzz triage would), and the places where fdlibm
is more than 1 ulp away from the oracle are listed.

Per function it reports: result values compared, within 1 ulp of the reference, within 4 ulp,
further off (the first few listed), oracle null, and the oracle's time per request.

    check_oracle.py [-n CASES] [--functions a,b] [--seed S] [--build-fdlibm | --fdlibm LIB]
"""

import argparse
import ctypes
import json
import math
import os
import random
import statistics
import struct
import subprocess
import sys
import threading
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
INF = float("inf")
NAN = float("nan")
INT_MIN = -2147483648
INT_MAX = 2147483647
DMAX = 1.7976931348623157e308
DMIN = 2.2250738585072014e-308
DTRUE_MIN = 5e-324
PI = math.pi

# --------------------------------------------------------------------------------------------
# ulp distance
# --------------------------------------------------------------------------------------------


def ordered(x):
    b = struct.unpack("<q", struct.pack("<d", x))[0]
    return b if b >= 0 else -(b & 0x7FFFFFFFFFFFFFFF)


def ulp_dist(a, b):
    """Distance in units in the last place between two doubles (NaN == NaN, +0 == -0)."""
    if a != a or b != b:
        return 0 if (a != a and b != b) else math.inf
    if a == b:
        return 0
    return abs(ordered(a) - ordered(b))


def ulp(x):
    x = abs(x)
    if x == INF or x != x:
        return NAN
    if x < DMIN:
        return DTRUE_MIN
    return math.ldexp(1.0, math.frexp(x)[1] - 53)


def s(v):
    """A value as the protocol's shortest round-trip decimal."""
    if isinstance(v, int):
        return str(v)
    if v != v:
        return "nan"
    if v == INF:
        return "inf"
    if v == -INF:
        return "-inf"
    return repr(v)


# --------------------------------------------------------------------------------------------
# glibc and (optionally) fdlibm through ctypes
# --------------------------------------------------------------------------------------------

D = ctypes.c_double
I = ctypes.c_int


def bind(lib, name, restype, argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


class Lib:
    """The 48 functions of one library, each returning {result key: value}."""

    def __init__(self, lib, fdlibm):
        self.lib = lib
        self.fdlibm = fdlibm
        self.cache = {}

    def call(self, fname, args):
        if fname in ("rem_pio2", "kernel_sin", "kernel_cos", "kernel_tan") and not self.fdlibm:
            return None
        if fname not in self.cache:
            self.cache[fname] = self._make(fname)
        return self.cache[fname](*args)

    def _make(self, fname):
        lib = self.lib
        ie = "__ieee754_" if self.fdlibm else ""
        one = {"acos", "acosh", "asin", "atanh", "cosh", "exp", "j0", "y0", "j1", "y1", "log",
               "log10", "sinh", "sqrt"}
        plain1 = {"asinh", "atan", "cbrt", "ceil", "cos", "erf", "erfc", "expm1", "floor",
                  "log1p", "logb", "rint", "sin", "tan", "tanh"}
        two = {"atan2", "fmod", "hypot", "pow", "remainder", "scalb"}
        if fname in one:
            f = bind(lib, ie + fname, D, [D])
            return lambda x: {0: f(x)}
        if fname in plain1:
            f = bind(lib, fname, D, [D])
            return lambda x: {0: f(x)}
        if fname in two:
            f = bind(lib, ie + fname, D, [D, D])
            return lambda x, y: {0: f(x, y)}
        if fname == "nextafter":
            f = bind(lib, "nextafter", D, [D, D])
            return lambda x, y: {0: f(x, y)}
        if fname in ("jn", "yn"):
            f = bind(lib, ie + fname, D, [I, D])
            return lambda n, x: {0: f(n, x)}
        if fname in ("ldexp", "scalbn"):
            f = bind(lib, fname, D, [D, I])
            return lambda x, n: {0: f(x, n)}
        if fname == "ilogb":
            f = bind(lib, "ilogb", I, [D])
            return lambda x: {0: f(x)}
        if fname == "lgamma_r":
            f = bind(lib, ie + "lgamma_r", D, [D, ctypes.POINTER(I)])

            def lg(x):
                sg = I(0)
                v = f(x, ctypes.byref(sg))
                return {0: v, "sign": sg.value}
            return lg
        if fname == "frexp":
            f = bind(lib, "frexp", D, [D, ctypes.POINTER(I)])

            def fr(x):
                e = I(0)
                v = f(x, ctypes.byref(e))
                return {0: v, "exp": e.value}
            return fr
        if fname == "modf":
            f = bind(lib, "modf", D, [D, ctypes.POINTER(D)])

            def mf(x):
                ip = D(0)
                v = f(x, ctypes.byref(ip))
                return {0: v, 1: ip.value}
            return mf
        if fname == "rem_pio2":
            f = bind(lib, "__ieee754_rem_pio2", I, [D, ctypes.POINTER(D * 2)])

            def rp(x):
                y = (D * 2)()
                n = f(x, ctypes.byref(y))
                return {"n": n, 0: y[0], "tail": y[1]}
            return rp
        if fname == "kernel_sin":
            f = bind(lib, "__kernel_sin", D, [D, D, I])
            return lambda x, y, iy: {0: f(x, y, iy)}
        if fname == "kernel_cos":
            f = bind(lib, "__kernel_cos", D, [D, D])
            return lambda x, y: {0: f(x, y)}
        if fname == "kernel_tan":
            f = bind(lib, "__kernel_tan", D, [D, D, I])
            return lambda x, y, k: {0: f(x, y, k)}
        raise KeyError(fname)


# --------------------------------------------------------------------------------------------
# Independent references where glibc has no such function
# --------------------------------------------------------------------------------------------

PI_BITS = 1500
_PI_FIXED = None


def pi_fraction():
    """pi to PI_BITS bits by Machin's formula in big-integer fixed point (no mpmath)."""
    global _PI_FIXED
    if _PI_FIXED is None:
        scale = 1 << (PI_BITS + 32)

        def arctan_inv(m):
            total = 0
            term = scale // m
            k = 0
            m2 = m * m
            while term:
                total += term // (2 * k + 1) if k % 2 == 0 else -(term // (2 * k + 1))
                term //= m2
                k += 1
            return total
        p = 16 * arctan_inv(5) - 4 * arctan_inv(239)
        _PI_FIXED = Fraction(p, scale)
    return _PI_FIXED


def rem_pio2_reference(x, n_lib, y0_lib):
    """{n, y0, y1} of x - n*pi/2 with exact rational arithmetic.  n follows fdlibm's
    convention (nearest integer; only n mod 8, signed like x, beyond 2^19*pi/2); y0 and y1
    are computed relative to the library's n (as the oracle does) when it is given."""
    if not math.isfinite(x):
        return {"n": None, 0: NAN, "tail": NAN, "_n_conv": 0}
    P = pi_fraction()
    q = Fraction(x) * 2 / P
    N0 = round(q)
    hx = (struct.unpack("<q", struct.pack("<d", x))[0] >> 32) & 0x7FFFFFFF
    large = hx > 0x413921FB
    ambiguous = abs(q - math.floor(q) - Fraction(1, 2)) < Fraction(1, 1 << 25)
    if large:
        n_conv = N0 % 8 if x > 0 else -((-N0) % 8)
    else:
        n_conv = N0
    n_true = None if ambiguous else n_conv
    N = N0
    if n_lib is not None:
        if large:
            base = math.floor(q)
            N = min((c for c in range(base - 8, base + 9) if (c - n_lib) % 8 == 0),
                    key=lambda c: abs(c - q))
        else:
            N = n_lib
    r = Fraction(x) - N * P / 2
    y0 = float(r)
    y1 = float(r - Fraction(y0_lib if y0_lib is not None else y0))
    return {"n": n_true, 0: y0, "tail": y1, "_n_conv": n_conv}


class Reference:
    def __init__(self, glibc):
        self.g = glibc

    def call(self, fname, args, libvals):
        g = self.g
        if fname == "rem_pio2":
            n_lib = libvals.get("n") if libvals else None
            y0_lib = libvals.get(0) if libvals else None
            return rem_pio2_reference(args[0], n_lib, y0_lib)
        if fname in ("kernel_sin", "kernel_cos", "kernel_tan"):
            x, y = args[0], args[1]
            if fname == "kernel_sin" and args[2] == 0:
                y = 0.0
            sn = g.call("sin", (x,))[0]
            cs = g.call("cos", (x,))[0]
            if fname == "kernel_sin":
                return {0: sn + cs * y}
            if fname == "kernel_cos":
                return {0: cs - sn * y}
            t = g.call("tan", (x,))[0]
            t = t + (1 + t * t) * y
            if args[2] == 1:
                return {0: t}
            return {0: -1.0 / t if t != 0 else NAN}
        return g.call(fname, args)


# --------------------------------------------------------------------------------------------
# The oracle co-process
# --------------------------------------------------------------------------------------------

class Oracle:
    def __init__(self, path, timeout, stderr_path):
        self.errf = open(stderr_path, "w")
        self.p = subprocess.Popen([path, "--timeout", str(timeout)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.errf, text=True,
                                  bufsize=1)

    def ask_many(self, requests):
        """Send all requests (from a writer thread) and read the responses in order.
        Returns [(response, seconds)], the time being the gap between consecutive responses
        (the oracle answers strictly in order, and its input never runs dry)."""
        def writer():
            for r in requests:
                self.p.stdin.write(json.dumps(r) + "\n")
            self.p.stdin.flush()
        th = threading.Thread(target=writer, daemon=True)
        t_prev = time.monotonic()
        th.start()
        out = []
        for _ in requests:
            line = self.p.stdout.readline()
            now = time.monotonic()
            if not line:
                raise RuntimeError("oracle exited early")
            out.append((json.loads(line), now - t_prev))
            t_prev = now
        th.join()
        return out

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait()
        self.errf.close()
        return rc


# --------------------------------------------------------------------------------------------
# Input generation
# --------------------------------------------------------------------------------------------

SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 10.0,
           DTRUE_MIN, -DTRUE_MIN, DMIN, -DMIN, DMAX, -DMAX, 1e-300, -1e-300, 1e300, -1e300,
           PI, -PI, PI / 2, -PI / 2, PI / 4, 0.1, 1e-8, 100.0, 1000.0, 2.0 ** 52,
           2.0 ** 53, 4503599627370495.5, 0.49999999999999994, 1.5, 2.5, -2.5]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def bits(self):
        """A uniformly random bit pattern (NaN rarely)."""
        while True:
            v = struct.unpack("<d", struct.pack("<Q", self.r.getrandbits(64)))[0]
            if v == v or self.r.random() < 0.02:
                return v

    def expo(self, lo, hi, signed=True):
        """Random sign, binary exponent uniform in [lo, hi], random mantissa."""
        m = 1 + self.r.random()
        v = math.ldexp(m, self.r.randint(lo, hi))
        if signed and self.r.random() < 0.5:
            v = -v
        return v

    def uni(self, a, b):
        return self.r.uniform(a, b)

    def near(self, v, k=4):
        """v moved by a few ulps."""
        d = self.r.randint(-k, k)
        b = struct.unpack("<q", struct.pack("<d", v))[0]
        if v == 0 or not math.isfinite(v):
            return v
        return struct.unpack("<d", struct.pack("<q", b + d))[0]

    def special(self):
        return self.r.choice(SPECIAL)

    def choice(self, seq):
        return self.r.choice(seq)

    def int32(self):
        return self.r.randint(INT_MIN, INT_MAX)


def mix(g, n, parts):
    """n samples from weighted samplers [(weight, sampler)]."""
    total = sum(w for w, _ in parts)
    out = []
    for _ in range(n):
        t = g.r.random() * total
        for w, f in parts:
            t -= w
            if t <= 0:
                out.append(f())
                break
        else:
            out.append(parts[-1][1]())
    return out


_HARD = {}


def hard_points(name):
    """Hard inputs computed once with mpmath (used for input generation only)."""
    if name in _HARD:
        return _HARD[name]
    import mpmath
    mpmath.mp.dps = 30
    pts = []
    if name == "bessel_zeros":
        for kind, order in (("j", 0), ("j", 1), ("y", 0), ("y", 1), ("j", 2), ("j", 5),
                            ("y", 3), ("j", 20)):
            fz = mpmath.besseljzero if kind == "j" else mpmath.besselyzero
            for k in list(range(1, 30)) + [100, 1000, 10000]:
                pts.append((kind, order, float(fz(order, k))))
    elif name == "lgamma_roots":
        # log|Gamma| = 0 on the negative axis: inside (-3, -2) and (-4, -3), and then, for
        # every k, close to -k on both sides (|Gamma(-k +- e)| ~ 1/(k! e): e ~ 1/k!)
        f = lambda t: mpmath.loggamma(t).real
        for a, b in ((-2.9, -2.6), (-2.6, -2.1), (-3.99, -3.5), (-3.5, -3.01)):
            try:
                pts.append(float(mpmath.findroot(f, (a, b), solver="anderson")))
            except Exception:
                pass
        for k in range(4, 18):
            e = 1 / mpmath.factorial(k)
            for side in (1, -1):
                lo, hi = -k + side * e / 4, -k + side * 4 * e
                try:
                    r = mpmath.findroot(f, (lo, hi), solver="anderson")
                    if min(lo, hi) <= r <= max(lo, hi):
                        pts.append(float(r))
                except Exception:
                    pass
        pts = sorted(set(pts))
    _HARD[name] = pts
    return pts


def gen_inputs(fname, g, n):
    """n input tuples for fname."""
    sp, bits, expo, uni, near = g.special, g.bits, g.expo, g.uni, g.near

    def one(parts):
        return [(v,) for v in mix(g, n, parts)]

    def two(parts):
        return mix(g, n, parts)

    if fname in ("acos", "asin"):
        return one([(1, sp), (2, bits), (4, lambda: uni(-1, 1)), (1, lambda: expo(-60, 0)),
                    (2, lambda: g.choice((1, -1)) * (1 - expo(-53, -1, False))),
                    (1, lambda: expo(-1074, -1000))])
    if fname == "acosh":
        return one([(1, sp), (2, bits), (3, lambda: 1 + expo(-52, 4, False)),
                    (2, lambda: expo(0, 1023, False)), (1, lambda: near(1.0, 8))])
    if fname == "atanh":
        return one([(1, sp), (2, bits), (3, lambda: uni(-1, 1)),
                    (2, lambda: g.choice((1, -1)) * (1 - expo(-53, -1, False))),
                    (1, lambda: expo(-60, -1))])
    if fname in ("asinh", "atan", "tanh", "erf", "cbrt", "sqrt"):
        parts = [(1, sp), (3, bits), (3, lambda: uni(-30, 30)), (2, lambda: expo(-60, 60))]
        if fname == "sqrt":
            parts.append((1, lambda: float(g.r.randint(0, 2 ** 26) ** 2)))
        if fname == "cbrt":
            parts.append((1, lambda: float(g.r.randint(-2 ** 17, 2 ** 17) ** 3)))
        if fname == "tanh":
            parts.append((1, lambda: uni(15, 25)))
        return one(parts)
    if fname == "erfc":
        return one([(1, sp), (2, bits), (3, lambda: uni(-6, 28)), (1, lambda: uni(26, 27.3)),
                    (1, lambda: expo(-60, 8)), (1, lambda: expo(6, 1023))])
    if fname in ("exp", "expm1", "cosh", "sinh"):
        return one([(1, sp), (2, bits), (4, lambda: uni(-750, 750)),
                    (1, lambda: near(709.782712893384, 1000)),
                    (1, lambda: near(710.4758600739439, 1000)),
                    (1, lambda: near(-745.1332191019411, 1000)),
                    (2, lambda: expo(-60, 3))])
    if fname in ("log", "log10", "log1p"):
        parts = [(1, sp), (3, lambda: abs(bits())), (2, lambda: expo(-1074, 1023, False)),
                 (2, lambda: 1 + uni(-0.01, 0.01)), (1, lambda: near(1.0, 1000)),
                 (1, bits)]
        if fname == "log10":
            parts.append((1, lambda: 10.0 ** g.r.randint(-30, 30)))
        if fname == "log1p":
            parts += [(1, lambda: -1 + expo(-53, -1, False)), (2, lambda: expo(-60, 3))]
        return one(parts)
    if fname in ("sin", "cos", "tan"):
        worst = [math.ldexp(6381956970095103, 797), math.ldexp(5261692873635770, 499),
                 1e22, 1.0e300, DMAX, 823550.0, 3.14159265358979311]
        return one([(1, sp), (3, bits), (3, lambda: uni(-10, 10)), (2, lambda: expo(-30, 1023)),
                    (2, lambda: near(g.r.randint(-10 ** 6, 10 ** 6) * PI / 2, 2)),
                    (1, lambda: near(g.choice(worst), 2))])
    if fname == "rem_pio2":
        worst = [math.ldexp(6381956970095103, 797), math.ldexp(5261692873635770, 499), 1e22]
        return one([(1, sp), (3, bits), (3, lambda: uni(-20, 20)), (3, lambda: expo(-5, 1023)),
                    (2, lambda: near(g.r.randint(-2 ** 30, 2 ** 30) * PI / 2, 2)),
                    (1, lambda: near(g.choice(worst), 3)),
                    (1, lambda: near(g.choice((823549.6, 823550.5, 2.356194490192345,
                                               0.7853981633974483)), 50))])
    if fname in ("j0", "j1", "y0", "y1"):
        kind, order = fname[0], int(fname[1])
        zeros = [z for (k, o, z) in hard_points("bessel_zeros") if k == kind and o == order]
        return one([(1, sp), (2, bits), (3, lambda: uni(0, 100)), (2, lambda: expo(-40, 1023)),
                    (3, lambda: near(g.choice(zeros), 3)), (1, lambda: uni(-100, 0))])
    if fname in ("jn", "yn"):
        kind = fname[0]
        zeros = [(o, z) for (k, o, z) in hard_points("bessel_zeros") if k == kind]

        def order():
            t = g.r.random()
            if t < 0.03:
                return g.choice((INT_MIN, INT_MAX, INT_MIN + 1))
            if t < 0.35:
                return g.r.randint(-10, 60)
            if t < 0.6:
                return g.r.randint(-1500, 1500)
            if t < 0.75:
                return g.r.randint(-300000, 300000)
            return g.int32()

        def at_zero():
            o, z = g.choice(zeros)
            return (o, near(z, 3))

        def around_n():
            nn = g.r.randint(2, 5000)
            return (nn, nn * uni(0.3, 3))
        return two([(1, lambda: (order(), sp())), (2, lambda: (order(), bits())),
                    (3, lambda: (order(), uni(-50 if kind == "j" else 0, 200))),
                    (2, lambda: (order(), expo(-40, 1023))), (2, at_zero), (2, around_n)])
    if fname == "lgamma_r":
        roots = hard_points("lgamma_roots")
        return one([(1, sp), (2, bits), (3, lambda: uni(-30, 30)),
                    (1, lambda: g.choice((1.0, 2.0)) + expo(-60, -2)),
                    (2, lambda: -g.r.randint(1, 170) + expo(-50, -2)),
                    (2, lambda: near(g.choice(roots), 3)), (1, lambda: expo(-80, 1023)),
                    (1, lambda: expo(-80, 60))])
    if fname in ("ceil", "floor", "rint", "modf"):
        return one([(1, sp), (3, bits), (3, lambda: uni(-10, 10)),
                    (2, lambda: g.r.randint(-1000, 1000) + 0.5),
                    (2, lambda: expo(50, 54)), (1, lambda: expo(-1074, 0))])
    if fname in ("ilogb", "logb", "frexp"):
        return one([(1, sp), (5, bits), (2, lambda: expo(-1074, -1022))])
    if fname in ("ldexp", "scalbn"):
        xs = lambda: g.choice((sp, bits, bits, lambda: expo(-1074, -1000)))()
        return two([(3, lambda: (xs(), g.r.randint(-2200, 2200))), (1, lambda: (xs(), g.int32())),
                    (1, lambda: (xs(), g.r.randint(-60, 60)))])
    if fname == "scalb":
        xs = lambda: g.choice((sp, bits, bits))()
        return two([(3, lambda: (xs(), float(g.r.randint(-2200, 2200)))),
                    (1, lambda: (xs(), sp())), (1, lambda: (xs(), bits())),
                    (1, lambda: (xs(), uni(-100, 100)))])
    if fname == "atan2":
        return two([(1, lambda: (sp(), sp())), (3, lambda: (bits(), bits())),
                    (3, lambda: (uni(-10, 10), uni(-10, 10))),
                    (2, lambda: (expo(-1074, 1023), expo(-1074, 1023)))])
    if fname == "hypot":
        return two([(1, lambda: (sp(), sp())), (3, lambda: (bits(), bits())),
                    (2, lambda: (uni(-10, 10), uni(-10, 10))),
                    (2, lambda: (expo(-1074, 1023), expo(-1074, 1023)))])
    if fname in ("fmod", "remainder"):
        return two([(1, lambda: (sp(), sp())), (3, lambda: (bits(), bits())),
                    (2, lambda: (uni(-100, 100), uni(-10, 10))),
                    (2, lambda: (expo(-1074, 1023), expo(-1074, 1023))),
                    (1, lambda: (g.r.randint(-100, 100) + 0.5, 1.0))])
    if fname == "pow":
        def big_result():
            x = expo(-20, 20, False)
            if x == 1:
                x = 2.0
            return (x, uni(-1080, 1030) / math.log2(x))

        def near_one():
            return (near(1.0, 1000), expo(0, 62))

        def neg_int():
            return (-expo(-10, 10, False), float(g.r.randint(-400, 400)))
        return two([(1, lambda: (sp(), sp())), (3, lambda: (bits(), bits())),
                    (2, lambda: (uni(0, 10), uni(-30, 30))), (2, big_result), (2, near_one),
                    (1, neg_int), (1, lambda: (g.choice((-8.0, -27.0, -0.125)), 1 / 3.0))])
    if fname == "nextafter":
        return two([(1, lambda: (sp(), sp())), (3, lambda: (bits(), bits())),
                    (2, lambda: (bits(), sp())), (1, lambda: (expo(-1074, -1020), 0.0))])
    if fname in ("kernel_sin", "kernel_cos", "kernel_tan"):
        def kx():
            t = g.r.random()
            if t < 0.6:
                return uni(-0.7853981633974483, 0.7853981633974483)
            if t < 0.8:
                return expo(-40, -1)
            return near(g.choice((0.7853981633974483, -0.7853981633974483, 0.6744, 0.3)), 20)

        def tail(x):
            if g.r.random() < 0.15:
                return 0.0
            return uni(-0.5, 0.5) * ulp(x)

        def inside():
            x = kx()
            y = tail(x)
            if fname == "kernel_cos":
                return (x, y)
            third = g.choice((0, 1)) if fname == "kernel_sin" else g.choice((1, -1))
            return (x, y, third)

        def outside():
            x = g.choice((bits, lambda: uni(-3, 3)))()
            y = g.choice((bits, lambda: uni(-1, 1), lambda: 0.0))()
            if fname == "kernel_cos":
                return (x, y)
            third = g.choice((0, 1, -1, 2, g.int32()))
            return (x, y, third)
        return two([(9, inside), (1, outside)])
    raise KeyError(fname)


# --------------------------------------------------------------------------------------------
# Requests and comparison
# --------------------------------------------------------------------------------------------

def load_functions():
    path = os.path.join(HERE, "functions.tsv")
    names = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            names.append(line.split("\t")[0])
    return names


def declared_keys(fname):
    """The results the harness declares, in order (see ORACLE.md)."""
    if fname == "rem_pio2":
        return ["n", 0, "tail"]
    if fname == "lgamma_r":
        return [0, "sign"]
    if fname == "frexp":
        return [0, "exp"]
    if fname == "modf":
        return [0, 1]
    return [0]


def make_request(fname, args, libvals):
    res = []
    for k in declared_keys(fname):
        v = libvals.get(k) if libvals else None
        entry = {"index": k if isinstance(k, int) else None,
                 "name": k if isinstance(k, str) else None,
                 "value": s(v) if v is not None else "0"}
        if fname == "rem_pio2" and k == "n" and v is not None:
            entry["value"] = str(int(v))
        res.append(entry)
    return {"function": fname, "inputs": [s(a) for a in args], "results": res}


def fmt_args(args):
    return "(" + ", ".join(s(a) for a in args) + ")"


def parse_answer(a):
    if a is None:
        return None
    return float(a)


def lib_too_slow(fname, args):
    """fdlibm's (and glibc's, the same algorithm) jn/yn run a recurrence of |n| steps for
    2^-29 <= |x| < 2^302 (yn stops early once it overflows, i.e. for small x): with |n| up to
    2^31 that is seconds per call, so those cases get no reference (the oracle is still
    asked)."""
    if fname not in ("jn", "yn"):
        return False
    n, x = abs(args[0]), abs(args[1])
    if n <= 200000 or not (2.0 ** -29 <= x < 2.0 ** 302):
        return False
    return not (fname == "yn" and x <= 1e5)


def arbiter(fname, args, key, oracle_str=None):
    """For a large oracle/reference disagreement: the value by a method independent of both
    the reference and the oracle's own (mpmath used directly, along another route), or None.
      J_n: the power series in exact rational arithmetic (|x| <= 60), Bessel's integral
           (1/pi) int_0^pi cos(n t - x sin t) dt by quadrature (n, |x| <= 200), else
           mpmath.besselj (the oracle uses its own Hankel/Debye expansions for large x and
           recurrences for large n);
      Y_n: mpmath.bessely (limit of the non-integer-order formula; the oracle sums the
           integer-order series / Hankel / Debye expansions / recurrences instead), for
           |n| <= 6000 and x <= 1e6 or x >= n^2;
      lgamma: log|gamma(x)| (the oracle uses loggamma);
      sin/cos/tan: exact rational reduction by pi/2 with Machin's pi, then mpmath on the
           small remainder (the oracle lets mpmath reduce the huge argument itself);
      jn/yn with |n| >= 1000 where none of the above applies: from oracle.py, whichever
           of Debye's expansion and the fixed-point recurrences it did not answer with."""
    import mpmath
    mp = mpmath.mp
    if key != 0:
        return None
    try:
        with mpmath.workdps(40):
            if fname in ("j0", "j1", "jn"):
                n, x = (int(fname[1]), args[0]) if fname != "jn" else args
                if n < 0:
                    n, x = -n, -x
                if abs(x) <= 60 and n <= 3000:
                    return exact_j_series(n, x)
                if n <= 6000 and abs(x) <= 20000 and oracle_str is not None:
                    return fixed_j_series(n, x, oracle_str)
                if n <= 200 and abs(x) <= 200:
                    x = mpmath.mpf(x)
                    m = max(4, int(abs(x)) + n)
                    pieces = [mpmath.pi * i / m for i in range(m + 1)]
                    return mpmath.quad(lambda t: mpmath.cos(n * t - x * mpmath.sin(t)),
                                       pieces) / mpmath.pi
                if n <= 5000 or abs(x) >= float(n) ** 2:
                    return mpmath.besselj(n, mpmath.mpf(x), maxterms=20000)
            if fname in ("y0", "y1", "yn"):
                n, x = (int(fname[1]), args[0]) if fname != "yn" else args
                if x > 0 and ((abs(n) <= 6000 and x <= 1e6) or x >= float(n) ** 2):
                    return mpmath.bessely(n, mpmath.mpf(x), maxterms=100000)
            if fname in ("sin", "cos", "tan") and math.isfinite(args[0]):
                # exact reduction with Machin's pi, then mpmath on the small remainder only
                x = args[0]
                P = pi_fraction()
                N = round(Fraction(x) * 2 / P)
                r = Fraction(x) - N * P / 2
                with mpmath.workdps(60):
                    rr = mpmath.mpf(r.numerator) / r.denominator
                    sn, cs = mpmath.sin(rr), mpmath.cos(rr)
                    k = N % 4
                    sin_x = (sn, cs, -sn, -cs)[k]
                    cos_x = (cs, -sn, -cs, sn)[k]
                    return {"sin": sin_x, "cos": cos_x, "tan": sin_x / cos_x}[fname]
            if fname == "lgamma_r":
                with mpmath.workdps(60):
                    return mpmath.log(abs(mpmath.gamma(mpmath.mpf(args[0]))))
    except Exception:
        pass
    if fname in ("jn", "yn"):
        # last resort for large orders: Debye's uniform expansion, the oracle's own code but
        # an algorithm independent of the recurrences / Hankel expansion it used here
        try:
            n, x = args
            sign = 1
            if fname == "jn" and n < 0:
                n, x = -n, -x
            if fname == "yn" and n < 0:
                n = -n
                sign = -1 if n % 2 else 1
            if fname == "jn" and x < 0:
                x = -x
                sign = -1 if n % 2 else 1
            if n >= 1000 and x > 0:
                orc = _oracle_module()
                q = x * x / 4
                series = q <= n + 1 if fname == "jn" else q < n - 1
                if n <= orc.DEBYE_MIN_N or series:
                    # the oracle used a series or a recurrence: check with Debye's expansion
                    with mpmath.workprec(260):
                        r = orc.debye_jy(n, x)
                    if r is not None:
                        return sign * r[0 if fname == "jn" else 1]
                elif n <= 200000:
                    # the oracle used Debye's expansion: check with a recurrence
                    F = 300
                    with mpmath.workprec(F + 64):
                        if fname == "yn":
                            v = orc.forward_rec(n, x, orc.y_small(0, x), orc.y_small(1, x), F)
                        elif x >= n:
                            v = orc.forward_rec(n, x, orc.j_small(0, x), orc.j_small(1, x), F)
                        else:
                            v = orc.miller_j(n, x, F)
                    return sign * v
        except Exception:
            return None
    return None


_ORACLE_MOD = None


def _oracle_module():
    global _ORACLE_MOD
    if _ORACLE_MOD is None:
        import importlib.util
        sys.dont_write_bytecode = True        # no __pycache__ next to oracle.py
        spec = importlib.util.spec_from_file_location("fdlibm_oracle",
                                                      os.path.join(HERE, "oracle.py"))
        _ORACLE_MOD = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_ORACLE_MOD)
    return _ORACLE_MOD


def exact_j_series(n, x):
    """J_n(x) (n >= 0) by its power series summed in exact rational arithmetic (x is a dyadic
    rational), stopped once the (alternating, decreasing) terms are below 2^-160 of the sum:
    free of rounding and cancellation."""
    import mpmath
    q = Fraction(x) / 2
    term = q ** n / math.factorial(n)
    total = term
    q2 = q * q
    k = 0
    while True:
        term = -term * q2 / ((k + 1) * (n + k + 1))
        k += 1
        total += term
        if k * (n + k) > q2 and total != 0 and abs(term) < abs(total) / (1 << 160):
            break
        if total == 0 and term == 0:
            break
    return mpmath.mpf(total.numerator) / total.denominator


def fixed_j_series(n, x, size_hint):
    """J_n(x) (n >= 0) by its power series in big-integer fixed point: x = m 2^e is dyadic,
    so each term follows from the previous one by one multiplication by m^2 (a shift) and
    one integer division (error <= 1 unit).  The scale covers the largest term (~e^|x|)
    plus 160 bits below the result, whose size the oracle's answer hints."""
    import mpmath
    m, d = Fraction(x / 2).numerator, Fraction(x / 2).denominator   # q = m/d, d = 2^k
    small = max(0, -math.frexp(float(size_hint))[1]) if float(size_hint) != 0 else 1100
    S = 160 + small + int(1.4427 * abs(x)) + 64
    # term_0 = q^n / n! in units of 2^-S
    num = m ** n << S
    den = d ** n * math.factorial(n)
    term = num // den if num >= 0 else -((-num) // den)
    total = term
    m2, d2 = m * m, d * d
    k = 0
    while True:
        t = -term * m2
        dv = d2 * (k + 1) * (n + k + 1)
        term = t // dv if t >= 0 else -((-t) // dv)
        k += 1
        total += term
        if term == 0 and k * (n + k) > (x / 2) ** 2:
            break
    return mpmath.ldexp(mpmath.mpf(total), -S)


def confirms(oracle_str, value):
    import mpmath
    if value is None or oracle_str is None:
        return None
    o = mpmath.mpf(oracle_str)
    if value == 0:
        return o == 0
    return abs(o - value) <= abs(value) * mpmath.mpf(10) ** -15


def check_function(fname, inputs, oracle, ref, fdl):
    slow = [lib_too_slow(fname, a) for a in inputs]
    libvals = [fdl.call(fname, a) if fdl and not sl else None for a, sl in zip(inputs, slow)]
    refs = [ref.call(fname, a, lv) if not sl else None
            for a, lv, sl in zip(inputs, libvals, slow)]
    if fname == "rem_pio2" and fdl is None:
        # no library: send the independent reduction's own n and y0 as the "library" values
        # (n in fdlibm's convention; where n is ambiguous, the nearest integer), and judge y
        # relative to them
        libvals = []
        for a, r in zip(inputs, refs):
            n_send = r["n"] if r["n"] is not None else r.get("_n_conv", 0)
            libvals.append({"n": n_send, 0: r[0], "tail": r["tail"]})
        refs = [rem_pio2_reference(a[0], lv["n"], lv[0]) for a, lv in zip(inputs, libvals)]
    elif fdl is None:
        libvals = refs
    reqs = [make_request(fname, a, lv) for a, lv in zip(inputs, libvals)]
    resp = oracle.ask_many(reqs)
    stat = {"values": 0, "le1": 0, "le4": 0, "far": 0, "null": 0, "noref": 0,
            "fdl_gt1": 0, "fdl_own": 0, "fdl_far": [], "far_list": [], "far_confirmed": 0,
            "far_contradicted": 0, "times": [t for _, t in resp]}
    keys = declared_keys(fname)
    for args, lv, rv, (r, _) in zip(inputs, libvals, refs, resp):
        answers = r.get("results", [])
        for k, a in zip(keys, answers):
            stat["values"] += 1
            o = parse_answer(a)
            if o is None:
                stat["null"] += 1
                continue
            rk = rv.get(k) if rv else None
            if rk is None:
                stat["noref"] += 1
            else:
                d = ulp_dist(o, float(rk))
                if d <= 1:
                    stat["le1"] += 1
                elif d <= 4:
                    stat["le4"] += 1
                else:
                    stat["far"] += 1
                    verdict = confirms(a, arbiter(fname, args, k, a))
                    if verdict:
                        stat["far_confirmed"] += 1
                    elif verdict is False:
                        stat["far_contradicted"] += 1
                    stat["far_list"].append((d, args, k, a, rk, verdict))
            if fdl is not None and lv is not None and lv.get(k) is not None:
                d2 = ulp_dist(o, float(lv[k]))
                if d2 > 1:
                    stat["fdl_gt1"] += 1
                    # fdlibm-specific: the reference agrees with the oracle (within 1 ulp)
                    own = rk is not None and ulp_dist(o, float(rk)) <= 1
                    if own:
                        stat["fdl_own"] += 1
                    stat["fdl_far"].append((own, d2, args, k, a, lv[k]))
    return stat


def fmt_dist(d):
    if d == math.inf:
        return "inf"
    if d >= 1e6:
        return "%.1e" % d
    return str(int(d))


def build_fdlibm(outdir):
    """Compile newlib's fdlibm (the 44 files of functions.tsv + helpers) into a shared
    library in outdir; returns its path."""
    import glob
    import tarfile
    lib = os.path.join(outdir, "libfdlibm.so")
    if os.path.exists(lib):
        return lib
    os.makedirs(outdir, exist_ok=True)
    tars = sorted(glob.glob("/usr/src/newlib/newlib-*.tar.xz"))
    if not tars:
        raise RuntimeError("newlib-source is not installed (/usr/src/newlib/newlib-*.tar.xz)")
    src = os.path.join(outdir, "src")
    if not os.path.isdir(src):
        with tarfile.open(tars[-1]) as t:
            members = [m for m in t.getmembers()
                       if "/newlib/libm/" in m.name or "/newlib/libc/include/" in m.name]
            t.extractall(src, members)
    nl = glob.glob(os.path.join(src, "*", "newlib"))[0]
    files = set()
    with open(os.path.join(HERE, "functions.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            files.add(line.split("\t")[1])
    files |= {"math/k_rem_pio2.c", "common/math_err.c", "math/s_fabs.c",
              "common/s_copysign.c", "common/s_finite.c"}
    cc = os.environ.get("CC") or next((c for c in ("clang-19", "clang", "cc", "gcc")
                                       if subprocess.call(["sh", "-c", "command -v " + c],
                                                          stdout=subprocess.DEVNULL) == 0))
    objs = []
    for rel in sorted(files):
        o = os.path.join(outdir, rel.replace("/", "_") + ".o")
        subprocess.check_call([cc, "-c", "-O2", "-fPIC", "-ffp-contract=off", "-fno-builtin",
                               "-w", "-I", os.path.join(nl, "libm", "common"), "-idirafter",
                               os.path.join(nl, "libc", "include"),
                               os.path.join(nl, "libm", rel), "-o", o])
        objs.append(o)
    subprocess.check_call([cc, "-shared", "-Wl,-Bsymbolic", "-o", lib] + objs + ["-lm"])
    return lib


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--cases", type=int, default=2000, help="inputs per function")
    ap.add_argument("--functions", help="comma-separated subset")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--oracle", default=os.path.join(HERE, "oracle.py"))
    ap.add_argument("--timeout", type=float, default=2.0, help="the oracle's --timeout")
    ap.add_argument("--fdlibm", help="a shared library of newlib's fdlibm to compare too")
    ap.add_argument("--build-fdlibm", action="store_true",
                    help="compile newlib's fdlibm into --scratch and compare it too")
    ap.add_argument("--scratch", default="/tmp/numfuzz-fdlibm-oracle-check")
    ap.add_argument("--show", type=int, default=5, help="cases listed per function")
    ap.add_argument("--stderr", help="file for the oracle's stderr (default: scratch/oracle.err)")
    a = ap.parse_args()

    names = load_functions()
    if a.functions:
        want = a.functions.split(",")
        bad = [w for w in want if w not in names]
        if bad:
            sys.exit("unknown functions: %s" % ",".join(bad))
        names = [n for n in names if n in want]
    glibc = Lib(ctypes.CDLL("libm.so.6"), fdlibm=False)
    ref = Reference(glibc)
    fdl = None
    libpath = a.fdlibm
    if a.build_fdlibm and not libpath:
        libpath = build_fdlibm(os.path.join(a.scratch, "fdlibm"))
    if libpath:
        fdl = Lib(ctypes.CDLL(os.path.abspath(libpath)), fdlibm=True)
    os.makedirs(a.scratch, exist_ok=True)
    errpath = a.stderr or os.path.join(a.scratch, "oracle.err")
    oracle = Oracle(a.oracle, a.timeout, errpath)

    rows = []
    all_times = []
    for fname in names:
        g = Gen("%d:%s" % (a.seed, fname))
        inputs = gen_inputs(fname, g, a.cases)
        t0 = time.monotonic()
        st = check_function(fname, inputs, oracle, ref, fdl)
        el = time.monotonic() - t0
        all_times += st["times"]
        times = st["times"]
        rows.append((fname, st, statistics.median(times), max(times), el))
        st["far_list"].sort(key=lambda t: -t[0])
        st["fdl_far"].sort(key=lambda t: (not t[0], -t[1]))
        print("%-11s values %5d  <=1ulp %5d  <=4ulp %4d  far %4d (confirmed %d, contradicted "
              "%d)  null %4d  noref %4d  median %.2fms max %.0fms%s" % (
                  fname, st["values"], st["le1"], st["le4"], st["far"], st["far_confirmed"],
                  st["far_contradicted"], st["null"], st["noref"],
                  1000 * statistics.median(times), 1000 * max(times),
                  ("  fdlibm>1ulp %d (reference agrees with oracle: %d)" % (
                      st["fdl_gt1"], st["fdl_own"])) if fdl else ""), flush=True)
        for d, args, k, o, r, verdict in st["far_list"][:a.show]:
            print("    far  %s %s[%s]: oracle %s, reference %s (%s ulp; independent check: %s)"
                  % (fname, fmt_args(args), k, o, s(r), fmt_dist(d),
                     {True: "confirms oracle", False: "CONTRADICTS oracle",
                      None: "n/a"}[verdict]))
        if fdl:
            for own, d, args, k, o, v in st["fdl_far"][:a.show]:
                print("    fdlibm %s %s[%s]: oracle %s, fdlibm %s (%s ulp%s)" % (
                    fname, fmt_args(args), k, o, s(v), fmt_dist(d),
                    "; reference agrees with oracle" if own else ""))
    rc = oracle.close()
    tot = {k: sum(r[1][k] for r in rows) for k in ("values", "le1", "le4", "far", "null",
                                                 "noref")}
    print()
    print("| function | values | <=1 ulp | <=4 ulp | further (confirmed) | null | no ref | "
          "median ms | max ms |%s" % (" fdlibm >1 ulp (ref. agrees) |" if fdl else ""))
    print("|---|---|---|---|---|---|---|---|---|%s" % ("---|" if fdl else ""))
    for fname, st, med, mx, el in rows:
        print("| %s | %d | %d | %d | %d (%d) | %d | %d | %.2f | %.0f |%s" % (
            fname, st["values"], st["le1"], st["le4"], st["far"], st["far_confirmed"],
            st["null"], st["noref"], 1000 * med, 1000 * mx,
            (" %d (%d) |" % (st["fdl_gt1"], st["fdl_own"])) if fdl else ""))
    print("| total | %d | %d | %d | %d (%d) | %d | %d | %.2f | %.0f |%s" % (
        tot["values"], tot["le1"], tot["le4"], tot["far"],
        sum(r[1]["far_confirmed"] for r in rows), tot["null"], tot["noref"],
        1000 * statistics.median(all_times), 1000 * max(all_times),
        (" %d (%d) |" % (sum(r[1]["fdl_gt1"] for r in rows),
                         sum(r[1]["fdl_own"] for r in rows))) if fdl else ""))
    print()
    all_times.sort()
    print("oracle time per request: median %.2f ms, mean %.2f ms, p99 %.1f ms, max %.0f ms "
          "(%d requests); oracle exit status %d; its stderr is in %s" % (
              1000 * all_times[len(all_times) // 2], 1000 * statistics.mean(all_times),
              1000 * all_times[int(len(all_times) * 0.99)], 1000 * all_times[-1],
              len(all_times), rc, errpath))
    bad = sum(r[1]["far_contradicted"] for r in rows)
    if bad:
        print("%d large disagreement(s) where the independent check contradicts the oracle"
              % bad)
    return 1 if bad or rc else 0


if __name__ == "__main__":
    sys.exit(main())
