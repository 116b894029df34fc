#!/usr/bin/env python3
"""Generates one numfuzz harness per GSL special function `gsl_sf_*_e` with numeric arguments.

    gen_harnesses.py --include DIR --out DIR [--clang clang-19]

Reads the installed GSL headers under DIR (`#include <gsl/gsl_sf.h>`, which includes all
`gsl_sf_*.h`) through clang's JSON AST, so that typedefs, `const` and macros are resolved by
a real C front end rather than by pattern matching. A function gets a harness when it returns
`int` and its parameters are scalar inputs (`double`, `int`, `unsigned int`, `gsl_mode_t`,
possibly `const`) followed by one or more `gsl_sf_result *` / `gsl_sf_result_e10 *` outputs
(group "scalar", 255 functions in GSL 2.7.1), or when it has such inputs followed by outputs
some of which are plain `double *`, or a lone `double *` in/out value (group "double_pointer").
Every other `_e` function is listed as skipped, with the parameters that stop it.

With --source (GSL's source tree), it also writes harnesses for the few internal functions
of INTERNAL, declared only in specfunc's private headers, which bug reports called directly
(group "internal"; the harness declares the prototype itself, so the build needs no private
include path). They are not part of the NumFuzz paper's benchmark, whose harnesses call only
public functions; the benchmark report counts them apart.

Writes OUT/src/<function>.c, OUT/manifest.json (harnesses with their signatures, skipped
functions with reasons, counts) and OUT/skipped.md. Python (standard library only) rather
than a Rust binary: the work is one JSON walk and text templating, it runs from build.sh
before any harness exists, and it keeps the Cargo workspace free of a build-only tool.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Integer arguments (orders, degrees, indices) beyond +-INT_BOUND are not tried: the harness
# returns without calling GSL. Several functions run a recurrence with one step per unit of n
# (gsl_sf_gegenpoly_n_e, gsl_sf_conicalP_cyl_reg_e, gsl_sf_expint_En_e,
# gsl_sf_fermi_dirac_int_e, ...): measured on the instrumented build, a call takes up to 0.13 s
# at |n| = 10^4, 1.3 s at 10^5, over 2 s in 6 functions at 10^6 and in 20 at 2^31 - 1, so unbounded
# 32-bit fields would make those campaigns wait for timeouts most of the time. Skipping rather
# than folding (n % bound) keeps every reported input truthful: the decoded i32/u32 that triage
# prints is exactly the argument GSL received. The bound is far above GSL's own order limits
# (GSL_SF_FACT_NMAX 170, GSL_SF_DOUBLEFACT_NMAX 297). Compile a harness with
# -DNUMFUZZ_GSL_INT_BOUND=0 to lift it.
INT_BOUND = 10000

# gsl_mode_t takes three values: GSL_PREC_DOUBLE 0, GSL_PREC_SINGLE 1, GSL_PREC_APPROX 2. It is
# read from a u8 field and other values are not tried, for the same reason as the bound above:
# the decoded value triage prints is the mode GSL received.
MODE_VALUES = 3

SCALAR_FIELDS = {
    "double": "f64",
    "int": "i32",
    "unsigned int": "u32",
    "gsl_mode_t": "u8",
}
OUTPUT_TYPES = ("gsl_sf_result *", "gsl_sf_result_e10 *")

# Plain `double *` outputs that qualify the value rather than being one (a sign, the exponent of
# an exponentially scaled value): declared as named results (reported, never judged).
QUALIFIER_OUTPUTS = ("sgn", "exp_F", "exp_G", "ln_multiplier")

# Internal functions with a known bug that no public function reaches (targets/gsl/known-bugs.tsv,
# ampl/gsl#79), and the private header that declares each.
INTERNAL = {
    "gsl_sf_conicalP_xlt1_large_neg_mu_e": "specfunc/legendre.h",
    "gsl_sf_bessel_Knu_scaled_asympx_e": "specfunc/bessel.h",
    "gsl_sf_bessel_Knu_scaled_asymp_unif_e": "specfunc/bessel.h",
}

# Functions whose implementation needs GSL's linear algebra (the Mathieu functions use the
# eigenvalue solvers); build.sh's specfunc-only build cannot link them.
NEEDS_LINALG_PREFIX = "gsl_sf_mathieu_"


def strip_const(t):
    t = t.strip()
    while t.startswith("const "):
        t = t[len("const "):].strip()
    return t


def parse_declarations(include, clang, headers=("gsl/gsl_sf.h",), extra_include=None):
    """All FunctionDecls named gsl_sf_* from the headers, as (name, return type, params)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "sf.c")
        with open(src, "w") as f:
            f.write("#include <gsl/gsl_sf.h>\n")
            for h in headers:
                f.write(f'#include "{h}"\n')
        cmd = [clang, "-fsyntax-only", "-I", include, "-Xclang", "-ast-dump=json",
               "-Xclang", "-ast-dump-filter=gsl_sf_", src]
        if extra_include:
            cmd[2:2] = ["-I", extra_include]
        try:
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        except FileNotFoundError:
            sys.exit(f"gen_harnesses.py: {clang} not found; install clang-19 (scripts/setup.sh) or pass --clang")
        except subprocess.CalledProcessError as e:
            sys.exit(f"gen_harnesses.py: clang cannot parse <gsl/gsl_sf.h> under {include}:\n{e.stderr}")
    # With a filter, clang prints one JSON object per matching declaration.
    decoder = json.JSONDecoder()
    decls, i = [], 0
    while True:
        while i < len(out) and out[i].isspace():
            i += 1
        if i >= len(out):
            break
        node, i = decoder.raw_decode(out, i)
        if node.get("kind") != "FunctionDecl" or not node.get("name", "").startswith("gsl_sf_"):
            continue
        ret = node["type"]["qualType"].split("(", 1)[0].strip()
        params = [(p.get("name", f"arg{k}"), p["type"]["qualType"])
                  for k, p in enumerate(q for q in node.get("inner", []) if q["kind"] == "ParmVarDecl")]
        decls.append((node["name"], ret, params))
    return decls


def header_of(include):
    """Maps each gsl_sf function name to the header that declares it."""
    where = {}
    gsl = os.path.join(include, "gsl")
    for h in sorted(os.listdir(gsl)):
        if h.startswith("gsl_sf") and h.endswith(".h"):
            with open(os.path.join(gsl, h)) as f:
                for name in re.findall(r"\b(gsl_sf_\w+)\s*\(", f.read()):
                    where.setdefault(name, f"gsl/{h}")
    return where


def skip_reason(params):
    """Why a function cannot take a generated scalar harness: its unsupported parameters."""
    bad = []
    seen_output = False
    for name, t in params:
        base = strip_const(t)
        if base in OUTPUT_TYPES:
            if t.startswith("const"):
                bad.append(f"`{t} {name}` (struct input)")
            seen_output = True
        elif base in SCALAR_FIELDS and not seen_output:
            continue
        elif base in SCALAR_FIELDS:
            bad.append(f"`{t} {name}` (input after an output)")
        elif base == "double *":
            bad.append(f"`{t} {name}` ({'input array' if t.startswith('const') else 'double* output or in/out'})")
        elif base == "size_t":
            bad.append(f"`{t} {name}` (array size)")
        else:
            bad.append(f"`{t} {name}` (not a number)")
    if not seen_output and not bad:
        bad.append("no gsl_sf_result output")
    return bad


def input_field(name, t, by_pointer=False):
    base = strip_const(t)
    return {"name": name, "type": base, "field": SCALAR_FIELDS[base], "by_pointer": by_pointer}


def output_of(name, t):
    return {"name": name, "type": strip_const(t)[:-2].strip()}


def scalar_shape(params):
    """Scalar inputs, then gsl_sf_result(_e10) outputs: the census' 255 functions."""
    if skip_reason(params):
        return None
    inputs = [input_field(n, t) for n, t in params if strip_const(t) not in OUTPUT_TYPES]
    outputs = [output_of(n, t) for n, t in params if strip_const(t) in OUTPUT_TYPES]
    return inputs, outputs


def double_pointer_shape(params):
    """The easy ones among the rest: a lone `double *` in/out value (angle_restrict_*), or
    scalar inputs followed by outputs of which some are plain `double *` (elljac, *_sgn,
    coulomb_wave_FG)."""
    if len(params) == 1 and params[0][1] == "double *":
        return [input_field(params[0][0], "double", by_pointer=True)], []
    inputs, outputs = [], []
    for n, t in params:
        base = strip_const(t)
        if base in SCALAR_FIELDS and not outputs:
            inputs.append(input_field(n, t))
        elif t in OUTPUT_TYPES or t == "double *":
            outputs.append(output_of(n, t))
        else:
            return None
    if not any(o["type"] == "double" for o in outputs):
        return None
    return inputs, outputs


def classify(decls):
    harnesses, skipped = [], []
    for name, ret, params in decls:
        if not name.endswith("_e"):
            continue
        shapes = [("scalar", scalar_shape(params)), ("double_pointer", double_pointer_shape(params))]
        group, shape = next(((g, sh) for g, sh in shapes if sh is not None and ret == "int"), (None, None))
        if shape is None:
            bad = skip_reason(params) if ret == "int" else [f"returns {ret}"]
            skipped.append({"function": name, "reason": "; ".join(bad),
                            "prototype": f"{ret} {name}({', '.join(f'{t} {n}' for n, t in params)})"})
            continue
        inputs, outputs = shape
        harnesses.append({
            "function": name,
            "group": group,
            "signature": ",".join(p["field"] for p in inputs),
            "inputs": inputs,
            "outputs": outputs,
            "needs_linalg": name.startswith(NEEDS_LINALG_PREFIX),
        })
    harnesses.sort(key=lambda h: h["function"])
    skipped.sort(key=lambda s: s["function"])
    return harnesses, skipped


def internal_harnesses(source, include, clang):
    """The harnesses of INTERNAL's functions, from their private headers in GSL's source tree."""
    headers = sorted(set(INTERNAL.values()))
    found = {name: (ret, params) for name, ret, params in parse_declarations(include, clang, headers, source)
             if name in INTERNAL}
    missing = sorted(set(INTERNAL) - set(found))
    if missing:
        sys.exit(f"gen_harnesses.py: {', '.join(missing)} not declared in {', '.join(headers)} under {source}")
    out = []
    for name in sorted(INTERNAL):
        ret, params = found[name]
        shape = scalar_shape(params) or double_pointer_shape(params)
        if ret != "int" or shape is None:
            sys.exit(f"gen_harnesses.py: internal {name} has an unexpected prototype")
        inputs, outputs = shape
        out.append({
            "function": name,
            "group": "internal",
            "signature": ",".join(p["field"] for p in inputs),
            "inputs": inputs,
            "outputs": outputs,
            "needs_linalg": False,
            "prototype": f"{ret} {name}({', '.join(f'{t} {n}' for n, t in params)})",
        })
    return out


def c_ident(name):
    return re.sub(r"\W", "_", name)


def result_declarations(h):
    """The NUMFUZZ_RESULT lines after the call, in output order: each gsl_sf_result's val (a
    primary result, what the reference oracle judges) and err (named "err"); a
    gsl_sf_result_e10 adds its exponent as "e10"; plain double outputs are primary unless they
    qualify another value (QUALIFIER_OUTPUTS); an in/out value (angle_restrict_*) is primary."""
    lines = []
    for p in h["inputs"]:
        if p["by_pointer"]:
            lines.append(f"  NUMFUZZ_RESULT(in_{c_ident(p['name'])});")
    for o in h["outputs"]:
        var = "out_" + c_ident(o["name"])
        if o["type"] in ("gsl_sf_result", "gsl_sf_result_e10"):
            lines.append(f"  NUMFUZZ_RESULT({var}.val);")
            lines.append(f'  NUMFUZZ_RESULT_NAMED("err", {var}.err);')
            if o["type"] == "gsl_sf_result_e10":
                lines.append(f'  NUMFUZZ_RESULT_NAMED("e10", (double){var}.e10);')
        elif o["name"] in QUALIFIER_OUTPUTS:
            lines.append(f'  NUMFUZZ_RESULT_NAMED("{o["name"]}", {var});')
        else:
            lines.append(f"  NUMFUZZ_RESULT({var});")
    return lines


def harness_source(h, header):
    lines = [
        f"/* numfuzz harness for {h['function']} ({header}).",
        " * Generated by targets/gsl/gen_harnesses.py from the installed GSL headers: do not edit. */",
    ]
    if h["needs_linalg"]:
        lines.append("#define NUMFUZZ_GSL_NEEDS_LINALG 1")
    lines += [
        "#include <numfuzz.h>",
        "#include <gsl/gsl_errno.h>",
        "#include <gsl/gsl_sf.h>",
        "",
    ]
    if h["group"] == "internal":
        lines += [f"/* Internal to GSL ({header}): declared here as that header declares it. */",
                  h["prototype"] + ";", ""]
    lines += [
        f'NUMFUZZ_SIGNATURE("{h["signature"]}");',
        f'NUMFUZZ_FUNCTION("{h["function"]}");',
        "",
    ]
    kinds = {p["type"] for p in h["inputs"]}
    if kinds & {"int", "unsigned int"}:
        lines += [
            "/* Integer arguments beyond the bound are not tried (see targets/gsl/README.md); 0: no bound. */",
            "#ifndef NUMFUZZ_GSL_INT_BOUND",
            f"#define NUMFUZZ_GSL_INT_BOUND {INT_BOUND}",
            "#endif",
            "static int beyond_bound(int64_t n) {",
            "  return NUMFUZZ_GSL_INT_BOUND && (n < -(int64_t)NUMFUZZ_GSL_INT_BOUND || n > (int64_t)NUMFUZZ_GSL_INT_BOUND);",
            "}",
        ]
    lines += [
        "",
        "/* GSL's default error handler aborts; the status is what the harness looks at. */",
        "int LLVMFuzzerInitialize(int *argc, char ***argv) {",
        "  (void)argc;",
        "  (void)argv;",
        "  gsl_set_error_handler_off();",
        "  return 0;",
        "}",
        "",
        "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {",
    ]
    args = []
    for i, p in enumerate(h["inputs"]):
        var = "in_" + c_ident(p["name"])
        t = p["type"]
        if t == "double":
            lines.append(f"  double {var} = nf_f64(data, size, {i});")
        elif t == "int":
            lines.append(f"  int {var} = nf_i32(data, size, {i});")
            lines.append(f"  if (beyond_bound({var}))")
            lines.append("    return 0;")
        elif t == "unsigned int":
            lines.append(f"  unsigned {var} = nf_u32(data, size, {i});")
            lines.append(f"  if (beyond_bound({var}))")
            lines.append("    return 0;")
        else:
            lines.append(f"  gsl_mode_t {var} = nf_u8(data, size, {i});")
            lines.append(f"  if ({var} >= {MODE_VALUES}) /* GSL_PREC_DOUBLE, GSL_PREC_SINGLE, GSL_PREC_APPROX */")
            lines.append("    return 0;")
        args.append(("&" if p["by_pointer"] else "") + var)
    for p in h["outputs"]:
        var = "out_" + c_ident(p["name"])
        # Zeroed: a call that fails early may not write them, and results are read either way.
        init = "0" if p["type"] == "double" else "{0}"
        lines.append(f"  {p['type']} {var} = {init};")
        args.append("&" + var)
    lines += [
        f"  int status = {h['function']}({', '.join(args)});",
        "  if (status != GSL_SUCCESS)",
        "    NUMFUZZ_HANDLED(); /* GSL reported the error itself */",
        "  /* What GSL returned: triage tells which exceptions reach it and judges it. */",
        *result_declarations(h),
        "  return 0;",
        "}",
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--include", required=True, help="directory holding gsl/gsl_sf.h")
    ap.add_argument("--out", required=True, help="output directory (src/, manifest.json, skipped.md)")
    ap.add_argument("--source", help="GSL's source tree: also the harnesses of INTERNAL functions")
    ap.add_argument("--clang", default="clang-19")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.include, "gsl", "gsl_sf.h")):
        sys.exit(f"gen_harnesses.py: {a.include}/gsl/gsl_sf.h does not exist; build GSL first (targets/gsl/build.sh)")

    harnesses, skipped = classify(parse_declarations(a.include, a.clang))
    headers = header_of(a.include)
    if a.source:
        harnesses += internal_harnesses(a.source, a.include, a.clang)
    src = os.path.join(a.out, "src")
    os.makedirs(src, exist_ok=True)
    wanted = set()
    for h in harnesses:
        h["header"] = INTERNAL.get(h["function"]) or headers.get(h["function"], "gsl/gsl_sf.h")
        path = os.path.join(src, h["function"] + ".c")
        text = harness_source(h, h["header"])
        wanted.add(h["function"] + ".c")
        # Rewrite only what changed, so that make relinks only those harnesses.
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            with open(path, "w") as f:
                f.write(text)
    for stale in set(os.listdir(src)) - wanted:
        os.remove(os.path.join(src, stale))
    for s in skipped:
        s["header"] = headers.get(s["function"], "gsl/gsl_sf.h")

    scalar = [h for h in harnesses if h["group"] == "scalar"]
    internal = [h for h in harnesses if h["group"] == "internal"]
    with_int = sum(1 for h in scalar if any(p["type"] in ("int", "unsigned int") for p in h["inputs"]))
    counts = {
        "generated": len(harnesses) - len(internal),
        "scalar": len(scalar),
        "double_or_mode_only": len(scalar) - with_int,
        "with_int_or_unsigned": with_int,
        "double_pointer": len(harnesses) - len(scalar) - len(internal),
        "internal": len(internal),
        "skipped": len(skipped),
        "e_functions": len(harnesses) - len(internal) + len(skipped),
    }
    manifest = {"int_bound": INT_BOUND, "mode_values": MODE_VALUES, "counts": counts,
                "harnesses": harnesses, "skipped": skipped}
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    with open(os.path.join(a.out, "skipped.md"), "w") as f:
        f.write("| function | header | why no generated harness |\n|---|---|---|\n")
        for s in skipped:
            f.write(f"| `{s['function']}` | {s['header']} | {s['reason']} |\n")
    print(f"gen_harnesses.py: {counts['generated']} harnesses of public functions: {counts['scalar']} with scalar arguments and "
          f"gsl_sf_result outputs ({counts['double_or_mode_only']} double/mode only, {counts['with_int_or_unsigned']} "
          f"with int or unsigned), {counts['double_pointer']} with double* outputs or in/out and "
          f"{counts['internal']} of internal functions; "
          f"{counts['skipped']} of {counts['e_functions']} _e functions skipped (see {os.path.join(a.out, 'skipped.md')})")


if __name__ == "__main__":
    main()
