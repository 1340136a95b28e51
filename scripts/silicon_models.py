#!/usr/bin/python3
"""Builds the models of the silicon-validation rows that the zoo lacks.

usage: scripts/silicon_models.py --out DIR [--only NAME[,NAME...]]
           [--external] [--force]

Models (random weights from fixed seeds, nothing downloaded; opset 17):
  gemm_isca22       Y = X @ W, X "X" float32 [800, 32576] an input, W
                    [32576, 8192] an initializer (1.07 GB in fp32): the GEMM
                    Abts et al. run on 8 TSPs (ISCA 2022). Built with
                    onnx.helper; with --external its weights go to
                    DIR/gemm_isca22.weights (ONNX external data) instead of
                    the .onnx file.
  bert_large_s384   BERT-Large encoder (24 layers, hidden 1024, 16 heads,
                    intermediate 4096, vocab 30522, post-LN, erf GELU, no
                    attention mask, no pooler or task head): export_zoo.py's
                    BertTiny at BERT-Large's sizes, input "input_ids" int64
                    [1, 384], output "last_hidden_state" [1, 384, 1024]
                    (1.34 GB)
  bert_large_s128   the same at sequence length 128
  bert_large_b8     the same at batch 8, sequence length 384 (tt-metal's
                    BERT-Large demo)
  bert_large_enc_s384, bert_large_enc_s128, bert_large_enc_b8
                    the same models without the embedding lookup: input
                    "hidden" float32 [batch, seq, 1024] (the summed
                    embeddings), then the embedding LayerNorm and the 24
                    layers (1.21 GB)
  resnet50_b16      export_zoo.py's resnet50 at batch 16, input "input"
                    float32 [16, 3, 224, 224]

The torch models go through export_zoo.py's own build and export
(export_zoo.export_one: its seeds, perturbation and checks), so each is
written with DIR/<name>.inputs.json beside it. A model whose .onnx file
exists is skipped unless --force is given. Prints one line per model: its
size and where it went.

The rows these models serve (issue #30; loom is build/bin/loom, DIR the
--out folder):
  loom compile DIR/gemm_isca22.onnx --target=tsp-v1 --chips=8
      --precision=fp16 (and int8)                       ISCA 2022, ~330 us
  loom compile DIR/bert_large_enc_s384.onnx --target=tsp-v1 --chips=4
      --precision=int8 (and fp16; s128 too)             ISCA 2022, p99 ~1,225 us
  loom compile DIR/resnet50_b16.onnx --target=wormhole --precision=fp8
      (and bf16)                                        tt-metal, ~4,700 images/s
  loom compile DIR/bert_large_b8.onnx --target=wormhole --precision=fp8
      (and bf16)                                        tt-metal, ~270 sentences/s
A program's inputs/s are runs of the whole batch a second (images/s is 16
times that at batch 16).

Runs under Debian's /usr/bin/python3 (python3-onnx, numpy, torch,
torchvision). Building every model takes about 5 minutes and 7 GB of disk;
the BERT-Large exports peak near 6 GB of memory each.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo  # noqa: E402  (its models, seeds and exporter)

# BERT-Large (Devlin et al., 2019): 24 layers, hidden 1024, 16 heads, FFN
# 4 x 1024 = 4096 (export_zoo's MLP), WordPiece vocabulary of 30522.
BERT_LARGE = dict(vocab=30522, d=1024, heads=16, layers=24)

GEMM_M, GEMM_K, GEMM_N = 800, 32576, 8192


def _bert_large(batch, seq):
    return (lambda: export_zoo.BertTiny(seq=seq, **BERT_LARGE),
            [("input_ids", torch.int64, [batch, seq])],
            ["last_hidden_state"], False, None)


class BertLargeEncoder(export_zoo.BertTiny):
    """BertTiny at BERT-Large's sizes without the embedding lookup: the
    input is the summed word, position and token-type embeddings
    ("hidden"), then the embedding LayerNorm and the 24 layers."""

    def __init__(self, seq):
        sizes = dict(BERT_LARGE, vocab=1)  # the table is not used
        super().__init__(seq=seq, **sizes)

    def forward(self, hidden):
        x = self.emb_ln(hidden)
        for blk in self.blocks:
            x = blk(x)
        return x


def _bert_large_encoder(batch, seq):
    return (lambda: BertLargeEncoder(seq),
            [("hidden", torch.float32, [batch, seq, BERT_LARGE["d"]])],
            ["last_hidden_state"], False, None)


def _resnet50(batch):
    ctor, _, outs, random_bn, adjust = export_zoo.ZOO["resnet50"]
    return (ctor, [("input", torch.float32, [batch, 3, 224, 224])], outs,
            random_bn, adjust)


# name -> export_zoo.ZOO entry (constructor, inputs, outputs, random
# BatchNorm stats?, adjustment).
TORCH_MODELS = {
    "bert_large_s384": _bert_large(1, 384),
    "bert_large_s128": _bert_large(1, 128),
    "bert_large_b8": _bert_large(8, 384),
    "bert_large_enc_s384": _bert_large_encoder(1, 384),
    "bert_large_enc_s128": _bert_large_encoder(1, 128),
    "bert_large_enc_b8": _bert_large_encoder(8, 384),
    "resnet50_b16": _resnet50(16),
}

MODELS = ["gemm_isca22"] + list(TORCH_MODELS)


def gemm_weights():
    """W [K, N] float32, N(0, 1/K) so Y's entries are O(1); generated in
    slabs of rows so no float64 copy of the 1 GB array is ever held."""
    rng = np.random.default_rng(export_zoo.SEED)
    w = np.empty((GEMM_K, GEMM_N), dtype=np.float32)
    step = 4096
    for r in range(0, GEMM_K, step):
        rows = min(step, GEMM_K - r)
        rng.standard_normal((rows, GEMM_N), dtype=np.float32, out=w[r:r + rows])
    w *= np.float32(GEMM_K ** -0.5)
    return w


def export_gemm(out_dir, external):
    name = "gemm_isca22"
    path = os.path.join(out_dir, name + ".onnx")
    w = gemm_weights()
    init = TensorProto(name="W", data_type=TensorProto.FLOAT,
                       dims=[GEMM_K, GEMM_N])
    if external:
        # ONNX external data: the bytes little-endian in a file beside the
        # model, the initializer naming it (location, offset, length).
        weights = name + ".weights"
        tmp = os.path.join(out_dir, weights + ".tmp")
        w.astype("<f4", copy=False).tofile(tmp)
        os.replace(tmp, os.path.join(out_dir, weights))
        init.data_location = TensorProto.EXTERNAL
        for k, v in (("location", weights), ("offset", "0"),
                     ("length", str(w.nbytes))):
            init.external_data.add(key=k, value=v)
    else:
        init.raw_data = w.astype("<f4", copy=False).tobytes()
    del w
    g = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"], name="gemm")], name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       [GEMM_M, GEMM_K])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                       [GEMM_M, GEMM_N])], [init])
    model = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", export_zoo.OPSET)])
    # The checker takes a path for models near protobuf's 2 GB limit.
    tmp = path + ".tmp"
    onnx.save(model, tmp)
    onnx.checker.check_model(tmp)
    os.replace(tmp, path)
    export_zoo.write_json(os.path.join(out_dir, name + ".inputs.json"),
                          export_zoo.describe(path, 0))


def build_one(name, out_dir, force, external):
    if name in TORCH_MODELS:
        # export_zoo's exporter, seeds and checks, on its own table.
        export_zoo.ZOO[name] = TORCH_MODELS[name]
        export_zoo.export_one(name, out_dir, force)
        return
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path) and not force:
        print(f"{name:16s} {os.path.getsize(path) / 1e6:9.3f} MB  exists, "
              f"skipped  ({path})", flush=True)
        return
    t0 = time.time()
    export_gemm(out_dir, external)
    size = os.path.getsize(path)
    data = os.path.join(out_dir, name + ".weights")
    extra = ""
    if external:
        extra = f" + {os.path.getsize(data) / 1e6:.3f} MB external data"
    print(f"{name:16s} {size / 1e6:9.3f} MB{extra}  built in "
          f"{time.time() - t0:7.2f} s  ({path})", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, metavar="DIR")
    ap.add_argument("--only", default=",".join(MODELS),
                    help="comma-separated subset of: " + ",".join(MODELS))
    ap.add_argument("--external", action="store_true",
                    help="gemm_isca22's weights as ONNX external data")
    ap.add_argument("--force", action="store_true",
                    help="rebuild a model whose file exists")
    args = ap.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {','.join(unknown)}; known: "
                 f"{','.join(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    warnings.filterwarnings("ignore")
    for name in names:
        build_one(name, args.out, args.force, args.external)


if __name__ == "__main__":
    main()
