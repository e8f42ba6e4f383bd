#!/usr/bin/env python3
"""ResNet-50 training steps with NVTX ranges, for `diescope roofline profile`.

    resnet50_steps.py [--warmup W] [--steps S] [--batch B] [--backward-range startend|push] [--probe]

Runs W warm-up steps, then S training steps (SGD with momentum, fp32 weights, random data) between
cudaProfilerStart and cudaProfilerStop, so `ncu --profile-from-start off` profiles only those.
Every step marks three NVTX ranges: "forward", "backward" and "optimizer".

Why backward is marked differently (docs/roofline.md#regions): NVTX push/pop ranges belong to the
thread that pushed them, and autograd runs the backward pass of CUDA tensors on its own device
thread, so a range pushed on the main thread around loss.backward() does not enclose the backward
kernels in Nsight Compute's view. A start/end range (nvtxRangeStartEx) is process-wide: it encloses
every kernel launched, by any thread, between its start and its end, and loss.backward() returns
only when the backward pass is done. `--backward-range push` keeps the naive marking, to show the
difference; `--probe` alternates the two, one step each.

ResNet-50 comes from torchvision when it is installed, else from the definition below (the same
architecture: bottleneck blocks 3-4-6-3, widths 64-128-256-512, expansion 4).
"""
import argparse
import sys

import torch
import torch.nn as nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


def resnet50_plain(num_classes=1000):
    layers, inplanes = [], 64
    for planes, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        down = None
        if stride != 1 or inplanes != planes * 4:
            down = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4))
        stage = [Bottleneck(inplanes, planes, stride, down)]
        inplanes = planes * 4
        stage += [Bottleneck(inplanes, planes) for _ in range(1, blocks)]
        layers.append(nn.Sequential(*stage))
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                         nn.MaxPool2d(3, 2, 1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(2048, num_classes))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--backward-range", choices=["startend", "push"], default="startend")
    ap.add_argument("--probe", action="store_true", help="alternate the backward markings, one step each")
    args = ap.parse_args()
    try:
        import torchvision
        model, source = torchvision.models.resnet50(weights=None), "torchvision " + torchvision.__version__
    except ImportError:
        model, source = resnet50_plain(), "the definition in this script (torchvision is not installed)"
    print(f"resnet50 from {source}; torch {torch.__version__}", file=sys.stderr)
    model = model.cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (args.batch,), device="cuda")
    nvtx = torch.cuda.nvtx

    def step(marking):
        nvtx.range_push("forward")
        loss = loss_fn(model(x), y)
        nvtx.range_pop()
        if marking == "push":
            nvtx.range_push("backward")
            loss.backward()
            torch.cuda.synchronize()
            nvtx.range_pop()
        else:
            rid = nvtx.range_start("backward")
            loss.backward()
            torch.cuda.synchronize()  # every backward kernel launched before the range ends
            nvtx.range_end(rid)
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()

    for _ in range(args.warmup):
        step(args.backward_range)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for i in range(args.steps):
        step(("push", "startend")[i % 2] if args.probe else args.backward_range)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"done: {args.steps} profiled steps of batch {args.batch}", file=sys.stderr)


if __name__ == "__main__":
    main()
