"""The dense encoder run on onnxruntime directly: MiniLM's token states, mean-pooled per text or per window.

fastembed pools a whole text; an abstract's windows (a few sentences each, the title before them) were a separate
encoder pass each, and they were most of ingest's work (about 3.4 window passes beside the abstract's one). Here an
abstract is read once: its windows' vectors are the means of that pass's token states over the title and the
window's sentences (the states carry the rest of the abstract as context). An abstract longer than the encoder
reads gets more passes, each the title and the next windows that fit. Measured on SciFact and the import's
throughput in BENCHMARKS.md ("The encoder").

`Precision.INT8` is the same model with its weight matrices quantised to int8 per output channel (onnxruntime's
dynamic quantisation, made locally from the float32 file): about 1.4x faster on these cores.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np

DIM = 384
MAX_TOKENS = 256  # the encoder reads this many word pieces, [CLS] and [SEP] included, then stops
BODY = MAX_TOKENS - 2


class Precision(StrEnum):
    FLOAT32 = "float32"
    INT8 = "int8"


MODEL_FILES = {Precision.FLOAT32: "model.onnx", Precision.INT8: "model-int8.onnx"}
# The product's choice (BENCHMARKS.md, "The encoder"): SciFact test 0.7355 against float32's 0.7363, the import 1.4x.
DEFAULT_PRECISION = Precision.INT8


class Device(StrEnum):
    CPU = "cpu"
    CUDA = "cuda"
    AUTO = "auto"  # the GPU when onnxruntime here can use one, else the CPU


CUDA_PROVIDER = "CUDAExecutionProvider"


def providers(device: Device, available: list[str]) -> tuple[list[str], str | None]:
    """The onnxruntime providers a session on `device` asks for, and why the CPU runs it when the GPU was asked for
    and cannot (None when nothing needs saying)."""
    if device is Device.CPU:
        return ["CPUExecutionProvider"], None
    if CUDA_PROVIDER in available:
        return [CUDA_PROVIDER, "CPUExecutionProvider"], None
    if device is Device.AUTO:
        return ["CPUExecutionProvider"], None
    return ["CPUExecutionProvider"], (
        "SCHOLARLOOM_EMBED_DEVICE=cuda, but this onnxruntime has no CUDA provider (it offers "
        f"{', '.join(available)}): the encoder runs on the CPU. For the GPU, replace the onnxruntime package with "
        "onnxruntime-gpu of the same version, with CUDA and cuDNN installed (docs/operators.md)."
    )


def quantised(dense_dir: Path) -> Path:
    """The int8 model beside the float32 one, made once (a second or two) from it."""
    target = dense_dir / MODEL_FILES[Precision.INT8]
    if not target.exists():
        import logging

        from onnxruntime.quantization import QuantType, quantize_dynamic

        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")  # two processes may make it at once
        quiet = logging.Filter("none")  # it advises a pre-processing step on the root logger, for image models
        logging.getLogger().addFilter(quiet)
        try:
            quantize_dynamic(dense_dir / MODEL_FILES[Precision.FLOAT32], partial, weight_type=QuantType.QInt8,
                             per_channel=True)  # fmt: skip
        finally:
            logging.getLogger().removeFilter(quiet)
        partial.replace(target)
    return target


@dataclass(frozen=True)
class Windowed:
    """A text cut for one reading: the text, its head (the title, said before every window) and its parts
    (sentences) as word pieces, and the windows as (start, end) slices of the parts."""

    text: str
    head: list[int]
    parts: list[list[int]]
    windows: list[tuple[int, int]]

    def keys(self) -> list[str]:
        """What names each vector of this reading in a vector book: the text, then each window."""
        return [self.text, *(f"{self.text}\0window {a}:{b}" for a, b in self.windows)]


class DenseEncoder:
    """MiniLM on onnxruntime: `vectors(texts)` as fastembed computes them (mean of the token states under the
    attention mask, L2-normalised), and `windowed(...)`: a text's vector and its windows' from the same pass."""

    def __init__(self, model: Path, tokenizer: Path, threads: int | None, device: Device = Device.CPU) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        asked, self.note = providers(Device(device), ort.get_available_providers())
        self._session = ort.InferenceSession(str(model), options, providers=asked)
        # onnxruntime falls back to the CPU on its own when the CUDA libraries cannot be loaded: say so too.
        self.device = Device.CUDA if CUDA_PROVIDER in self._session.get_providers() else Device.CPU
        if CUDA_PROVIDER in asked and self.device is Device.CPU:
            self.note = ("the CUDA provider could not start (see onnxruntime's message above): the encoder runs on "
                         "the CPU")
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._cls = self._tokenizer.token_to_id("[CLS]")
        self._sep = self._tokenizer.token_to_id("[SEP]")

    def pieces(self, texts: list[str]) -> list[list[int]]:
        """Each text's word pieces, without [CLS] and [SEP]."""
        return [e.ids for e in self._tokenizer.encode_batch(texts, add_special_tokens=False)] if texts else []

    def states(self, sequences: list[list[int]], batch: int) -> list[np.ndarray]:
        """The last layer's token states of each sequence of word pieces (each at most BODY long), [CLS] first
        and [SEP] last; sequences of like length run together."""
        out: list[np.ndarray] = [np.empty(0)] * len(sequences)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        for start in range(0, len(order), batch):
            group = order[start : start + batch]
            width = max(len(sequences[i]) for i in group) + 2
            ids = np.zeros((len(group), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(group):
                seq = [self._cls, *sequences[i][:BODY], self._sep]
                ids[row, : len(seq)] = seq
                mask[row, : len(seq)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feed)[0]  # onnxruntime's sessions may run in several threads at once
            for row, i in enumerate(group):
                out[i] = hidden[row, : int(mask[row].sum())]
        return out

    def vectors(self, texts: list[str], batch: int) -> np.ndarray:
        """Each text's vector (its first BODY word pieces)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        states = self.states([p[:BODY] for p in self.pieces(texts)], batch)
        return np.stack([normalised(s.mean(axis=0)) for s in states])

    def windowed(self, texts: list[Windowed], batch: int) -> list[tuple[np.ndarray, list[np.ndarray]]]:
        """Each text's vector (head and parts read as one, first BODY word pieces) and its windows' vectors, pooled
        from the pass that read them: the first pass when a window lies within it, else one of the passes made of
        the head and the next windows that fit."""
        plans = [_passes(t) for t in texts]
        flat = [seq for passes, _ in plans for seq in passes]
        states = iter(self.states(flat, batch))
        result = []
        for passes, spots in plans:
            read = [next(states) for _ in passes]
            whole = normalised(read[0].mean(axis=0))
            result.append((whole, [normalised(read[k][positions].mean(axis=0)) for k, positions in spots]))
        return result


def _passes(text: Windowed) -> tuple[list[list[int]], list[tuple[int, np.ndarray]]]:
    """The passes that read a text and, for each window, (pass number, positions of its states in that pass): the
    [CLS], the head, the window's parts and the [SEP]."""
    head, parts = text.head, text.parts
    first = (head + [p for part in parts for p in part])[:BODY]
    passes, spots = [first], []
    starts = np.cumsum([len(head)] + [len(part) for part in parts])  # where each part begins in the first pass
    current: list[int] | None = None
    for a, b in text.windows:
        if starts[b] <= BODY:  # within the first pass
            positions = [*range(1, len(head) + 1), *range(int(starts[a]) + 1, int(starts[b]) + 1)]
            spots.append((0, np.array([0, *positions, len(first) + 1])))
            continue
        body = [p for part in parts[a:b] for p in part]
        if current is None or len(current) + len(body) > BODY:
            current = list(head)
            passes.append(current)
        begin = len(current)
        current.extend(body)
        end = min(len(current), BODY)
        positions = [*range(1, min(len(head), BODY) + 1), *range(min(begin, BODY) + 1, end + 1)]
        spots.append((len(passes) - 1, np.array([0, *positions, -1])))
    # A pass's [SEP] is at its own end (-1 above); the first pass's is after its last word piece.
    return passes, spots


def normalised(vector: np.ndarray) -> np.ndarray:
    """`vector` at unit length (L2), as float32."""
    return (vector / max(float(np.linalg.norm(vector)), 1e-12)).astype(np.float32)
