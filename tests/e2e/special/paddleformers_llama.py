"""A tiny PaddleFormers Llama trained as its users train it: the worker of
test_run_paddleformers.py and paddleformers_table.py.

    python paddleformers_llama.py CONFIG MODES OUT_DIR

(or under `pylayer2static run --package paddleformers`): CONFIG one of `CONFIGS`, MODES a
comma-separated subset of `MODES`; prints one JSON line, `{"transpiled": bool, MODE: result}`.
Each mode builds the model afresh from one seed and trains it 3 AdamW steps on one batch:

- `eager`: dynamic graph;
- `ast`: `paddle.jit.to_static(step, full_graph=True)`;
- `sot`: `paddle.jit.to_static(step, full_graph=False)` (bytecode translation, the default of a
  plain `@to_static`), with SOT's break-reason collector read back (`breaks`: every graph break,
  its reason class and text) when `SOT_COLLECT_INFO` asks for it;
- `export`: `paddle.jit.save` of the loss (eval mode, `InputSpec`s of the batch's shape, each
  named: one InputSpec object given twice feeds both inputs under one name, and the loaded loss
  is silently another), `paddle.jit.load`ed back: its loss and the saving model's eager loss.

A result holds the loss of each step (before its optimizer step), the gradient of two
parameters at each step (`GRADS`), the seconds each step took (the forward, backward and
optimizer step; the first one includes building the program), or `{"error": the exception's
last line}`.

The configuration class's `__getattribute__` calls `super()`, which dy2static rewrites to
`super(self.__class__, self)`, endless for a subclass (RecursionError under AST and SOT, the
framework's own path too): the recipe is
`paddle.jit.ignore_module([paddleformers.transformers.configuration_utils])` before the first
`to_static` call (docs/SUPPORT.md, "PaddleFormers"); `P2S_NO_IGNORE_MODULE=1` leaves it out.
"""
import json
import os
import sys
import time
import traceback

import numpy as np
import paddle

import paddleformers.transformers.configuration_utils
from paddleformers.transformers import LlamaConfig, LlamaForCausalLM

if os.environ.get("P2S_NO_IGNORE_MODULE") != "1":
    paddle.jit.ignore_module([paddleformers.transformers.configuration_utils])

VOCAB, SEQ, BATCH, STEPS = 64, 16, 2, 3
# The tiny Llama every configuration shares (hidden 64, 2 layers, 4 heads, 2 key-value heads).
# `fuse_rms_norm` off: the CPU build has no `fused_rms_norm_ext` kernel.
BASE = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2 * SEQ,
            fuse_rms_norm=False)
FUSED = dict(use_fused_head_and_loss_fn=True, loss_subbatch_sequence_length=4)
RECOMPUTE = dict(recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1)
CONFIGS = {
    "plain": {},
    "fused_head": FUSED,
    "recompute": RECOMPUTE,
    "fused_head_recompute": {**FUSED, **RECOMPUTE},
}
MODES = ("eager", "ast", "sot", "export")
# The first attention's query projection, and the embedding: tied to the LM head (the
# configuration's default), which the fused head + loss computes the gradient of itself.
GRADS = ("model.layers.0.self_attn.q_proj.weight", "model.embed_tokens.weight")


class Step(paddle.nn.Layer):
    """What a training loop calls: the model's loss on a batch."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, labels):
        return self.model(input_ids, labels=labels)[0]


def batch():
    rng = np.random.RandomState(0)
    return (rng.randint(0, VOCAB, [BATCH, SEQ]).astype("int64"),
            rng.randint(0, VOCAB, [BATCH, SEQ]).astype("int64"))


def build(name):
    paddle.seed(2024)
    model = LlamaForCausalLM(LlamaConfig(**BASE, **CONFIGS[name]))
    names = {p.name: n for n, p in model.named_parameters()}
    params = {names[p.name]: p for p in model.parameters()}
    return model, params


def train(name, wrap):
    model, params = build(name)
    missing = [g for g in GRADS if g not in params]
    if missing:
        raise KeyError(f"no parameter {missing} in {sorted(params)}")
    step = wrap(Step(model))
    opt = paddle.optimizer.AdamW(learning_rate=1e-2, parameters=model.parameters())
    ids, labels = (paddle.to_tensor(a) for a in batch())
    losses, grads, times = [], {g: [] for g in GRADS}, []
    for _ in range(STEPS):
        start = time.perf_counter()
        loss = step(ids, labels)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
        for g in GRADS:
            grad = params[g].grad
            grads[g].append(None if grad is None else grad.numpy().tolist())
        opt.clear_grad(set_to_zero=False)
    return {"losses": losses, "grads": grads, "times": times}


def export(name, out_dir):
    model, _ = build(name)
    model.eval()
    step = Step(model)
    prefix = os.path.join(out_dir, f"llama_{name}")
    spec = [paddle.static.InputSpec([BATCH, SEQ], "int64", name="input_ids"),
            paddle.static.InputSpec([BATCH, SEQ], "int64", name="labels")]
    start = time.perf_counter()
    paddle.jit.save(step, prefix, input_spec=spec)
    loaded = paddle.jit.load(prefix)
    inputs = [paddle.to_tensor(a) for a in batch()]
    got = float(loaded(*inputs))
    seconds = time.perf_counter() - start
    return {"prefix": prefix, "loaded": got, "expected": float(step(*inputs)), "times": [seconds]}


def sot_breaks():
    """Every graph break SOT's collector filed (paddle 3.3.1 jit/sot/utils/info_collector.py),
    as [reason class, reason]; a break inside an inlined call is filed again for each call around
    it, and those copies are left out."""
    from paddle.jit.sot.utils.exceptions import BreakGraphInlineCallBreak
    from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType

    collector = InfoCollector()
    reasons = collector.get_info_dict(InfoType.E2E_INFO).get("BreakGraphReasonInfo", [])
    collector.clear()  # else printed at exit, into the output read back
    return [[type(info.reason).__name__, str(info.reason)] for info in reasons
            if not isinstance(info.reason, BreakGraphInlineCallBreak)]


def attempt(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - each mode's failure is a result
        traceback.print_exc()
        text = str(exc).strip()
        return {"error": f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"[:300]}


def main(argv):
    name, modes, out_dir = argv[0], argv[1].split(","), argv[2]
    results = {}
    for mode in modes:
        if mode == "eager":
            results[mode] = attempt(lambda: train(name, lambda step: step))
        elif mode == "ast":
            results[mode] = attempt(lambda: train(name, lambda step: paddle.jit.to_static(step, full_graph=True)))
        elif mode == "sot":
            results[mode] = attempt(lambda: train(name, lambda step: paddle.jit.to_static(step, full_graph=False)))
            if os.environ.get("SOT_COLLECT_INFO"):
                results[mode]["breaks"] = sot_breaks()
        elif mode == "export":
            results[mode] = attempt(lambda: export(name, out_dir))
        else:
            raise SystemExit(f"unknown mode {mode}; one of {MODES}")
    module = sys.modules.get("paddleformers.transformers.tensor_parallel_utils")
    results["transpiled"] = hasattr(module, "_p2s")
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
