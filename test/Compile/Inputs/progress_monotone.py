#!/usr/bin/python3
"""Reads a LOOM_PROGRESS_LOG file on stdin and prints, per bar (label), how
its progress went: "LABEL: monotone, ends at D/T" when its units never go
back and each unit's reported steps never go back, else what went back."""
import re
import sys

UPDATE = re.compile(r"^(.*): (\d+)/(\d+)(?: (.*))?$")
STEP = re.compile(r"^(.*): step (\d+)/(\d+) (.*)$")
bars = {}  # label -> [last done, total, last step, problems]
for line in sys.stdin.read().splitlines():
    m = STEP.match(line)
    if m:
        bar = bars.setdefault(m.group(1), [0, 0, (None, -1), []])
        key = (m.group(4), int(m.group(3)))
        if bar[2][0] == key and int(m.group(2)) < bar[2][1]:
            bar[3].append(f"step {m.group(2)} after {bar[2][1]}")
        bar[2] = (key, int(m.group(2)))
        continue
    m = UPDATE.match(line)
    if not m:
        print("unparsed:", line)
        continue
    bar = bars.setdefault(m.group(1), [0, 0, (None, -1), []])
    done, total = int(m.group(2)), int(m.group(3))
    if done < bar[0]:
        bar[3].append(f"{done}/{total} after {bar[0]}")
    bar[0], bar[1], bar[2] = done, total, (None, -1)
for label, (done, total, _, problems) in bars.items():
    state = "; ".join(problems) if problems else "monotone"
    print(f"{label}: {state}, ends at {done}/{total}")
