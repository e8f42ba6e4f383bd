#!/usr/bin/env python3
"""A small GPT-style transformer training in bf16 on random tokens, for measuring with diescope.

A few pre-norm decoder layers (causal self-attention through scaled_dot_product_attention, a GELU MLP),
tied input and output embeddings, cross-entropy on next tokens, AdamW; autocast to bf16. Prints the
window markers diescope's `run --window markers` reads, flushed, around the timed steps (after model
build and warm-up), and one JSON line with what it counted.

With --profile-steps K, the first K timed steps run between cudaProfilerStart and cudaProfilerStop, so
`ncu --profile-from-start off` profiles those steps only, on every thread: autograd launches the
backward pass from its own thread, which an NVTX push/pop range on the main thread does not enclose.
Without a profiler attached the two calls do nothing.

    diescope run --window markers -- python3 workloads/pytorch/gpt_bf16.py --steps 50
"""
import argparse
import json
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from steady_window import run_window


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab: int, context: int, width: int, heads: int, layers: int):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tok.weight
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * layers))

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--context", type=int, default=1024)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--steps", type=int, default=50, help="timed training steps inside the window")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps before the window")
    p.add_argument("--profile-steps", type=int, default=0,
                   help="run the first K timed steps between cudaProfilerStart and cudaProfilerStop")
    args = p.parse_args()
    if args.width % args.heads:
        print(f"gpt_bf16: --width {args.width} is not a multiple of --heads {args.heads}; pick a width "
              "that the heads divide", file=sys.stderr)
        return 2
    if not 0 <= args.profile_steps <= args.steps:
        print(f"gpt_bf16: --profile-steps {args.profile_steps} must lie between 0 and --steps {args.steps}",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpt_bf16: no CUDA device visible to PyTorch; run it on a machine with an NVIDIA GPU", file=sys.stderr)
        return 2

    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = Gpt(args.vocab, args.context, args.width, args.heads, args.layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    tokens = torch.randint(0, args.vocab, (args.batch, args.context + 1), device=dev)
    x, y = tokens[:, :-1], tokens[:, 1:]

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, args.vocab), y.reshape(-1))
        loss.backward()
        opt.step()

    steps, elapsed = run_window(step, steps=args.steps, warmup=args.warmup, sync=torch.cuda.synchronize,
                                profiler_start=torch.cuda.profiler.start, profiler_stop=torch.cuda.profiler.stop,
                                profile_steps=args.profile_steps)
    params = sum(p.numel() for p in model.parameters())
    print(json.dumps({"workload": "gpt_bf16", "layers": args.layers, "width": args.width, "context": args.context,
                      "batch": args.batch, "params": params, "steps": steps, "seconds": elapsed,
                      "tokens_per_s": steps * args.batch * args.context / elapsed,
                      "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
