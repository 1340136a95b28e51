"""Checks the steps long passes report (LOOM_PROGRESS_LOG lines
"LABEL: step DONE/TOTAL WHAT"): each run of one pass's steps (one WHAT and
TOTAL, from 0) rises monotonically in steps of at most 5% of the work (at
least a unit) and ends at 100%; and every WHAT named on the command line
has such a run. A search's units end "(at most)" (PassSteps::upTo): its
total is a bound, and its last step, when the search stops early, may
cover the rounds it did not need. Prints one line per WHAT: its runs, the
largest step, and for a search the share of its bound the runs used."""
import re
import sys

log, wanted = sys.argv[1], sys.argv[2:]
runs = []  # [what, total, [done...]]
for line in open(log):
    m = re.search(r": step (\d+)/(\d+) (.+)$", line.rstrip("\n"))
    if not m:
        continue
    done, total, what = int(m.group(1)), int(m.group(2)), m.group(3)
    if done == 0 or not runs or runs[-1][0] != what or runs[-1][1] != total:
        runs.append([what, total, []])
    runs[-1][2].append(done)


def bounded(what):
    return what.endswith(" (at most)")


def steps(what, seq):
    """The steps held to 5%: all, or a search's before its end."""
    pairs = list(zip(seq, seq[1:]))
    return pairs[:-1] if bounded(what) else pairs


for what, total, seq in runs:
    if seq[0] != 0:
        sys.exit("check_steps: %s: starts at %d/%d, not 0" % (what, seq[0], total))
    if seq[-1] != total:
        sys.exit("check_steps: %s: ends at %d/%d, not 100%%" % (what, seq[-1], total))
    for a, b in zip(seq, seq[1:]):
        if b <= a:
            sys.exit("check_steps: %s: %d after %d is not monotone" % (what, b, a))
    for a, b in steps(what, seq):
        if b - a > max(1, 0.05 * total):
            sys.exit("check_steps: %s: a step of %d of %d is over 5%%" % (what, b - a, total))
for what in wanted:
    mine = [r for r in runs if r[0] == what]
    if not mine:
        sys.exit("check_steps: no steps of '%s'" % what)
    held = [(b - a) / r[1] for r in mine for a, b in steps(what, r[2])]
    if not held:
        sys.exit("check_steps: %s: no step before the end" % what)
    text = "%s: %d runs, largest step %.1f%%" % (what, len(mine), 100 * max(held))
    if bounded(what):
        used = sum(r[2][-2] if len(r[2]) > 1 else 0 for r in mine)
        text += ", %d of %d bounded units used" % (used, sum(r[1] for r in mine))
    print(text)
