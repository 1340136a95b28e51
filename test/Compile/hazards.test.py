"""Moves one instr of a scheduled module earlier, for hazards.test.

Usage: hazards.test.py SCHED_TEXT OUT_TEXT

Finds the first kernel instr that reads a buffer written by an instr of
another kernel or a transfer, and moves its start to one cycle after that
writer's start, before what it writes arrives. Prints "INSTR KERNEL": the
moved instr and its kernel."""
import re
import sys

text = open(sys.argv[1]).read()
instr_re = re.compile(r'sched\.instr (\d+) "(\w+)"\[(\d+)\] start (\d+) '
                      r'duration (\d+) kernel (-?\d+) .*reads \[([0-9, ]*)\] '
                      r'writes \[([0-9, ]*)\]')
ids = lambda s: [int(x) for x in s.split(",") if x.strip()]
instrs = [(int(m.group(1)), m.group(2), int(m.group(4)), int(m.group(5)),
           int(m.group(6)), ids(m.group(7)), ids(m.group(8)), m)
          for m in instr_re.finditer(text)]
writer = {}
for i, unit, start, dur, kernel, reads, writes, m in instrs:
    if unit in ("matrix", "vector", "dma"):
        for w in writes:
            writer.setdefault(w, (i, start, dur, kernel))
for i, unit, start, dur, kernel, reads, writes, m in instrs:
    for r in reads:
        if r in writer and writer[r][3] != kernel and kernel >= 0:
            w, wstart, wdur, _ = writer[r]
            new = wstart + 1
            line = m.group(0)
            moved = line.replace(" start %d " % start, " start %d " % new, 1)
            open(sys.argv[2], "w").write(text.replace(line, moved, 1))
            print(i, kernel)
            sys.exit(0)
sys.exit("no instr reads another kernel's or a transfer's output")
