#!/usr/bin/python3
"""Check that code excerpts in docs/*.md still match the source they quote.

usage: check_docs.py [--root DIR] [DOC.md ...]

A fenced code block whose first line is a source-path comment

    ```c++
    // from lib/Frontend/ONNX/OpConverters.cpp
    Values convertTrilu(NodeContext &nc) {
    ...
    ```

(`// from PATH` or `# from PATH`, PATH relative to the repository root) is a
quote: its remaining lines must appear in PATH as consecutive lines, compared
after stripping leading and trailing whitespace from each line. Blocks
without such a first line are not checked.

A table whose header's last cell is "Checked text" is a list of touch
points: in each row, every `path` of the "File" cell must be a file or
folder of the repository, and the row's checked text (in backticks; a row
without one, such as a dash, is not checked) must appear verbatim in one of
those files (in a folder: in one of the files under it). docs/adding-an-op.md
lists the files a new op touches this way.

With no DOC arguments, checks every docs/*.md under the root (default: the
repository that holds this script). Exits 0 when every quote matches, 1 when
any does not (one line per stale block, naming the doc, the block's line and
the first line that no longer matches), 2 on a usage error.
"""

import argparse
import pathlib
import re
import sys

# "// from PATH" or "# from PATH" on the block's first line.
TAG = re.compile(r"^\s*(?://|#)\s*from\s+(\S+)\s*$")
# An opening fence: up to three spaces (more inside list items, which we
# allow), then at least three backticks or tildes, then an info string.
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


class Block:
    """One fenced code block: where it starts and its lines."""

    def __init__(self, line, lines):
        self.line = line  # 1-based line of the opening fence.
        self.lines = lines


def fenced_blocks(text):
    """Yields the fenced code blocks of a Markdown text, in order.

    A block closes at a fence of the same character that is at least as long
    as the opening one and carries no info string (CommonMark). An unclosed
    block runs to the end of the document.
    """
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        fence = m.group(2)
        start = i
        body = []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if (close and close.group(2)[0] == fence[0]
                    and len(close.group(2)) >= len(fence)
                    and not close.group(3).strip()):
                break
            body.append(lines[i])
            i += 1
        yield Block(start + 1, body)
        i += 1


def find_run(haystack, needle):
    """Index in `haystack` where the list `needle` occurs contiguously, or -1."""
    n = len(needle)
    for start in range(len(haystack) - n + 1):
        if haystack[start:start + n] == needle:
            return start
    return -1


def first_divergence(source, quote):
    """The quote line after the longest prefix of `quote` found in `source`."""
    for length in range(len(quote), 0, -1):
        if find_run(source, quote[:length]) >= 0:
            return length
    return 0


TICKS = re.compile(r"`([^`]+)`")


def table_rows(text):
    """(line, cells) of each body row of every "Checked text" table."""
    rows = []
    header = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        if header[-1] == "Checked text" and "File" in header:
            rows.append((n, dict(zip(header, cells))))
    return rows


def check_table_rows(text, root, label):
    """Returns (number of rows checked, list of problems) for one doc."""
    problems = []
    checked = 0
    for n, row in table_rows(text):
        where = f"{label}:{n}"
        paths = [p for p in TICKS.findall(row.get("File", ""))
                 if "/" in p or "." in p]
        files = []
        for rel in paths:
            path = (root / rel).resolve()
            if path != root and root not in path.parents or not path.exists():
                problems.append(f"{where}: names '{rel}', which is not a "
                                f"file or folder in the repository")
                continue
            files += ([path] if path.is_file() else
                      sorted(f for f in path.rglob("*") if f.is_file()))
        needles = TICKS.findall(row.get("Checked text", ""))
        if not needles or not files:
            continue
        checked += 1
        needle = needles[0]
        if not any(needle in f.read_text(encoding="utf-8", errors="replace")
                   for f in files):
            problems.append(f"{where}: '{needle}' appears in none of "
                            f"{', '.join(paths)}")
    return checked, problems


def check_doc(doc, root, label):
    """Returns (number of tagged blocks, list of problems) for one doc."""
    problems = []
    tagged = 0
    for block in fenced_blocks(doc.read_text(encoding="utf-8")):
        if not block.lines:
            continue
        m = TAG.match(block.lines[0])
        if not m:
            continue
        tagged += 1
        where = f"{label}:{block.line}"
        rel = m.group(1)
        # (line in the doc, stripped text) for each line after the tag.
        quoted = [(block.line + 2 + i, l.strip())
                  for i, l in enumerate(block.lines[1:])]
        # Blank lines at the block's edges are layout, not part of the quote.
        while quoted and not quoted[0][1]:
            quoted.pop(0)
        while quoted and not quoted[-1][1]:
            quoted.pop()
        if not quoted:
            problems.append(f"{where}: block quoting '{rel}' is empty")
            continue
        path = (root / rel).resolve()
        if root not in path.parents or not path.is_file():
            problems.append(f"{where}: block quotes '{rel}', which is not a "
                            f"file in the repository")
            continue
        source = [l.strip() for l in
                  path.read_text(encoding="utf-8", errors="replace")
                  .splitlines()]
        quote = [text for _, text in quoted]
        if find_run(source, quote) >= 0:
            continue
        k = first_divergence(source, quote)
        line, text = quoted[k]
        problems.append(
            f"{where}: block does not appear verbatim in '{rel}': "
            f"from {label}:{line} ('{text}') on, it differs from the source")
    return tagged, problems


def main(argv):
    parser = argparse.ArgumentParser(
        description="Check that quoted code in docs/*.md matches its source.")
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent,
                        help="repository root (default: this script's repo)")
    parser.add_argument("docs", nargs="*", type=pathlib.Path,
                        help="Markdown files (default: ROOT/docs/*.md)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    docs = args.docs or sorted((root / "docs").glob("*.md"))
    if not docs:
        print(f"check_docs: no docs/*.md under {root}", file=sys.stderr)
        return 2
    total = 0
    rows = 0
    problems = []
    for doc in docs:
        if not doc.is_file():
            print(f"check_docs: {doc}: no such file", file=sys.stderr)
            return 2
        doc = doc.resolve()
        label = (doc.relative_to(root) if root in doc.parents else doc)
        n, found = check_doc(doc, root, label)
        total += n
        problems += found
        n, found = check_table_rows(doc.read_text(encoding="utf-8"), root,
                                    label)
        rows += n
        problems += found
    for p in problems:
        print(f"check_docs: {p}", file=sys.stderr)
    if problems:
        print(f"check_docs: {len(problems)} problems in {total} quoted "
              f"blocks and {rows} touch-point rows", file=sys.stderr)
        return 1
    print(f"check_docs: {total} quoted blocks in {len(docs)} docs match "
          f"their sources, and {rows} touch-point rows theirs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
