"""The map's stated budgets (docs/map.md, "Size and speed"), on the synthetic corpus of
benchmarks/bench_map.py at 20,000 documents: at most 25 MB per 100,000 documents, a
writer that peaks under 600 MB, and a first frame under 3 s in headless Chromium."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks")
sys.path.insert(0, BENCH)
from bench_map import WRITER  # noqa: E402

N = 20_000


def test_size_writer_memory_and_first_frame(open_map, tmp_path):
    path = tmp_path / "budget.html"
    out = subprocess.run([sys.executable, "-c", WRITER, str(N), str(path)], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    writer = json.loads(out.strip().splitlines()[-1])
    size = path.stat().st_size
    print(f"\n{N} documents: {size / 1e6:.1f} MB, writer {writer['seconds']:.1f} s, "
          f"peak {writer['peak_rss_mb']:.0f} MB")
    assert size / N * 100_000 <= 25e6
    assert writer["peak_rss_mb"] < 600
    pg = open_map(path, width=1280, height=800)
    assert pg("countgridMap.firstFrameMs") < 3000
    assert len(pg("countgridMap.selectCells(0, 0, 47, 47)")) == N and pg.errors == []
