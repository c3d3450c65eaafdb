"""``countgrid info``: the build and runtime configuration."""
import argparse

from countgrid._config import show_config

NAME = "info"
HELP = "print the build and runtime configuration"
DESCRIPTION = ("Print the version, compiler, OpenMP, SIMD level, BLAS and thread settings "
               "(countgrid.show_config()).")
EXAMPLE = "example:\n  countgrid info\n"


def add_arguments(p):
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the Python traceback of a failure")


def run(args, out):
    show_config(file=out)
    return 0
