#!/usr/bin/python3
"""Reference oracle for numfuzz's harnesses of GSL 2.7.1's distributions (targets/gsl-cdf).

    oracle.py [--timeout SECONDS]     speak the protocol on stdin/stdout (0: no limit)
    oracle.py --list                  one line per function and whether it is covered
    oracle.py --self-test             check a few known values and exit (0: all passed)

The protocol is the one of targets/gsl/oracle.py (docs/src/guides/references.md): one JSON
request per line, {"function", "inputs", "results"}, one reply per line, {"results": [...]},
with the true value of every primary result as a decimal string of 21 significant digits,
"inf"/"-inf", "nan" (the distribution is undefined there: a parameter outside its domain, a
probability outside [0, 1]) or null (unknown). Named results are answered null.

What is answered, from the definitions in GSL's manual (never from GSL's code):
  gsl_cdf_X_P, _Q      the lower and upper tails, each computed directly (Q is never 1 - P):
                       erfc for the gaussian family, mpmath's regularized gammainc (lower or
                       upper) for gamma, chi-squared, Poisson; regularized betainc for beta, F,
                       t, binomial, negative binomial, Pascal; closed forms (expm1, log1p, atan
                       of the reciprocal, ...) for the rest; the hypergeometric tail summed term
                       by term from its smaller side.
  gsl_cdf_X_Pinv, _Qinv  closed forms where they exist; otherwise the root of the high-precision
                       tail: bisection over the ordered binary64 values (64 steps), then 40
                       bisection steps between the two neighbouring doubles, the tail chosen so
                       that its target is exact (P > 1/2 solves Q = 1 - P); a root beyond the
                       binary64 range is found by bisection on its exponent and answered as it
                       is (numfuzz decides what overflow means). The root is checked again at
                       the higher precision (the bracket must still hold), else null.
  gsl_ran_X_pdf        the density (or probability mass) at the point.
  Temme's uniform expansion (first term) for the incomplete gamma function at shapes a >= 1e20
                       (and from 1e5 where mpmath gives up): mpmath cannot sum its series there.
  gsl_ran_landau_pdf   not covered (an oscillating integral): null.

Precision: every value is computed at mp.prec 200 and 300 bits with the inputs converted
exactly from their binary64 values; when the two differ by more than 2^-120 relatively the answer
is null. Inputs that are Inf or NaN are answered null. Each request runs under a SIGALRM limit
(--timeout, default 20 s): an mpmath call that does not end in time gives null.
"""

import math
import os
import signal
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import oracle_protocol  # noqa: E402  (targets/oracle_protocol.py: the command line and request loop)

import mpmath  # noqa: E402
from mpmath import mp, mpf  # noqa: E402

DEFAULT_TIMEOUT = 20.0
PREC_LOW = 200
PREC_HIGH = 300
AGREE = mpf(2) ** -120
OUT_DIGITS = 21
DBL_MAX = 1.7976931348623157e308
DBL_TRUE_MIN = 5e-324


class Undefined(Exception):
    """The distribution is not defined at these parameters: answer "nan"."""


class Unknown(Exception):
    """No trustworthy value: answer null."""


def log(msg):
    try:
        sys.stderr.write("gsl-cdf oracle.py: %s\n" % msg)
        sys.stderr.flush()
    except Exception:
        pass


# ---- the functions -----------------------------------------------------------------------------
# name -> (types: one letter per input, "d" a double, "u" an unsigned count; f(*args) -> mpf or
#          a marker string; quantile: the function solves a root and checks itself)
FUNCS = {}
NOT_COVERED = {"gsl_ran_landau_pdf": "the Landau density is an oscillating integral; not computed"}


def fn(name, types, quantile=False):
    def deco(f):
        FUNCS[name] = (types, f, quantile)
        return f
    return deco


def need(cond):
    if not cond:
        raise Undefined()


def prob(p):
    need(0 <= p <= 1)


def erfc(z):
    """mpmath's erfc, which fails (a float overflow) beyond |z| ~ 1e154: there the asymptotic
    series exp(-z^2) / (z sqrt(pi)) (1 - 1/(2 z^2)), whose next term is 3/(4 z^4) < 2^-260."""
    if abs(z) < 10 ** 20:
        return mp.erfc(z)
    tail = mp.exp(-z * z) / (abs(z) * mp.sqrt(mp.pi)) * (1 - 1 / (2 * z * z))
    return tail if z > 0 else 2 - tail


def phi_lower(z):
    """P(N(0,1) <= z)."""
    return erfc(-z / mp.sqrt(2)) / 2


def phi_upper(z):
    """P(N(0,1) > z)."""
    return erfc(z / mp.sqrt(2)) / 2


# From this shape on, Temme's uniform expansion (relative error below 1e-26 there) replaces
# mpmath's gammainc, which takes minutes or gives up (NoConvergence from a ~ 1e8). Between
# TEMME_FALLBACK and TEMME_A it is used only where mpmath gives up (measured error at a = 1e6:
# 2e-12 relative, against mpmath).
TEMME_A = mpf(10) ** 20
TEMME_FALLBACK = mpf(10) ** 5


def temme(a, x):
    """(P, Q) of the regularized incomplete gamma function for a >= TEMME_A by Temme's uniform
    asymptotic expansion (DLMF 8.12.3, 8.12.8, 8.12.10) truncated after its first term c0:
    Q = erfc(eta sqrt(a/2))/2 + R, P = erfc(-eta sqrt(a/2))/2 - R,
    R = exp(-a eta^2/2) / sqrt(2 pi a) c0(eta), lambda = x/a, eta^2/2 = lambda - 1 - ln lambda
    (eta with the sign of lambda - 1), c0 = 1/(lambda - 1) - 1/eta (-1/3 at lambda = 1). The
    next term is c1/a (the measured error: 2e-12 at a = 1e6)."""
    lam = x / a
    d = lam - 1
    if abs(d) < mpf(2) ** -80:
        eta = d                      # eta = d - d^2/3 + ...: only the sign and size matter here
        c0 = -mpf(1) / 3 + d / 12
    else:
        eta = mp.sqrt(2 * (d - mp.log(lam)))
        if d < 0:
            eta = -eta
        c0 = 1 / d - 1 / eta
    r = mp.exp(-a * eta * eta / 2) / mp.sqrt(2 * mp.pi * a) * c0
    u = eta * mp.sqrt(a / 2)
    return erfc(-u) / 2 - r, erfc(u) / 2 + r


def gamma_lower(a, x):
    if x <= 0:
        return mpf(0)
    if a >= TEMME_A:
        return temme(a, x)[0]
    try:
        return mp.gammainc(a, 0, x, regularized=True)
    except mpmath.libmp.NoConvergence:
        if a < TEMME_FALLBACK:
            raise
        return temme(a, x)[0]


def gamma_upper(a, x):
    if x <= 0:
        return mpf(1)
    if a >= TEMME_A:
        return temme(a, x)[1]
    try:
        return mp.gammainc(a, x, mp.inf, regularized=True)
    except mpmath.libmp.NoConvergence:
        if a < TEMME_FALLBACK:
            raise
        return temme(a, x)[1]


# An argument this close to 1 is not represented at the working precision (1 - x rounds
# away): the beta function's tails are then refused (null) rather than computed at 1.
NEAR_ONE = mpf(2) ** -150


def beta_lower(a, b, x):
    """I_x(a, b)."""
    if x <= 0:
        return mpf(0)
    if x >= 1:
        return mpf(1)
    if 1 - x < NEAR_ONE:
        raise Unknown("beta argument within 2^-150 of 1")
    return mp.betainc(a, b, 0, x, regularized=True)


def beta_upper(a, b, x):
    """1 - I_x(a, b) = I_{1-x}(b, a): the latter where 1 - x is represented, else 1 - I_x(a, b)
    where that is at least 1/2 (no cancellation), else refused."""
    if x <= 0:
        return mpf(1)
    if x >= 1:
        return mpf(0)
    if x < NEAR_ONE:
        lower = beta_lower(a, b, x)
        if lower <= 0.5:
            return 1 - lower
        if max(a, b) <= 10 ** 4:
            # mpmath's own upper tail (it sums at the precision the cancellation needs); with a
            # parameter in the 1e5s it was seen to return 0 or 1 for a tail of 1e-349.
            return mp.betainc(a, b, x, 1, regularized=True)
        raise Unknown("beta upper tail at an argument below 2^-150")
    return mp.betainc(b, a, 0, 1 - x, regularized=True)


# ---- root finding ------------------------------------------------------------------------------

def key_of(x):
    """The order of binary64 values as integers."""
    bits = struct.unpack("<q", struct.pack("<d", float(x)))[0]
    return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)


def double_of(k):
    if k >= 0:
        return struct.unpack("<d", struct.pack("<q", k))[0]
    return -struct.unpack("<d", struct.pack("<q", -k))[0]


def solve(F, target, lo, hi):
    """x in [lo, hi] (doubles; F increasing) with F(x) = target, as an mpf, and the two
    neighbouring doubles around it (None beyond binary64). An end that is 0 or +-DBL_MAX is not
    a bound of the root: a root beyond DBL_MAX, or between 0 and the smallest subnormal, is
    searched on its exponent."""
    if F(mpf(hi)) < target:
        if hi != DBL_MAX:
            raise Unknown("no root below %r" % hi)
        return solve_exponent(F, target, 1, 1024, +1)
    if lo == -DBL_MAX and F(mpf(lo)) >= target:
        return solve_exponent(F, target, -1, 1024, +1)
    if lo == 0 and F(mpf(DBL_TRUE_MIN)) >= target:
        return solve_exponent(F, target, 1, -1074, -1)
    a, b = key_of(lo), key_of(hi)
    # invariant: F(a) < target <= F(b) (at the ends: taken as given)
    while b - a > 1:
        m = (a + b) // 2
        if F(mpf(double_of(m))) < target:
            a = m
        else:
            b = m
    x0, x1 = mpf(double_of(a)), mpf(double_of(b))
    for _ in range(40):
        m = (x0 + x1) / 2
        if F(m) < target:
            x0 = m
        else:
            x1 = m
    return (x0 + x1) / 2, (double_of(a), double_of(b))


def solve_exponent(F, target, sign, e0, d):
    """The root at x = sign 2^e beyond binary64: e walks from e0 in direction d (doubling the
    distance) until F(x) - target changes sign, then bisection on e."""
    def below(e):
        return F(sign * mpf(2) ** e) < target
    h0 = below(mpf(e0))
    e_in, e_out, step = mpf(e0), None, 1
    while step < 2 ** 40:
        e = mpf(e0 + d * step)
        if below(e) != h0:
            e_out = e
            break
        e_in = e
        step *= 2
    if e_out is None:
        raise Unknown("root beyond 2^(+-2^40)")
    for _ in range(120):
        m = (e_in + e_out) / 2
        if below(m) == h0:
            e_in = m
        else:
            e_out = m
    return sign * mpf(2) ** ((e_in + e_out) / 2), None


def quantile(P, Q, p, lower_tail, lo, hi, at_lo, at_hi):
    """The x with P(x) = p (lower_tail) or Q(x) = p (upper): P increasing, Q decreasing, on
    [lo, hi] (doubles); at_lo/at_hi: the answers for a probability that is all of one tail."""
    prob(p)
    if p == 0:
        return at_lo if lower_tail else at_hi
    if p == 1:
        return at_hi if lower_tail else at_lo
    # Solve the tail whose target is exact and at most 1/2: P(x) = p for p <= 1/2, else
    # Q(x) = 1 - p (exact: p > 1/2 is a double), and likewise for the upper tail.
    small = mpf(p) if p <= 0.5 else 1 - mpf(p)
    if lower_tail == (p <= 0.5):
        F, target = P, small
    else:
        F, target = (lambda x: -Q(x)), -small
    x, bracket = solve(F, target, lo, hi)
    # Check the root at the higher precision.
    prec = mp.prec
    try:
        mp.prec = PREC_HIGH
        if bracket is not None:
            a, b = bracket
            ok = (a == lo or F(mpf(a)) < target) and (b == hi or F(mpf(b)) >= target)
        else:
            ok = abs(F(x) - target) <= abs(target) * mpf(2) ** -60
    finally:
        mp.prec = prec
    if not ok:
        raise Unknown("the root does not survive %d bits" % PREC_HIGH)
    return x


# ---- gaussian family ---------------------------------------------------------------------------

@fn("gsl_cdf_ugaussian_P", "d")
def ugaussian_P(x):
    return phi_lower(x)


@fn("gsl_cdf_ugaussian_Q", "d")
def ugaussian_Q(x):
    return phi_upper(x)


def ugaussian_inv(p, lower):
    return quantile(phi_lower, phi_upper, p, lower, -DBL_MAX, DBL_MAX, "-inf", "inf")


@fn("gsl_cdf_ugaussian_Pinv", "d", quantile=True)
def ugaussian_Pinv(p):
    return ugaussian_inv(p, True)


@fn("gsl_cdf_ugaussian_Qinv", "d", quantile=True)
def ugaussian_Qinv(q):
    return ugaussian_inv(q, False)


@fn("gsl_cdf_gaussian_P", "dd")
def gaussian_P(x, s):
    need(s > 0)
    return phi_lower(x / s)


@fn("gsl_cdf_gaussian_Q", "dd")
def gaussian_Q(x, s):
    need(s > 0)
    return phi_upper(x / s)


def scaled(v, s):
    return v if isinstance(v, str) else v * s


@fn("gsl_cdf_gaussian_Pinv", "dd", quantile=True)
def gaussian_Pinv(p, s):
    need(s > 0)
    return scaled(ugaussian_inv(p, True), s)


@fn("gsl_cdf_gaussian_Qinv", "dd", quantile=True)
def gaussian_Qinv(q, s):
    need(s > 0)
    return scaled(ugaussian_inv(q, False), s)


@fn("gsl_ran_gaussian_pdf", "dd")
def gaussian_pdf(x, s):
    need(s > 0)
    return mp.exp(-(x / s) ** 2 / 2) / (s * mp.sqrt(2 * mp.pi))


@fn("gsl_ran_ugaussian_pdf", "d")
def ugaussian_pdf(x):
    return gaussian_pdf(x, mpf(1))


@fn("gsl_ran_gaussian_tail_pdf", "ddd")
def gaussian_tail_pdf(x, a, s):
    need(s > 0)
    if x < a:
        return mpf(0)
    return gaussian_pdf(x, s) / phi_upper(a / s)


@fn("gsl_ran_ugaussian_tail_pdf", "dd")
def ugaussian_tail_pdf(x, a):
    return gaussian_tail_pdf(x, a, mpf(1))


@fn("gsl_ran_bivariate_gaussian_pdf", "ddddd")
def bivariate_gaussian_pdf(x, y, sx, sy, r):
    need(sx > 0 and sy > 0 and -1 < r < 1)
    u, v = x / sx, y / sy
    c = 1 - r * r
    return mp.exp(-(u * u + v * v - 2 * r * u * v) / (2 * c)) / (2 * mp.pi * sx * sy * mp.sqrt(c))


@fn("gsl_cdf_lognormal_P", "ddd")
def lognormal_P(x, zeta, s):
    need(s > 0)
    if x <= 0:
        return mpf(0)
    return phi_lower((mp.log(x) - zeta) / s)


@fn("gsl_cdf_lognormal_Q", "ddd")
def lognormal_Q(x, zeta, s):
    need(s > 0)
    if x <= 0:
        return mpf(1)
    return phi_upper((mp.log(x) - zeta) / s)


def lognormal_inv(p, zeta, s, lower):
    need(s > 0)
    z = ugaussian_inv(p, lower)
    if z == "-inf":
        return mpf(0)
    if z == "inf":
        return "inf"
    return mp.exp(zeta + s * z)


@fn("gsl_cdf_lognormal_Pinv", "ddd", quantile=True)
def lognormal_Pinv(p, zeta, s):
    return lognormal_inv(p, zeta, s, True)


@fn("gsl_cdf_lognormal_Qinv", "ddd", quantile=True)
def lognormal_Qinv(q, zeta, s):
    return lognormal_inv(q, zeta, s, False)


@fn("gsl_ran_lognormal_pdf", "ddd")
def lognormal_pdf(x, zeta, s):
    need(s > 0)
    if x <= 0:
        return mpf(0)
    u = (mp.log(x) - zeta) / s
    return mp.exp(-u * u / 2) / (x * s * mp.sqrt(2 * mp.pi))


# ---- gamma family ------------------------------------------------------------------------------

@fn("gsl_cdf_gamma_P", "ddd")
def gamma_P(x, a, b):
    need(a > 0 and b > 0)
    return gamma_lower(a, x / b)


@fn("gsl_cdf_gamma_Q", "ddd")
def gamma_Q(x, a, b):
    need(a > 0 and b > 0)
    return gamma_upper(a, x / b)


def gamma_inv(p, a, b, lower):
    need(a > 0 and b > 0)
    return quantile(lambda x: gamma_lower(a, x / b), lambda x: gamma_upper(a, x / b), p, lower,
                    0.0, DBL_MAX, mpf(0), "inf")


@fn("gsl_cdf_gamma_Pinv", "ddd", quantile=True)
def gamma_Pinv(p, a, b):
    return gamma_inv(p, a, b, True)


@fn("gsl_cdf_gamma_Qinv", "ddd", quantile=True)
def gamma_Qinv(q, a, b):
    return gamma_inv(q, a, b, False)


def gamma_density(x, a, b):
    need(a > 0 and b > 0)
    if x < 0:
        return mpf(0)
    if x == 0:
        if a == 1:
            return 1 / b
        return mpf(0) if a > 1 else "inf"
    return mp.exp((a - 1) * mp.log(x / b) - x / b - mp.loggamma(a)) / b


@fn("gsl_ran_gamma_pdf", "ddd")
def gamma_pdf(x, a, b):
    return gamma_density(x, a, b)


@fn("gsl_ran_erlang_pdf", "ddd")
def erlang_pdf(x, a, n):
    return gamma_density(x, n, a)


@fn("gsl_cdf_chisq_P", "dd")
def chisq_P(x, nu):
    return gamma_P(x, nu / 2, mpf(2))


@fn("gsl_cdf_chisq_Q", "dd")
def chisq_Q(x, nu):
    return gamma_Q(x, nu / 2, mpf(2))


@fn("gsl_cdf_chisq_Pinv", "dd", quantile=True)
def chisq_Pinv(p, nu):
    return gamma_inv(p, nu / 2, mpf(2), True)


@fn("gsl_cdf_chisq_Qinv", "dd", quantile=True)
def chisq_Qinv(q, nu):
    return gamma_inv(q, nu / 2, mpf(2), False)


@fn("gsl_ran_chisq_pdf", "dd")
def chisq_pdf(x, nu):
    return gamma_density(x, nu / 2, mpf(2))


@fn("gsl_cdf_exponential_P", "dd")
def exponential_P(x, mu):
    need(mu > 0)
    return mpf(0) if x <= 0 else -mp.expm1(-x / mu)


@fn("gsl_cdf_exponential_Q", "dd")
def exponential_Q(x, mu):
    need(mu > 0)
    return mpf(1) if x <= 0 else mp.exp(-x / mu)


@fn("gsl_cdf_exponential_Pinv", "dd")
def exponential_Pinv(p, mu):
    need(mu > 0)
    prob(p)
    return "inf" if p == 1 else -mu * mp.log1p(-mpf(p))


@fn("gsl_cdf_exponential_Qinv", "dd")
def exponential_Qinv(q, mu):
    need(mu > 0)
    prob(q)
    return "inf" if q == 0 else -mu * mp.log(q)


@fn("gsl_ran_exponential_pdf", "dd")
def exponential_pdf(x, mu):
    need(mu > 0)
    return mpf(0) if x < 0 else mp.exp(-x / mu) / mu


# Exponential power: p(x) = exp(-|x/a|^b) / (2 a Gamma(1 + 1/b)).
@fn("gsl_cdf_exppow_P", "ddd")
def exppow_P(x, a, b):
    need(a > 0 and b > 0)
    u = (abs(x) / a) ** b
    if x < 0:
        return gamma_upper(1 / b, u) / 2
    return (1 + gamma_lower(1 / b, u)) / 2


@fn("gsl_cdf_exppow_Q", "ddd")
def exppow_Q(x, a, b):
    need(a > 0 and b > 0)
    u = (abs(x) / a) ** b
    if x < 0:
        return (1 + gamma_lower(1 / b, u)) / 2
    return gamma_upper(1 / b, u) / 2


@fn("gsl_ran_exppow_pdf", "ddd")
def exppow_pdf(x, a, b):
    need(a > 0 and b > 0)
    return mp.exp(-(abs(x) / a) ** b) / (2 * a * mp.gamma(1 + 1 / b))


# ---- beta family -------------------------------------------------------------------------------

@fn("gsl_cdf_beta_P", "ddd")
def beta_P(x, a, b):
    need(a > 0 and b > 0)
    return beta_lower(a, b, x)


@fn("gsl_cdf_beta_Q", "ddd")
def beta_Q(x, a, b):
    need(a > 0 and b > 0)
    return beta_upper(a, b, x)


def beta_inv(p, a, b, lower):
    need(a > 0 and b > 0)
    return quantile(lambda x: beta_lower(a, b, x), lambda x: beta_upper(a, b, x), p, lower,
                    0.0, 1.0, mpf(0), mpf(1))


@fn("gsl_cdf_beta_Pinv", "ddd", quantile=True)
def beta_Pinv(p, a, b):
    return beta_inv(p, a, b, True)


@fn("gsl_cdf_beta_Qinv", "ddd", quantile=True)
def beta_Qinv(q, a, b):
    return beta_inv(q, a, b, False)


@fn("gsl_ran_beta_pdf", "ddd")
def beta_pdf(x, a, b):
    need(a > 0 and b > 0)
    if x < 0 or x > 1:
        return mpf(0)
    if x == 0 or x == 1:
        e = a if x == 0 else b
        if e == 1:
            return 1 / mp.beta(a, b)
        return mpf(0) if e > 1 else "inf"
    return mp.exp((a - 1) * mp.log(x) + (b - 1) * mp.log1p(-x) - mp.log(mp.beta(a, b)))


def f_ratio(x, n1, n2):
    """(n1 x / (n1 x + n2), n2 / (n1 x + n2))."""
    d = n1 * x + n2
    return n1 * x / d, n2 / d


@fn("gsl_cdf_fdist_P", "ddd")
def fdist_P(x, n1, n2):
    need(n1 > 0 and n2 > 0)
    if x <= 0:
        return mpf(0)
    u, _ = f_ratio(x, n1, n2)
    return beta_lower(n1 / 2, n2 / 2, u)


@fn("gsl_cdf_fdist_Q", "ddd")
def fdist_Q(x, n1, n2):
    need(n1 > 0 and n2 > 0)
    if x <= 0:
        return mpf(1)
    _, v = f_ratio(x, n1, n2)
    return beta_lower(n2 / 2, n1 / 2, v)


def fdist_inv(p, n1, n2, lower):
    need(n1 > 0 and n2 > 0)
    return quantile(lambda x: fdist_P(x, n1, n2), lambda x: fdist_Q(x, n1, n2), p, lower,
                    0.0, DBL_MAX, mpf(0), "inf")


@fn("gsl_cdf_fdist_Pinv", "ddd", quantile=True)
def fdist_Pinv(p, n1, n2):
    return fdist_inv(p, n1, n2, True)


@fn("gsl_cdf_fdist_Qinv", "ddd", quantile=True)
def fdist_Qinv(q, n1, n2):
    return fdist_inv(q, n1, n2, False)


@fn("gsl_ran_fdist_pdf", "ddd")
def fdist_pdf(x, n1, n2):
    need(n1 > 0 and n2 > 0)
    if x < 0:
        return mpf(0)
    if x == 0:
        if n1 == 2:
            return mpf(1)
        return mpf(0) if n1 > 2 else "inf"
    # The terms grow as n log n and cancel to O(1): at n2 = 1.8e308 they are 6e310, whose last
    # place at 200 bits is 4e250, so the working precision grows by their bits.
    big = max(n1, n2, abs(x), mpf(2))
    with mp.extraprec(int(mp.log(big * mp.log(big), 2)) + 16):
        lg = (mp.loggamma((n1 + n2) / 2) - mp.loggamma(n1 / 2) - mp.loggamma(n2 / 2)
              + n1 / 2 * mp.log(n1) + n2 / 2 * mp.log(n2) + (n1 / 2 - 1) * mp.log(x)
              - (n1 + n2) / 2 * mp.log(n2 + n1 * x))
        return +mp.exp(lg)


def t_tail(x, nu):
    """P(T > |x|) for Student's t with nu degrees of freedom: I_z(nu/2, 1/2)/2 with
    z = nu/(nu + x^2); where nu is so large that z rounds to 1, the normal limit, whose relative
    error (x^4 + 2x^2 + 1)/(4 nu) is then below 1e-25; where neither holds, refused."""
    x2 = x * x
    if (x2 * x2 + 2 * x2 + 1) / nu < mpf(10) ** -25:
        return phi_upper(abs(x))
    w = x2 / (nu + x2)
    if w <= 0.5:
        central = mp.betainc(mpf(1) / 2, nu / 2, 0, w, regularized=True)   # P(|T| < |x|)
        if central <= 0.5:
            return (1 - central) / 2
    if w < NEAR_ONE:
        raise Unknown("t tail: nu/(nu + x^2) within 2^-150 of 1 and beyond the normal limit")
    return beta_lower(nu / 2, mpf(1) / 2, nu / (nu + x2)) / 2


@fn("gsl_cdf_tdist_P", "dd")
def tdist_P(x, nu):
    need(nu > 0)
    if x <= 0:
        return t_tail(x, nu)
    return 1 - t_tail(x, nu)


@fn("gsl_cdf_tdist_Q", "dd")
def tdist_Q(x, nu):
    need(nu > 0)
    if x >= 0:
        return t_tail(x, nu)
    return 1 - t_tail(x, nu)


def tdist_inv(p, nu, lower):
    need(nu > 0)
    return quantile(lambda x: tdist_P(x, nu), lambda x: tdist_Q(x, nu), p, lower,
                    -DBL_MAX, DBL_MAX, "-inf", "inf")


@fn("gsl_cdf_tdist_Pinv", "dd", quantile=True)
def tdist_Pinv(p, nu):
    return tdist_inv(p, nu, True)


@fn("gsl_cdf_tdist_Qinv", "dd", quantile=True)
def tdist_Qinv(q, nu):
    return tdist_inv(q, nu, False)


@fn("gsl_ran_tdist_pdf", "dd")
def tdist_pdf(x, nu):
    need(nu > 0)
    lg = (mp.loggamma((nu + 1) / 2) - mp.loggamma(nu / 2) - mp.log(nu * mp.pi) / 2
          - (nu + 1) / 2 * mp.log1p(x * x / nu))
    return mp.exp(lg)


# ---- closed forms ------------------------------------------------------------------------------

@fn("gsl_cdf_cauchy_P", "dd")
def cauchy_P(x, a):
    need(a > 0)
    if x < 0:
        return mp.atan(a / -x) / mp.pi
    return 1 - cauchy_Q(x, a) if x > 0 else mpf(1) / 2


@fn("gsl_cdf_cauchy_Q", "dd")
def cauchy_Q(x, a):
    need(a > 0)
    if x > 0:
        return mp.atan(a / x) / mp.pi
    return 1 - cauchy_P(x, a) if x < 0 else mpf(1) / 2


def cauchy_lower_inv(p, a):
    """The x with P(x) = p, p in (0, 1)."""
    if p < 0.5:
        return -a / mp.tan(mp.pi * p)
    if p == 0.5:
        return mpf(0)
    return a / mp.tan(mp.pi * (1 - mpf(p)))


@fn("gsl_cdf_cauchy_Pinv", "dd")
def cauchy_Pinv(p, a):
    need(a > 0)
    prob(p)
    if p == 0:
        return "-inf"
    if p == 1:
        return "inf"
    return cauchy_lower_inv(p, a)


@fn("gsl_cdf_cauchy_Qinv", "dd")
def cauchy_Qinv(q, a):
    need(a > 0)
    prob(q)
    if q == 0:
        return "inf"
    if q == 1:
        return "-inf"
    return -cauchy_lower_inv(q, a)


@fn("gsl_ran_cauchy_pdf", "dd")
def cauchy_pdf(x, a):
    need(a > 0)
    u = x / a
    return 1 / (a * mp.pi * (1 + u * u))


@fn("gsl_cdf_laplace_P", "dd")
def laplace_P(x, a):
    need(a > 0)
    if x < 0:
        return mp.exp(x / a) / 2
    return 1 - mp.exp(-x / a) / 2


@fn("gsl_cdf_laplace_Q", "dd")
def laplace_Q(x, a):
    need(a > 0)
    if x > 0:
        return mp.exp(-x / a) / 2
    return 1 - mp.exp(x / a) / 2


def laplace_lower_inv(p, a):
    if p == 0:
        return "-inf"
    if p == 1:
        return "inf"
    if p < 0.5:
        return a * mp.log(2 * mpf(p))
    return -a * mp.log(2 * (1 - mpf(p)))


@fn("gsl_cdf_laplace_Pinv", "dd")
def laplace_Pinv(p, a):
    need(a > 0)
    prob(p)
    return laplace_lower_inv(p, a)


@fn("gsl_cdf_laplace_Qinv", "dd")
def laplace_Qinv(q, a):
    need(a > 0)
    prob(q)
    v = laplace_lower_inv(q, a)
    return {"-inf": "inf", "inf": "-inf"}[v] if isinstance(v, str) else -v


@fn("gsl_ran_laplace_pdf", "dd")
def laplace_pdf(x, a):
    need(a > 0)
    return mp.exp(-abs(x) / a) / (2 * a)


@fn("gsl_cdf_rayleigh_P", "dd")
def rayleigh_P(x, s):
    need(s > 0)
    return mpf(0) if x <= 0 else -mp.expm1(-(x / s) ** 2 / 2)


@fn("gsl_cdf_rayleigh_Q", "dd")
def rayleigh_Q(x, s):
    need(s > 0)
    return mpf(1) if x <= 0 else mp.exp(-(x / s) ** 2 / 2)


@fn("gsl_cdf_rayleigh_Pinv", "dd")
def rayleigh_Pinv(p, s):
    need(s > 0)
    prob(p)
    return "inf" if p == 1 else s * mp.sqrt(-2 * mp.log1p(-mpf(p)))


@fn("gsl_cdf_rayleigh_Qinv", "dd")
def rayleigh_Qinv(q, s):
    need(s > 0)
    prob(q)
    return "inf" if q == 0 else s * mp.sqrt(-2 * mp.log(q))


@fn("gsl_ran_rayleigh_pdf", "dd")
def rayleigh_pdf(x, s):
    need(s > 0)
    return mpf(0) if x < 0 else x / (s * s) * mp.exp(-(x / s) ** 2 / 2)


@fn("gsl_ran_rayleigh_tail_pdf", "ddd")
def rayleigh_tail_pdf(x, a, s):
    need(s > 0)
    if x < a:
        return mpf(0)
    return x / (s * s) * mp.exp((a - x) * (a + x) / (2 * s * s))


@fn("gsl_cdf_weibull_P", "ddd")
def weibull_P(x, a, b):
    need(a > 0 and b > 0)
    return mpf(0) if x <= 0 else -mp.expm1(-(x / a) ** b)


@fn("gsl_cdf_weibull_Q", "ddd")
def weibull_Q(x, a, b):
    need(a > 0 and b > 0)
    return mpf(1) if x <= 0 else mp.exp(-(x / a) ** b)


@fn("gsl_cdf_weibull_Pinv", "ddd")
def weibull_Pinv(p, a, b):
    need(a > 0 and b > 0)
    prob(p)
    return "inf" if p == 1 else a * (-mp.log1p(-mpf(p))) ** (1 / b)


@fn("gsl_cdf_weibull_Qinv", "ddd")
def weibull_Qinv(q, a, b):
    need(a > 0 and b > 0)
    prob(q)
    return "inf" if q == 0 else a * (-mp.log(q)) ** (1 / b)


@fn("gsl_ran_weibull_pdf", "ddd")
def weibull_pdf(x, a, b):
    need(a > 0 and b > 0)
    if x < 0:
        return mpf(0)
    if x == 0:
        if b == 1:
            return 1 / a
        return mpf(0) if b > 1 else "inf"
    return b / a * (x / a) ** (b - 1) * mp.exp(-(x / a) ** b)


@fn("gsl_cdf_pareto_P", "ddd")
def pareto_P(x, a, b):
    need(a > 0 and b > 0)
    return mpf(0) if x < b else -mp.expm1(a * mp.log(b / x))


@fn("gsl_cdf_pareto_Q", "ddd")
def pareto_Q(x, a, b):
    need(a > 0 and b > 0)
    return mpf(1) if x < b else (b / x) ** a


@fn("gsl_cdf_pareto_Pinv", "ddd")
def pareto_Pinv(p, a, b):
    need(a > 0 and b > 0)
    prob(p)
    return "inf" if p == 1 else b * mp.exp(-mp.log1p(-mpf(p)) / a)


@fn("gsl_cdf_pareto_Qinv", "ddd")
def pareto_Qinv(q, a, b):
    need(a > 0 and b > 0)
    prob(q)
    return "inf" if q == 0 else b * mp.exp(-mp.log(q) / a)


@fn("gsl_ran_pareto_pdf", "ddd")
def pareto_pdf(x, a, b):
    need(a > 0 and b > 0)
    return mpf(0) if x < b else (a / b) * mp.exp(-(a + 1) * mp.log(x / b))


@fn("gsl_cdf_logistic_P", "dd")
def logistic_P(x, a):
    need(a > 0)
    return 1 / (1 + mp.exp(-x / a))


@fn("gsl_cdf_logistic_Q", "dd")
def logistic_Q(x, a):
    need(a > 0)
    return 1 / (1 + mp.exp(x / a))


@fn("gsl_cdf_logistic_Pinv", "dd")
def logistic_Pinv(p, a):
    need(a > 0)
    prob(p)
    if p == 0:
        return "-inf"
    if p == 1:
        return "inf"
    return a * (mp.log(p) - mp.log1p(-mpf(p)))


@fn("gsl_cdf_logistic_Qinv", "dd")
def logistic_Qinv(q, a):
    need(a > 0)
    prob(q)
    if q == 0:
        return "inf"
    if q == 1:
        return "-inf"
    return a * (mp.log1p(-mpf(q)) - mp.log(q))


@fn("gsl_ran_logistic_pdf", "dd")
def logistic_pdf(x, a):
    need(a > 0)
    u = mp.exp(-abs(x) / a)
    return u / (a * (1 + u) ** 2)


def gumbel1_t(x, a, b):
    return b * mp.exp(-a * x)


@fn("gsl_cdf_gumbel1_P", "ddd")
def gumbel1_P(x, a, b):
    need(a > 0 and b > 0)
    return mp.exp(-gumbel1_t(x, a, b))


@fn("gsl_cdf_gumbel1_Q", "ddd")
def gumbel1_Q(x, a, b):
    need(a > 0 and b > 0)
    return -mp.expm1(-gumbel1_t(x, a, b))


@fn("gsl_cdf_gumbel1_Pinv", "ddd")
def gumbel1_Pinv(p, a, b):
    need(a > 0 and b > 0)
    prob(p)
    if p == 0:
        return "-inf"
    if p == 1:
        return "inf"
    return (mp.log(b) - mp.log(-mp.log(p))) / a


@fn("gsl_cdf_gumbel1_Qinv", "ddd")
def gumbel1_Qinv(q, a, b):
    need(a > 0 and b > 0)
    prob(q)
    if q == 0:
        return "inf"
    if q == 1:
        return "-inf"
    return (mp.log(b) - mp.log(-mp.log1p(-mpf(q)))) / a


@fn("gsl_ran_gumbel1_pdf", "ddd")
def gumbel1_pdf(x, a, b):
    need(a > 0 and b > 0)
    return a * b * mp.exp(-(b * mp.exp(-a * x) + a * x))


@fn("gsl_cdf_gumbel2_P", "ddd")
def gumbel2_P(x, a, b):
    need(a > 0 and b > 0)
    return mpf(0) if x <= 0 else mp.exp(-b * mp.exp(-a * mp.log(x)))


@fn("gsl_cdf_gumbel2_Q", "ddd")
def gumbel2_Q(x, a, b):
    need(a > 0 and b > 0)
    return mpf(1) if x <= 0 else -mp.expm1(-b * mp.exp(-a * mp.log(x)))


@fn("gsl_cdf_gumbel2_Pinv", "ddd")
def gumbel2_Pinv(p, a, b):
    need(a > 0 and b > 0)
    prob(p)
    if p == 0:
        return mpf(0)
    if p == 1:
        return "inf"
    return mp.exp((mp.log(b) - mp.log(-mp.log(p))) / a)


@fn("gsl_cdf_gumbel2_Qinv", "ddd")
def gumbel2_Qinv(q, a, b):
    need(a > 0 and b > 0)
    prob(q)
    if q == 0:
        return "inf"
    if q == 1:
        return mpf(0)
    return mp.exp((mp.log(b) - mp.log(-mp.log1p(-mpf(q)))) / a)


@fn("gsl_ran_gumbel2_pdf", "ddd")
def gumbel2_pdf(x, a, b):
    need(a > 0 and b > 0)
    if x <= 0:
        return mpf(0)
    return b * a * mp.exp(-(a + 1) * mp.log(x) - b * mp.exp(-a * mp.log(x)))


@fn("gsl_cdf_flat_P", "ddd")
def flat_P(x, a, b):
    need(a < b)
    if x <= a:
        return mpf(0)
    if x >= b:
        return mpf(1)
    return (x - a) / (b - a)


@fn("gsl_cdf_flat_Q", "ddd")
def flat_Q(x, a, b):
    need(a < b)
    if x <= a:
        return mpf(1)
    if x >= b:
        return mpf(0)
    return (b - x) / (b - a)


@fn("gsl_cdf_flat_Pinv", "ddd")
def flat_Pinv(p, a, b):
    need(a < b)
    prob(p)
    return p * b + (1 - p) * a


@fn("gsl_cdf_flat_Qinv", "ddd")
def flat_Qinv(q, a, b):
    need(a < b)
    prob(q)
    return q * a + (1 - q) * b


@fn("gsl_ran_flat_pdf", "ddd")
def flat_pdf(x, a, b):
    need(a < b)
    return 1 / (b - a) if a <= x < b else mpf(0)


# ---- discrete ----------------------------------------------------------------------------------

def lchoose(n, k):
    return mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1)


def xlogy(k, y):
    """k log y with 0 log 0 = 0."""
    return mpf(0) if k == 0 else k * mp.log(y)


@fn("gsl_ran_bernoulli_pdf", "ud")
def bernoulli_pdf(k, p):
    prob(p)
    return {0: 1 - mpf(p), 1: mpf(p)}.get(k, mpf(0))


@fn("gsl_ran_binomial_pdf", "udu")
def binomial_pdf(k, p, n):
    prob(p)
    if k > n:
        return mpf(0)
    if (p == 0 and k > 0) or (p == 1 and k < n):
        return mpf(0)
    return mp.exp(lchoose(n, k) + xlogy(k, p) + xlogy(n - k, 1 - mpf(p)))


@fn("gsl_cdf_binomial_P", "udu")
def binomial_P(k, p, n):
    prob(p)
    if k >= n:
        return mpf(1)
    # P(X <= k) = I_{1-p}(n - k, k + 1)
    return beta_upper(mpf(k + 1), mpf(n - k), mpf(p))


@fn("gsl_cdf_binomial_Q", "udu")
def binomial_Q(k, p, n):
    prob(p)
    if k >= n:
        return mpf(0)
    # P(X > k) = I_p(k + 1, n - k)
    return beta_lower(mpf(k + 1), mpf(n - k), mpf(p))


@fn("gsl_ran_poisson_pdf", "ud")
def poisson_pdf(k, mu):
    need(mu >= 0)
    if mu == 0:
        return mpf(1) if k == 0 else mpf(0)
    return mp.exp(k * mp.log(mu) - mu - mp.loggamma(k + 1))


@fn("gsl_cdf_poisson_P", "ud")
def poisson_P(k, mu):
    need(mu >= 0)
    return gamma_upper(mpf(k + 1), mu)


@fn("gsl_cdf_poisson_Q", "ud")
def poisson_Q(k, mu):
    need(mu >= 0)
    return gamma_lower(mpf(k + 1), mu)


@fn("gsl_ran_geometric_pdf", "ud")
def geometric_pdf(k, p):
    prob(p)
    need(p > 0)
    if k == 0:
        return mpf(0)
    if p == 1:
        return mpf(1) if k == 1 else mpf(0)
    return p * mp.exp((k - 1) * mp.log1p(-mpf(p)))


@fn("gsl_cdf_geometric_P", "ud")
def geometric_P(k, p):
    prob(p)
    need(p > 0)
    if k == 0:
        return mpf(0)
    return mpf(1) if p == 1 else -mp.expm1(k * mp.log1p(-mpf(p)))


@fn("gsl_cdf_geometric_Q", "ud")
def geometric_Q(k, p):
    prob(p)
    need(p > 0)
    if k == 0:
        return mpf(1)
    return mpf(0) if p == 1 else mp.exp(k * mp.log1p(-mpf(p)))


def negbin_pdf(k, p, n):
    prob(p)
    need(n > 0 and p > 0)
    if p == 1:
        return mpf(1) if k == 0 else mpf(0)
    return mp.exp(mp.loggamma(n + k) - mp.loggamma(k + 1) - mp.loggamma(n)
                  + n * mp.log(p) + xlogy(k, 1 - mpf(p)))


def negbin_P(k, p, n):
    prob(p)
    need(n > 0 and p > 0)
    return beta_lower(n, mpf(k + 1), mpf(p))


def negbin_Q(k, p, n):
    prob(p)
    need(n > 0 and p > 0)
    return beta_upper(n, mpf(k + 1), mpf(p))


@fn("gsl_ran_negative_binomial_pdf", "udd")
def negative_binomial_pdf(k, p, n):
    return negbin_pdf(k, p, n)


@fn("gsl_cdf_negative_binomial_P", "udd")
def negative_binomial_P(k, p, n):
    return negbin_P(k, p, n)


@fn("gsl_cdf_negative_binomial_Q", "udd")
def negative_binomial_Q(k, p, n):
    return negbin_Q(k, p, n)


@fn("gsl_ran_pascal_pdf", "udu")
def pascal_pdf(k, p, n):
    return negbin_pdf(k, p, mpf(n))


@fn("gsl_cdf_pascal_P", "udu")
def pascal_P(k, p, n):
    return negbin_P(k, p, mpf(n))


@fn("gsl_cdf_pascal_Q", "udu")
def pascal_Q(k, p, n):
    return negbin_Q(k, p, mpf(n))


@fn("gsl_ran_logarithmic_pdf", "ud")
def logarithmic_pdf(k, p):
    need(0 < p < 1)
    if k == 0:
        return mpf(0)
    return -mp.exp(k * mp.log(p)) / (k * mp.log1p(-mpf(p)))


def hyper_support(n1, n2, t):
    need(t <= n1 + n2)
    return max(0, t - n2), min(t, n1)


@fn("gsl_ran_hypergeometric_pdf", "uuuu")
def hypergeometric_pdf(k, n1, n2, t):
    lo, hi = hyper_support(n1, n2, t)
    if k < lo or k > hi:
        return mpf(0)
    return mp.exp(lchoose(n1, k) + lchoose(n2, t - k) - lchoose(n1 + n2, t))


def hyper_sum(k0, step, n1, n2, t):
    """Sum of the hypergeometric masses from k0 outwards (step -1 or +1) to the support's end,
    by the ratio of neighbouring terms, stopped once the terms are below the working precision."""
    lo, hi = hyper_support(n1, n2, t)
    if k0 < lo or k0 > hi:
        return mpf(0)
    term = hypergeometric_pdf(k0, n1, n2, t)
    total = term
    tiny = mpf(2) ** -(mp.prec + 20)
    k = k0
    while lo <= k + step <= hi:
        if step > 0:
            term *= mpf((n1 - k) * (t - k)) / ((k + 1) * (n2 - t + k + 1))
        else:
            term *= mpf(k * (n2 - t + k)) / ((n1 - k + 1) * (t - k + 1))
        k += step
        total += term
        if term < total * tiny:
            break
    return total


def hyper_mode(n1, n2, t):
    return (t + 1) * (n1 + 1) // (n1 + n2 + 2)


@fn("gsl_cdf_hypergeometric_P", "uuuu")
def hypergeometric_P(k, n1, n2, t):
    lo, hi = hyper_support(n1, n2, t)
    if k < lo:
        return mpf(0)
    if k >= hi:
        return mpf(1)
    if k <= hyper_mode(n1, n2, t):
        return hyper_sum(k, -1, n1, n2, t)
    return 1 - hyper_sum(k + 1, 1, n1, n2, t)


@fn("gsl_cdf_hypergeometric_Q", "uuuu")
def hypergeometric_Q(k, n1, n2, t):
    lo, hi = hyper_support(n1, n2, t)
    if k < lo:
        return mpf(1)
    if k >= hi:
        return mpf(0)
    if k + 1 >= hyper_mode(n1, n2, t):
        return hyper_sum(k + 1, 1, n1, n2, t)
    return 1 - hyper_sum(k, -1, n1, n2, t)


# ---- evaluation --------------------------------------------------------------------------------

class Timeout(Exception):
    pass


def parse(types, inputs):
    """The arguments as mpf (doubles) and int (counts); None when an input is not finite."""
    if not isinstance(inputs, list) or len(inputs) != len(types):
        raise Unknown("expected %d inputs, got %r" % (len(types), inputs))
    args = []
    for t, s in zip(types, inputs):
        if t == "d":
            v = float(s)
            if not math.isfinite(v):
                return None
            args.append(v)
        else:
            v = int(str(s), 10)
            if not 0 <= v <= 0xFFFFFFFF:
                raise Unknown("not an unsigned int: %r" % (s,))
            args.append(v)
    return args


def run(f, raw, prec):
    mp.prec = prec
    args = [mpf(a) if isinstance(a, float) else a for a in raw]
    try:
        v = f(*args)
    except Undefined:
        return "nan"
    if isinstance(v, str):
        return v
    v = mpf(v)
    if mpmath.isnan(v):
        raise Unknown("mpmath returned NaN")
    if mpmath.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def value(name, inputs):
    """The true value (mpf or a marker string) or None."""
    types, f, is_quantile = FUNCS[name]
    raw = parse(types, inputs)
    if raw is None:
        return None
    try:
        lo = run(f, raw, PREC_LOW)
        if is_quantile or isinstance(lo, str):
            # A quantile checked its own root at the higher precision; a marker is exact.
            return lo
        hi = run(f, raw, PREC_HIGH)
    finally:
        mp.prec = PREC_LOW
    if isinstance(hi, str) or (lo != hi and abs(lo - hi) > AGREE * max(abs(lo), abs(hi))):
        raise Unknown("%s and %s at %d and %d bits" % (lo, hi, PREC_LOW, PREC_HIGH))
    return hi


def fmt(v):
    if v is None or isinstance(v, str):
        return v
    if v == 0:
        return "0"
    mp.prec = PREC_HIGH
    return mpmath.nstr(v, OUT_DIGITS).replace("e+", "e")


def answer(request, timeout):
    results = request["results"]
    reply = [None] * len(results)
    name = request.get("function")
    if name not in FUNCS:
        if name not in NOT_COVERED:
            log("unknown function %r" % (name,))
        return {"results": reply}
    primaries = [i for i, r in enumerate(results)
                 if isinstance(r, dict) and r.get("name") is None and r.get("index") == 0]
    if not primaries:
        return {"results": reply}

    def expire(signum, frame):
        raise Timeout()

    old = signal.signal(signal.SIGALRM, expire)
    if timeout > 0:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        v = fmt(value(name, request.get("inputs")))
    except Timeout:
        log("timeout (%gs) for %s %s" % (timeout, name, request.get("inputs")))
        v = None
    except Unknown as e:
        log("unknown for %s %s: %s" % (name, request.get("inputs"), e))
        v = None
    except (ValueError, ZeroDivisionError, ArithmeticError, mpmath.libmp.NoConvergence) as e:
        log("%s for %s %s: %s" % (type(e).__name__, name, request.get("inputs"), str(e).split("\n")[0]))
        v = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        mp.prec = PREC_LOW
    for i in primaries:
        reply[i] = v
    return {"results": reply}


def listing():
    lines = ["%s covered" % n for n in sorted(FUNCS)]
    lines += ["%s not covered: %s" % (n, why) for n, why in sorted(NOT_COVERED.items())]
    lines.append("%d functions covered, %d not" % (len(FUNCS), len(NOT_COVERED)))
    return lines


# ---- self-test ---------------------------------------------------------------------------------

def ask(name, *inputs, timeout=60.0):
    req = {"function": name, "inputs": [repr(x) if isinstance(x, float) else str(x) for x in inputs],
           "results": [{"index": 0, "name": None, "value": "0"}]}
    return answer(req, timeout)["results"][0]


def close(got, want, rel=1e-15):
    if got is None:
        return False
    if isinstance(want, str):
        return got == want
    g = mpf(got)
    return abs(g - want) <= rel * abs(want) if want != 0 else g == 0


def self_test():
    mp.prec = PREC_HIGH
    checks = [
        # Q(40): 3.655893540915e-350, below DBL_MIN (the double is 0 with underflow).
        ("ugaussian_Q(40)", ask("gsl_cdf_ugaussian_Q", 40.0), mpf("3.655893540915e-350"), 1e-12),
        ("ugaussian_P(-40) = ugaussian_Q(40)", ask("gsl_cdf_ugaussian_P", -40.0),
         mp.erfc(40 / mp.sqrt(2)) / 2, 1e-18),
        ("ugaussian_P(0)", ask("gsl_cdf_ugaussian_P", 0.0), mpf(1) / 2, 0),
        ("ugaussian_Pinv(0.975)", ask("gsl_cdf_ugaussian_Pinv", 0.975), mpf("1.959963984540054"), 1e-15),
        ("ugaussian_Q(ugaussian_Qinv(1e-300)) = 1e-300",
         ugaussian_Q(mpf(ask("gsl_cdf_ugaussian_Qinv", 1e-300) or "nan")), mpf(1e-300), 1e-15),
        ("ugaussian_Pinv(1)", ask("gsl_cdf_ugaussian_Pinv", 1.0), "inf", 0),
        ("ugaussian_Pinv(1.5) is undefined", ask("gsl_cdf_ugaussian_Pinv", 1.5), "nan", 0),
        # gamma against mpmath directly, and exact small cases: P(x; 1, 1) = 1 - e^-x.
        ("gamma_P(2.5; 3, 1.5)", ask("gsl_cdf_gamma_P", 2.5, 3.0, 1.5),
         mp.gammainc(3, 0, mpf(2.5) / mpf(1.5), regularized=True), 1e-18),
        ("gamma_P(1e-3; 1, 1)", ask("gsl_cdf_gamma_P", 1e-3, 1.0, 1.0), -mp.expm1(-mpf(1e-3)), 1e-18),
        ("gamma_Q(50; 1, 1) = e^-50", ask("gsl_cdf_gamma_Q", 50.0, 1.0, 1.0), mp.exp(-50), 1e-18),
        ("gamma_Q(1000; 2, 1) = 1001 e^-1000", ask("gsl_cdf_gamma_Q", 1000.0, 2.0, 1.0),
         1001 * mp.exp(-1000), 1e-18),
        ("Temme at a = 1e6 against mpmath (error ~1/a)", temme(mpf(10) ** 6, mpf(1000500))[1],
         mp.gammainc(mpf(10) ** 6, mpf(1000500), mp.inf, regularized=True), 1e-5),
        ("gamma_Q(1; 9e307, 1.1e-308) answers", ask("gsl_cdf_gamma_Q", 1.0, 8.988465674311579e307,
                                                      1.112536929253601e-308) is not None, True, 0),
        ("chisq_Q(3.84145882069412; 1) = 0.05", ask("gsl_cdf_chisq_Q", 3.841458820694124, 1.0), mpf("0.05"), 1e-14),
        ("gamma_Pinv(0.5; 1, 1) = ln 2", ask("gsl_cdf_gamma_Pinv", 0.5, 1.0, 1.0), mp.log(2), 1e-18),
        ("gamma_Qinv(1e-300; 1, 2) = 600 ln 10", ask("gsl_cdf_gamma_Qinv", 1e-300, 1.0, 2.0),
         -2 * mp.log(mpf(1e-300)), 1e-18),
        ("beta_P(0.3; 2, 3)", ask("gsl_cdf_beta_P", 0.3, 2.0, 3.0),
         # I_x(2,3) = 6x^2 - 8x^3 + 3x^4
         6 * mpf(0.3) ** 2 - 8 * mpf(0.3) ** 3 + 3 * mpf(0.3) ** 4, 1e-18),
        ("beta_Q(1e-10; 2, 3) = 1 - I", ask("gsl_cdf_beta_Q", 1e-10, 2.0, 3.0),
         1 - (6 * mpf(1e-10) ** 2 - 8 * mpf(1e-10) ** 3 + 3 * mpf(1e-10) ** 4), 1e-18),
        ("tdist_Q(1; 1) = 1/4 (Cauchy)", ask("gsl_cdf_tdist_Q", 1.0, 1.0), mpf(1) / 4, 1e-18),
        ("tdist_Pinv(0.975; 10)", ask("gsl_cdf_tdist_Pinv", 0.975, 10.0), mpf("2.228138851986274"), 1e-14),
        ("tdist_P(1; 9e307) = Phi(1) (the normal limit)", ask("gsl_cdf_tdist_P", 1.0, 8.988465674311579e307),
         phi_lower(mpf(1)), 1e-18),
        ("tdist_Q(40; 1e6) against the beta form", ask("gsl_cdf_tdist_Q", 40.0, 1e6),
         mp.betainc(mpf(5e5), mpf(1) / 2, 0, mpf(1e6) / (mpf(1e6) + 1600), regularized=True) / 2, 1e-15),
        ("beta_Q(1e-300; 1e-10, 1) = 1 - x^a", ask("gsl_cdf_beta_Q", 1e-300, 1e-10, 1.0),
         -mp.expm1(mpf(1e-10) * mp.log(mpf(1e-300))), 1e-18),
        ("fdist_Q(1; 2, 2) = 1/2", ask("gsl_cdf_fdist_Q", 1.0, 2.0, 2.0), mpf(1) / 2, 1e-18),
        ("cauchy_Q(1e300; 1)", ask("gsl_cdf_cauchy_Q", 1e300, 1.0), 1 / (mp.pi * mpf(1e300)), 1e-18),
        ("exponential_Pinv(1e-20; 1)", ask("gsl_cdf_exponential_Pinv", 1e-20, 1.0), -mp.log1p(-mpf(1e-20)), 1e-18),
        ("binomial_P(3; 0.5, 10) = 176/1024", ask("gsl_cdf_binomial_P", 3, 0.5, 10), mpf(176) / 1024, 1e-18),
        ("binomial_Q(3; 0.5, 10) = 848/1024", ask("gsl_cdf_binomial_Q", 3, 0.5, 10), mpf(848) / 1024, 1e-18),
        ("poisson_P(2; 1) = 2.5/e", ask("gsl_cdf_poisson_P", 2, 1.0), mpf(5) / 2 / mp.e, 1e-18),
        ("poisson_pdf(3; 2) = 4/3 e^-2", ask("gsl_ran_poisson_pdf", 3, 2.0), mpf(4) / 3 * mp.exp(-2), 1e-18),
        ("hypergeometric_P(1; 5, 5, 4) = 55/210", ask("gsl_cdf_hypergeometric_P", 1, 5, 5, 4), mpf(55) / 210, 1e-18),
        ("hypergeometric_Q(1; 5, 5, 4) = 155/210", ask("gsl_cdf_hypergeometric_Q", 1, 5, 5, 4), mpf(155) / 210, 1e-18),
        ("negative_binomial_P(2; 0.5, 3) = 1/2", ask("gsl_cdf_negative_binomial_P", 2, 0.5, 3.0), mpf(1) / 2, 1e-18),
        ("geometric_Q(2000; 0.5) = 2^-2000", ask("gsl_cdf_geometric_Q", 2000, 0.5), mpf(2) ** -2000, 1e-18),
        ("gaussian_pdf(0; 1)", ask("gsl_ran_gaussian_pdf", 0.0, 1.0), 1 / mp.sqrt(2 * mp.pi), 1e-18),
        # F(1, n2) tends to chi-square(1) as n2 grows: its terms of 6e310 cancel to -1/2 - ln(2 pi)/2.
        ("fdist_pdf(1; 1, DBL_MAX) = e^-1/2 / sqrt(2 pi)", ask("gsl_ran_fdist_pdf", 1.0, 1.0, DBL_MAX),
         mp.exp(-mpf(1) / 2) / mp.sqrt(2 * mp.pi), 1e-15),
        ("beta_pdf(0.5; 2, 2) = 1.5", ask("gsl_ran_beta_pdf", 0.5, 2.0, 2.0), mpf(3) / 2, 1e-18),
        ("gamma_pdf(0; 0.5, 1) = inf", ask("gsl_ran_gamma_pdf", 0.0, 0.5, 1.0), "inf", 0),
        ("gaussian_P(1; -1) is undefined", ask("gsl_cdf_gaussian_P", 1.0, -1.0), "nan", 0),
        ("landau_pdf is unknown", ask("gsl_ran_landau_pdf", 1.0), None, 0),
        ("an infinite input is unknown", ask("gsl_cdf_ugaussian_P", float("inf")), None, 0),
    ]
    failed = 0
    for what, got, want, rel in checks:
        if isinstance(want, bool):
            ok = got == want
        else:
            ok = got is None if want is None else close(got, want, rel)
        print("%s %s: got %s" % ("ok  " if ok else "FAIL", what, got))
        failed += not ok
    print("%d of %d checks passed" % (len(checks) - failed, len(checks)))
    return 1 if failed else 0


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    args = oracle_protocol.arguments(__doc__, DEFAULT_TIMEOUT, listing)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    mp.prec = PREC_LOW
    oracle_protocol.serve(lambda request: answer(request, args.timeout), log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
