#!/usr/bin/env python3
"""Feeds the hostile-input corpus (cases.py) to `loom` and checks each answer.

Usage: run_hostile.py LOOM WORK_DIR TOOL [TOOL ...] [--memory-limit-mb N]

For every case of the given tools (compile, target, run, input) it runs
`loom` and requires:
  - exit code exactly 1 (not 0, not a signal, not a sanitizer's exit code);
  - stderr is one non-empty line, starting "loom: ", that contains the
    case's `names` text (the file, ONNX node, graph input or JSON field);
  - no sanitizer report on stdout or stderr;
  - the case finishes within 10 s (it is killed then, and fails).
With --memory-limit-mb (default 8192; 0 for none, as under ASan, which needs
a large address space) each case runs under that address-space limit, so an
input that makes `loom` allocate far more than it should fails instead of
exhausting the machine.

Cases listed in EXPECTED_FAILURES are bugs known in code this test does not
own: they still run, are reported as XFAIL, and fail the test once they pass
(XPASS), so the list cannot go stale. Exits 1 if any case fails.
"""
import os
import resource
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as hostile_cases  # noqa: E402

TIMEOUT_S = 10

# Known failures, by case id ("tool/name"), each with the reason. Every entry
# names a bug outside test/hostile; remove it when the bug is fixed.
EXPECTED_FAILURES = {
}

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                   "runtime error:", "UndefinedBehaviorSanitizer",
                   "ERROR: ThreadSanitizer", "ERROR: MemorySanitizer")


def check(case, loom, limit_mb):
    """Runs one case; returns (ok, detail)."""
    def limit():
        if limit_mb:
            n = limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (n, n))
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    start = time.monotonic()
    try:
        p = subprocess.run([loom] + case.args, capture_output=True,
                           timeout=TIMEOUT_S, preexec_fn=limit, env=env)
    except subprocess.TimeoutExpired:
        return False, f"did not finish within {TIMEOUT_S} s"
    took = time.monotonic() - start
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    problems = []
    if any(m in out or m in err for m in SANITIZER_MARKS):
        problems.append("sanitizer report")
    if p.returncode != 1:
        problems.append(f"exit code {p.returncode}, expected 1")
    lines = [l for l in err.splitlines() if l.strip()]
    if len(lines) != 1:
        problems.append(f"stderr has {len(lines)} non-empty lines, expected 1")
    elif not lines[0].startswith("loom: "):
        problems.append("the error line does not start with 'loom: '")
    elif "bad_alloc" in lines[0]:
        problems.append("ran out of memory instead of refusing the input")
    elif case.names not in lines[0]:
        problems.append(f"the error line does not name '{case.names}'")
    shown = err.strip().replace("\n", " | ")
    if len(shown) > 400:
        shown = shown[:400] + "..."
    detail = f"{took:.1f} s: {shown}"
    if problems:
        detail = "; ".join(problems) + f" ({detail})"
    return not problems, detail


def main():
    args = sys.argv[1:]
    limit_mb = 8192
    if "--memory-limit-mb" in args:
        i = args.index("--memory-limit-mb")
        limit_mb = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 3 or any(t not in hostile_cases.TOOLS for t in args[2:]):
        sys.exit(__doc__)
    loom, work, tools = os.path.abspath(args[0]), args[1], args[2:]
    all_cases = hostile_cases.make(loom, work, tools)
    failed, xfail, xpass = [], [], []
    for case in all_cases:
        ok, detail = check(case, loom, limit_mb)
        expected = EXPECTED_FAILURES.get(case.id)
        if expected and ok:
            status = "XPASS"
            xpass.append(case.id)
        elif expected:
            status = "XFAIL"
            xfail.append(case.id)
            detail += f" [known: {expected}]"
        elif ok:
            status = "PASS"
        else:
            status = "FAIL"
            failed.append(case.id)
        print(f"{status:5} {case.id}: {detail}", flush=True)
        if status in ("FAIL", "XPASS"):
            print("      command: loom " + " ".join(case.args), flush=True)
    for t in tools:
        n = sum(1 for c in all_cases if c.tool == t)
        print(f"{t}: {n} cases")
    print(f"{len(all_cases)} cases: {len(all_cases) - len(failed) - len(xfail) - len(xpass)} "
          f"passed, {len(failed)} failed, {len(xfail)} known failures, "
          f"{len(xpass)} unexpectedly passed")
    for t in tools:
        if sum(1 for c in all_cases if c.tool == t) < 20:
            print(f"fewer than 20 cases for {t}")
            return 1
    if xpass:
        print("remove from EXPECTED_FAILURES: " + ", ".join(xpass))
    return 1 if failed or xpass else 0


if __name__ == "__main__":
    sys.exit(main())
