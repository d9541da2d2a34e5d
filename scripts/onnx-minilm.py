#!/usr/bin/env python3
"""all-MiniLM-L6-v2 in ONNX Runtime, fp32 and dynamic int8, beside Cairn's own backends.

The graph is built by hand with `onnx.helper` from the same model.safetensors Cairn loads
(no model hub is needed): embeddings + layer norm, 6 layers of self-attention and a feed
forward with exact (erf) GELU, mean pooling over the attention mask, L2 normalisation.

    python3 -m venv /tmp/ortenv && /tmp/ortenv/bin/pip install onnxruntime onnx safetensors tokenizers numpy
    /tmp/ortenv/bin/python scripts/onnx-minilm.py build OUT_DIR
        # OUT_DIR/minilm-fp32.onnx, OUT_DIR/minilm-int8.onnx (quantize_dynamic) and
        # OUT_DIR/minilm-int8-qkv-fp32.onnx (the same, query/key/value left in fp32)
    /tmp/ortenv/bin/python scripts/onnx-minilm.py throughput OUT_DIR/minilm-int8.onnx [SENTENCES [BATCH [THREADS]]]
        # the sentences and queries of crates/cairn-embed/examples/throughput.rs
    /tmp/ortenv/bin/python scripts/onnx-minilm.py texts MODEL.onnx TEXTS.jsonl [LIMIT [BATCH [THREADS [VECTORS.f32]]]]
        # real texts (one JSON string a line); with VECTORS.f32 (written by
        # `cargo run --release -p cairn-embed --example compare_backends -- TEXTS.jsonl LIMIT OUT`),
        # the cosine of each text's vector to Cairn's

The model directory is $CAIRN_MODEL_DIR or ~/.cache/cairn/models/sentence-transformers/all-MiniLM-L6-v2.
Every number printed is for one process; CPU seconds are the process's (time.process_time).
"""
import json
import math
import os
import sys
import time

import numpy as np

MAX_TOKENS = 256
HIDDEN, HEADS, LAYERS, EPS = 384, 12, 6, 1e-12


def model_dir():
    return os.environ.get("CAIRN_MODEL_DIR") or os.path.expanduser(
        "~/.cache/cairn/models/sentence-transformers/all-MiniLM-L6-v2"
    )


def build(out_dir):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    w = load_file(os.path.join(model_dir(), "model.safetensors"))
    inits, nodes = [], []

    def init(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def linear(x, prefix, out):
        # PyTorch stores (out, in); MatMul wants (in, out).
        wt = init(prefix + ".weight_t", w[prefix + ".weight"].T)
        b = init(prefix + ".bias", w[prefix + ".bias"])
        return node("Add", [node("MatMul", [x, wt], out + "_mm"), b], out)

    def layer_norm(x, prefix, out):
        g = init(prefix + ".weight", w[prefix + ".weight"])
        b = init(prefix + ".bias", w[prefix + ".bias"])
        return node("LayerNormalization", [x, g, b], out, axis=-1, epsilon=EPS)

    c = lambda name, v, dt=np.float32: init(name, np.array(v, dtype=dt))
    heads_shape = c("heads_shape", [0, 0, HEADS, HIDDEN // HEADS], np.int64)
    hidden_shape = c("hidden_shape", [0, 0, HIDDEN], np.int64)
    scale = c("scale", 1.0 / math.sqrt(HIDDEN // HEADS))
    half, one, inv_sqrt2 = c("half", 0.5), c("one", 1.0), c("inv_sqrt2", 1.0 / math.sqrt(2.0))
    neg = c("neg_big", -1e9)

    # Embeddings: word + position + token type 0, then layer norm.
    words = node("Gather", [init("word_table", w["embeddings.word_embeddings.weight"]), "input_ids"], "words")
    seq_len = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), c("at1", [1], np.int64)], "seq_len", axis=0)
    pos_table = init("pos_table", w["embeddings.position_embeddings.weight"])
    pos = node("Slice", [pos_table, c("start0", [0], np.int64), seq_len, c("axis0", [0], np.int64)], "pos")
    tt0 = init("tt0", w["embeddings.token_type_embeddings.weight"][0])
    x = node("Add", [node("Add", [words, pos], "emb_wp"), tt0], "emb")
    x = layer_norm(x, "embeddings.LayerNorm", "emb_ln")

    # Additive attention mask (B, 1, 1, S): 0 where a token is, -1e9 at padding.
    maskf = node("Cast", ["attention_mask"], "maskf", to=TensorProto.FLOAT)
    add_mask = node("Mul", [node("Sub", [one, maskf], "mask_inv"), neg], "mask_add")
    add_mask = node("Unsqueeze", [add_mask, c("axes12", [1, 2], np.int64)], "mask_b11s")

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"

        def split(t, name, perm):
            r = node("Reshape", [t, heads_shape], name + "_r")
            return node("Transpose", [r], name + "_t", perm=perm)

        q = split(linear(x, p + ".attention.self.query", f"l{i}_q"), f"l{i}_qh", [0, 2, 1, 3])
        k = split(linear(x, p + ".attention.self.key", f"l{i}_k"), f"l{i}_kh", [0, 2, 3, 1])
        v = split(linear(x, p + ".attention.self.value", f"l{i}_v"), f"l{i}_vh", [0, 2, 1, 3])
        s = node("Mul", [node("MatMul", [q, k], f"l{i}_qk"), scale], f"l{i}_qks")
        probs = node("Softmax", [node("Add", [s, add_mask], f"l{i}_sm")], f"l{i}_p", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"l{i}_ctx")], f"l{i}_ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, hidden_shape], f"l{i}_ctx_r")
        a = linear(ctx, p + ".attention.output.dense", f"l{i}_ao")
        x = layer_norm(node("Add", [a, x], f"l{i}_res1"), p + ".attention.output.LayerNorm", f"l{i}_ln1")
        up = linear(x, p + ".intermediate.dense", f"l{i}_up")
        erf = node("Erf", [node("Mul", [up, inv_sqrt2], f"l{i}_gs")], f"l{i}_erf")
        gelu = node("Mul", [node("Mul", [up, half], f"l{i}_gh"), node("Add", [erf, one], f"l{i}_e1")], f"l{i}_gelu")
        down = linear(gelu, p + ".output.dense", f"l{i}_down")
        x = layer_norm(node("Add", [down, x], f"l{i}_res2"), p + ".output.LayerNorm", f"l{i}_ln2")

    # Mean pooling over the mask, then L2 normalisation.
    m3 = node("Unsqueeze", [maskf, c("axis2", [2], np.int64)], "mask3")
    summed = node("ReduceSum", [node("Mul", [x, m3], "masked"), c("axis1", [1], np.int64)], "summed", keepdims=0)
    count = node("ReduceSum", [m3, "axis1"], "count", keepdims=0)
    mean = node("Div", [summed, node("Max", [count, c("tiny", 1e-9)], "count_c")], "mean")
    norm = node("Sqrt", [node("ReduceSum", [node("Mul", [mean, mean], "sq"), "axis1"], "ss", keepdims=1)], "norm")
    node("Div", [mean, node("Max", [norm, c("tiny_n", 1e-12)], "norm_c")], "embedding")

    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(out_dir, exist_ok=True)
    fp32 = os.path.join(out_dir, "minilm-fp32.onnx")
    onnx.save(model, fp32)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # MatMuls with a constant weight become MatMulInteger: int8 weights (one scale per
    # output column), uint8 activations quantized per call. Attention's two MatMuls of
    # activations and the embedding tables stay fp32, as in Cairn's int8 backend.
    int8 = os.path.join(out_dir, "minilm-int8.onnx")
    quantize_dynamic(
        fp32, int8, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"]
    )
    # The same with the query/key/value projections left in fp32: ONNX Runtime has no
    # two-pass activations, this is its way to protect the inputs that softmax sharpens.
    qkv = os.path.join(out_dir, "minilm-int8-qkv-fp32.onnx")
    keep = [f"l{i}_{p}_mm" for i in range(LAYERS) for p in "qkv"]
    quantize_dynamic(
        fp32, qkv, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"],
        nodes_to_exclude=keep,
    )
    print(f"wrote {fp32}, {int8} and {qkv}")


class Encoder:
    def __init__(self, model, threads):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(os.path.join(model_dir(), "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(MAX_TOKENS)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])

    def ids(self, texts):
        return [e.ids for e in self.tok.encode_batch(texts)]

    def run(self, seqs):
        """Vectors of token sequences, padded to the batch's longest."""
        n = max(len(s) for s in seqs)
        ids = np.zeros((len(seqs), n), dtype=np.int64)
        mask = np.zeros((len(seqs), n), dtype=np.int64)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1
        return self.sess.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0]

    def embed(self, texts, batch):
        """Vectors of `texts` in their order; batches of similar length (less padding)."""
        seqs = self.ids(texts)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        out = np.zeros((len(seqs), HIDDEN), dtype=np.float32)
        for a in range(0, len(order), batch):
            idx = order[a : a + batch]
            out[idx] = self.run([seqs[i] for i in idx])
        return out, sum(len(s) for s in seqs)


WORDS = (
    "the agent remembered that user prefers dark roast coffee meeting moved to thursday "
    "afternoon because of travel plans project deadline is next week and budget was approved "
    "by finance team yesterday she asked about vegetarian restaurants near office in berlin he "
    "mentioned his daughter starts school september database migration failed twice during "
    "night we should schedule a review before release allergic peanuts flight lands at seven "
    "thirty conference keynote slides need updates from marketing"
).split()


def sentences(n, words):
    """throughput.rs's deterministic sentences, word for word."""
    state, mask, out = 0x9E3779B97F4A7C15, (1 << 64) - 1, []
    for _ in range(n):
        s = []
        for _ in range(words):
            state = (state * 6364136223846793005 + 1442695040888963407) & mask
            s.append(WORDS[(state >> 33) % len(WORDS)])
        out.append(" ".join(s) + ".")
    return out


def throughput(model, n, batch, threads):
    e = Encoder(model, threads)
    texts = sentences(n, 44)
    e.embed(texts[:batch], batch)  # warm up
    cpu, t = time.process_time(), time.perf_counter()
    _, tokens = e.embed(texts, batch)
    secs, cpu = time.perf_counter() - t, time.process_time() - cpu
    print(f"{os.path.basename(model)} threads {threads}: embedded {n} sentences in {secs:.2f} s: "
          f"{n / secs:.1f} sentences/s, {tokens / secs:.0f} tokens/s (special tokens included), cpu {cpu:.2f} s")
    times = []
    for q in sentences(200, 9):
        t = time.perf_counter()
        e.embed([q], 1)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    print(f"one 9-word query at a time: p50 {times[100]:.2f} ms, p95 {times[190]:.2f} ms")
    print(f"process cpu {time.process_time():.2f} s")


def texts_run(model, path, limit, batch, threads, vectors):
    with open(path) as f:
        texts = [json.loads(l) for l in f if l.strip()]
    texts = texts[:limit] if limit else texts
    e = Encoder(model, threads)
    e.embed(texts[:16], batch)
    cpu, t = time.process_time(), time.perf_counter()
    out, tokens = e.embed(texts, batch)
    secs, cpu = time.perf_counter() - t, time.process_time() - cpu
    print(f"{os.path.basename(model)} threads {threads}: {len(texts)} texts, {tokens} tokens in {secs:.2f} s: "
          f"{len(texts) / secs:.1f} texts/s, {tokens / secs:.0f} tokens/s, cpu {cpu:.2f} s")
    if vectors:
        ours = np.fromfile(vectors, dtype="<f4").reshape(-1, HIDDEN)[: len(texts)]
        cos = np.sort((out * ours).sum(axis=1))
        q = lambda p: cos[int((len(cos) - 1) * p)]
        print(f"cosine to {os.path.basename(vectors)}: mean {cos.mean():.5f}, min {cos[0]:.5f}, "
              f"p1 {q(0.01):.5f}, p5 {q(0.05):.5f}, median {q(0.5):.5f}")


def main(argv):
    if len(argv) >= 2 and argv[0] == "build":
        return build(argv[1])
    if len(argv) >= 2 and argv[0] == "throughput":
        a = argv[2:] + [None] * 3
        return throughput(argv[1], int(a[0] or 1000), int(a[1] or 32), int(a[2] or 1))
    if len(argv) >= 3 and argv[0] == "texts":
        a = argv[3:] + [None] * 4
        return texts_run(argv[1], argv[2], int(a[0] or 0), int(a[1] or 32), int(a[2] or 1), a[3])
    sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
