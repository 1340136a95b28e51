#!/usr/bin/python3
"""Check that code excerpts in docs/*.md still match the source they quote,
and (with --run) that the commands they mark still run as documented.

usage: check_docs.py [--root DIR] [--run --loom LOOM --build DIR] [DOC.md ...]

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

A fenced block whose first line is

    # run by scripts/check_docs.py

(or `# run by scripts/check_docs.py: exit N` for an example that fails on
purpose) holds commands: with --run each one (a line, `\\` continuing it;
lines starting with `#` are comments) runs under bash in the repository
root, `loom` being --loom and `build/` (or `./build/`) the --build
directory, and must exit 0 (or N) within 600 s. A block right after it
whose first line is `# output checked by scripts/check_docs.py` is what the
last command printed (stdout and stderr): each of its lines other than
`...` must appear in that output, in order, compared with runs of
whitespace as one space and every number as `N` (figures move with the
cost model; the words, columns and order may not).

Every doc is also checked for `build/zoo/NAME.onnx` naming a model that
scripts/export_zoo.py does not export (a doc's example must name a model
of the zoo; an upper-case NAME is a placeholder).

With no DOC arguments, checks every docs/*.md under the root (default: the
repository that holds this script). Exits 0 when every quote matches, 1 when
any does not (one line per stale block, naming the doc, the block's line and
the first line that no longer matches), 2 on a usage error.
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys

# "// from PATH" or "# from PATH" on the block's first line.
TAG = re.compile(r"^\s*(?://|#)\s*from\s+(\S+)\s*$")
# An opening fence: up to three spaces (more inside list items, which we
# allow), then at least three backticks or tildes, then an info string.
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


# The marks of a block of commands to run and of the output they print.
RUN = re.compile(r"^\s*#\s*run by scripts/check_docs\.py(?::\s*exit\s+(\d+))?\s*$")
OUTPUT = re.compile(r"^\s*#\s*output checked by scripts/check_docs\.py\s*$")
# A number as the output comparison masks it: digits with their separators,
# sign, decimal point and exponent.
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
ZOO_PATH = re.compile(r"build/zoo/([A-Za-z0-9_]+)\.onnx")


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


def zoo_models(root):
    """The names scripts/export_zoo.py exports (its ZOO table's keys)."""
    text = (root / "scripts" / "export_zoo.py").read_text(encoding="utf-8")
    table = text[text.index("ZOO = {"):]
    table = table[:table.index("\n}\n")]
    return set(re.findall(r'^    "([A-Za-z0-9_]+)":', table, re.M))


def check_zoo_names(doc, label, zoo):
    """Problems with build/zoo/NAME.onnx paths that name no zoo model."""
    problems = []
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        for name in ZOO_PATH.findall(line):
            # An upper-case name is a placeholder (build/zoo/M.onnx).
            if name not in zoo and not name.isupper():
                problems.append(f"{label}:{n}: build/zoo/{name}.onnx is not a "
                                f"model of scripts/export_zoo.py's zoo")
    return problems


def commands_of(lines):
    """The commands of a run block: its lines joined at `\\`, comments and
    blank lines left out."""
    out, current = [], ""
    for line in lines:
        text = line.strip()
        if not current and (not text or text.startswith("#")):
            continue
        if text.endswith("\\"):
            current += text[:-1] + " "
            continue
        out.append(current + text)
        current = ""
    if current:
        out.append(current)
    return out


def masked(text):
    return " ".join(NUMBER.sub("N", text).split())


def run_block(block, code, label, root, loom, build):
    """Runs a block's commands; returns (problems, the last one's output)."""
    problems, output = [], ""
    bin_dir = os.path.dirname(os.path.abspath(loom))
    env = dict(os.environ, LOOM_NO_PROGRESS="1",
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    for cmd in commands_of(block.lines[1:]):
        shell = re.sub(r"(?<![\w/.-])(?:\./)?build/", str(build) + "/", cmd)
        shell = re.sub(r"(?<![\w/.-])loom(?=\s)", loom, shell)
        try:
            done = subprocess.run(["bash", "-c", shell], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            problems.append(f"{label}:{block.line}: '{cmd}' ran over 600 s")
            continue
        output = done.stdout + done.stderr
        if done.returncode != code:
            last = (output.strip().splitlines() or [""])[-1]
            problems.append(f"{label}:{block.line}: '{cmd}' exited "
                            f"{done.returncode}, not {code}: {last}")
    return problems, output


def check_output(block, output, label):
    """Problems with an output block against what its command printed."""
    got = [masked(l) for l in output.splitlines()]
    at = 0
    for i, line in enumerate(block.lines[1:]):
        want = masked(line)
        if not want or want == "...":
            continue
        found = next((k for k in range(at, len(got)) if got[k] == want), -1)
        if found < 0:
            return [f"{label}:{block.line + 2 + i}: the command does not print "
                    f"'{line.strip()}' (numbers masked) here or after the "
                    f"lines before it"]
        at = found + 1
    return []


def run_doc(doc, root, label, loom, build):
    """Returns (commands blocks run, problems) for one doc."""
    problems, ran, output = [], 0, None
    for block in fenced_blocks(doc.read_text(encoding="utf-8")):
        if not block.lines:
            continue
        m = RUN.match(block.lines[0])
        if m:
            ran += 1
            found, output = run_block(block, int(m.group(1) or 0), label,
                                      root, loom, build)
            problems += found
            continue
        if OUTPUT.match(block.lines[0]):
            if output is None:
                problems.append(f"{label}:{block.line}: an output block with "
                                f"no run block before it")
            else:
                problems += check_output(block, output, label)
        output = None
    return ran, problems


def main(argv):
    parser = argparse.ArgumentParser(
        description="Check that quoted code in docs/*.md matches its source.")
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent,
                        help="repository root (default: this script's repo)")
    parser.add_argument("--run", action="store_true",
                        help="also run the commands the docs mark")
    parser.add_argument("--loom", help="the loom binary (with --run)")
    parser.add_argument("--build", type=pathlib.Path,
                        help="the build directory `build/` names (with --run)")
    parser.add_argument("docs", nargs="*", type=pathlib.Path,
                        help="Markdown files (default: ROOT/docs/*.md)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.run and (not args.loom or not args.build):
        print("check_docs: --run needs --loom and --build", file=sys.stderr)
        return 2
    docs = args.docs or sorted((root / "docs").glob("*.md"))
    if not docs:
        print(f"check_docs: no docs/*.md under {root}", file=sys.stderr)
        return 2
    total = 0
    rows = 0
    ran = 0
    problems = []
    zoo = zoo_models(root)
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
        problems += check_zoo_names(doc, label, zoo)
        if args.run:
            n, found = run_doc(doc, root, label,
                               os.path.abspath(args.loom), args.build.resolve())
            ran += n
            problems += found
    ran_text = f", {ran} blocks of commands run" if args.run else ""
    for p in problems:
        print(f"check_docs: {p}", file=sys.stderr)
    if problems:
        print(f"check_docs: {len(problems)} problems in {total} quoted "
              f"blocks and {rows} touch-point rows{ran_text}", file=sys.stderr)
        return 1
    print(f"check_docs: {total} quoted blocks in {len(docs)} docs match "
          f"their sources, and {rows} touch-point rows theirs"
          + (f"; {ran} blocks of commands ran as documented" if args.run else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
