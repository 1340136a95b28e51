#!/usr/bin/python3
"""Render a Loom HTML report in headless Chromium and check what it shows.

usage: check_report.py REPORT.html OUT_DIR [--chromium PATH]

Loads the page in Debian's Chromium (headless, no network needed) and reads
back the DOM after its script has run (--dump-dom). Checks:
  - the script ran to its end (the body carries data-ready="1") and raised
    no error (no data-error attribute, which window.onerror sets);
  - the floorplan, heat map, timeline, roofline, SRAM and kernel-table
    sections exist and are not empty: the floorplan has region rectangles,
    the timeline bars, the roofline a ceiling and a point per matrix kernel,
    the SRAM chart a line, the kernel table rows, each with ONNX nodes;
  - the page references nothing outside itself (no http(s) URLs in src or
    href attributes, no external scripts or stylesheets);
  - the pictures read (issue 34): the floorplan's kernel labels are
    distinct, one per kernel drawn (no two kernels under one label); the
    floorplan scales to the page; the roofline, timeline and SRAM chart
    have their axes (ticks and labels) and no log-axis tick reads "0.0";
    the SRAM scale reaches no more than twice the highest peak drawn (or
    the capacity's line, where that is within it); the heat map shows its
    numbers; the timeline marks a critical path; the kernel table has the
    legend of its bounds.
With --sweep the page is a `loom sweep` page instead: each Pareto chart
has axis ticks and labels, every heat map a legend, and a heat map whose
points are all equal says so (--expect-equal).
Writes a screenshot to OUT_DIR/report.png (a test artifact) and checks it is
a PNG of a plausible size. Exits 0 with one summary line, or 1 naming the
first problem. Runs under Debian's /usr/bin/python3 (standard library only).
"""

import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print(f"check_report.py: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Sections(html.parser.HTMLParser):
    """Counts tags inside each element that has an id, and body attributes."""

    def __init__(self):
        super().__init__()
        self.stack = []  # (tag, id or None)
        self.counts = {}  # id -> {tag: count}
        self.classes = {}  # id -> {class: count}
        self.body = {}
        self.external = []
        self.text = {}  # id -> text length

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        for key in ("src", "href"):
            if a.get(key, "").startswith(("http:", "https:", "//")):
                self.external.append(f"<{tag} {key}={a[key]}>")
        if tag in ("script", "link") and (a.get("src") or a.get("href")):
            self.external.append(f"<{tag}> with an external resource")
        for _, ident in self.stack:
            if ident:
                self.counts.setdefault(ident, {})
                self.counts[ident][tag] = self.counts[ident].get(tag, 0) + 1
                for c in (a.get("class") or "").split():
                    self.classes.setdefault(ident, {})
                    self.classes[ident][c] = self.classes[ident].get(c, 0) + 1
        void = tag in ("meta", "br", "img", "input", "hr", "link")
        if not void:
            self.stack.append((tag, a.get("id")))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in ("meta", "br", "img", "input", "hr", "link"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        for _, ident in self.stack:
            if ident:
                self.text[ident] = self.text.get(ident, 0) + len(data.strip())


def chromium_cmd(chromium, profile, *extra):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
            f"--user-data-dir={profile}", *extra]


def texts(dom, cls):
    """The text of every element of class `cls` (first class or any)."""
    return [re.sub(r"<[^>]*>", "", t) for t in
            re.findall(r'<text[^>]*class="(?:[^"]* )?' + cls + r'(?: [^"]*)?"[^>]*>(.*?)</text>', dom)]


def section_of(dom, ident):
    m = re.search(r'id="' + ident + r'"(.*?)</section>', dom, re.S)
    return m.group(1) if m else ""


def bytes_of(label):
    m = re.match(r"([0-9.]+)([kMGT]?)B$", label)
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m.group(2)]


def check_pictures(dom):
    """The pictures' elements (issue 34, item 5)."""
    floor = section_of(dom, "floorplan")
    labels = texts(floor, "kname")
    busiest = set(re.findall(r"busiest: kernel (\d+)", floor))
    regions = set(re.findall(r"<title>kernel (\d+)\b", floor))
    if not labels:
        fail("the floorplan has no kernel labels")
    # Shared tiles (sequential) label each tile by its busiest kernel: one
    # label per kernel; regions (pipelined) one label each.
    if busiest:
        if len(set(labels)) != len(busiest):
            fail(f"the floorplan's {len(set(labels))} distinct labels are not one "
                 f"per kernel drawn ({len(busiest)}): {sorted(set(labels))[:8]}")
    elif len(set(labels)) != len(labels):
        dup = sorted({l for l in labels if labels.count(l) > 1})
        fail(f"two regions share a label: {dup[:5]}")
    if ".floorplan svg{max-width:100%;height:auto}" not in dom:
        fail("the floorplan does not scale to the page")
    for ident in ("roofline", "timeline"):
        sec = section_of(dom, ident)
        if not texts(sec, "xtick") or not texts(sec, "xlabel"):
            fail(f"the {ident} has no x axis (ticks and label)")
    roof = section_of(dom, "roofline")
    if not texts(roof, "ytick") or not texts(roof, "ylabel"):
        fail("the roofline has no y axis")
    zero = [t for t in texts(roof, "xtick") + texts(roof, "ytick") if t.strip() in ("0.0", "0")]
    if zero:
        fail(f"a log axis of the roofline has a tick {zero[0]!r}")
    sram = section_of(dom, "sram")
    ticks = [bytes_of(t) for t in texts(sram, "ytick") if t != "0"]
    peaks = [float(v) for v in re.findall(r"peak (\d+) bytes", sram)]
    if not ticks or not peaks or None in ticks:
        fail("the SRAM chart has no scale")
    has_capacity_line = 'class="capacity" x1=' in sram
    if not has_capacity_line and max(ticks) > 2 * max(peaks):
        fail(f"the SRAM scale reaches {max(ticks):g} bytes for a peak of {max(peaks):g}")
    if not texts(section_of(dom, "heatmap"), "share"):
        fail("the tile heat map shows no numbers")
    if 'class="critical"' not in section_of(dom, "timeline"):
        fail("the timeline marks no critical path")
    kern = section_of(dom, "kernels")
    if "legend bounds" not in kern or "fill_drain</b>" not in kern:
        fail("the kernel table has no legend of its bounds")


def check_sweep(dom, expect_equal, page):
    """A sweep page's pictures: axes, legends, an all-equal map said so."""
    charts = re.findall(r'<svg[^>]*class="pareto".*?</svg>', dom, re.S)
    maps = re.findall(r'<svg[^>]*class="heatmap".*?</svg>', dom, re.S)
    if not charts or not maps:
        fail("the sweep page has no Pareto chart or no heat map")
    for c in charts:
        if len(re.findall(r'text-anchor="middle">[^<]+</text>', c)) < 3:
            fail("a Pareto chart has no x axis ticks and label")
        if "throughput (inputs/s" not in c:
            fail("a Pareto chart has no y axis label")
        if re.search(r'>0\.0</text>', c):
            fail("a Pareto chart's axis has a 0.0 tick")
    equal = "all-equal" in dom
    if expect_equal and not equal:
        fail("the heat map's points are all equal and the page does not say so")
    if not expect_equal and equal:
        fail("the page says every point is equal")
    print(f"check_report.py: {page}: ok: {len(charts)} Pareto charts, "
          f"{len(maps)} heat maps{', all-equal said' if equal else ''}")


def main():
    args = sys.argv[1:]
    chromium = None
    if "--chromium" in args:
        i = args.index("--chromium")
        chromium = args[i + 1]
        del args[i:i + 2]
    sweep = "--sweep" in args
    expect_equal = "--expect-equal" in args
    args = [a for a in args if a not in ("--sweep", "--expect-equal")]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    report, out_dir = args
    chromium = chromium or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        fail(f"Chromium not found ({chromium}); scripts/setup.sh installs Debian's chromium")
    if not os.path.exists(report):
        fail(f"{report}: no such file")
    os.makedirs(out_dir, exist_ok=True)
    url = "file://" + os.path.abspath(report)
    with tempfile.TemporaryDirectory() as profile:
        p = subprocess.run(chromium_cmd(chromium, profile, "--virtual-time-budget=5000",
                                        "--dump-dom", url),
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0 or "<body" not in p.stdout:
            fail(f"chromium --dump-dom exited {p.returncode}: {p.stderr.strip()[-400:]}")
        dom = p.stdout
        shot = os.path.join(out_dir, "report.png")
        if os.path.exists(shot):
            os.unlink(shot)
        p = subprocess.run(chromium_cmd(chromium, profile, f"--screenshot={shot}",
                                        "--window-size=1400,3200", "--hide-scrollbars", url),
                           capture_output=True, text=True, timeout=120)
    parser = Sections()
    parser.feed(dom)
    if parser.body.get("data-error"):
        fail(f"the page raised a script error: {parser.body['data-error']}")
    if not sweep and parser.body.get("data-ready") != "1":
        fail("the page's script did not run to its end (no data-ready on the body)")
    with open(report) as f:
        source = f.read()
    ext = Sections()
    ext.feed(source)
    if ext.external:
        fail(f"the page references external resources: {ext.external[:3]}")
    if sweep:
        check_sweep(dom, expect_equal, report)
        return
    check_pictures(dom)

    def count(section, tag=None, cls=None):
        if cls:
            return parser.classes.get(section, {}).get(cls, 0)
        return parser.counts.get(section, {}).get(tag, 0)

    problems = []
    need = [
        ("floorplan", "rect", None, "region rectangles"),
        ("heatmap", "rect", None, "tile cells"),
        ("timeline", "rect", None, "instruction bars"),
        ("roofline", None, "ceiling", "compute/bandwidth ceilings"),
        ("roofline", None, "kernel", "kernel points"),
        ("sram", None, "sram-line", "occupancy lines"),
        ("kernels", "tr", None, "table rows"),
        ("passes", "table", None, "a pass table"),
    ]
    found = {}
    for section, tag, cls, what in need:
        n = count(section, tag, cls)
        found[f"{section}.{cls or tag}"] = n
        if section not in parser.counts:
            problems.append(f"no element with id '{section}'")
        elif n == 0:
            problems.append(f"section '{section}' has no {what}")
    if problems:
        fail("; ".join(dict.fromkeys(problems)))
    # Kernel rows name ONNX nodes: the third cell of each body row.
    rows = re.findall(r"<tr><td>\d+</td><td>.*?</td><td>(.*?)</td>", dom)
    if not rows or not all(r.strip() for r in rows):
        fail("the kernel table has rows without ONNX nodes")
    if not os.path.exists(shot):
        fail(f"chromium wrote no screenshot ({p.stderr.strip()[-300:]})")
    with open(shot, "rb") as f:
        head = f.read(8)
    size = os.path.getsize(shot)
    if head != b"\x89PNG\r\n\x1a\n" or size < 20000:
        fail(f"{shot} is not a plausible screenshot ({size} bytes)")
    summary = ", ".join(f"{k} {v}" for k, v in found.items())
    print(f"check_report.py: {report}: ok: {summary}; {len(rows)} kernel rows; "
          f"screenshot {shot} ({size} bytes)")


if __name__ == "__main__":
    main()
