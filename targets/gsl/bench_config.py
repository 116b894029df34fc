#!/usr/bin/env python3
"""The configuration of a GSL benchmark run (scripts/bench-gsl.sh): RESULTS/config.json.

    bench_config.py new MANIFEST CONFIG SECONDS JOBS AFL FUNCTIONS BINARIES [RUN_ARGS...]
        write CONFIG for the harnesses of MANIFEST named in FUNCTIONS (comma-separated; empty:
        all of them), with the numfuzz run arguments RUN_ARGS
    bench_config.py get CONFIG KEY
        print one value: a list as words, a boolean as 0/1
    bench_config.py seeds CONFIG FUNCTION DIR
        write afl-fuzz's two neutral seeds for FUNCTION to DIR: every field 0 (`zeros`) and
        every field 1 (`ones`), encoded as its signature says (numfuzz-abi's field encoding:
        little-endian, packed; f80 is the x87 80-bit format)
    bench_config.py set CONFIG KEY VALUE
        record one more string value
    bench_config.py sample MANIFEST INTERNAL_TSV N[:SEED]
        print N public harnesses (not internal, not Mathieu) drawn with random.Random(SEED)
        (default seed 1) from their sorted list, comma-separated in sorted order
"""

import json
import random
import struct
import sys
import time

# Packed little-endian encodings of the signature's field types.
INT_FORMATS = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "i64": "q", "u64": "Q"}


def field_bytes(ty, value):
    """`value` (0 or 1) as a field of type `ty`."""
    if ty == "f32":
        return struct.pack("<f", float(value))
    if ty == "f64":
        return struct.pack("<d", float(value))
    if ty == "f80":
        # 1.0 is the explicit integer bit with the exponent bias 16383; 0.0 is all zeros.
        return struct.pack("<QH", 1 << 63, 0x3FFF) if value else bytes(10)
    if ty in INT_FORMATS:
        return struct.pack("<" + INT_FORMATS[ty], value)
    sys.exit(f"bench_config.py: unknown field type `{ty}`")


def field_types(signature):
    """The field types of a signature, its domains dropped: `f64[0,1], i32` gives f64, i32 (the
    commas inside a domain's brackets separate bounds, not fields)."""
    types, depth, field = [], 0, ""
    for ch in signature + ",":
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            types.append(field.split("[")[0].split("(")[0].strip())
            field = ""
        else:
            field += ch
    return types


def new(manifest, config, seconds, jobs, afl, functions, binaries, *run_args):
    with open(manifest) as fh:
        sigs = {h["function"]: h["signature"] for h in json.load(fh)["harnesses"]}
    wanted = [f for f in functions.split(",") if f] or sorted(sigs)
    unknown = [f for f in wanted if f not in sigs]
    if unknown:
        sys.exit(f"bench-gsl.sh: no harness for {', '.join(unknown)} (see targets/gsl/README.md)")
    with open(config, "w") as fh:
        json.dump({"seconds": int(seconds), "jobs": int(jobs), "afl": afl == "1", "functions": wanted,
                   "signatures": {f: sigs[f] for f in wanted}, "binaries": binaries, "run_args": list(run_args),
                   "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, fh, indent=1)


def get(config, key):
    with open(config) as fh:
        value = json.load(fh).get(key, [])
    if isinstance(value, list):
        print(" ".join(value))
    elif isinstance(value, bool):
        print(int(value))
    else:
        print(value)


def seeds(config, function, out):
    with open(config) as fh:
        signature = json.load(fh)["signatures"][function]
    fields = [t for t in field_types(signature) if t]
    for name, value in (("zeros", 0), ("ones", 1)):
        with open(f"{out}/{name}", "wb") as fh:
            fh.write(b"".join(field_bytes(t, value) for t in fields))


def set_value(config, key, value):
    with open(config) as fh:
        cfg = json.load(fh)
    cfg[key] = value
    with open(config, "w") as fh:
        json.dump(cfg, fh, indent=1)


def sample(manifest, internal_tsv, spec):
    count, _, seed = spec.partition(":")
    if not count.isdigit() or int(count) == 0 or (seed and not seed.isdigit()):
        sys.exit(f"bench-gsl.sh: --sample wants N or N:SEED (positive integers), got `{spec}`")
    with open(internal_tsv) as fh:
        internal = {line.split("\t")[0] for line in fh if line.strip() and not line.startswith("#")}
    with open(manifest) as fh:
        public = sorted(h["function"] for h in json.load(fh)["harnesses"]
                        if h["function"] not in internal and not h["function"].startswith("gsl_sf_mathieu_"))
    if int(count) > len(public):
        sys.exit(f"bench-gsl.sh: --sample {count}: only {len(public)} public harnesses")
    print(",".join(sorted(random.Random(int(seed or 1)).sample(public, int(count)))))


def main():
    commands = {"new": (new, 7), "get": (get, 2), "seeds": (seeds, 3), "set": (set_value, 3),
                "sample": (sample, 3)}
    if len(sys.argv) < 2 or sys.argv[1] not in commands or len(sys.argv) - 2 < commands[sys.argv[1]][1]:
        sys.exit(__doc__)
    fn, _ = commands[sys.argv[1]]
    fn(*sys.argv[2:])


if __name__ == "__main__":
    main()
