"""The front door, timed as a user runs it: ``countgrid fit`` + ``countgrid html`` on a
folder of 5,000 raw text files (issue 11: under 3 minutes on 2 cores).

The files are 20 Newsgroups posts (news20_same and news20_different texts from the
repository's ``data/``, six groups), one per file, in a temporary folder.  The two commands run
in subprocesses through the installed ``countgrid`` entry point with their defaults (a
32x32 grid, window 5x5, a coarse stage of 10 iterations, up to 100 EM iterations), and
their wall-clock times, the model and map sizes and the peak memory are printed.

    python benchmarks/bench_front_door.py [--n-docs 5000] [--keep DIR]
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def write_posts(folder, n_docs):
    """n_docs posts as <group>/<index>.txt files; returns the number written per group."""
    written = {}
    for name in ("news20_same.npz", "news20_different.npz"):
        z = np.load(data_path(name), allow_pickle=False)
        blob, off = z["texts_utf8"], z["texts_offsets"]
        labels = z["label_names"][z["y"]]
        for i in range(len(off) - 1):
            if sum(written.values()) >= n_docs:
                return written
            group = str(labels[i])
            os.makedirs(os.path.join(folder, group), exist_ok=True)
            with open(os.path.join(folder, group, f"{name[7:-4]}-{i:05d}.txt"), "wb") as f:
                f.write(blob[off[i]:off[i + 1]].tobytes())
            written[group] = written.get(group, 0) + 1
    return written


def timed(argv):
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "countgrid.cli", *argv], capture_output=True,
                         text=True)
    elapsed = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{res.stderr}")
    return elapsed, res.stdout


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-docs", type=int, default=5000)
    p.add_argument("--keep", default=None, help="keep the posts, model and map in this folder")
    args = p.parse_args(argv)
    import io

    from _countgrid_import import countgrid
    from run_all import cpu_model

    buf = io.StringIO()
    countgrid.show_config(file=buf)
    print(f"# CPU: {cpu_model()}, {os.cpu_count()} CPUs")
    print(buf.getvalue().rstrip())
    work = args.keep or tempfile.mkdtemp(prefix="countgrid-front-door-")
    try:
        posts = os.path.join(work, "posts")
        written = write_posts(posts, args.n_docs)
        print(f"{sum(written.values())} text files in {len(written)} folders "
              f"({', '.join(f'{k}: {v}' for k, v in sorted(written.items()))})")
        model, page = os.path.join(work, "model.npz"), os.path.join(work, "map.html")
        t_fit, out = timed(["fit", posts, "-o", model, "-q"])
        print(f"countgrid fit:  {t_fit:6.1f} s  ({out.strip()})")
        t_html, out = timed(["html", model, "-o", page, "--color-by", "folder"])
        print(f"countgrid html: {t_html:6.1f} s  ({out.strip()})")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"total {t_fit + t_html:.1f} s (target: under 180 s); peak memory of a "
              f"command {peak:.0f} MB; model {os.path.getsize(model) / 1e6:.1f} MB, map "
              f"{os.path.getsize(page) / 1e6:.1f} MB")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
