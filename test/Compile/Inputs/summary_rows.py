#!/usr/bin/python3
"""Reads `loom run` text on stdin and prints, per list (mesh links, chip
links, chips, kernels), how many rows it shows and whether they are in
busiest-first order: "LIST: N rows, sorted" or "LIST: N rows, unsorted".
Busiest is bytes for links, busy cycles for chips, cycles for kernels."""
import re
import sys

PATTERNS = {
    "mesh links": (re.compile(r"^  link \d+ \(\d+ -> \d+\): (\d+) bytes"), 1),
    "chip links": (re.compile(r"^  chip link \d+ \(chip \d+ -> chip \d+\): (\d+) bytes"), 1),
    "chips": (re.compile(r"^  chip \d+ +(\d+) busy cycles"), 1),
    "kernels": (re.compile(r"^ +\d+ +\d+ +(\d+) +\d+ +\d+  "), 1),
}
rows = {name: [] for name in PATTERNS}
for line in sys.stdin:
    for name, (pattern, group) in PATTERNS.items():
        m = pattern.match(line)
        if m:
            rows[name].append(int(m.group(group)))
            break
for name, values in rows.items():
    ordered = all(a >= b for a, b in zip(values, values[1:]))
    print(f"{name}: {len(values)} rows, {'sorted' if ordered else 'unsorted'}")
