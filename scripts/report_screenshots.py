#!/usr/bin/python3
"""Regenerates the screenshots of the zoo's reports and a sweep page in
docs/images, as headless Chromium draws them.

usage: scripts/report_screenshots.py [--build build] [--out docs/images]
                                     [--chromium /usr/bin/chromium]

Compiles ResNet-50 on tsp-v1 (fp16, sequential: one kernel at a time on
shared tiles), the BERT model on wormhole (bf16, 72 tiles) and tiny_cnn on
tiny (pipelined: a region per kernel) with --report, runs a small sweep of
tiny_cnn (chip clock x chip-link bandwidth, which one chip does not use),
checks each page with test/e2e/check_report.py (the pictures' elements:
distinct labels, axes, legends) and writes OUT/report-MODEL-TARGET.png and
OUT/sweep-tiny_cnn.png (1200 x 1800 pixels, the top of each page). The zoo
must be exported (the build's tests do it: BUILD/zoo). Deterministic
inputs; the PNGs are Chromium's rendering of them.
"""

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORTS = [
    ("resnet50", "tsp-v1", ["--precision=fp16"]),
    ("bert", "wormhole", ["--precision=bf16"]),
    ("tiny_cnn", "tiny", ["--mapping=pipelined"]),
]


def run(cmd):
    # In the root, the models named relative to it (the pages show them).
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, LOOM_NO_PROGRESS="1"))
    if p.returncode != 0:
        sys.exit("report_screenshots: %s: %s" % (" ".join(cmd), (p.stderr or p.stdout).strip()[-500:]))
    return p.stdout


def shoot(chromium, page, png):
    with tempfile.TemporaryDirectory() as profile:
        run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + profile,
             "--window-size=1200,1800", "--screenshot=" + png, "file://" + os.path.abspath(page)])
    print("report_screenshots: wrote %s" % os.path.relpath(png, ROOT))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "images"))
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    a = ap.parse_args()
    loom = os.path.join(a.build, "bin", "loom")
    zoo = os.path.relpath(os.path.join(a.build, "zoo"), ROOT)
    check = os.path.join(ROOT, "test", "e2e", "check_report.py")
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        for model, target, flags in REPORTS:
            page = os.path.join(work, "%s-%s.html" % (model, target))
            run([loom, "compile", os.path.join(zoo, model + ".onnx"), "--target=" + target]
                + flags + ["-o", os.path.join(work, model + ".loom"), "--report=" + page])
            run(["/usr/bin/python3", check, page, os.path.join(work, "check")])
            shoot(a.chromium, page, os.path.join(a.out, "report-%s-%s.png" % (model, target)))
        out = os.path.join(work, "sweep")
        run([loom, "sweep", "--model=" + os.path.join(zoo, "tiny_cnn.onnx"), "--target=tiny",
             "--vary=chip.clock_hz=500000000,1000000000",
             "--vary=system.links.bytes_per_second=5000000000,10000000000",
             "--no-sensitivity", "--jobs=2", "--out=" + out])
        page = os.path.join(out, "sweep.html")
        run(["/usr/bin/python3", check, "--sweep", page, os.path.join(work, "check")])
        shoot(a.chromium, page, os.path.join(a.out, "sweep-tiny_cnn.png"))


if __name__ == "__main__":
    main()
