"""What numfuzz's reference oracles share: their command line and their request loop.

The protocol (README, "Reference oracles"): one JSON request per line on stdin, one JSON reply
per line on stdout, in order. Every request gets a reply, whatever happens to it: a line that
does not parse gets `{"results": []}`, and a request its oracle fails on, or answers with the
wrong number of values, gets one null per declared result (a tolerance it gave is kept).

    import oracle_protocol
    args = oracle_protocol.arguments(__doc__, default_timeout=2.0, listing=coverage_lines)
    oracle_protocol.serve(ask, log)     # ask(request) -> reply dict

Only the Python standard library is used.
"""

import argparse
import json
import sys


def seconds(text):
    """--timeout: a non-negative number of seconds (0: no limit)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0.0:
        raise argparse.ArgumentTypeError("%r is not a number of seconds (e.g. 2, or 0 for no limit)" % text)
    return value


def arguments(doc, default_timeout, listing):
    """The oracle's command line: --timeout S and --list (which prints `listing()`'s lines, one
    per function and whether it is covered, and exits)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=seconds, default=default_timeout, metavar="SECONDS",
                    help="wall-clock limit per request, seconds (default %g; 0: none)" % default_timeout)
    ap.add_argument("--list", action="store_true",
                    help="print every function and whether it is covered, then exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(listing()))
        sys.exit(0)
    return args


def fitted(reply, count):
    """`reply` if it carries `count` results, else `count` nulls (keeping its tolerance)."""
    if isinstance(reply, dict) and isinstance(reply.get("results"), list) and len(reply["results"]) == count:
        return reply
    fallback = {"results": [None] * count}
    tolerance = reply.get("tolerance") if isinstance(reply, dict) else None
    if tolerance is not None:
        fallback["tolerance"] = tolerance
    return fallback


def serve(ask, log, stdin=None, stdout=None):
    """Answers every request on `stdin` with `ask(request)` until end of input."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout
    for raw in stdin:
        text = raw.decode("utf-8", "replace").strip() if isinstance(raw, bytes) else raw.strip()
        if not text:
            continue
        try:
            request = json.loads(text)
            if not isinstance(request, dict) or not isinstance(request.get("results"), list):
                raise ValueError('no "results" list')
        except ValueError as e:
            log("cannot parse request %r: %s" % (text[:200], e))
            stdout.write('{"results": []}\n')
            stdout.flush()
            continue
        try:
            reply = ask(request)
        except Exception as e:      # an oracle never dies on a request
            log("%s%r: %s: %s" % (request.get("function"), request.get("inputs"), type(e).__name__, e))
            reply = None
        stdout.write(json.dumps(fitted(reply, len(request["results"]))) + "\n")
        stdout.flush()
