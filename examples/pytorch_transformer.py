#!/usr/bin/env python3
"""A small decoder-only transformer in PyTorch with random weights (nothing is downloaded).

Runs forward passes in a loop under torch.no_grad() (inference, the default) or a short
training loop (--train: cross-entropy, backward, AdamW). Prints the examples' summary line
last; kernels, memcpy_bytes and memset_bytes are -1 because PyTorch decides those itself.
wall_ms covers the measured loop only (after --warmup steps, without the correctness check),
so it compares the steady state with and without a profiler.

Importable: run(steps, train) is what bench/overhead/torch_profiler_run.py profiles.

Checks: the first inference batch is compared with the same model on the CPU (float32), and
training losses must be finite and, over 10 or more steps, go down.

Exit codes: 0 ok, 1 no torch or no CUDA device (with a message), 2 bad arguments, 3 wrong
result.
"""

import argparse
import copy
import math
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError:  # reported by main(); importing this file must still work
    torch = None

EXIT_NO_CUDA = 1
EXIT_WRONG_RESULT = 3


class WrongResult(Exception):
    pass


def causal_attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # PyTorch before 2.0 (only where the fused kernel does not exist).
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    seq = q.shape[-2]
    mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1) @ v


if torch is not None:

    class Attention(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.out = nn.Linear(dim, dim)

        def forward(self, x):
            batch, seq, dim = x.shape
            q, k, v = self.qkv(x).split(dim, dim=2)
            shape = (batch, seq, self.heads, dim // self.heads)
            q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
            y = causal_attention(q, k, v)
            return self.out(y.transpose(1, 2).reshape(batch, seq, dim))

    class Mlp(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.up = nn.Linear(dim, 4 * dim)
            self.down = nn.Linear(4 * dim, dim)

        def forward(self, x):
            return self.down(F.gelu(self.up(x)))

    class Block(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim)
            self.attention = Attention(dim, heads)
            self.norm2 = nn.LayerNorm(dim)
            self.mlp = Mlp(dim)

        def forward(self, x):
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class TinyTransformer(nn.Module):
        def __init__(self, vocab, dim, heads, layers, max_seq):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.positions = nn.Parameter(torch.randn(max_seq, dim) * 0.02)
            self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, vocab, bias=False)

        def forward(self, tokens):
            x = self.embed(tokens) + self.positions[: tokens.shape[1]]
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x))


def _nvtx_push(name, device):
    if device.type != "cuda":
        return False
    try:
        torch.cuda.nvtx.range_push(name)
        return True
    except Exception:  # NVTX missing from this torch build: no ranges, counted as 0
        return False


def _nvtx_pop():
    torch.cuda.nvtx.range_pop()


def inference_step(model, tokens):
    with torch.no_grad():
        return model(tokens)


def training_step(model, optimizer, tokens, targets):
    logits = model(tokens)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def check_against_cpu(model, tokens):
    """The GPU's first-sequence logits must match the same model run on the CPU."""
    sample = tokens[:1]
    got = inference_step(model, sample).float().cpu()
    cpu_model = copy.deepcopy(model).float().cpu()
    want = inference_step(cpu_model, sample.cpu())
    if not torch.allclose(got, want, atol=2e-3, rtol=2e-3):
        worst = (got - want).abs().max().item()
        raise WrongResult(f"GPU logits differ from the CPU model by up to {worst:.3g}")


def check_losses(losses):
    if not all(math.isfinite(loss) for loss in losses):
        raise WrongResult(f"training produced a non-finite loss: {losses}")
    if len(losses) >= 10 and not losses[-1] < losses[0]:
        raise WrongResult(f"training loss did not go down: {losses[0]:.4f} -> {losses[-1]:.4f}")


def run(steps=20, train=False, batch=8, seq=256, dim=512, heads=8, layers=6, vocab=8192,
        dtype="float32", warmup=2, check=True, seed=0, device="cuda"):
    """Builds the model, runs `warmup` + `steps` steps and returns the summary fields.

    device="cpu" exists for testing this file on machines without a GPU."""
    if torch is None:
        raise RuntimeError("PyTorch is not installed")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("CUDA is not available to PyTorch")
    torch.manual_seed(seed)
    # Full fp32 matmuls (no TF32), so the CPU comparison can be tight.
    torch.set_float32_matmul_precision("highest")

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize()

    model = TinyTransformer(vocab, dim, heads, layers, seq).to(device)
    model.to(getattr(torch, dtype))
    tokens = torch.randint(0, vocab, (batch, seq), device=device)
    targets = torch.roll(tokens, shifts=-1, dims=1)
    optimizer = None
    if train:
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    else:
        model.eval()
        if check and dtype == "float32":
            check_against_cpu(model, tokens)

    def step():
        if train:
            return training_step(model, optimizer, tokens, targets)
        return inference_step(model, tokens)

    for _ in range(warmup):
        step()
    synchronize()

    nvtx_ranges = 0
    losses = []
    start = time.perf_counter()
    for _ in range(steps):
        pushed = _nvtx_push("train_step" if train else "inference_step", device)
        result = step()
        if train:
            losses.append(result)
        if pushed:
            _nvtx_pop()
            nvtx_ranges += 1
    synchronize()
    wall_ms = (time.perf_counter() - start) * 1e3

    if train:
        loss_values = torch.stack(losses).float().cpu().tolist()
        if check:
            check_losses(loss_values)
    return {
        "name": "pytorch_train" if train else "pytorch_inference",
        "kernels": -1,
        "memcpy_bytes": -1,
        "memset_bytes": -1,
        "nvtx_ranges": nvtx_ranges,
        "graph_launches": 0,
        "graph_kernels": 0,
        "wall_ms": wall_ms,
        "steps": steps,
        "step_ms": wall_ms / steps,
    }


def format_summary(summary):
    fields = ["kernels", "memcpy_bytes", "memset_bytes", "nvtx_ranges", "graph_launches",
              "graph_kernels"]
    line = f"gpuperf-example: name={summary['name']}"
    line += "".join(f" {field}={summary[field]}" for field in fields)
    line += f" wall_ms={summary['wall_ms']:.3f} steps={summary['steps']}"
    line += f" step_ms={summary['step_ms']:.4f}"
    return line


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="measured steps (default 20)")
    parser.add_argument("--train", action="store_true", help="a training loop instead")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured steps first")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--dtype", choices=["float32", "bfloat16", "float16"], default="float32")
    parser.add_argument("--no-check", action="store_true", help="skip the result checks")
    parser.add_argument("--device", default="cuda", help="cuda (default), or cpu for testing")
    args = parser.parse_args(argv)
    for name in ("steps", "batch", "seq", "dim", "heads", "layers", "vocab"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive")
    if args.warmup < 0:
        parser.error("--warmup must not be negative")
    if args.dim % args.heads:
        parser.error("--dim must be a multiple of --heads")
    return args


def run_from_args(args):
    return run(steps=args.steps, train=args.train, batch=args.batch, seq=args.seq, dim=args.dim,
               heads=args.heads, layers=args.layers, vocab=args.vocab, dtype=args.dtype,
               warmup=args.warmup, check=not args.no_check, device=args.device)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if torch is None:
        print("pytorch_transformer: PyTorch is not installed", file=sys.stderr)
        return EXIT_NO_CUDA
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"pytorch_transformer: CUDA is not available to PyTorch {torch.__version__} "
              f"(built for CUDA {torch.version.cuda}): nothing to run", file=sys.stderr)
        return EXIT_NO_CUDA
    try:
        summary = run_from_args(args)
    except WrongResult as error:
        print(f"wrong result: {error}", file=sys.stderr)
        return EXIT_WRONG_RESULT
    print(format_summary(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
