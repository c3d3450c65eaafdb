"""The map's size and speed as the corpus grows (issue 24, "Scale"; docs/map.md, "Size and
speed"): for each number of documents, the file's size, the writer's time and peak memory
(a fresh process each), the first frame in headless Chromium and when the documents
are in (lists, search and filters work from then on).

    python benchmarks/bench_map.py                    # 25,000 and 100,000 documents
    python benchmarks/bench_map.py --docs 250000      # one size
    python benchmarks/bench_map.py --docs 1000000 --bundle   # a folder (write_bundle)

Synthetic corpus, realistic in what the file carries: 5,000 words from 20 topics, about
80 tokens a document, a title of about 30 characters and a snippet of 300 (its first
words), one
categorical column of 20 levels; a 48 x 48 grid with a 5 x 5 window fitted for 3
iterations on 5,000 of the documents (the map's cost does not depend on convergence).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _countgrid_import  # noqa: E402,F401  (the installed countgrid, else src/)

WRITER = r"""
import json, sys, time, warnings
sys.path.insert(0, BENCH_DIR)
from _peak_memory import peak_rss_mb
import numpy as np, scipy.sparse as sp
import countgrid
n, path = int(sys.argv[1]), sys.argv[2]
write = countgrid.maps.write_bundle if sys.argv[3:] == ["bundle"] else countgrid.maps.write_html
rng = np.random.default_rng(0)
V, K = 5000, 20
topic = rng.integers(0, K, n)
lengths = rng.poisson(80, n) + 5
base = rng.dirichlet(np.full(V, 0.05), size=K)
rows = np.repeat(np.arange(n), lengths)
words = np.empty(rows.size, dtype=np.int64)
cdf = np.cumsum(base, axis=1)
for k in range(K):                     # each topic's tokens by inverse CDF
    sel = topic[rows] == k
    words[sel] = np.minimum(V - 1, np.searchsorted(cdf[k], rng.random(sel.sum())))
X = sp.csr_matrix((np.ones(rows.size, np.float32), (rows, words)), shape=(n, V))
X.sum_duplicates()
vocab = np.array([f"w{j}" for j in range(V)])
titles = [f"topic {topic[t]} post number {t}" for t in range(n)]
starts = np.concatenate([[0], np.cumsum(lengths)])
snippets = [" ".join(vocab[words[starts[t]:starts[t] + 60]])[:300] for t in range(n)]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    grid = countgrid.CountingGrid((48, 48), (5, 5), n_iter=3, min_iter=0, tol=0,
                                  dtype=np.float32, random_state=0).fit(X[:5000])
t0 = time.perf_counter()
write(grid, path, X, feature_names=vocab, titles=titles, snippets=snippets,
      metadata={"topic": np.array([f"topic {k}" for k in topic])})
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds,
                  "peak_rss_mb": peak_rss_mb()}))
""".replace("BENCH_DIR", repr(HERE))


def first_frame(path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    exe = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser")
                if os.path.exists(p)), None)
    if exe is None:
        return None
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True,
                              args=["--no-sandbox", "--disable-gpu"])
        page = b.new_page(viewport={"width": 1280, "height": 800})
        t0 = time.perf_counter()
        page.goto("file://" + os.path.abspath(path), timeout=120000)
        page.wait_for_function("window.countgridMap && (countgridMap.ready || "
                               "'error' in countgridMap)", timeout=300000, polling=50)
        wall = time.perf_counter() - t0
        ms = page.evaluate("[countgridMap.firstFrameMs, countgridMap.documentsMs]")
        b.close()
    return ms, wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", default="25000,100000")
    ap.add_argument("--bundle", action="store_true",
                    help="write a bundle (a folder: countgrid.maps.write_bundle)")
    args = ap.parse_args(argv)
    print("documents  file MB  MB/100k docs  write s  writer peak MB  first frame ms  "
          "documents in ms")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(v) for v in args.docs.split(",")]:
            path = os.path.join(tmp, f"map{n}" + ("" if args.bundle else ".html"))
            cmd = [sys.executable, "-c", WRITER, str(n), path] + (["bundle"] if args.bundle
                                                                 else [])
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            w = json.loads(out.strip().splitlines()[-1])
            page = os.path.join(path, "index.html") if args.bundle else path
            size = (sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path)
                        for f in fs) if args.bundle else os.path.getsize(path)) / 1e6
            ff = first_frame(page)
            print(f"{n:9d}  {size:7.1f}  {size / n * 1e5:12.1f}  {w['seconds']:7.1f}  "
                  f"{w['peak_rss_mb']:14.0f}  "
                  f"{'n/a' if ff is None else f'{ff[0][0]:14.0f}  {ff[0][1]:15.0f}'}")
            shutil.rmtree(path) if args.bundle else os.remove(path)


if __name__ == "__main__":
    main()
