"""Python, the command line and the demo fit the same model for the same input and seed
(issue 22, "Done when"): not only the same parameters (tests/test_defaults_table.py) but
the same vocabulary and bit-identical fitted arrays, whatever the thread count."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.exceptions import ConvergenceWarning

from cli.test_verbs import run, write_news_csv


@pytest.fixture(scope="module")
def posts(tmp_path_factory):
    return write_news_csv(tmp_path_factory.mktemp("same_model"), 40)


def test_command_line_fit_is_the_python_fit(posts):
    res = run(["fit", "docs.csv", "--text-col", "body", "-o", "m.npz", "--n-iter", "12",
               "--seed", "7", "--threads", "2", "-q"], posts)
    assert res.returncode == 0, res.stderr
    cli_model, cli_corpus = countgrid.load(posts / "m.npz", return_corpus=True)

    corpus = countgrid.text.read_corpus(str(posts / "docs.csv"), text_col="body")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)     # 12 iterations on purpose
        model = countgrid.CountingGrid(n_iter=12, random_state=7, num_threads=1)
        model.fit(corpus.counts)
    assert list(cli_corpus.vocabulary) == list(corpus.vocabulary)
    assert cli_model.get_params()["extent"] == "auto" and model.pi_.shape[:-1] == \
        cli_model.pi_.shape[:-1]
    assert cli_model.pi_.dtype == model.pi_.dtype == np.float32
    np.testing.assert_array_equal(cli_model.pi_, model.pi_)
    np.testing.assert_array_equal(cli_model.transform(corpus.counts), model.transform(corpus.counts))
