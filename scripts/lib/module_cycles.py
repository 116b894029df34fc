#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a cycle (ARCHITECTURE.md: imports go
one way).

    scripts/lib/module_cycles.py [CRATE_SRC_DIR ...]   (default: every crate of the workspace)

    scripts/lib/module_cycles.py --self-test            (the checker's own test)

A module is a file or directory directly under a crate's `src/`, and, inside a directory
module, each of its files. An import is a `crate::m` or `super::m` path outside comments and
outside `#[cfg(test)]` modules (tests may reach anywhere), wherever in the file they are: code
after a test module counts. Paths are read as text, not resolved: a re-export or a glob import
is not followed, so this finds the cycles written out, which is what a reader follows.
"""
import os
import re
import sys
import tempfile

CRATES = ["runtime/abi/src", "runtime/src", "cc-wrapper/src", "fuzzer/outdir/src",
          "fuzzer/engine/src", "fuzzer/src", "testkit/src"]


TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+\w+\s*\{")
# What may hold a brace that is no block's: a string (raw or not), a char literal, a comment.
SKIPPED = re.compile(r'r(#*)".*?"\1|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'|//[^\n]*|/\*.*?\*/', re.S)


def block_end(text, start):
    """The index just past the `}` closing the block whose `{` is at `start - 1`."""
    depth, i = 1, start
    while depth and i < len(text):
        skipped = SKIPPED.match(text, i)
        if skipped:
            i = skipped.end()
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return i


def code_of(path):
    """The file's text without comments and without its `#[cfg(test)]` modules."""
    text = open(path, encoding="utf-8").read()
    while match := TEST_MODULE.search(text):
        text = text[:match.start()] + text[block_end(text, match.end()):]
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


def self_test():
    """A crate whose only cycle goes through code after a test module (as engine/src/i2s.rs's
    stage did), and one whose cycle is inside a test module (which is allowed)."""
    files = {
        "after/lib.rs": "mod a;\nmod b;\n",
        "after/a.rs": "use crate::b::B;\n",
        "after/b.rs": "pub struct B;\n#[cfg(test)]\nmod tests {\n    fn f() { let s = \"}\"; }\n}\n"
                      "mod stage {\n    use crate::a::A;\n}\n",
        "inside/lib.rs": "mod a;\nmod b;\n",
        "inside/a.rs": "use crate::b::B;\n",
        "inside/b.rs": "pub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::a::A; // '{'\n}\n",
    }
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in files.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(text)
        after = cycles(module_graph(os.path.join(tmp, "after")))
        inside = cycles(module_graph(os.path.join(tmp, "inside")))
    assert after == [["a", "b"]], f"the cycle through code after a test module: {after}"
    assert inside == [], f"a test module's imports are no cycle: {inside}"
    print("module_cycles: self-test passed")


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
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
