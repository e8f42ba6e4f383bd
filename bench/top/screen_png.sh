#!/usr/bin/env bash
# A text capture of `diescope top` (one screen, as tmux capture-pane or bench/top/pty_capture.py
# keeps it) as a PNG: an HTML page of the text in a terminal's colours, photographed by headless
# Chromium. The first line is drawn in reverse video, as top draws its header.
#
#   bench/top/screen_png.sh SCREEN.txt OUT.png [COLUMNS ROWS]
set -euo pipefail
text=${1:?usage: bench/top/screen_png.sh SCREEN.txt OUT.png [COLUMNS ROWS]}
png=${2:?usage: bench/top/screen_png.sh SCREEN.txt OUT.png [COLUMNS ROWS]}
cols=${3:-120}
rows=${4:-40}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "screen_png: no chromium on PATH; install Debian's chromium" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$text" "$work/screen.html" "$cols" "$rows" <<'PY'
import html, sys
src, dst, cols, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lines = open(src, encoding="utf-8").read().split("\n")[:rows]
lines += [""] * (rows - len(lines))
body = []
for i, line in enumerate(lines):
    line = line.ljust(cols)
    cls = ' class="header"' if i == 0 else ""
    body.append(f"<div{cls}>{html.escape(line)}</div>")
open(dst, "w", encoding="utf-8").write(f"""<!doctype html><meta charset="utf-8"><style>
html, body {{ margin: 0; background: #1e1e1e; }}
#screen {{ padding: 10px; font: 15px/18px "DejaVu Sans Mono", monospace; color: #d4d4d4; white-space: pre;
          display: inline-block; }}
#screen div {{ height: 18px; }}
.header {{ background: #d4d4d4; color: #1e1e1e; }}
</style><div id="screen">{"".join(body)}</div>""")
PY
# One cell is 9 px wide in DejaVu Sans Mono at 15 px; 18 px tall.
width=$((cols * 9 + 20))
height=$((rows * 18 + 20))
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
  --window-size="$width,$height" --screenshot="$png" "file://$work/screen.html" > /dev/null 2>&1
[ -s "$png" ] || { echo "screen_png: chromium wrote no $png" >&2; exit 1; }
echo "wrote $png (${width}x${height})"
