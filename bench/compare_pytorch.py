#!/usr/bin/env python3
"""NormLab's C++ training step against the same step written in eager PyTorch.

Compares `normlab-cli bench --json` (LibTorch, C++) with an eager PyTorch loop that
builds the same GPT (core/model/model.cpp) and takes the same step (core/training/learner.cpp):
token + learned position embeddings; pre- or post-norm blocks of causal
self-attention (one qkv Linear, scaled_dot_product_attention) and a GELU MLP; output
tied to the token embedding; mean cross-entropy; AdamW (betas 0.9/0.95, eps 1e-8,
weight decay 0.1 on tensors with dim >= 2, else 0). Both sides draw random token
batches (built and moved to the device outside the timed region) and time blocks of
steps, reading the last loss at the end of each block (a sync per step would charge a GPU
for idling); the median over blocks is the result.

So that background load hits both sides alike, each round runs the C++ bench (a
subprocess) and then the Python loop, with the same warm-up and timed steps, and the
result is the median over rounds (per-round ratios are shown too; the verdict says
INCONCLUSIVE when rounds differ by more than 25 %). The Python loop uses torch's default AdamW
implementation for the device (a per-parameter for-loop on CPU, foreach on CUDA), and
also, as an extra line, fused=True.

Run from the repository root with the pinned torch that the C++ build links against:
    ~/.cache/normlab/torch-2.11.0/bin/python bench/compare_pytorch.py
    ~/.cache/normlab/torch-2.11.0/bin/python bench/compare_pytorch.py --batch 8 --context 64
    ~/.cache/normlab/torch-2.11.0/bin/python bench/compare_pytorch.py --threads 1   # steadier on a busy CPU
    ~/.cache/normlab/torch-2.11.0/bin/python bench/compare_pytorch.py --autocast bf16   # both sides in bf16
    ~/.cache/normlab/torch-2.11.0/bin/python bench/compare_pytorch.py --autocast bf16 --python-autocast off
    ~/.cache/normlab/torch-2.11.0/bin/python bench/compare_pytorch.py --python-only --device cuda
    python3 bench/compare_pytorch.py --device cuda --compile --cli build/gpu/app/normlab-cli   # scripts/gpu-check.sh
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = Path(__file__).resolve().parent.parent
# The C++ defaults (core/runs/config.h) that this script does not expose as options.
LAYERS, D_MODEL, HEADS, VOCAB, LR, WEIGHT_DECAY, SEED = 8, 128, 4, 8192, 1e-3, 0.1, 1337


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.qkv, self.proj, self.heads = nn.Linear(d, 3 * d), nn.Linear(d, d), heads

    def forward(self, x):
        B, T, C = x.shape
        split = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = split[0], split[1], split[2]  # three selects, as the C++ does
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Mlp(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))  # exact GELU, as torch::nn::functional::gelu


class Block(nn.Module):
    def __init__(self, d, heads, norm):
        super().__init__()
        self.norm1, self.attention = nn.LayerNorm(d), Attention(d, heads)
        self.norm2, self.mlp, self.post = nn.LayerNorm(d), Mlp(d), norm == "post"

    def forward(self, x):
        if self.post:  # x <- Norm(x + f(x))
            x = self.norm1(x + self.attention(x))
            return self.norm2(x + self.mlp(x))
        x = x + self.attention(self.norm1(x))  # x <- x + f(Norm x)
        return x + self.mlp(self.norm2(x))


class Gpt(nn.Module):
    def __init__(self, context, norm):
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, D_MODEL)
        self.position_embedding = nn.Embedding(context, D_MODEL)
        self.blocks = nn.ModuleList(Block(D_MODEL, HEADS, norm) for _ in range(LAYERS))
        self.final_norm = nn.LayerNorm(D_MODEL) if norm == "pre" else None
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    m.weight.normal_(0.0, 0.02)
                    m.bias.zero_()
                elif isinstance(m, nn.Embedding):
                    m.weight.normal_(0.0, 0.02)

    def loss(self, ids, targets):
        x = self.token_embedding(ids) + self.position_embedding(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            x = block(x)
        if self.final_norm is not None:
            x = self.final_norm(x)
        logits = F.linear(x, self.token_embedding.weight)  # tied output
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def make_optimizer(model, fused):
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": WEIGHT_DECAY},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.95), eps=1e-8, **({"fused": True} if fused else {}))


def python_run(args, device, arm):
    """(parameter count, median ms/step) of one PyTorch run, timed as bench.cpp times it:
    batches on the device beforehand, blocks of steps with one sync at the end of each."""
    torch.manual_seed(SEED)
    model = Gpt(args.context, args.norm).to(device)
    optimizer = make_optimizer(model, fused="fused" in arm)

    def train_step(inputs, targets):
        optimizer.zero_grad(set_to_none=True)
        # As the C++'s AutocastScope: the forward pass and the loss under bf16 autocast.
        with torch.autocast(device, dtype=torch.bfloat16, enabled=args.python_autocast == "bf16"):
            loss = model.loss(inputs, targets)
        loss.backward()
        optimizer.step()  # clipping is off by default in NormLab
        return loss

    step = torch.compile(train_step, mode=args.compile_mode) if "compiled" in arm else train_step
    generator = torch.Generator().manual_seed(SEED)

    def batches(count):
        out = []
        for _ in range(count):
            ids = torch.randint(0, VOCAB, (args.batch, args.context + 1), generator=generator)
            out.append((ids[:, :-1].contiguous().to(device), ids[:, 1:].contiguous().to(device)))
        return out

    def synchronize():
        if device == "cuda":
            torch.cuda.synchronize()

    for inputs, targets in batches(args.warmup):  # compiles and autotunes, when compiled
        step(inputs, targets).item()
    blocks = min(args.steps, 5)
    times = []
    for block in range(blocks):
        count = args.steps // blocks + (1 if block < args.steps % blocks else 0)
        todo = batches(count)
        synchronize()
        start = time.perf_counter()
        for inputs, targets in todo:
            loss = step(inputs, targets)
        loss.item()  # waits for the device, so the block has finished
        times.append((time.perf_counter() - start) / count)
    return sum(p.numel() for p in model.parameters()), 1e3 * statistics.median(times)


def cli_run(args, device):
    command = [str(args.cli), "bench", "--json", "--device", device, "--norm", args.norm,
               "--batch", str(args.batch), "--context", str(args.context),
               "--bench-steps", str(args.steps), "--bench-warmup", str(args.warmup)]
    command += ["--threads", str(args.threads)] if args.threads > 0 else []
    command += ["--autocast", args.autocast, "--tf32", args.tf32, "--cuda-graph", args.cuda_graph]
    command += ["--cpu-precision", args.cpu_precision]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", type=Path, default=REPO / "build/release/app/normlab-cli")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--norm", choices=["pre", "post"], default="pre")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=15, help="timed steps per run")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per run")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads for both sides; 0 = LibTorch's default (OMP_NUM_THREADS, else one per core)")
    parser.add_argument("--autocast", choices=["off", "bf16"], default="off",
                        help="bf16 autocast of the forward pass, on both sides unless --python-autocast says")
    parser.add_argument("--python-autocast", choices=["off", "bf16"],
                        help="the PyTorch side's autocast (default: as --autocast)")
    parser.add_argument("--tf32", choices=["on", "off"], default="on",
                        help="TF32 inside fp32 matmuls on the GPU, on both sides (NormLab's default where the GPU "
                             "has it; PyTorch's default is off)")
    parser.add_argument("--cuda-graph", choices=["on", "off"], default="on",
                        help="NormLab's step as a CUDA graph (its default) or launched kernel by kernel")
    parser.add_argument("--python-only", action="store_true", help="skip normlab-cli")
    parser.add_argument("--no-fused", action="store_true", help="skip the fused=True AdamW line")
    parser.add_argument("--cpu-precision", choices=["fp32", "bf16"], default="fp32",
                        help="NormLab's CPU linears in fp32 or bf16 (its bf16 units); with bf16 the PyTorch side "
                             "runs under bf16 autocast unless --python-autocast says")
    parser.add_argument("--compile", action="store_true",
                        help="add torch.compile of the whole step (max-autotune: minutes of autotuning)")
    parser.add_argument("--compile-mode", choices=["default", "reduce-overhead", "max-autotune"], default="max-autotune",
                        help="torch.compile's mode (default compiles in about a minute on a CPU)")
    args = parser.parse_args()
    if args.cpu_precision == "bf16" and not args.python_autocast:
        args.python_autocast = "bf16"
    args.python_autocast = args.python_autocast or args.autocast

    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = args.tf32 == "on"
    if device == "cpu" and args.threads > 0:
        torch.set_num_threads(args.threads)  # else torch's default, as the C++ (describe_device)
    default_impl = "foreach" if device == "cuda" else "for-loop"
    python_arms = [f"pytorch ({default_impl})"] + ([] if args.no_fused else ["pytorch (fused)"])
    python_arms += [f"pytorch (compiled, {args.compile_mode})"] if args.compile else []
    arms = ([] if args.python_only else ["normlab"]) + python_arms
    print(f"torch {torch.__version__} on {device} ({torch.get_num_threads()} threads), "
          f"{args.norm}-norm, batch {args.batch} x {args.context}, normlab CPU precision {args.cpu_precision}, "
          f"autocast normlab {args.autocast} / "
          f"pytorch {args.python_autocast}, tf32 {args.tf32}, normlab's CUDA graph {args.cuda_graph}, "
          f"{args.warmup}+{args.steps} steps "
          f"x {args.rounds} rounds; load average {os.getloadavg()[0]:.2f}")

    results = {arm: [] for arm in arms}
    for r in range(1, args.rounds + 1):
        if not args.python_only:
            cli = cli_run(args, device)
            results["normlab"].append(cli["median_ms_per_step"])
        for arm in python_arms:
            params, ms = python_run(args, device, arm)
            results[arm].append(ms)
        if not args.python_only:
            assert params == cli["parameters"], f"parameters: python {params} != normlab {cli['parameters']}"
        print(f"round {r}: " + ", ".join(f"{arm} {results[arm][-1]:.2f} ms" for arm in arms), flush=True)

    print(f"\nparameters {params}" + ("" if args.python_only else
          f" (normlab {cli['parameters']}, LibTorch {cli['libtorch']}, {cli['device']})"))
    print(f"{'ms/step':<22}" + "".join(f"{'round ' + str(r):>10}" for r in range(1, args.rounds + 1))
          + f"{'median':>10}{'tokens/s':>11}")
    medians = {}
    for arm in arms:
        medians[arm] = statistics.median(results[arm])
        print(f"{arm:<22}" + "".join(f"{ms:>10.2f}" for ms in results[arm])
              + f"{medians[arm]:>10.2f}{args.batch * args.context / medians[arm] * 1e3:>11.0f}")
    spread = max(max(ms) / min(ms) for ms in results.values())
    print(f"load average now {os.getloadavg()[0]:.2f}; slowest/fastest round of one side: {spread:.2f}x")
    if args.python_only:
        return
    for arm in python_arms:
        ratio = medians[arm] / medians["normlab"]
        paired = statistics.median(p / n for p, n in zip(results[arm], results["normlab"]))
        verdict = f"{ratio:.2f}x faster than" if ratio >= 1 else f"{1 / ratio:.2f}x slower than"
        # Rounds that differ more than the two sides do, or estimates on both sides of 1: noise.
        shaky = spread > 1.25 or (ratio - 1) * (paired - 1) < 0
        print(("INCONCLUSIVE (load varied between rounds): " if shaky else "")
              + f"NormLab is {verdict} eager {arm} (median over {args.rounds} rounds; "
              f"python/normlab = {ratio:.3f}, median of per-round ratios {paired:.3f})")


if __name__ == "__main__":
    sys.exit(main())
