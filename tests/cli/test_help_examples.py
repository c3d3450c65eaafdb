"""Every example of the command line's help (``countgrid --help`` and each verb's) and every
command of the README runs, as written, in a folder holding the files they name (issue 22:
the second example of ``plot --help`` crashed and no test ran them)."""
import csv
import json
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.cli import _main
from countgrid.datasets import load_news20_3class_texts

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PER_GROUP = 30


def _examples(text):
    """The command lines of a help text's examples (comments dropped)."""
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("countgrid "):
            lines.append(line.split("  #")[0].strip())
    return lines


def help_examples():
    """(verb, command) of every example ``countgrid --help`` and ``countgrid VERB --help``
    print, in the order of the main help."""
    parser = _main.build_parser()
    found = [("countgrid", c) for c in _examples(parser.format_help())]
    verbs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in verbs.choices.items():
        found += [(name, c) for c in _examples(sub.format_help())]
    return found


def _write_folder(root, data, idx):
    for i in idx:
        folder = root / str(data.label_names[data.y[i]])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:04d}.txt").write_text(data.texts[i], encoding="utf-8")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """posts/ (a folder per group), new_posts/, other_posts/, my_posts/, posts.csv (id,
    title, group, date, body), reviews.csv (id, title, stars, body), news.npz (counts)."""
    root = tmp_path_factory.mktemp("examples")
    data = load_news20_3class_texts()
    picks = [np.flatnonzero(data.y == g) for g in range(len(data.label_names))]
    main = np.concatenate([p[:PER_GROUP] for p in picks])
    other = np.concatenate([p[PER_GROUP:PER_GROUP + 8] for p in picks])
    _write_folder(root / "posts", data, main)
    _write_folder(root / "my_posts", data, main)
    _write_folder(root / "new_posts", data, other)
    _write_folder(root / "other_posts", data, other)
    with open(root / "posts.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "title", "group", "date", "body"])
        for k, i in enumerate(main):
            w.writerow([f"p{i}", " ".join(data.texts[i].split()[:6]),
                        data.label_names[data.y[i]], f"2024-{1 + k % 12:02d}-{1 + k % 28:02d}",
                        data.texts[i]])
    with open(root / "reviews.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "title", "stars", "body"])
        for k, i in enumerate(main):
            w.writerow([f"r{i}", " ".join(data.texts[i].split()[:4]), 1 + k % 5, data.texts[i]])
    corpus = countgrid.text.Corpus.from_texts([data.texts[i] for i in main], min_df=2)
    sp.save_npz(root / "news.npz", corpus.counts)
    return root


def _run_line(line, cwd):
    command = line.replace("countgrid ", f"{shlex.quote(sys.executable)} -m countgrid.cli ")
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("COUNTGRID_DEBUG", None)
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env, stdin=subprocess.DEVNULL)


def test_every_help_example_runs(sandbox):
    examples = help_examples()
    assert len(examples) >= 20
    # the main help's examples first, then each verb's in the order of ``countgrid --help``
    # (vectorize writes posts.npz, fit model.npz and topics.npz for the verbs after it)
    for verb, line in examples:
        if "countgrid-notes.json" in line:       # what a map's "Save notes" downloads
            extent = countgrid.load(sandbox / "model.npz").pi_.shape[:2]
            (sandbox / "countgrid-notes.json").write_text(json.dumps(
                {"countgrid_annotations": 1, "extent": list(extent),
                 "notes": [{"cell": [0, 0], "text": "a note"}]}), encoding="utf-8")
        res = _run_line(line, sandbox)
        assert res.returncode == 0 and "error:" not in res.stderr, \
            f"{verb}: {line}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    for name in ("model.npz", "topics.npz", "posts.npz", "r.npz", "map.html", "grid.png",
                 "groups.png", "where.png", "docs.svg", "topics.png", "positions.csv",
                 "new.csv", "topics.tsv", "other.html", "again.html", "diff.html", "countgrid_demo.png",
                 "countgrid_demo.html", "grid.svg"):
        assert (sandbox / name).stat().st_size > 0, name


def _readme():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_every_readme_shell_command_runs(sandbox):
    """The README's shell commands, but the installs (CI runs those: .ci/run)."""
    blocks = re.findall(r"```bash\n(.*?)```", _readme(), flags=re.S)
    lines = [ln.split("  #")[0].strip() for block in blocks for ln in block.splitlines()]
    lines = [ln for ln in lines if ln.startswith("countgrid ")]
    assert len(lines) >= 4
    for line in lines:
        res = _run_line(line, sandbox)
        assert res.returncode == 0 and "error:" not in res.stderr, \
            f"{line}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"


def test_the_readme_quick_start_runs(sandbox, monkeypatch):
    """The Python quick start, on news.npz with labels (y, X_test, y_test as it assumes)."""
    block = re.search(r"## Quick start\s*```python\n(.*?)```", _readme(), flags=re.S).group(1)
    monkeypatch.chdir(sandbox)
    X = sp.load_npz(sandbox / "news.npz")
    y = np.repeat(np.arange(3), PER_GROUP)
    namespace = {"y": y, "X_test": X[::7], "y_test": y[::7]}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # convergence and capacity of a tiny corpus
        exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["curve"].auc > 0
