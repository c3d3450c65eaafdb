"""``read_corpus(..., max_docs=)`` samples before the vocabulary is built (issue 22, item
7): the vocabulary describes the sample, so a model of 10,000 documents sampled from
61,000 is the size of 10,000 documents."""
import csv

import numpy as np
import pytest

from countgrid.datasets import load_news20_3class_texts
from countgrid.text import read_corpus


@pytest.fixture(scope="module")
def posts(tmp_path_factory):
    root = tmp_path_factory.mktemp("posts")
    data = load_news20_3class_texts()
    with open(root / "posts.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "group", "body"])
        for i in range(600):
            w.writerow([f"p{i}", data.label_names[data.y[i]], data.texts[i]])
    return root / "posts.csv"


def test_the_sample_builds_the_vocabulary(posts):
    full = read_corpus(posts, text_col="body", id_col="id", meta_cols=["group"])
    sample = read_corpus(posts, text_col="body", id_col="id", meta_cols=["group"],
                         max_docs=60, random_state=1)
    assert len(sample) == 60 and sample.n_terms < full.n_terms / 3
    # the sampled documents are the full corpus's rows, in file order, with their fields
    rows = np.array([int(i[1:]) for i in sample.ids])
    assert (np.diff(rows) > 0).all()
    assert list(sample.metadata["group"]) == list(full.metadata["group"][rows])
    # exactly the corpus of those documents alone
    alone = read_corpus(posts, text_col="body", id_col="id", meta_cols=["group"],
                        max_docs=60, random_state=1)
    assert list(alone.vocabulary) == list(sample.vocabulary)


def test_the_sample_is_seeded_and_uniform(posts):
    a = read_corpus(posts, text_col="body", max_docs=50, random_state=3)
    b = read_corpus(posts, text_col="body", max_docs=50, random_state=3)
    c = read_corpus(posts, text_col="body", max_docs=50, random_state=4)
    assert list(a.ids) == list(b.ids) and list(a.ids) != list(c.ids)
    hits = np.zeros(600)
    for seed in range(40):
        s = read_corpus(posts, text_col="body", max_docs=150, random_state=seed, min_df=1)
        hits[[int(i.split()[-1]) - 2 for i in s.ids]] += 1
    # each row kept with probability 1/4: the first and last halves alike
    assert abs(hits[:300].sum() - hits[300:].sum()) < 0.1 * hits.sum()


def test_more_than_the_corpus_keeps_everything(posts):
    assert len(read_corpus(posts, text_col="body", max_docs=10**6)) == 600


@pytest.mark.parametrize("value, error", [(0, ValueError), (-1, ValueError), (1.5, TypeError),
                                          ("5", TypeError), (True, TypeError)])
def test_bad_max_docs(posts, value, error):
    with pytest.raises(error, match="max_docs"):
        read_corpus(posts, text_col="body", max_docs=value)
