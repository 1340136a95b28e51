#!/usr/bin/python3
"""usage: same_figures.py RUN.json < RUN.txt

Checks that `loom run --json` and the text `loom run` prints give the same
figures: total cycles, instrs, chips, the busiest link's and chip link's
bytes, and each listed chip link's bytes. Prints nothing and exits 0 when
they agree; one line per disagreement and exit 1 when not."""
import json
import re
import sys

stats = json.load(open(sys.argv[1]))
text = sys.stdin.read()
problems = []


def figure(pattern):
    m = re.search(pattern, text, re.M)
    return int(m.group(1)) if m else None


for key, pattern in [("total_cycles", r"^total cycles: +(\d+)"),
                     ("instrs", r"^instrs: +(\d+)"),
                     ("chips", r"^chips: +(\d+)"),
                     ("max_link_bytes", r"^mesh links: +\d+, busiest carries (\d+)"),
                     ("max_chip_link_bytes", r"^chip links: +\d+, busiest carries (\d+)")]:
    if figure(pattern) != stats[key]:
        problems.append(f"{key}: text {figure(pattern)}, json {stats[key]}")
links = {l["id"]: l["bytes"] for l in stats["chip_links"]}
for m in re.finditer(r"^  chip link (\d+) .*: (\d+) bytes", text, re.M):
    if links.get(int(m.group(1))) != int(m.group(2)):
        problems.append(f"chip link {m.group(1)}: text {m.group(2)} bytes, "
                        f"json {links.get(int(m.group(1)))}")
for p in problems:
    print("same_figures:", p)
sys.exit(1 if problems else 0)
