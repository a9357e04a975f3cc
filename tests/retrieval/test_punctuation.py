"""`retrieval.vectors.punctuation`: BM25's punctuation read from the models directory is fastembed's own, and the one
change to fastembed's internals is written against the locked version."""

import json
import re
import unicodedata
from importlib.metadata import version

from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.punctuation import FASTEMBED_VERSION, kept_punctuation
from tests.conftest import REPO


def test_the_patch_names_the_locked_fastembed():
    for lock in ("requirements.lock", "requirements-dev.lock"):
        pinned = re.search(r"^fastembed==(\S+)", (REPO / lock).read_text(), re.M).group(1)
        assert pinned == FASTEMBED_VERSION, f"{lock} pins fastembed {pinned}: re-read retrieval/vectors/punctuation.py"
    assert version("fastembed") == FASTEMBED_VERSION


def test_the_kept_set_is_fastembeds_and_a_damaged_file_is_computed_again(tmp_path, monkeypatch):
    from fastembed.common.utils import get_all_punctuation  # fastembed's own, which the patch leaves alone

    import retrieval.vectors.punctuation

    expected = frozenset(get_all_punctuation())
    assert kept_punctuation(tmp_path) == expected  # computed, then written
    (kept,) = tmp_path.glob("punctuation-*.json")
    assert kept.name == f"punctuation-unicode-{unicodedata.unidata_version}.json"
    assert frozenset(map(chr, json.loads(kept.read_text()))) == expected
    assert kept_punctuation(tmp_path) == expected  # read back
    # A damaged file is computed again (here by a stand-in for the computation) and written whole.
    monkeypatch.setattr(retrieval.vectors.punctuation, "all_punctuation", lambda: frozenset("!?"))
    for damaged in ("[33, 34", '{"!": 1}', "[]", '["!"]', "[-1]"):
        kept.write_text(damaged)
        assert kept_punctuation(tmp_path) == frozenset("!?"), damaged
        assert sorted(json.loads(kept.read_text())) == [33, 63], damaged
    assert not list(tmp_path.glob("*.partial"))


def test_the_sparse_model_takes_the_kept_set(models_dir, tmp_path, monkeypatch):
    """An embedder's BM25 strips what the models directory's file says (a file saying only "!" shows it is read,
    not recomputed); the run's own embedder strips fastembed's set."""
    import fastembed.sparse.bm25

    monkeypatch.setattr(fastembed.sparse.bm25, "get_all_punctuation", fastembed.sparse.bm25.get_all_punctuation)
    for name in ("all-MiniLM-L6-v2-onnx", "bm25"):
        (tmp_path / name).symlink_to(models_dir / name)
    (tmp_path / f"punctuation-unicode-{unicodedata.unidata_version}.json").write_text("[33]")
    _, sparse = Embedder(tmp_path, threads=1)._load()
    assert sparse.model.punctuation == {"!"}
    _, sparse = Embedder(models_dir, threads=1)._load()
    assert sparse.model.punctuation == kept_punctuation(models_dir)
    assert len(sparse.model.punctuation) > 500 and {".", ",", "\u00bf", "\u2014"} <= sparse.model.punctuation
