"""Every benchmark, with the machine it ran on, in one command.

    python benchmarks/run_all.py                      # the installed countgrid
    python benchmarks/run_all.py --quick              # smaller problems, ~2 min
    python benchmarks/run_all.py --python OLD NEW     # before/after: each benchmark run by
                                                      # every interpreter, back to back

Prints the CPU model and ``countgrid.show_config()`` of every interpreter, then the output
of bench_counting_grid.py, bench_itkernels.py, bench_plsa.py and bench_rap.py (each
reports countgrid and its peer measured in the same run, and their ratio).  Run it on an
otherwise idle machine: timings of two jobs sharing the cores mean nothing.
"""
import argparse
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

BENCHMARKS = {
    "bench_counting_grid.py": ([], ["--quick"]),
    "bench_itkernels.py": ([], ["--n", "1000"]),
    "bench_plsa.py": ([], ["--docs", "2000", "--words", "2000", "--iters", "10"]),
    "bench_rap.py": ([], ["--n-docs", "3000", "--repeat", "1"]),
}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(python):
    code = ("import countgrid, io, sys; buf = io.StringIO(); countgrid.show_config(file=buf); "
            "sys.stdout.write(buf.getvalue())")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd="/")
    return out.stdout if out.returncode == 0 else out.stderr


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", nargs="+", default=[sys.executable],
                    help="interpreters to compare (each with its own countgrid installed)")
    ap.add_argument("--quick", action="store_true", help="smaller problems")
    ap.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), help="a subset")
    args = ap.parse_args(argv)
    print(f"# CPU: {cpu_model()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}")
    for python in args.python:
        print(f"\n# {python}\n{describe(python)}", flush=True)
    for name in args.only or BENCHMARKS:
        full, quick = BENCHMARKS[name]
        for python in args.python:
            print(f"\n===== {name} with {python}", flush=True)
            # run from the benchmarks directory's parent but import the interpreter's own
            # countgrid (the scripts fall back to ../src only when none is installed)
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)
            subprocess.run([python, os.path.join(HERE, name)] + (quick if args.quick else full),
                           env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
