#!/usr/bin/env python3
"""ResNet-50 AMP training fed by a DataLoader whose augmentation is CPU-heavy, on synthetic data.

Each sample is a random uint8 image that __getitem__ blurs on the CPU (a --kernel x --kernel
convolution, 9 by default, repeated until it costs about --augment-ms of one core, at least once) and
crops: a smaller --kernel makes the augmentation lighter, down to a floor (on the H200's host one 9x9
blur costs 3 to 4 ms of a core, a 5x5 one 2.0 to 2.7 ms, a 3x3 one 1.9 ms); with too few --workers the GPU waits for
batches (input-bound on purpose); with enough it does not. --model resnet152 asks about 2.8 times
the GPU work of ResNet-50 per image (torchvision's figures: 11.5 against 4.1 GFLOPS), so that the same augmentation with enough workers can keep the
GPU busy on a host whose cores cannot feed ResNet-50 (which trains at about 5000 images/s on the
H200). Prints the window markers diescope's
`run --window markers` reads around the timed steps, and one JSON line with what it counted.

    diescope run --window markers -- python3 workloads/pytorch/augment_train.py --workers 2
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from amp_step import amp_train_step
from steady_window import run_window

SIZE = 224
KERNEL = 9  # the blur's size; set from --kernel before the loader's workers start


def blur(x: torch.Tensor, reps: int) -> torch.Tensor:
    k = torch.ones(3, 1, KERNEL, KERNEL) / float(KERNEL * KERNEL)
    for _ in range(reps):
        x = F.conv2d(x, k, padding=KERNEL // 2, groups=3)
    return x


class Augmented(torch.utils.data.Dataset):
    def __init__(self, n: int, reps: int, kernel: int):
        self.n, self.reps, self.kernel = n, reps, kernel

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        global KERNEL
        KERNEL = self.kernel  # a worker started by spawn has the module's default
        torch.set_num_threads(1)  # a loader worker is one core's worth of work
        g = torch.Generator().manual_seed(i)
        img = torch.randint(0, 256, (3, SIZE + 32, SIZE + 32), dtype=torch.uint8, generator=g)
        x = blur(img.float().unsqueeze(0), self.reps)[0]
        top, left = int(torch.randint(0, 32, (1,), generator=g)), int(torch.randint(0, 32, (1,), generator=g))
        x = x[:, top:top + SIZE, left:left + SIZE]
        if i % 2:
            x = x.flip(2)
        return x.clamp(0, 255).to(torch.uint8), i % 1000


def reps_for(ms: float) -> int:
    torch.set_num_threads(1)
    x = torch.rand(1, 3, SIZE + 32, SIZE + 32)
    blur(x, 3)
    t = time.perf_counter()
    blur(x, 20)
    one = (time.perf_counter() - t) / 20 * 1000
    torch.set_num_threads(torch.get_num_threads())
    return max(1, round(ms / one)), one


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--augment-ms", type=float, default=3.0, help="CPU time of one sample's augmentation")
    p.add_argument("--kernel", type=int, default=9, help="the blur's size in pixels (odd, 3 or more)")
    p.add_argument("--seconds", type=float, default=15, help="length of the timed part")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps before the window")
    p.add_argument("--model", default="resnet50", choices=["resnet50", "resnet101", "resnet152"],
                   help="the torchvision model trained (more layers: more GPU work per image)")
    args = p.parse_args()
    global KERNEL
    if args.kernel < 3 or args.kernel % 2 == 0:
        print(f"augment_train: --kernel {args.kernel}: give an odd size of 3 or more, e.g. 5", file=sys.stderr)
        return 2
    KERNEL = args.kernel
    if not torch.cuda.is_available():
        print("augment_train: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    import torchvision

    reps, one_ms = reps_for(args.augment_ms)
    torch.set_num_threads(4)
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    model = getattr(torchvision.models, args.model)(num_classes=1000).to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    loss_fn = nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(Augmented(10**7, reps, args.kernel), batch_size=args.batch, shuffle=False,
                                         num_workers=args.workers, pin_memory=True, persistent_workers=args.workers > 0,
                                         prefetch_factor=4 if args.workers > 0 else None)
    mean = torch.tensor([123.7, 116.3, 103.5], device=dev).view(1, 3, 1, 1)
    std = torch.tensor([58.4, 57.1, 57.4], device=dev).view(1, 3, 1, 1)

    it = iter(loader)

    def step():
        x, y = next(it)
        x = ((x.to(dev, non_blocking=True).float() - mean) / std).contiguous(memory_format=torch.channels_last)
        amp_train_step(model, opt, scaler, loss_fn, x, y.to(dev, non_blocking=True))

    steps, elapsed = run_window(step, steps=0, warmup=args.warmup, sync=torch.cuda.synchronize, seconds=args.seconds)
    print(json.dumps({"model": args.model, "workers": args.workers, "batch": args.batch, "kernel": args.kernel, "augment_reps": reps,
                      "blur_ms": round(one_ms, 3), "augment_ms_target": args.augment_ms, "steps": steps,
                      "seconds": round(elapsed, 3), "images_per_s": round(steps * args.batch / elapsed, 1)}),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
