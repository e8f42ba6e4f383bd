"""The mixed-precision training step the PyTorch workloads share (resnet50_amp.py, augment_train.py):
fp16 autocast for the forward pass and the loss, the loss scaled for the backward pass, one optimiser
step."""
import torch


def amp_train_step(model, opt, scaler, loss_fn, x, y):
    """One training step on the batch (x, y) under fp16 autocast with a GradScaler."""
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
