"""Dense (MiniLM, ONNX, `retrieval.vectors.encoder`) and sparse (BM25) embeddings, loaded offline from the models
directory, and the text cut into what they read: sentences, and windows of whole sentences the dense model reads whole
(MiniLM reads 256 tokens, then stops)."""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.vectors.encoder import (
    DEFAULT_PRECISION,
    DIM,
    MAX_TOKENS,
    MODEL_FILES,
    DenseEncoder,
    Device,
    Precision,
    Windowed,
    quantised,
)

DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DENSE_DIM = DIM
DENSE_MAX_TOKENS = MAX_TOKENS
SPARSE_MODEL = "Qdrant/bm25"
BM25_AVG_LEN = 120.0  # mean abstract length in tokens after stop words, measured on the demo corpus
STOPWORDS = Path(__file__).parent / "data" / "stopwords_en.txt"


def dense_batch(precision: Precision, device: Device, requested: int | None = None) -> int:
    """Texts per ONNX run. int8: always one, since dynamic quantisation scales a run's activations together, so a
    text's vector would depend on the texts beside it. float32 on the CPU: one unless asked, as the runs are sorted
    by length and one at a time was as fast as any batch on 2 threads (`bench/encoder_batch.py`: 24.3 ms a text
    against 27.6 in batches of 8; BENCHMARKS.md, "The encoder"); on a GPU, batches of 32."""
    if precision is Precision.INT8:
        return 1
    return requested or (32 if device is Device.CUDA else 1)


@dataclass(frozen=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class Embedded:
    dense: np.ndarray
    sparse: SparseVector


def prepare_models(models_dir: Path, precision: Precision = DEFAULT_PRECISION) -> tuple[Path, Path]:
    """Make sure the ONNX encoder (at this precision) and the BM25 folder exist; builds them offline when missing."""
    from retrieval.vectors.onnx_export import export_minilm

    dense_dir = models_dir / "all-MiniLM-L6-v2-onnx"
    if not (dense_dir / "model.onnx").exists():
        export_minilm(dense_dir)
    if Precision(precision) is Precision.INT8:
        quantised(dense_dir)
    bm25_dir = models_dir / "bm25"
    if not (bm25_dir / "config.json").exists():
        bm25_dir.mkdir(parents=True, exist_ok=True)
        (bm25_dir / "config.json").write_text("{}")
    return dense_dir, bm25_dir


QUERIES_REMEMBERED = 256
# Part of the model id (with the model's files): its number goes up whenever the same files give other vectors, so
# vector books and doctor's check see another encoder. Its words name what was changed, not today's default path.
POOLING = ("mean over the attention mask, L2; windows from their abstract's pass (retrieval.vectors.encoder); "
           "int8 one text a run 2")


class Embedder:
    """Loads both models on first use (a second or so), then embeds documents and queries."""

    def __init__(
        self,
        models_dir: Path,
        threads: int | None = None,
        remembered_texts: int = 20_000,
        precision: Precision = DEFAULT_PRECISION,
        device: Device = Device.CPU,
    ) -> None:
        self.models_dir = models_dir
        self.threads = threads
        self.precision = Precision(precision)
        self.device = Device(device)  # what was asked; `encoder_device()` says what runs
        self.remembered_texts = remembered_texts  # ~1.6 KB each: 20,000 sentences are about 32 MB
        self._remembered: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries: OrderedDict[str, Embedded] = OrderedDict()  # the last QUERIES_REMEMBERED queries
        self._cache_lock = threading.Lock()
        self._lock = threading.Lock()
        self._dense: DenseEncoder | None = None
        self._sparse = None
        self._tokenizer = None
        self._model_id: str | None = None

    def model_id(self) -> str:
        """Names the dense encoder exactly: a digest of its files (at its precision) and of how its states are
        pooled. Two embedders with one id give the same vectors."""
        with self._lock:
            if self._model_id is None:
                dense_dir, _ = prepare_models(self.models_dir, self.precision)
                digest = hashlib.sha256(f"pooling {POOLING}".encode())
                for name in (MODEL_FILES[self.precision], "tokenizer.json", "tokenizer_config.json",
                             "special_tokens_map.json"):  # fmt: skip
                    digest.update(name.encode() + b"\0" + (dense_dir / name).read_bytes())
                self._model_id = f"{DENSE_MODEL}@{digest.hexdigest()[:16]}"
        return self._model_id

    def _load(self) -> tuple[DenseEncoder, object]:
        with self._lock:
            if self._dense is None:
                from fastembed import SparseTextEmbedding

                from retrieval.vectors.punctuation import use_kept_punctuation

                dense_dir, bm25_dir = prepare_models(self.models_dir, self.precision)
                use_kept_punctuation(self.models_dir)
                stopwords = set(STOPWORDS.read_text().split())
                self._sparse = SparseTextEmbedding(
                    SPARSE_MODEL, specific_model_path=str(bm25_dir), avg_len=BM25_AVG_LEN, stopwords=stopwords
                )
                model = dense_dir / MODEL_FILES[self.precision]
                # int8's dynamically quantised operators run on the CPU provider: `auto` keeps them there rather than
                # copy every layer's activations between GPU and CPU; `cuda` is taken at its word.
                auto_int8 = self.device is Device.AUTO and self.precision is Precision.INT8
                device = Device.CPU if auto_int8 else self.device
                self._dense = DenseEncoder(model, dense_dir / "tokenizer.json", self.threads, device)
                if self._dense.note:
                    logging.getLogger(__name__).warning(self._dense.note)
        return self._dense, self._sparse

    def encoder_device(self) -> tuple[Device, str | None]:
        """Where the dense encoder runs (cpu or cuda) and, when that is not what was asked, why."""
        dense, _ = self._load()
        return dense.device, dense.note

    def count_tokens(self, texts: list[str]) -> list[int]:
        """How many word pieces the dense model sees in each text (without its two special tokens)."""
        return [len(ids) for ids in self.pieces(texts)]

    def pieces(self, texts: list[str]) -> list[list[int]]:
        """Each text's word pieces for the dense model, without its two special tokens."""
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                dense_dir, _ = prepare_models(self.models_dir, self.precision)
                tokenizer = Tokenizer.from_file(str(dense_dir / "tokenizer.json"))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                self._tokenizer = tokenizer
        if not texts:
            return []
        return [e.ids for e in self._tokenizer.encode_batch(texts, add_special_tokens=False)]

    def dense(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        dense, _ = self._load()
        return dense.vectors(texts, dense_batch(self.precision, dense.device, batch_size))

    def windowed(self, texts: list[Windowed], batch_size: int | None = None) -> list[tuple[np.ndarray, list]]:
        """Each text's dense vector and its windows' vectors, from one encoder pass (more for a long text)."""
        if not texts:
            return []
        dense, _ = self._load()
        return dense.windowed(texts, dense_batch(self.precision, dense.device, batch_size))

    def dense_remembered(self, texts: list[str]) -> np.ndarray:
        """Dense vectors of short texts that recur (the sentences of abstracts quoted in answers), remembered in a
        bounded least-recently-used cache: a paper that many users find is embedded once, not per question."""
        with self._cache_lock:
            known = {t: self._remembered[t] for t in texts if t in self._remembered}
            for t in known:
                self._remembered.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            for text, vector in zip(missing, self.dense(missing), strict=True):
                known[text] = vector
            with self._cache_lock:
                for text in missing:
                    self._remembered[text] = known[text]
                while len(self._remembered) > self.remembered_texts:
                    self._remembered.popitem(last=False)
        if not texts:
            return np.zeros((0, DENSE_DIM), dtype=np.float32)
        return np.stack([known[t] for t in texts])

    def sparse(self, texts: list[str]) -> list[SparseVector]:
        _, sparse = self._load()
        return [SparseVector(s.indices.tolist(), s.values.tolist()) for s in sparse.embed(texts, batch_size=256)]

    def documents(self, texts: list[str], batch_size: int | None = None) -> list[Embedded]:
        dense_vectors = self.dense(texts, batch_size=batch_size)
        sparse_vectors = self.sparse(texts)
        return [Embedded(d, s) for d, s in zip(dense_vectors, sparse_vectors, strict=True)]

    def query(self, text: str) -> Embedded:
        """A query's vectors. The last few queries are remembered: one turn asks the papers and the full text with
        the same words (the vectors are shared: read them, never change them)."""
        with self._cache_lock:
            if (known := self._queries.get(text)) is not None:
                self._queries.move_to_end(text)
                return known
        dense, sparse = self._load()
        dense_vector = dense.vectors([text], 1)[0]
        sparse_vector = next(iter(sparse.query_embed(text)))
        dense_vector.setflags(write=False)
        embedded = Embedded(dense_vector, SparseVector(sparse_vector.indices.tolist(), sparse_vector.values.tolist()))
        with self._cache_lock:
            self._queries[text] = embedded
            while len(self._queries) > QUERIES_REMEMBERED:
                self._queries.popitem(last=False)
        return embedded


# --- sentences and windows ------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'\[])")
# A period after these does not end a sentence ("Fig. 2", "et al. (2020)", "e.g. BERT").
_ABBREVIATION = re.compile(
    r"(?:\b(?:fig|figs|eq|eqs|sec|secs|tab|ref|refs|no|vol|pp|cf|vs|al|approx|resp|e\.g|i\.e|ca|dr|prof|st)"
    r"|\b[A-Z])\.$",
    re.IGNORECASE,
)


def split_sentences(text: str, min_chars: int = 1) -> list[str]:
    """Sentences by end punctuation followed by a capital, digit or bracket (good enough for abstracts)."""
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(text or ""):
        piece = piece.strip()
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {piece}"
        elif piece:
            sentences.append(piece)
    return [s for s in sentences if len(s) >= min_chars]


def sentence_windows(lengths: Sequence[int], budget: int, overlap: bool = True) -> list[tuple[int, int]]:
    """Runs of whole sentences of at most `budget` tokens, as (start, end) slices, half-overlapping or not.

    Every sentence lands in at least one window; a sentence longer than the budget gets a window of its
    own (the model truncates it). With overlap, each window after the first starts at the middle of the one
    before, so a statement that straddles two windows is still read whole by one of them.
    """
    windows: list[tuple[int, int]] = []
    start, count = 0, len(lengths)
    while start < count:
        end, used = start, 0
        while end < count and (end == start or used + lengths[end] <= budget):
            used += lengths[end]
            end += 1
        windows.append((start, end))
        if end >= count:
            break
        start = max(start + 1, (start + end + 1) // 2) if overlap else end
    return windows


def chunk_spans(
    text: str, count_tokens: Callable[[list[str]], list[int]], budget: int, overlap: bool = True
) -> tuple[list[str], list[tuple[int, int]]]:
    """The text's sentences and the (start, end) sentence slices of its windows of at most `budget` tokens."""
    sentences = split_sentences(text)
    if not sentences:
        return [], []
    lengths = count_tokens(sentences)
    if sum(lengths) <= budget:
        return sentences, [(0, len(sentences))]
    return sentences, sentence_windows(lengths, budget, overlap)
