"""Instructions executed in the C kernels for a fixed workload, counted by callgrind.

    python benchmarks/instruction_counts.py                        # the installed countgrid
    python benchmarks/instruction_counts.py --python OLD NEW       # before/after

Wall-clock timings on a shared 2-core virtual machine vary by 10-20 % from run to run;
instruction counts do not (valgrind counts the same total for the same binary and input,
whatever else the machine does).  For a change that should not affect speed, equal counts
in every kernel are a sharper proof than equal timings.  The workload (one thread, small
problems) runs counting-grid EM, pLSA EM, a RAP epoch, a Jensen-Tsallis Gram matrix and
ZIP-GTM EM; only the code inside the kernels (functions named cg_* and what they call) is
counted.  Needs valgrind (Debian: apt-get install valgrind); about a minute per
interpreter.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

WORKLOAD = """
import warnings; warnings.simplefilter("ignore")
import numpy as np, scipy.sparse as sp, countgrid
rng = np.random.default_rng(0)
X = sp.random(300, 500, density=0.05, random_state=1, format="csr",
              data_rvs=lambda n: rng.integers(1, 5, n)).astype(np.float64)
X = X[np.asarray(X.sum(1)).ravel() > 0]
countgrid.CountingGrid((16, 16), (3, 3), n_iter=3, tol=0, num_threads=1, random_state=0).fit(X)
countgrid.PLSA(10, n_iter=5, tol=0, num_threads=1, random_state=0).fit(X)
countgrid.RAP(20, n_epochs=1, num_threads=1, random_state=0).fit(X)
from countgrid.kernels import jensen_tsallis_kernel
jensen_tsallis_kernel(X[:100].toarray(), q=1.5, num_threads=1)
countgrid.ZIPGTM((4, 4), n_basis=4, n_iter=2, tol=0, num_threads=1, random_state=0).fit(X)
"""


def count(python, workdir):
    script = os.path.join(workdir, "workload.py")
    with open(script, "w") as fh:
        fh.write(WORKLOAD)
    out = os.path.join(workdir, f"callgrind.{abs(hash(python))}.out")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                          "--toggle-collect=cg_*", "--toggle-collect=gtm_*", python, script],
                         capture_output=True, text=True, env=env, cwd=workdir)
    total = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or total is None:
        raise RuntimeError(run.stderr[-2000:])
    annotate = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                              capture_output=True, text=True).stdout
    kernels = {}
    for line in annotate.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\S*:(cg_\w+|gtm_\w+) \[", line)
        # the kernels' entry points (their inlined helpers differ between builds)
        if m and "._omp_fn" not in line and not re.search(r"_(row|box|itk_pair|itk_g)_",
                                                          m.group(2)):
            kernels[m.group(2)] = int(m.group(1).replace(",", ""))
    return int(total.group(1)), kernels


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", nargs="+", default=[sys.executable])
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = {py: count(py, tmp) for py in args.python}
    for py, (total, kernels) in results.items():
        print(f"\n{py}: {total:,} instructions in the kernels")
        for name, n in sorted(kernels.items(), key=lambda kv: -kv[1]):
            print(f"  {n:>14,}  {name}")
    if len(results) == 2:
        (a, _), (b, _) = results.values()
        print(f"\nchange: {b - a:+,} instructions ({(b - a) / a:+.4%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
