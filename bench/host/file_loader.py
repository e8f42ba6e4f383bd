#!/usr/bin/env python3
"""A training loop that reads its input from a file before each step, for the own-I/O rule of the
idle explanation (docs/method.md#stranded-idle-explained). Each step reads --chunk-mb of the file and
then runs a short GPU step (a matmul, synchronised), so the GPU idles while the input is read.

  --reader main       the main process reads each chunk itself (num_workers=0)
  --reader workers    --workers processes read the chunks and hand them over a queue
  --cache             read the whole file once first and keep it cached: the steps' reads hit the
                      page cache (no storage I/O); without it every chunk is dropped from the cache
                      (posix_fadvise DONTNEED) before it is read, so each read goes to the device
  --gpu none          no GPU step (the CPU machine): the loop sleeps --step-ms instead

Prints one JSON line at the end: steps, bytes read, seconds, and the seconds spent reading and in
GPU steps, measured by the loop itself (the truth the rule is checked against).
"""
import argparse
import json
import multiprocessing as mp
import os
import time


def make_file(path, mb):
    if os.path.exists(path) and os.path.getsize(path) >= mb << 20:
        return
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(mb):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())


def read_chunk(path, offset, size, drop):
    fd = os.open(path, os.O_RDONLY)
    try:
        if drop:
            os.posix_fadvise(fd, offset, size, os.POSIX_FADV_DONTNEED)
        got = 0
        while got < size:
            buf = os.pread(fd, min(size - got, 8 << 20), offset + got)
            if not buf:
                break
            got += len(buf)
        return got
    finally:
        os.close(fd)


def worker(path, size, chunks, drop, tasks, done):
    while True:
        i = tasks.get()
        if i is None:
            return
        done.put(read_chunk(path, (i % chunks) * size, size, drop))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--file-mb", type=int, default=4096)
    ap.add_argument("--chunk-mb", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--reader", choices=["main", "workers"], default="main")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--cache", action="store_true")
    ap.add_argument("--gpu", choices=["cuda", "none"], default="cuda")
    ap.add_argument("--step-ms", type=float, default=5)
    a = ap.parse_args()
    make_file(a.file, a.file_mb)
    size = a.chunk_mb << 20
    chunks = (a.file_mb << 20) // size
    drop = not a.cache
    if a.cache:  # warm the page cache with the whole file
        for i in range(chunks):
            read_chunk(a.file, i * size, size, False)
    step = None
    if a.gpu == "cuda":
        import torch

        x = torch.randn(4096, 4096, device="cuda")
        torch.cuda.synchronize()

        def step():
            for _ in range(4):
                x.matmul(x)
            torch.cuda.synchronize()
    else:

        def step():
            time.sleep(a.step_ms / 1e3)

    step()
    tasks = done = procs = None
    if a.reader == "workers":
        tasks, done = mp.Queue(), mp.Queue()
        procs = [mp.Process(target=worker, args=(a.file, size, chunks, drop, tasks, done), name="loader")
                 for _ in range(a.workers)]
        for p in procs:
            p.start()
        for i in range(2 * a.workers):  # prefetch, as a DataLoader does
            tasks.put(i)
    print("diescope: measure start", flush=True)
    t0 = time.monotonic()
    steps = read_bytes = 0
    read_s = step_s = 0.0
    i = 2 * a.workers if a.reader == "workers" else 0
    while time.monotonic() - t0 < a.seconds:
        r0 = time.monotonic()
        if a.reader == "main":
            read_bytes += read_chunk(a.file, (i % chunks) * size, size, drop)
        else:
            read_bytes += done.get()
            tasks.put(i)
        i += 1
        r1 = time.monotonic()
        step()
        r2 = time.monotonic()
        read_s += r1 - r0
        step_s += r2 - r1
        steps += 1
    wall = time.monotonic() - t0
    print("diescope: measure stop", flush=True)
    if procs:
        for _ in procs:
            tasks.put(None)
        for p in procs:
            p.join(timeout=30)
    print(json.dumps({"reader": a.reader, "cache": a.cache, "steps": steps, "bytes": read_bytes,
                      "seconds": round(wall, 3), "read_mb_per_s": round(read_bytes / wall / 1e6, 1),
                      "waiting_on_input_s": round(read_s, 3), "gpu_step_s": round(step_s, 3)}), flush=True)


if __name__ == "__main__":
    main()
