"""The 0.1.0 module paths: they keep working, warn (FutureWarning, naming the removal
release and where the names went) and hand out the very objects of the families; nothing
of ours imports them (docs/api.rst, "0.1.0 module paths")."""
import importlib
import os
import re
import subprocess
import sys

import pytest

from countgrid._utils.deprecation import REMOVED_IN

MOVED = {
    "countgrid.counting_grid": "countgrid.grid",
    "countgrid.classifiers": "countgrid.grid",
    "countgrid.label_embedding": "countgrid.grid",
    "countgrid.plsa": "countgrid.topics",
    "countgrid.itk_classifier": "countgrid.kernels",
    "countgrid.zip_gtm": "countgrid.gtm",
    "countgrid.histogram_gmm": "countgrid.mixture",
}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_warns_and_reexports(old):
    sys.modules.pop(old, None)
    with pytest.warns(FutureWarning) as record:
        exec(compile(f"import {old}", __file__, "exec"), {})
    module = sys.modules[old]
    message = str(record[0].message)
    assert old in message and MOVED[old] in message and REMOVED_IN in message
    # the warning points at the user's import statement, not at countgrid's code
    assert record[0].filename == __file__
    new = importlib.import_module(MOVED[old])
    assert module.__all__
    for name in module.__all__:
        assert name in new.__all__, f"{name} of {old} is not public in {MOVED[old]}"
        assert getattr(module, name) is getattr(new, name)


def test_package_import_warns_nothing():
    """`import countgrid` and every public subpackage import no deprecated path."""
    code = ("import countgrid, countgrid.grid, countgrid.topics, countgrid.kernels, "
            "countgrid.rap, countgrid.gtm, countgrid.mixture, countgrid.streaming, "
            "countgrid.text, countgrid.maps, countgrid.metrics, countgrid.retrieval, "
            "countgrid.embeddings, countgrid.datasets, countgrid.io, countgrid.cli")
    subprocess.run([sys.executable, "-W", "error::FutureWarning", "-c", code], check=True)


def test_our_code_does_not_use_old_paths():
    pattern = re.compile(r"\bcountgrid\.(" + "|".join(m.split(".")[1] for m in MOVED)
                         + r")\b(?!\.py)")
    offenders = []
    for top in ("src", "benchmarks", "experiments", "tools", "tests"):
        for root, _, files in os.walk(os.path.join(REPO, top)):
            for name in files:
                if not name.endswith((".py", ".pyx")):
                    continue
                path = os.path.join(root, name)
                if path == os.path.abspath(__file__):
                    continue
                with open(path, encoding="utf-8") as f:
                    for i, line in enumerate(f, 1):
                        if ("import" in line and pattern.search(line)
                                and not line.lstrip().startswith("#")):
                            offenders.append(f"{os.path.relpath(path, REPO)}:{i}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
