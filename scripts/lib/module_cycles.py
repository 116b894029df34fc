#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a cycle (ARCHITECTURE.md: imports go
one way).

    scripts/lib/module_cycles.py [CRATE_SRC_DIR ...]   (default: every crate of the workspace)

A module is a file or directory directly under a crate's `src/`, and, inside a directory
module, each of its files. An import is a `crate::m` or `super::m` path outside comments and
outside the test module at the end of a file (tests may reach anywhere). Paths are read as
text, not resolved: a re-export or a glob import is not followed, so this finds the cycles
written out, which is what a reader follows.
"""
import os
import re
import sys

CRATES = ["runtime/abi/src", "runtime/src", "cc-wrapper/src", "fuzzer/outdir/src",
          "fuzzer/engine/src", "fuzzer/src", "testkit/src"]


def code_of(path):
    text = open(path, encoding="utf-8").read()
    text = text.split("#[cfg(test)]\nmod tests", 1)[0]
    return re.sub(r"//.*", "", text)


def module_graph(src):
    """{module: set(modules it imports)} for the top level and inside each directory module."""
    graph = {}
    for dirpath, _, files in os.walk(src):
        rel_dir = os.path.relpath(dirpath, src)
        for name in files:
            if not name.endswith(".rs"):
                continue
            parts = [] if rel_dir == "." else rel_dir.split(os.sep)
            stem = name[:-3]
            if stem not in ("mod", "lib", "main"):
                parts.append(stem)
            node = "::".join(parts) or "(crate root)"
            graph.setdefault(node, set())
            code = code_of(os.path.join(dirpath, name))
            for path in re.findall(r"\bcrate((?:::\w+)+)", code):
                graph[node].add(tuple(path.strip(":").split("::")))
            # `super` of `a/b.rs` is `a`, of `a/mod.rs` the crate root: parts[:-1] either way.
            for sub in re.findall(r"\bsuper::(\w+)", code):
                graph[node].add(tuple(parts[:-1]) + (sub,))
    nodes = set(graph)
    edges = {}
    for node, targets in graph.items():
        edges[node] = set()
        for target in targets:
            # The longest module prefix of the path is what it imports.
            for n in range(len(target), 0, -1):
                candidate = "::".join(target[:n])
                if candidate in nodes:
                    break
            else:
                continue
            # An import of a sibling counts between siblings; an import of anything inside
            # another top-level module counts against that module as well.
            if candidate != node and not node.startswith(candidate + "::"):
                edges[node].add(candidate)
                top, own = candidate.split("::")[0], node.split("::")[0]
                if top != own:
                    edges.setdefault(own, set()).add(top)
    return edges


def cycles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    crates = sys.argv[1:] or [os.path.join(root, c) for c in CRATES]
    failed = False
    for src in crates:
        edges = module_graph(src)
        for component in cycles(edges):
            failed = True
            links = "; ".join(f"{m} -> {', '.join(sorted(edges[m] & set(component)))}" for m in component)
            print(f"module_cycles: {os.path.relpath(src, root)}: {links}", file=sys.stderr)
    if failed:
        print("module_cycles: modules import each other in a cycle; move what both need to a module "
              "below them (ARCHITECTURE.md)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
