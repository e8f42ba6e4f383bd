#!/usr/bin/env python3
"""A PyTorch DDP training over N GPUs of one host (NCCL), for bench/multi_gpu/ddp_two_gpus.sh.

Each process trains the same MLP (bf16 autocast, SGD) on its own GPU with synthetic data; DDP
all-reduces the fp32 gradients every step. Rank 0 prints the window markers around the timed steps
("diescope: measure start|stop", docs/method.md#the-steady-window) and, at the end, one line:

  ddp: world W, steps S, seconds T, steps/s R, gradient bytes per step B

B is the gradients' size: a ring all-reduce over 2 GPUs sends B bytes from each GPU per step (and
receives as many), so B x R is what each GPU's NVLink should carry, to compare with GPM's NVLink rates.

NVLink SHARP / multicast objects are never made: NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1
and NVSHMEM_DISABLE_NVLS=1 must be set (the script refuses to start otherwise).

  ddp_train.py [--world-size 2] [--seconds 20] [--warmup 30] [--batch 1024] [--width 4096] [--layers 8]
"""
import argparse
import os
import sys
import time

REQUIRED_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def fail(message, fix):
    print(f"ddp_train.py: error: {message}\nfix: {fix}", file=sys.stderr, flush=True)
    sys.exit(2)


def worker(rank, args):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=args.world_size, device_id=device)
    torch.manual_seed(1234 + rank)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(device)
    ddp = DistributedDataParallel(model, device_ids=[rank])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    x = torch.randn(args.batch, args.width, device=device)
    y = torch.randn(args.batch, args.width, device=device)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(ddp(x).float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    t0 = time.perf_counter()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    # Every rank must take the same number of steps: rank 0's warmup pace sets it for --seconds.
    per_step = (time.perf_counter() - t0) / max(args.warmup, 1)
    steps = torch.tensor([max(10, int(args.seconds / max(per_step, 1e-6)))], device=device)
    dist.broadcast(steps, src=0)
    steps = int(steps.item())
    dist.barrier()
    if rank == 0:
        print("diescope: measure start", flush=True)
    t1 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    seconds = time.perf_counter() - t1
    if rank == 0:
        print("diescope: measure stop", flush=True)
        grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        print(f"ddp: world {args.world_size}, steps {steps}, seconds {seconds:.3f}, steps/s {steps / seconds:.3f}, "
              f"gradient bytes per step {grad_bytes}", flush=True)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world-size", type=int, default=2, help="processes, one GPU each (GPU 0 .. N-1)")
    ap.add_argument("--seconds", type=float, default=20, help="about how long the timed steps last")
    ap.add_argument("--warmup", type=int, default=30, help="untimed steps before the window")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--port", type=int, default=29517)
    args = ap.parse_args()
    for name, value in REQUIRED_ENV.items():
        if os.environ.get(name) != value:
            fail(f"{name} is {os.environ.get(name)!r}, not {value!r}",
                 "export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 (no NVLink multicast)")
    try:
        import torch
        import torch.multiprocessing
    except ImportError as e:
        fail(f"PyTorch cannot be imported ({e})", "run on the GPU machine, whose python3 has PyTorch")
    if not torch.cuda.is_available() or torch.cuda.device_count() < args.world_size:
        fail(f"{args.world_size} GPU(s) needed, {torch.cuda.device_count() if torch.cuda.is_available() else 0} found",
             "run on a host with that many GPUs, or give a smaller --world-size")
    torch.multiprocessing.spawn(worker, args=(args,), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
