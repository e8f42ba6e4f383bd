#!/usr/bin/env python3
"""report.html and the roofline plot as a person sees them: loaded in headless Chromium at 800 and
1400 px, with a script that measures what the browser drew (docs/report.md#reporthtml,
docs/roofline.md#the-plot).

- report.html (the bundled ResNet-50 and input-bound recordings): nothing is wider than the window,
  the terminal block shows its lines whole (not cut off), every chart has its own time axis, and the
  caveats come before the first chart;
- roofline.svg (data/roofline/h200-workloads.csv): no two texts overlap, as Chromium measured their
  boxes, and every text lies inside the picture.

    html_in_chromium_test.py DIESCOPE SOURCE_DIR

Exits 77 (skipped) when Chromium is not installed (scripts/setup.sh installs it).
"""
import json
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
work = Path(tempfile.mkdtemp(prefix="diescope-chromium-"))
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if detail:
            print("     " + str(detail)[:2000])


def measured(page, script, width):
    """Loads `page` with `script` appended at `width` px; the script's JSON result."""
    copy = work / f"probe-{width}-{page.name}.html"
    text = page.read_text(encoding="utf-8")
    probe = ("<script>(function(){var r;try{r=(" + script + ")();}catch(e){r={error:String(e)};}"
             "var p=document.createElement('pre');p.id='probe-result';p.textContent=JSON.stringify(r);"
             "document.body.appendChild(p);})();</script>")
    if page.suffix == ".svg":  # an SVG file: wrapped in a page at its own size
        text = f"<!doctype html><html><body style=\"margin:0\">{text}</body></html>"
    copy.write_text(text.replace("</body>", probe + "</body>") if "</body>" in text else text + probe,
                    encoding="utf-8")
    out = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={work / 'profile'}", f"--window-size={width},900",
                          "--virtual-time-budget=3000", "--dump-dom", copy.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    start = out.rfind('<pre id="probe-result">')
    if start < 0:
        return {"error": "no result in the DOM"}
    body = out[start + len('<pre id="probe-result">'):out.find("</pre>", start)]
    body = body.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(body)


REPORT_PROBE = """function(){
  var pre=document.querySelector('pre');
  var charts=document.querySelectorAll('.chart'), without=0;
  charts.forEach(function(c){ if(!c.classList.contains('main') && !c.querySelector('.axis') && c.querySelector('svg')
                                 && !c.querySelector('.strip')) without++; });
  var cav=document.getElementById('caveats'), run=document.getElementById('run');
  return {inner:innerWidth, scroll:document.documentElement.scrollWidth,
          preScroll:pre.scrollWidth, preClient:pre.clientWidth, charts:charts.length, withoutAxis:without,
          caveatsFirst: !!cav && !!run && (cav.getBoundingClientRect().top < run.getBoundingClientRect().top)};
}"""

SVG_PROBE = """function(){
  var svg=document.querySelector('svg'), box=svg.getBoundingClientRect(), t=[].slice.call(svg.querySelectorAll('text'));
  var r=t.map(function(e){var b=e.getBoundingClientRect();return {s:e.textContent,l:b.left,t:b.top,r:b.right,b:b.bottom};});
  var over=[], out=[];
  for(var i=0;i<r.length;i++){
    if(r[i].l<box.left-0.5||r[i].r>box.right+0.5||r[i].t<box.top-0.5||r[i].b>box.bottom+0.5) out.push(r[i].s);
    for(var j=i+1;j<r.length;j++){var a=r[i],c=r[j];
      if(a.l<c.r&&c.l<a.r&&a.t<c.b&&c.t<a.b) over.push(a.s+' | '+c.s);}
  }
  return {texts:r.length, overlaps:over, outside:out};
}"""

reports = {}
for name, rec in (("resnet50", "data/recordings/h200/resnet50.dsrec"),
                  ("input-bound", "data/recordings/h200/input-bound-2w.dsrec")):
    subprocess.run([diescope, "report", str(src / rec), "--format", "html", "--output", str(work / name)],
                   check=True, capture_output=True)
    reports[name] = work / name / "report.html"
subprocess.run([diescope, "roofline", "plot", "--from-csv", str(src / "data/roofline/h200-workloads.csv"),
                "--output", str(work / "roofline")], check=True, capture_output=True)

for name, page in reports.items():
    for width in (800, 1400):
        m = measured(page, REPORT_PROBE, width)
        if "error" in m:
            check(f"{name} at {width} px: the probe ran", False, m)
            continue
        check(f"{name} at {width} px: nothing wider than the window ({m['scroll']} <= {m['inner']})",
              m["scroll"] <= m["inner"], m)
        check(f"{name} at {width} px: the terminal block is not cut off", m["preScroll"] <= m["preClient"], m)
        check(f"{name} at {width} px: every small chart has its time axis ({m['charts']} charts)",
              m["withoutAxis"] == 0 and m["charts"] > 10, m)
        check(f"{name} at {width} px: the caveats come before the charts", m["caveatsFirst"], m)

m = measured(work / "roofline" / "roofline.svg", SVG_PROBE, 1000)
check(f"roofline.svg: the probe measured its texts ({m.get('texts')})", m.get("texts", 0) > 20, m)
check("roofline.svg: no two texts overlap as Chromium draws them", not m.get("overlaps"), m.get("overlaps"))
check("roofline.svg: every text inside the picture", not m.get("outside"), m.get("outside"))

shutil.rmtree(work, ignore_errors=True)
print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
sys.exit(1 if failures else 0)
