"""``.. countgrid-cli::``: the command-line reference, generated from the parser.

The page shows what ``countgrid --help`` and ``countgrid VERB --help`` print, taken from
``countgrid.cli.build_parser()`` at build time, so it cannot drift from the program.  The
width is fixed (COLUMNS=88) so the build does not depend on the terminal.
"""
import argparse
import os

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _help(parser):
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        return parser.format_help()
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def cli_sections():
    """``(title, one-line summary, help text)`` of the program and of every verb."""
    from countgrid.cli import build_parser

    parser = build_parser()
    yield "countgrid", "The program: its options and its commands.", _help(parser)
    sub = _subparsers(parser)
    summaries = {a.dest: (a.help or "") for a in sub._choices_actions}
    for name, verb in sub.choices.items():
        yield f"countgrid {name}", summaries.get(name, ""), _help(verb)


class CountgridCli(SphinxDirective):
    has_content = False

    def run(self):
        lines = []
        for title, summary, text in cli_sections():
            lines += [f"``{title}``", "-" * (len(title) + 4), ""]
            if summary:
                lines += [summary.strip(), ""]
            lines += [".. code-block:: text", ""]
            lines += ["    " + line if line.strip() else "" for line in text.splitlines()]
            lines.append("")
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source="countgrid.cli"), node)
        return node.children


def setup(app):
    app.add_directive("countgrid-cli", CountgridCli)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
