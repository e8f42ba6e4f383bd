#!/usr/bin/env python3
"""A capture's report.html as a person sees it (docs/agent.md#what-a-capture-holds): the agent replays
a bundled H200 recording with a gap rule that fires on its first window, and the capture's page is
loaded in headless Chromium at 800 and 1400 px. Checked as the browser drew it: the capture's box is
the first thing under the title, above the cards; it shows the trigger, the job, the verdict and the
energy slot and the NVTX row, each on its own row; nothing is wider than the window. A screenshot of each width is
kept beside the log (SCREENSHOT_DIR, default the scratch folder) for a person to look at.

    capture_html_in_chromium_test.py DIESCOPE SOURCE_DIR

Exits 77 (skipped) when Chromium is not installed (scripts/setup.sh installs it).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

diescope, src = sys.argv[1], Path(sys.argv[2])
browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
if not browser:
    print("SKIP: no chromium on PATH (scripts/setup.sh installs Debian's chromium)")
    sys.exit(77)
work = Path(tempfile.mkdtemp(prefix="diescope-capture-chromium-"))
shots = Path(os.environ.get("SCREENSHOT_DIR", work))
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if detail:
            print("     " + str(detail)[:2000])


def chromium(*args):
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={work / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


PROBE = """function(){
  var box=document.getElementById('capture'), cards=document.querySelector('.cards');
  var rows=['capture-job','capture-verdict','capture-energy','capture-nvtx'].map(function(id){
    var e=document.getElementById(id); return e ? e.textContent : null;});
  var first=null; for (var e=document.body.firstElementChild; e; e=e.nextElementSibling) {
    if (e.tagName!=='H1' && e.tagName!=='P' && e.tagName!=='STYLE') { first=e.id||e.className; break; } }
  return {inner:innerWidth, scroll:document.documentElement.scrollWidth, first:first,
          above: !!box && !!cards && box.getBoundingClientRect().bottom <= cards.getBoundingClientRect().top,
          text: box ? box.textContent : '', rows: rows,
          boxWidth: box ? box.getBoundingClientRect().width : 0};
}"""


def measured(page, width):
    copy = work / f"probe-{width}.html"
    probe = ("<script>(function(){var r;try{r=(" + PROBE + ")();}catch(e){r={error:String(e)};}"
             "var p=document.createElement('pre');p.id='probe-result';p.textContent=JSON.stringify(r);"
             "document.body.appendChild(p);})();</script>")
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
    out = chromium(f"--window-size={width},900", "--virtual-time-budget=3000", "--dump-dom", copy.as_uri()).stdout
    start = out.rfind('<pre id="probe-result">')
    if start < 0:
        return {"error": "no result in the DOM"}
    body = out[start + len('<pre id="probe-result">'):out.find("</pre>", start)]
    return json.loads(body.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))


rules = work / "rules.json"
rules.write_text(json.dumps({"captures": {"folder": str(work / "captures")},
                             "rules": [{"name": "gap-high", "when": "gap_over", "points": 10, "capture_s": 2}]}))
run = subprocess.run([diescope, "agent", "--replay", str(src / "data/recordings/h200/ffma66.dsrec"), "--no-db",
                      "--no-listen", "--duty-on-ms", "1000", "--duty-period-ms", "3000", "--rules", str(rules)],
                     capture_output=True, text=True, timeout=60)
check("the agent ran the replay to its end", run.returncode == 0, run.stderr)
pages = sorted((work / "captures").glob("*/report.html"))
check("the gap rule took one capture with its report.html", len(pages) == 1, run.stderr)
for page in pages[:1]:
    for width in (800, 1400):
        m = measured(page, width)
        if "error" in m:
            check(f"at {width} px: the probe ran", False, m)
            continue
        check(f"at {width} px: nothing wider than the window ({m['scroll']} <= {m['inner']})",
              m["scroll"] <= m["inner"], m)
        check(f"at {width} px: the capture's box comes first, above the cards", m["first"] == "capture" and m["above"],
              m)
        check(f"at {width} px: it shows the trigger", "rule gap-high" in m["text"] and "gap_over" in m["text"], m)
        job, verdict, energy, nvtx = m["rows"]
        check(f"at {width} px: the job row says no job held the GPU (a replay has no holders)",
              job is not None and "no job held the GPU" in job, m)
        check(f"at {width} px: the verdict row says why there is none", verdict is not None and "no verdict" in verdict,
              m)
        # The bundled ffma66 recording holds NVML's power draw and energy counter (format 4).
        check(f"at {width} px: the energy row gives the capture's joules from NVML's counter",
              energy is not None and energy.startswith("Energy") and " J (NVML's energy counter)" in energy, m)
        check(f"at {width} px: the NVTX row says why there are no ranges (a replay names no job)",
              nvtx is not None and "not recorded: attribution is off" in nvtx, m)
        chromium(f"--window-size={width},900", "--hide-scrollbars", f"--screenshot={shots / f'capture-{width}.png'}",
                 page.as_uri())
        check(f"at {width} px: a screenshot was taken", (shots / f"capture-{width}.png").exists())

if os.environ.get("SCREENSHOT_DIR") is None:
    shutil.rmtree(work, ignore_errors=True)
print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
sys.exit(1 if failures else 0)
