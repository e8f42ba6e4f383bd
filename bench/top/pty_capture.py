#!/usr/bin/env python3
"""Runs a full-screen command in a pseudo-terminal of a given size and keeps its screens as text.

For machines without tmux: `diescope top` redraws its whole screen at every refresh (cursor home,
each line, erase to the end of the screen), so one screen is the text between a cursor-home and
the next erase-below, with the few escape codes top uses removed.

    pty_capture.py --cols 120 --rows 40 --every 2 --seconds 60 --frames FILE --pid-file F -- CMD...

Every --every seconds the newest complete screen goes to FILE under a '=== t=SECONDS' line; at the
end 'q' is sent, and the command's exit code is printed.
"""
import argparse
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def newest_screen(raw: bytes):
    end = raw.rfind(b"\x1b[J")
    if end < 0:
        return None
    start = raw.rfind(b"\x1b[H", 0, end)
    if start < 0:
        return None
    text = ESCAPES.sub(b"", raw[start:end]).decode("utf-8", "replace")
    return text.replace("\r\n", "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cols", type=int, default=120)
    p.add_argument("--rows", type=int, default=40)
    p.add_argument("--every", type=float, default=2)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--frames", required=True)
    p.add_argument("--pid-file")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command and a.command[0] == "--" else a.command
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", a.rows, a.cols, 0, 0))
    child = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                             preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    if a.pid_file:
        with open(a.pid_file, "w") as f:
            f.write(f"{child.pid}\n")
    raw = bytearray()
    start = time.monotonic()
    next_capture = start + a.every
    quit_sent = None
    with open(a.frames, "w") as frames:
        while True:
            now = time.monotonic()
            if quit_sent is None and now - start >= a.seconds:
                os.write(master, b"q")
                quit_sent = now
            if quit_sent is not None and (child.poll() is not None or now - quit_sent > 10):
                break
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    chunk = b""
                if not chunk and child.poll() is not None:
                    break
                raw += chunk
                if len(raw) > 4 << 20:
                    del raw[: len(raw) - (1 << 20)]
            if now >= next_capture and quit_sent is None:
                screen = newest_screen(bytes(raw))
                if screen is not None:
                    frames.write(f"=== t={now - start:.1f}\n{screen}\n")
                    frames.flush()
                next_capture += a.every
    try:
        code = child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
    # What the terminal showed last: top leaves the alternate screen (ESC[?1049l) on its way out.
    left = b"\x1b[?1049l" in raw[-200:]
    print(f"exit {code}; left the alternate screen: {'yes' if left else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
