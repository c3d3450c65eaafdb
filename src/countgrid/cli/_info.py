"""``countgrid info``: the build and runtime configuration."""
import argparse

from countgrid._config import show_config


def add_parser(sub):
    p = sub.add_parser("info", help="print the build and runtime configuration",
                       description="Print the version, compiler, OpenMP, SIMD level, BLAS "
                                   "and thread settings (countgrid.show_config()).",
                       epilog="example:\n  countgrid info\n")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the Python traceback of a failure")
    p.set_defaults(func=run)
    return p


def run(args, out):
    show_config(file=out)
    return 0
