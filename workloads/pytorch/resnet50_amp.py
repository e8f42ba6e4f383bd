#!/usr/bin/env python3
"""ResNet-50 training (or, with --infer, inference) with automatic mixed precision on synthetic data, for
measuring with diescope.

Prints the window markers diescope's `run --window markers` reads, flushed, around the timed steps
(after model build and warm-up, before teardown), and one JSON line with what it counted.

With --profile-steps K, the first K timed steps run between cudaProfilerStart and cudaProfilerStop, so
`ncu --profile-from-start off` profiles those steps only, on every thread: autograd launches the
backward pass from its own thread, which an NVTX push/pop range on the main thread does not enclose.
Without a profiler attached the two calls do nothing.

    diescope run --window markers -- python3 workloads/pytorch/resnet50_amp.py --steps 100
    diescope run --window markers -- python3 workloads/pytorch/resnet50_amp.py --infer --steps 100
"""
import argparse
import json
import sys

import torch
import torch.nn as nn

from amp_step import amp_train_step
from steady_window import run_window


def resnet50(num_classes: int) -> nn.Module:
    try:
        import torchvision  # the reference model, when the machine has it

        return torchvision.models.resnet50(num_classes=num_classes)
    except ImportError:
        pass

    # The same architecture (He et al. 2016, v1.5: stride on the 3x3 conv) for machines without torchvision.
    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * self.expansion
            self.body = nn.Sequential(
                nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.body(x) + self.skip(x))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes)]
    return nn.Sequential(*layers)


def amp_resnet50(batch: int):
    """ResNet-50 (channels-last, on the GPU, cuDNN's autotuner on) with SGD, a GradScaler, cross-entropy and
    one synthetic batch of `batch` images: (model, opt, scaler, loss_fn, x, y), as the training runs here, in
    examples/python/train_resnet50.py and in bench/energy/resnet50_steps.py set it up."""
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    model = resnet50(1000).to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(batch, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device=dev)
    return model, opt, scaler, nn.CrossEntropyLoss(), x, y


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=100, help="timed training steps inside the window")
    p.add_argument("--warmup", type=int, default=15, help="untimed steps before the window")
    p.add_argument("--seconds", type=float, default=0, help="run the timed part for this long instead of --steps")
    p.add_argument("--log-every-s", type=float, default=0,
                   help="inside the window, synchronise about this often and print a JSON line with the wall "
                        "time and the steps done so far (for throughput over stretches of the run)")
    p.add_argument("--infer", action="store_true", help="forward passes only (eval mode, no autograd)")
    p.add_argument("--profile-steps", type=int, default=0,
                   help="run the first K timed steps between cudaProfilerStart and cudaProfilerStop")
    args = p.parse_args()
    if args.profile_steps < 0 or (args.profile_steps and args.seconds > 0) or args.profile_steps > args.steps:
        print(f"resnet50_amp: --profile-steps {args.profile_steps} needs --steps (not --seconds) and must lie "
              f"between 0 and --steps {args.steps}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("resnet50_amp: no CUDA device visible to PyTorch; run it on a machine with an NVIDIA GPU", file=sys.stderr)
        return 2

    model, opt, scaler, loss_fn, x, y = amp_resnet50(args.batch)

    def train_step():
        amp_train_step(model, opt, scaler, loss_fn, x, y)

    def infer_step():
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
            model(x)

    if args.infer:
        model.eval()
    step = infer_step if args.infer else train_step

    steps, elapsed = run_window(step, steps=args.steps, warmup=args.warmup, sync=torch.cuda.synchronize,
                                profiler_start=torch.cuda.profiler.start, profiler_stop=torch.cuda.profiler.stop,
                                profile_steps=args.profile_steps, seconds=args.seconds, log_every_s=args.log_every_s)
    print(json.dumps({"workload": "resnet50_amp", "mode": "infer" if args.infer else "train", "batch": args.batch,
                      "steps": steps, "seconds": elapsed,
                      "images_per_s": steps * args.batch / elapsed, "gpu": torch.cuda.get_device_name(0),
                      "torch": torch.__version__}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
