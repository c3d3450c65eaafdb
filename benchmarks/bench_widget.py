"""How long the notebook widget takes to open as the corpus grows (issue 26; docs/map.md,
"The notebook widget"), in a real JupyterLab driven by headless Chromium
(tools/lab_session.py):

    python benchmarks/bench_widget.py                    # 25,000 and 100,000 documents
    python benchmarks/bench_widget.py --docs 250000      # one size

For each size, a notebook cell makes ``countgrid.widget(grid, X, titles=, snippets=,
metadata=)`` and shows it; reported: the Python side (``widget()``: the map's preview
for a large corpus, whose documents are then placed in a thread; the whole map for a
small one), the size of the two parts sent, and the wall times from running the cell to
the first frame of the map (the preview's) and to the page having read every document
(the whole map's frame, in the preview's place).  The corpus is
the synthetic one of benchmarks/bench_map.py (5,000 words, 20 topics, about 80 tokens,
a title and a 300-character snippet a document, a 20-level column; a 48 x 48 grid fitted
for 3 iterations on 5,000 documents).
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, os.pardir, "tools"))
import _countgrid_import  # noqa: E402,F401  (the installed countgrid, else src/)
from bench_map import WRITER  # noqa: E402  (the same corpus as the map's benchmark)
from lab_session import LabSession  # noqa: E402

# the corpus and grid of bench_map.py's writer, without its writing
PREPARE = WRITER.split("t0 = time.perf_counter()")[0].replace(
    "n, path = int(sys.argv[1]), sys.argv[2]\n", "").replace(
    "write = countgrid.maps.write_bundle if sys.argv[3:] == [\"bundle\"] else "
    "countgrid.maps.write_html\n", "")

SHOW = """import time
cell_start = time.time()
t0 = time.perf_counter()
w = countgrid.widget(grid, X, feature_names=vocab, titles=titles, snippets=snippets,
                     metadata={"topic": np.array([f"topic {k}" for k in topic])})
build_s = time.perf_counter() - t0
w"""

# the machine's clock when a widget's frame drew its map first (performance.now() counts
# from the frame's own time origin)
FIRST_FRAME = ("window.countgridMap && countgridMap.host && countgridMap.firstFrameMs ? "
               "performance.timeOrigin + countgridMap.firstFrameMs : null")


def first_map(lab, timeout=900):
    """The clock time (ms) of the first frame any widget frame drew."""
    page = lab.page
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for frame in page.frames:
            if frame is page.main_frame:
                continue
            try:
                at = frame.evaluate(FIRST_FRAME)
            except Exception:        # a frame navigating or detached
                continue
            if at is not None:
                return at
        page.wait_for_timeout(20)
    raise SystemExit("the widget's map did not open")


def chromium():
    from playwright.sync_api import sync_playwright
    exe = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser")
                if os.path.exists(p)), None)
    if exe is None:
        raise SystemExit("Chromium is needed (apt-get install chromium)")
    return sync_playwright, exe


def measure(browser, n):
    with tempfile.TemporaryDirectory() as tmp, \
            LabSession(pathlib.Path(tmp), browser, width=1280, height=900) as lab:
        lab.run_notebook([f"n = {n}\n" + PREPARE, SHOW])
        first_at = first_map(lab)
        frame = lab.map_frame(timeout=900)
        # both clocks are the machine's: the cell's start (time.time() in the kernel) and
        # the moment the page had read every document (its time origin + documentsMs)
        start, build, place, map_bytes, doc_bytes = json.loads(lab.kernel(
            "import json; print(json.dumps([cell_start, build_s, w._place_seconds, "
            "len(w._map_part), len(w._documents_part)]))"))
        data, docs, origin = frame.evaluate(
            "[countgridMap.dataMs, countgridMap.documentsMs, performance.timeOrigin]")
    return dict(build=build, place=place, map_mb=map_bytes / 1e6, docs_mb=doc_bytes / 1e6,
                first=first_at / 1000 - start, data=(origin + data) / 1000 - start,
                wall=(origin + docs) / 1000 - start)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", default="25000,100000")
    args = ap.parse_args(argv)
    import countgrid
    countgrid.show_config()
    sync_playwright, exe = chromium()
    print("documents  widget() s  placing s  map part MB  documents part MB  "
          "cell to first frame s  cell to data in frame s  cell to documents in s")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        for n in [int(v) for v in args.docs.split(",")]:
            m = measure(browser, n)
            print(f"{n:9d}  {m['build']:10.2f}  {m['place']:9.2f}  {m['map_mb']:11.1f}  "
                  f"{m['docs_mb']:17.1f}  "
                  f"{m['first']:21.2f}  {m['data']:23.2f}  {m['wall']:22.2f}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
