"""The onnxruntime anchor of scripts/bench/embed-server.sh: all-MiniLM-L6-v2 (the same safetensors
weights the embedding server loads) as an ONNX graph built with the `onnx` package (no torch, no
network), run by onnxruntime on the same number of threads, over the same ≈ 250-token texts.

Prints texts/s at batches 1, 8, 32 for the f32 graph and for onnxruntime's dynamic int8
quantization of it, and the worst cosine of each against the independent numpy reference
(crates/embed-server/tests/reference/minilm_numpy.py), so a wrong graph cannot pass unnoticed.
Given the running embedding server's URL, it asks the server for the same sentences and prints
the goal line for its worst cosine against that reference (≥ 0.99).

usage: python embed-server.onnx.py MODEL_DIR WORK_DIR THREADS WORDS [SERVER_URL]
"""
import json
import math
import os
import sys
import time
import urllib.request

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "crates", "embed-server", "tests", "reference")
sys.path.insert(0, REFERENCE)
import minilm_numpy  # noqa: E402  (the reference's safetensors reader and forward pass)

WORDS = ("the index stores vectors for each chunk query returns nearest neighbours parse config "
         "file error handler retry queue message batch worker request response token embedding "
         "model cosine similarity function struct impl async await let mut self return match Some "
         "None Result Ok Err fn pub").split()
MASK64 = (1 << 64) - 1


def chunk_text(seed, words):
    """The text generator of crates/embed-server/benches/embed.rs (xorshift64), word for word."""
    x = (seed * 0x9E3779B97F4A7C15 + 1) & MASK64
    out = []
    for i in range(words):
        x ^= (x << 13) & MASK64
        x ^= x >> 7
        x ^= (x << 17) & MASK64
        out.append(WORDS[x % len(WORDS)])
        if i % 12 == 11:
            out.append(";")
    return " ".join(out)


def build_graph(model_dir, path):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    W = minilm_numpy.load_safetensors(os.path.join(model_dir, "model.safetensors"))
    W = {k[5:] if k.startswith("bert.") else k: v.astype(np.float32) for k, v in W.items()}
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    d, eps = h // heads, cfg["layer_norm_eps"]
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def linear(x, prefix, weight, bias, name):
        w = const(prefix + ".wT", np.ascontiguousarray(weight.T))
        b = const(prefix + ".b", bias)
        return node("Add", [node("MatMul", [x, w], name + ".mm"), b], name)

    def layer_norm(x, prefix, name):
        return node("LayerNormalization", [x, const(prefix + ".g", W[prefix + ".weight"]),
                                           const(prefix + ".beta", W[prefix + ".bias"])], name, axis=-1, epsilon=eps)

    p = "embeddings."
    seq = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), const("one_i", np.array(1, np.int64))], "seq_len")
    positions = node("Range", [const("zero_i", np.array(0, np.int64)), seq, const("step_i", np.array(1, np.int64))], "positions")
    x = node("Gather", [const("word_emb", W[p + "word_embeddings.weight"]), "input_ids"], "word")
    pos = node("Gather", [const("pos_emb", W[p + "position_embeddings.weight"]), positions], "pos")
    x = node("Add", [node("Add", [x, pos], "emb_wp"), const("type0", W[p + "token_type_embeddings.weight"][0])], "emb")
    x = layer_norm(x, p + "LayerNorm", "emb_ln")
    maskf = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [maskf, const("one_f", np.array(1.0, np.float32))], "mask_m1"),
                        const("big", np.array(1e4, np.float32))], "mask_bias2")
    bias = node("Unsqueeze", [bias, const("axes12", np.array([1, 2], np.int64))], "mask_bias")
    scale = const("scale", np.array(1.0 / math.sqrt(d), np.float32))
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        qkv_w = np.concatenate([W[a + n + ".weight"] for n in ("query", "key", "value")], 0)
        qkv_b = np.concatenate([W[a + n + ".bias"] for n in ("query", "key", "value")], 0)
        qkv = linear(x, f"l{i}.qkv", qkv_w, qkv_b, f"l{i}.qkv")
        qkv = node("Reshape", [qkv, const(f"l{i}.qkv_shape", np.array([0, 0, 3, heads, d], np.int64))], f"l{i}.qkv5")
        qkv = node("Transpose", [qkv], f"l{i}.qkvT", perm=[2, 0, 3, 1, 4])
        q, k, v = (node("Gather", [qkv, const(f"l{i}.idx{j}", np.array(j, np.int64))], f"l{i}.{n}", axis=0)
                   for j, n in enumerate("qkv"))
        kt = node("Transpose", [k], f"l{i}.kT", perm=[0, 1, 3, 2])
        s = node("Mul", [node("MatMul", [q, kt], f"l{i}.qk"), scale], f"l{i}.scores0")
        s = node("Add", [s, bias], f"l{i}.scores")
        probs = node("Softmax", [s], f"l{i}.probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"l{i}.ctx4")], f"l{i}.ctxT", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, const(f"l{i}.ctx_shape", np.array([0, 0, h], np.int64))], f"l{i}.ctx")
        o = p + "attention.output."
        attn = linear(ctx, f"l{i}.ao", W[o + "dense.weight"], W[o + "dense.bias"], f"l{i}.ao")
        attn = layer_norm(node("Add", [attn, x], f"l{i}.ares"), o + "LayerNorm", f"l{i}.aln")
        up = linear(attn, f"l{i}.up", W[p + "intermediate.dense.weight"], W[p + "intermediate.dense.bias"], f"l{i}.up")
        erf = node("Erf", [node("Mul", [up, const(f"l{i}.isq2", np.array(1 / math.sqrt(2), np.float32))], f"l{i}.gx")], f"l{i}.erf")
        gelu = node("Mul", [node("Mul", [up, const(f"l{i}.half", np.array(0.5, np.float32))], f"l{i}.hx"),
                            node("Add", [erf, const(f"l{i}.onef", np.array(1.0, np.float32))], f"l{i}.erf1")], f"l{i}.gelu")
        down = linear(gelu, f"l{i}.down", W[p + "output.dense.weight"], W[p + "output.dense.bias"], f"l{i}.down")
        x = layer_norm(node("Add", [down, attn], f"l{i}.ores"), p + "output.LayerNorm", f"l{i}.oln")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="out"))
    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", h])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


class Embedder:
    def __init__(self, path, tokenizer, threads):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        self.tokenizer = tokenizer

    def __call__(self, texts):
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], np.int64)
        mask = np.array([e.attention_mask for e in enc], np.int64)
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12), int(mask.sum())


def main():
    model_dir, work, threads, words = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    server = sys.argv[5] if len(sys.argv) > 5 else None
    os.makedirs(work, exist_ok=True)
    f32_path, q8_path = os.path.join(work, "minilm-f32.onnx"), os.path.join(work, "minilm-int8.onnx")
    build_graph(model_dir, f32_path)
    # The linear layers only (as the server's int8 path), per output channel.
    quantize_dynamic(f32_path, q8_path, weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"])

    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    # The graph is checked against the independent numpy reference before it is timed.
    sentences = json.load(open(os.path.join(REFERENCE, "sentences.json"), encoding="utf-8"))
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    vocab = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    W = minilm_numpy.load_safetensors(os.path.join(model_dir, "model.safetensors"))
    W = {k[5:] if k.startswith("bert.") else k: v for k, v in W.items()}
    reference = np.array([minilm_numpy.embed(minilm_numpy.encode(s, vocab), W, cfg) for s in sentences])

    if server:
        body = json.dumps({"input": sentences, "model": "all-MiniLM-L6-v2"}).encode()
        req = urllib.request.Request(f"{server}/v1/embeddings", body, {"content-type": "application/json"})
        with urllib.request.urlopen(req) as res:
            data = sorted(json.load(res)["data"], key=lambda d: d["index"])
        ours = np.array([d["embedding"] for d in data], dtype=np.float64)
        ours /= np.linalg.norm(ours, axis=1, keepdims=True)
        worst = float(np.min(np.sum(ours * reference / np.linalg.norm(reference, axis=1, keepdims=True), axis=1)))
        verdict = "met" if worst >= 0.99 else "NOT MET"
        print(f"goal cosine ≥ 0.99, the embedding server against the independent numpy fp32 reference "
              f"({len(sentences)} sentences): {verdict} (worst {worst:.6f})")

    for label, path in (("onnxruntime f32", f32_path), ("onnxruntime int8 (dynamic)", q8_path)):
        embed = Embedder(path, tokenizer, threads)
        worst = min(float(np.dot(embed([s])[0][0], r)) for s, r in zip(sentences, reference))
        print(f"{label}: worst cosine vs numpy reference {worst:.6f}")
        for batch in (1, 8, 32):
            texts = [chunk_text(i, words) for i in range(batch)]
            _, tokens = embed(texts)
            rounds = max(2, 24 // batch)
            t0 = time.perf_counter()
            for _ in range(rounds):
                embed(texts)
            ms = (time.perf_counter() - t0) * 1000 / rounds
            print(f"  batch {batch:2d}: {ms:8.1f} ms/call, {batch * 1000 / ms:6.1f} texts/s ({tokens / batch:.0f} tokens/text)")


if __name__ == "__main__":
    main()
