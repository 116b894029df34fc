#!/usr/bin/python3
"""Validates targets/gsl/oracle.py against GSL's own special-function test suite.

    check_oracle.py [SRC_TREE] [--oracle PATH] [--timeout S] [--functions f1,f2] [--show N]
                    [--manifest PATH] [--quiet]

SRC_TREE defaults to targets/gsl/build/src/gsl-2.7.1+dfsg. The script reads
specfunc/test_*.c, extracts every TEST_SF / TEST_SF_2 / TEST_SF_E10 / TEST_SF_SGN / TEST_SF_RLX /
TEST_SF_THETA / TEST_SF_VAL case (and the coulomb_wave_FG checks of test_coulomb.c, which use
plain assignments and test_sf_check_result), evaluates the C argument expressions with a small
C-expression evaluator (numbers, + - * / %, casts, M_PI & co., GSL_DBL_EPSILON & co., sqrt, exp,
log, pow, ...; variables assigned earlier in the same test function outside loops), runs
oracle.py as a subprocess speaking numfuzz's oracle protocol exactly as numfuzz does (one JSON
request per line, results declared as the generated harnesses declare them; the signature comes
from targets/gsl/build/harness/manifest.json), and compares each primary answer with GSL's
expected value the way GSL's test_sf_check_result does: NaN matches NaN, an infinity matches an
infinity, otherwise |expected - oracle| / |expected + oracle| <= tol (|oracle| when expected
is 0), with GSL's tolerance for that test (TEST_TOL0 = 2 eps ... TEST_TOL6 = 2^20 eps,
TEST_SQRT_TOL0 = 2 sqrt(eps), TEST_SNGL = 1e-6; TEST_FACTOR taken as 1, i.e. the strict
development setting). Oracle answers beyond DBL_MAX are compared as infinities (what a double
holds). Cases whose arguments cannot be evaluated (arrays, loop variables, unknown macros) or
whose function has no harness are counted as skipped.

Per function it prints: cases, agreed, disagreed (with the first few), unknown (oracle said
null), and totals at the end. Standard library + mpmath (for exact comparisons) only.
"""

import json
import math
import os
import re
import subprocess
import sys
import time

import mpmath
from mpmath import mpf

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SRC = os.path.join(HERE, "build", "src", "gsl-2.7.1+dfsg")
DEFAULT_MANIFEST = os.path.join(HERE, "build", "harness", "manifest.json")
DEFAULT_ORACLE = os.path.join(HERE, "oracle.py")

EPS = 2.2204460492503131e-16
CONSTANTS = {
    "M_E": 2.71828182845904523536028747135, "M_LOG2E": 1.44269504088896340735992468100,
    "M_LOG10E": 0.43429448190325182765112891892, "M_SQRT2": 1.41421356237309504880168872421,
    "M_SQRT1_2": 0.70710678118654752440084436210, "M_SQRT3": 1.73205080756887729352744634151,
    "M_PI": 3.14159265358979323846264338328, "M_PI_2": 1.57079632679489661923132169164,
    "M_PI_4": 0.78539816339744830961566084582, "M_SQRTPI": 1.77245385090551602729816748334,
    "M_2_SQRTPI": 1.12837916709551257389615890312, "M_1_PI": 0.31830988618379067153776752675,
    "M_2_PI": 0.63661977236758134307553505349, "M_LN10": 2.30258509299404568401799145468,
    "M_LN2": 0.69314718055994530941723212146, "M_LNPI": 1.14472988584940017414342735135,
    "M_EULER": 0.57721566490153286060651209008,
    "GSL_DBL_EPSILON": EPS, "GSL_SQRT_DBL_EPSILON": 1.4901161193847656e-08,
    "GSL_ROOT3_DBL_EPSILON": 6.0554544523933429e-06, "GSL_ROOT4_DBL_EPSILON": 1.2207031250000000e-04,
    "GSL_ROOT5_DBL_EPSILON": 7.4009597974140505e-04, "GSL_ROOT6_DBL_EPSILON": 2.4607833005759251e-03,
    "GSL_LOG_DBL_EPSILON": -3.6043653389117154e+01,
    "GSL_DBL_MIN": 2.2250738585072014e-308, "GSL_SQRT_DBL_MIN": 1.4916681462400413e-154,
    "GSL_LOG_DBL_MIN": -7.0839641853226408e+02, "GSL_DBL_MAX": 1.7976931348623157e+308,
    "GSL_SQRT_DBL_MAX": 1.3407807929942596e+154, "GSL_LOG_DBL_MAX": 7.0978271289338397e+02,
    "GSL_FLT_EPSILON": 1.1920928955078125e-07, "GSL_SFLT_EPSILON": 4.8828125000000000e-04,
    "GSL_POSINF": float("inf"), "GSL_NEGINF": float("-inf"), "GSL_NAN": float("nan"),
    "DBL_MAX": 1.7976931348623157e+308, "DBL_MIN": 2.2250738585072014e-308,
    "TEST_TOL0": 2.0 * EPS, "TEST_TOL1": 16.0 * EPS, "TEST_TOL2": 256.0 * EPS,
    "TEST_TOL3": 2048.0 * EPS, "TEST_TOL4": 16384.0 * EPS, "TEST_TOL5": 131072.0 * EPS,
    "TEST_TOL6": 1048576.0 * EPS, "TEST_SQRT_TOL0": 2.0 * 1.4901161193847656e-08,
    "TEST_SNGL": 1.0e-06, "TEST_FACTOR": 1.0, "TEST_SIGMA": 1.0,
}
INT_CONSTANTS = {
    "GSL_PREC_DOUBLE": 0, "GSL_PREC_SINGLE": 1, "GSL_PREC_APPROX": 2, "GSL_MODE_DEFAULT": 0,
    "GSL_SUCCESS": 0, "GSL_FAILURE": -1, "GSL_EDOM": 1, "GSL_ERANGE": 2, "GSL_EINVAL": 4,
    "GSL_EMAXITER": 11, "GSL_ELOSS": 17, "GSL_EROUND": 18, "GSL_EUNDRFLW": 15,
    "GSL_EOVRFLW": 16, "GSL_EUNIMPL": 24, "GSL_SF_FACT_NMAX": 170, "GSL_SF_DOUBLEFACT_NMAX": 297,
    "INT_MAX": 2 ** 31 - 1, "INT_MIN": -2 ** 31,
}
FUNCS = {
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "log10": math.log10, "pow": math.pow,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "atan": math.atan, "fabs": math.fabs,
    "floor": math.floor, "ceil": math.ceil, "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh, "expm1": math.expm1,
    "log1p": math.log1p, "atan2": math.atan2, "hypot": math.hypot,
}


class CannotEvaluate(Exception):
    pass


# ---- a small C expression evaluator (ints stay ints, as in C) ------------------------------

TOKEN = re.compile(r"""\s*(?:
    (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFlLuU]*|0[xX][0-9a-fA-F]+[uUlL]*) |
    (?P<id>[A-Za-z_]\w*) |
    (?P<op>[-+*/%(),\[\]])
    )""", re.X)


def tokenize(s):
    toks = []
    pos = 0
    s = s.strip()
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m or m.end() == pos:
            raise CannotEvaluate("cannot tokenize %r" % s[pos:])
        pos = m.end()
        if m.group("num") is not None:
            t = m.group("num")
            if t.lower().startswith("0x"):
                toks.append(("num", int(t.rstrip("uUlL"), 16)))
                continue
            core = t.rstrip("fFlLuU")
            if any(c in core for c in ".eE"):
                toks.append(("num", float(core)))
            else:
                toks.append(("num", int(core)))
        elif m.group("id") is not None:
            toks.append(("id", m.group("id")))
        else:
            toks.append(("op", m.group("op")))
    return toks


def c_div(a, b):
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise CannotEvaluate("integer division by zero")
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    a, b = float(a), float(b)
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return float("nan")
        return math.copysign(float("inf"), a) * math.copysign(1.0, b)
    return a / b


class Parser:
    def __init__(self, toks, env):
        self.toks = toks
        self.i = 0
        self.env = env

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, kind=None, val=None):
        t = self.peek()
        if t[0] is None or (kind and t[0] != kind) or (val is not None and t[1] != val):
            raise CannotEvaluate("unexpected token %r" % (t,))
        self.i += 1
        return t

    def parse(self):
        v = self.expr()
        if self.i != len(self.toks):
            raise CannotEvaluate("trailing tokens")
        return v

    def expr(self):
        v = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            w = self.term()
            if isinstance(v, int) and isinstance(w, int):
                v = v + w if op == "+" else v - w
            else:
                v = float(v) + float(w) if op == "+" else float(v) - float(w)
        return v

    def term(self):
        v = self.unary()
        while self.peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            op = self.take()[1]
            w = self.unary()
            if op == "*":
                v = v * w if isinstance(v, int) and isinstance(w, int) else float(v) * float(w)
            elif op == "/":
                v = c_div(v, w)
            else:
                if not (isinstance(v, int) and isinstance(w, int)) or w == 0:
                    raise CannotEvaluate("% on non-integers")
                v = int(math.fmod(v, w))
        return v

    def unary(self):
        t = self.peek()
        if t == ("op", "-"):
            self.take()
            v = self.unary()
            return -v
        if t == ("op", "+"):
            self.take()
            return self.unary()
        # cast?
        if t == ("op", "(") and self.i + 2 < len(self.toks) and self.toks[self.i + 1][0] == "id" \
                and self.toks[self.i + 1][1] in ("double", "int", "unsigned", "float", "long") \
                and self.toks[self.i + 2] == ("op", ")"):
            kind = self.toks[self.i + 1][1]
            self.i += 3
            v = self.unary()
            if kind in ("double", "float"):
                return float(v)
            if isinstance(v, float):
                if not math.isfinite(v):
                    raise CannotEvaluate("cast of a non-finite value")
                v = int(v)
            return v
        return self.primary()

    def primary(self):
        t = self.take()
        if t[0] == "num":
            return t[1]
        if t == ("op", "("):
            v = self.expr()
            self.take("op", ")")
            return v
        if t[0] == "id":
            name = t[1]
            if self.peek() == ("op", "("):
                self.take()
                args = []
                if self.peek() != ("op", ")"):
                    args.append(self.expr())
                    while self.peek() == ("op", ","):
                        self.take()
                        args.append(self.expr())
                self.take("op", ")")
                if name not in FUNCS:
                    raise CannotEvaluate("unknown function %s" % name)
                try:
                    return float(FUNCS[name](*[float(a) for a in args]))
                except (ValueError, OverflowError, ZeroDivisionError):
                    raise CannotEvaluate("math error in %s" % name)
            if self.peek() == ("op", "["):
                raise CannotEvaluate("array element")
            if name in self.env:
                return self.env[name]
            if name in CONSTANTS:
                return CONSTANTS[name]
            if name in INT_CONSTANTS:
                return INT_CONSTANTS[name]
            raise CannotEvaluate("unknown name %s" % name)
        raise CannotEvaluate("unexpected %r" % (t,))


def c_eval(s, env):
    return Parser(tokenize(s), env).parse()


# ---- reading the test files -----------------------------------------------------------------

def strip_comments(text):
    out = []
    i = 0
    n = len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " * 0 + "\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def strip_disabled(text):
    """Drops regions disabled by the preprocessor as GSL's test build sees them."""
    out = []
    stack = []          # each entry: currently active?
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("#"):
            d = s[1:].strip()
            word = d.split(None, 1)[0] if d else ""
            rest = d[len(word):].strip()
            parent = all(stack)
            if word == "ifdef":
                stack.append(False)
            elif word == "ifndef":
                stack.append(True)
            elif word == "if":
                stack.append(rest not in ("0", "FIXME") and not rest.startswith("0 "))
            elif word == "else":
                if stack:
                    stack[-1] = not stack[-1]
            elif word == "endif":
                if stack:
                    stack.pop()
            out.append("")
            continue
        out.append(line if all(stack) else "")
    return "\n".join(out)


def split_top(s, sep=","):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


MACROS = ("TEST_SF_2", "TEST_SF_E10", "TEST_SF_SGN", "TEST_SF_RLX", "TEST_SF_THETA", "TEST_SF_VAL",
          "TEST_SF_RETURN", "TEST_SF")
DECL_TYPES = ("const", "double", "int", "unsigned", "static", "long", "float", "gsl_mode_t", "size_t")


def statements(text):
    """(statement text, in_loop, function_start) in source order."""
    depth_par = 0
    cur = []
    stack = []
    for ch in text:
        if ch == "(":
            depth_par += 1
        elif ch == ")":
            depth_par -= 1
        if depth_par == 0 and ch in ";{}":
            stmt = "".join(cur).strip()
            cur = []
            if ch == "{":
                head = stmt
                is_loop = bool(re.match(r"^(for|while|do)\b", head))
                is_func = len(stack) == 0
                stack.append("loop" if is_loop else "block")
                if is_func:
                    yield ("", False, True)
                if head and not is_loop and not is_func and not re.match(r"^(if|else)\b", head):
                    pass
                continue
            if ch == "}":
                if stmt:
                    yield (stmt, "loop" in stack, False)
                if stack:
                    stack.pop()
                continue
            yield (stmt, "loop" in stack or bool(re.match(r"^(for|while|do|if|else)\b", stmt)),
                   False)
            continue
        cur.append(ch)


def parse_tests(src):
    """Yields case dicts from specfunc/test_*.c."""
    spec = os.path.join(src, "specfunc")
    files = sorted(f for f in os.listdir(spec) if f.startswith("test_") and f.endswith(".c"))
    for fname in files:
        text = open(os.path.join(spec, fname), encoding="latin-1").read()
        text = strip_comments(text)
        defines = {}
        for m in re.finditer(r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+(.+)$", text, re.M):
            try:
                defines[m.group(1)] = c_eval(m.group(2), defines)
            except CannotEvaluate:
                pass
        text = strip_disabled(text)
        env, types = {}, {}
        pending_FG = None
        for stmt, in_loop, fstart in statements(text):
            if fstart:
                env, types = dict(defines), {}
                pending_FG = None
                continue
            if not stmt:
                continue
            m = re.match(r"^(%s)\s*\(" % "|".join(MACROS), stmt)
            if m:
                macro = m.group(1)
                body = stmt[m.end():]
                if not body.endswith(")"):
                    yield {"skip": "unbalanced macro", "file": fname, "text": stmt}
                    continue
                args = split_top(body[:-1])
                if in_loop:
                    fn = args[1] if len(args) > 1 else "?"
                    yield {"skip": "inside a loop", "file": fname, "function": fn, "text": stmt}
                    continue
                if len(args) > 1 and not re.match(r"^gsl_sf_\w+$", args[1]):
                    yield {"skip": "not a function call", "file": fname,
                           "function": "(array checks)", "text": stmt}
                    continue
                yield from make_cases(macro, args, env, fname, stmt)
                continue
            # coulomb_wave_FG_e as a plain call, checked by test_sf_check_result below
            m = re.match(r"^(?:\w+\s*=\s*)?gsl_sf_coulomb_wave_FG_e\s*\((.*)\)$", stmt, re.S)
            if m:
                a = split_top(m.group(1))
                try:
                    vals = [c_eval(x, env) for x in a[:4]]
                    pending_FG = {"args": vals, "text": stmt}
                except CannotEvaluate:
                    pending_FG = None
                continue
            m = re.match(r"^s\s*\+=\s*test_sf_check_result\s*\((.*)\)$", stmt, re.S)
            if m:
                a = split_top(m.group(1))
                if pending_FG is None or len(a) != 4 or a[1] not in ("F", "Fp", "G", "Gp"):
                    yield {"skip": "check without an evaluable call", "file": fname, "text": stmt}
                    continue
                idx = ("F", "Fp", "G", "Gp").index(a[1])
                try:
                    val = c_eval(a[2], env)
                    tol = c_eval(a[3], env)
                except CannotEvaluate as e:
                    yield {"skip": str(e), "file": fname, "text": stmt}
                    continue
                yield {"function": "gsl_sf_coulomb_wave_FG_e", "args": pending_FG["args"],
                       "checks": [(idx, float(val), float(tol))], "file": fname,
                       "text": "%s -> %s" % (pending_FG["text"], a[1]), "e10": None}
                continue
            if re.match(r"^\w+\s*\(", stmt) and not re.match(r"^(%s)\b" % "|".join(DECL_TYPES), stmt):
                continue
            # declarations and assignments
            handle_assignment(stmt, env, types)


def handle_assignment(stmt, env, types):
    words = stmt.split()
    decl_type = None
    rest = stmt
    while True:
        m = re.match(r"^(const|static|double|int|unsigned|long|float|gsl_mode_t|size_t|gsl_sf_result(?:_e10)?)\b\s*", rest)
        if not m:
            break
        if m.group(1) in ("double", "float"):
            decl_type = "double"
        elif m.group(1) in ("int", "unsigned", "long", "gsl_mode_t", "size_t"):
            decl_type = decl_type or "int"
        elif m.group(1).startswith("gsl_sf_result"):
            decl_type = "struct"
        rest = rest[m.end():]
    for part in split_top(rest):
        m = re.match(r"^\*?\s*([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*(?:=\s*(.*))?$", part, re.S)
        if not m:
            continue
        name, arr, expr = m.group(1), m.group(2), m.group(3)
        if decl_type:
            types[name] = "array" if arr else decl_type
        if arr or types.get(name) in ("array", "struct"):
            env.pop(name, None)
            continue
        if expr is None:
            if decl_type:
                env.pop(name, None)
            continue
        try:
            v = c_eval(expr, env)
            ty = types.get(name)
            if ty == "int":
                v = int(v) if not isinstance(v, int) else v
            elif ty == "double":
                v = float(v)
            env[name] = v
        except (CannotEvaluate, ValueError, OverflowError):
            env.pop(name, None)


def make_cases(macro, args, env, fname, text):
    """TEST_SF(s, func, (args), val, tol, status) and friends -> case dicts."""
    try:
        func = args[1]
        if macro == "TEST_SF_RETURN":
            return
        argtext = args[2]
        if macro == "TEST_SF_THETA":
            call_args = [argtext]
        else:
            if not (argtext.startswith("(") and argtext.endswith(")")):
                raise CannotEvaluate("argument list")
            call_args = [a for a in split_top(argtext[1:-1]) if not a.startswith("&")]
        vals = [c_eval(a, env) for a in call_args]
        e10 = None
        if macro in ("TEST_SF", "TEST_SF_RLX"):
            checks = [(0, c_eval(args[3], env), c_eval(args[4], env))]
        elif macro == "TEST_SF_2":
            checks = [(0, c_eval(args[3], env), c_eval(args[4], env)),
                      (1, c_eval(args[5], env), c_eval(args[6], env))]
        elif macro == "TEST_SF_E10":
            e10 = c_eval(args[4], env)
            checks = [(0, c_eval(args[3], env), c_eval(args[5], env))]
        elif macro == "TEST_SF_SGN":
            checks = [(0, c_eval(args[3], env), c_eval(args[4], env))]
        elif macro in ("TEST_SF_THETA", "TEST_SF_VAL"):
            checks = [(0, c_eval(args[3], env), c_eval(args[4], env))]
            if macro == "TEST_SF_VAL":
                func = func + "_e"
        else:
            raise CannotEvaluate("macro")
    except (CannotEvaluate, IndexError) as e:
        yield {"skip": "cannot evaluate: %s" % e, "file": fname, "function": args[1] if len(args) > 1 else "?",
               "text": text}
        return
    yield {"function": func, "args": vals, "checks": [(i, float(v), float(t)) for i, v, t in checks],
           "file": fname, "text": text, "e10": e10}


# ---- requests, the oracle subprocess, comparison --------------------------------------------

def fmt_input(v, field):
    if field == "f64":
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise CannotEvaluate("non-finite integer argument")
        v = int(v)                      # C conversion truncates toward zero
    if field == "u32":
        v %= 2 ** 32
    if field == "u8":
        v %= 256
    return str(v)


def declared_results(h, e10, expected):
    """The result list a harness declares, from the manifest `numfuzz harness` wrote (see the
    oracle's docstring): primary results by index, named ones by name."""
    res = []
    idx = 0
    for r in h["results"]:
        if r["primary"]:
            res.append({"index": idx, "name": None, "value": expected.get(idx, "0")})
            idx += 1
        elif r["name"].endswith(".e10"):
            res.append({"index": None, "name": r["name"], "value": str(int(e10 or 0))})
        else:
            res.append({"index": None, "name": r["name"], "value": "0"})
    return res


def fields(h):
    """The field types of the harness's signature (`f64,u32[0,2]` -> f64, u32)."""
    return [f.split("[")[0].split("(")[0] for f in h["signature"].split(",") if f]


class Oracle:
    def __init__(self, path, timeout):
        cmd = [path] + (["--timeout", str(timeout)] if timeout else [])
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(self, req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("oracle exited")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def to_mp(s):
    if s is None:
        return None
    s = s.strip()
    if s in ("nan", "-nan"):
        return mpmath.nan
    if s in ("inf", "+inf"):
        return mpmath.inf
    if s == "-inf":
        return mpmath.ninf
    return mpf(s)


DBL_MAX = mpf("1.7976931348623157e308")


def gsl_agrees(expected, got, tol):
    """test_sf_check_result's value test with TEST_FACTOR = 1; got is the oracle's exact value.
    Returns (agrees, fracdiff)."""
    if mpmath.isfinite(got) and abs(got) > DBL_MAX:
        got = mpmath.inf if got > 0 else mpmath.ninf          # what a double would hold
    if math.isnan(expected) or mpmath.isnan(got):
        return (math.isnan(expected) == bool(mpmath.isnan(got))), None
    if math.isinf(expected) or mpmath.isinf(got):
        return (math.isinf(expected) == bool(mpmath.isinf(got))), None
    e = mpf(expected)
    if e == 0 and got == 0:
        f = mpf(0)
    elif e == 0:
        f = abs(got)
    elif e + got != 0:
        f = abs((e - got) / (e + got))
    else:
        f = mpf(1)
    return f <= tol, f


def main(argv):
    mpmath.mp.dps = 40
    src, oracle_path, timeout, only, show, manifest_path, quiet = DEFAULT_SRC, DEFAULT_ORACLE, None, None, 3, DEFAULT_MANIFEST, False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--oracle":
            oracle_path = argv[i + 1]
            i += 2
        elif a == "--timeout":
            timeout = float(argv[i + 1])
            i += 2
        elif a == "--functions":
            only = set()
            for x in argv[i + 1].split(","):
                x = x if x.startswith("gsl_sf_") else "gsl_sf_" + x
                only.add(x if x.endswith("_e") else x + "_e")
            i += 2
        elif a == "--show":
            show = int(argv[i + 1])
            i += 2
        elif a == "--manifest":
            manifest_path = argv[i + 1]
            i += 2
        elif a == "--quiet":
            quiet = True
            i += 1
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            src = a
            i += 1
    if not os.path.isdir(os.path.join(src, "specfunc")):
        sys.exit("check_oracle.py: %s/specfunc not found" % src)
    try:
        manifest = json.load(open(manifest_path))
    except OSError:
        sys.exit("check_oracle.py: %s not found (run targets/gsl/build.sh, or pass --manifest)"
                 % manifest_path)
    harness = {h["function"]: h for h in manifest["harnesses"]}

    cases = list(parse_tests(src))
    oracle = Oracle(oracle_path, timeout)
    stats = {}
    skipped_total = 0
    skipped_why = {}
    t0 = time.time()
    nreq = 0
    for c in cases:
        fn = c.get("function", "?")
        if only and fn not in only:
            continue
        st = stats.setdefault(fn, {"cases": 0, "agreed": 0, "disagreed": 0, "unknown": 0,
                                   "skipped": 0, "bad": [], "unk": []})
        if "skip" in c:
            st["skipped"] += 1
            skipped_total += 1
            skipped_why[c["skip"].split(":")[0]] = skipped_why.get(c["skip"].split(":")[0], 0) + 1
            continue
        h = harness.get(fn)
        if h is None or len(fields(h)) != len(c["args"]):
            st["skipped"] += 1
            skipped_total += 1
            why = "no harness" if h is None else "argument count"
            skipped_why[why] = skipped_why.get(why, 0) + 1
            continue
        try:
            inputs = [fmt_input(v, field) for v, field in zip(c["args"], fields(h))]
        except CannotEvaluate:
            st["skipped"] += 1
            skipped_total += 1
            continue
        expected = {idx: repr(val) for idx, val, tol in c["checks"]}
        req = {"function": fn, "inputs": inputs,
               "results": declared_results(h, c["e10"], expected)}
        reply = oracle.ask(req)
        nreq += 1
        answers = {}
        for r, a in zip(req["results"], reply.get("results", [])):
            if r["index"] is not None:
                answers[r["index"]] = a
        for idx, val, tol in c["checks"]:
            st["cases"] += 1
            got = answers.get(idx)
            if got is None:
                st["unknown"] += 1
                st["unk"].append("%s -> %s" % (inputs, repr(val)))
                continue
            ok, f = gsl_agrees(val, to_mp(got), tol)
            if ok:
                st["agreed"] += 1
            else:
                st["disagreed"] += 1
                st["bad"].append("(%s)[%d]: GSL test %r, oracle %s, fracdiff %s, tol %.3g%s" % (
                    ", ".join(inputs), idx, val, got,
                    mpmath.nstr(f, 3) if f is not None else "-", tol,
                    " (within 100*tol)" if f is not None and f <= 100 * tol else ""))
    oracle.close()
    elapsed = time.time() - t0

    tot = {"cases": 0, "agreed": 0, "disagreed": 0, "unknown": 0, "skipped": 0}
    print("%-40s %6s %6s %6s %6s %6s" % ("function", "cases", "agree", "disagr", "unknwn", "skip"))
    for fn in sorted(stats):
        st = stats[fn]
        for k in tot:
            tot[k] += st[k]
        print("%-40s %6d %6d %6d %6d %6d" % (fn, st["cases"], st["agreed"], st["disagreed"],
                                             st["unknown"], st["skipped"]))
        if not quiet:
            for b in st["bad"][:show]:
                print("    disagree: " + b)
            for u in st["unk"][:min(show, 2)]:
                print("    unknown:  " + u)
    print("%-40s %6d %6d %6d %6d %6d" % ("TOTAL", tot["cases"], tot["agreed"], tot["disagreed"],
                                         tot["unknown"], tot["skipped"]))
    print("skipped by reason: %s" % ", ".join("%s %d" % kv for kv in sorted(skipped_why.items())))
    print("%d requests in %.1f s (%.0f ms per request)" % (nreq, elapsed, 1000 * elapsed / max(nreq, 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
