#!/usr/bin/env python3
"""Checks the relative links of numfuzz's Markdown: README.md, ARCHITECTURE.md, the book's
chapters (docs/src/**/*.md) and targets/*/README.md.

Every relative link must name a file that exists, and its #anchor (or a bare #anchor) a
heading of that file, slugged as mdBook and GitHub slug headings. A chapter's
{{#include FILE}} lines count as the included text: its headings are the chapter's, and its
links must hold from the chapter too (the built book shows them there). A link from the book to
a file outside docs/src works on GitHub but not in the built book, so it is an error.

Prints one line per broken link (file:line: what is wrong) and exits 1 if there is any.

    python3 scripts/lib/check_links.py [ROOT]        (default: the repository this file is in)
"""

import re
import sys
from pathlib import Path

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
INCLUDE = re.compile(r"\{\{#include\s+([^}\s:]+)(?::[^}]*)?\s*\}\}")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def markdown_files(root):
    """The files whose links are checked."""
    files = [root / "README.md", root / "ARCHITECTURE.md"]
    files += sorted((root / "docs" / "src").rglob("*.md"))
    files += sorted(root.glob("targets/*/README.md"))
    return [f for f in files if f.is_file()]


def prose_lines(text, blank_code=True):
    """(line number, line) of the text outside fenced code blocks, code spans blanked out
    unless `blank_code` is false (a heading's code is part of its anchor)."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            marker = m.group(1)[0] * 3
            if fence is None:
                fence = marker
                continue
            if marker == fence:
                fence = None
                continue
        if fence is None and not blank_code:
            yield number, line
        elif fence is None:
            yield number, re.sub(r"(`+)(.+?)\1", lambda s: " " * len(s.group(0)), line)


def expand(path, seen=()):
    """The text of a file with its {{#include}} lines replaced by the included files' text,
    and the included files themselves."""
    text = path.read_text(encoding="utf-8")
    included = []

    def replace(m):
        target = (path.parent / m.group(1)).resolve()
        if target in seen or not target.is_file():
            return m.group(0)
        inner, more = expand(target, seen + (path.resolve(),))
        included.append(target)
        included.extend(more)
        return inner

    return INCLUDE.sub(replace, text), included


def plain(heading):
    """A heading's text as rendered: links become their text, markup goes."""
    heading = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    heading = re.sub(r"<[^>]+>", "", heading)
    return heading.replace("`", "").replace("*", "").replace("~~", "")


def slug(text):
    """mdBook's normalize_id, which GitHub's slugs agree with for plain headings: lower case,
    spaces to hyphens, letters, digits, `_` and `-` kept, everything else dropped."""
    out = []
    for c in text.strip().lower():
        if c.isalnum() or c in "_-":
            out.append(c)
        elif c.isspace():
            out.append("-")
    return "".join(out)


def anchors(path, cache={}):
    """The anchors of a Markdown file's headings (duplicates get -1, -2, ... as in mdBook)."""
    if path not in cache:
        text, _ = expand(path)
        found, counts = set(), {}
        for _, line in prose_lines(text, blank_code=False):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(plain(m.group(2)))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def links(text):
    """(line number, target) of every link in the prose of a text."""
    for number, line in prose_lines(text):
        for m in INLINE_LINK.finditer(line):
            yield number, m.group(1)
        m = REFERENCE_DEF.match(line)
        if m:
            yield number, m.group(1)


def check_link(root, book, source, base, number, target, shown_from):
    """What is wrong with one link, or None. `base` is the directory it is relative to."""
    if SCHEME.match(target) or target.startswith("//"):
        return None
    where = f"{source.relative_to(root)}:{number}"
    if shown_from is not None:
        where += f" (as included in {shown_from.relative_to(root)})"
    file_part, _, anchor = target.partition("#")
    dest = (base / file_part).resolve() if file_part else source
    if file_part:
        if not dest.exists():
            return f"{where}: `{target}`: no such file {dest.relative_to(root) if dest.is_relative_to(root) else dest}"
        in_book = (shown_from or source).resolve().is_relative_to(book)
        if in_book and not dest.is_relative_to(book):
            return f"{where}: `{target}`: the book links outside docs/src, which the built book does not have"
    if anchor:
        if dest.is_dir() or dest.suffix != ".md":
            return f"{where}: `{target}`: an anchor into a file that is not Markdown"
        if anchor not in anchors(dest):
            return f"{where}: `{target}`: {dest.relative_to(root)} has no heading with the anchor `#{anchor}`"
    return None


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
    book = (root / "docs" / "src").resolve()
    problems, checked = [], 0
    for path in markdown_files(root):
        path = path.resolve()
        text = path.read_text(encoding="utf-8")
        for number, target in links(text):
            checked += 1
            problem = check_link(root, book, path, path.parent, number, target, None)
            if problem:
                problems.append(problem)
        # An included file's links are also read from the chapter that includes it.
        for number, line in prose_lines(text):
            for m in INCLUDE.finditer(line):
                inc = (path.parent / m.group(1)).resolve()
                if not inc.is_file():
                    problems.append(f"{path.relative_to(root)}:{number}: includes `{m.group(1)}`, which does not exist")
                    continue
                for inner_number, target in links(inc.read_text(encoding="utf-8")):
                    checked += 1
                    problem = check_link(root, book, inc, path.parent, inner_number, target, path)
                    if problem:
                        problems.append(problem)
    for p in problems:
        print(p)
    if problems:
        print(f"check_links.py: {len(problems)} broken link(s) of {checked}", file=sys.stderr)
        return 1
    print(f"check_links.py: {checked} links hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
