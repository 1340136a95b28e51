"""Prints, for each chip of a spatial module, its first and last kernel's
layer part (the name up to the op: model.layers.N.self_attn, ...).

usage: partition-half-layers.test.py MODULE.mlir
"""
import collections
import re
import sys

first, last = {}, {}
for line in open(sys.argv[1]):
    m = re.search(r'spatial\.kernel .*?kernel_name = "([^"]*)"', line)
    if not m:
        continue
    chip = re.search(r"\bchip = (\d+) : i64", line)
    c = int(chip.group(1)) if chip else 0
    part = ".".join(m.group(1).split(".")[:4])
    first.setdefault(c, part)
    last[c] = part
for c in sorted(first):
    print("chip %d: %s .. %s" % (c, first[c], last[c]))
