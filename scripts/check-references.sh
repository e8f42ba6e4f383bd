#!/usr/bin/env bash
# Checks that the repository stands alone: nothing in it cites a file outside it or the occasion that
# produced a result, every docs/<file>.md#<anchor> citation names a heading that exists, and every
# bench/results/<path> that code, scripts and docs mention exists. Prints `file:line: reason` and the
# fix for each failure and exits 1; prints one line and exits 0 when all is well.
#
#   scripts/check-references.sh [REPO]     REPO defaults to the repository holding this script
#
# PYTHON3 names the interpreter (default python3 on PATH).
# Only tracked files are read (git ls-files), binary files are skipped. scripts/test.sh runs it, so CI
# fails on a bad reference. tests/scripts/check_references_test.sh tests it on throwaway repositories.
set -euo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
if ! git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  echo "check-references: $repo is not a git repository; fix: pass the repository's root folder" >&2
  exit 2
fi
exec "${PYTHON3:-python3}" - "$repo" <<'PY'
import difflib, os, re, subprocess, sys

repo = sys.argv[1]
SELF = "scripts/check-references.sh"

# Lines that must keep an outside reference, each with the reason (none today).
ALLOWED: set = set()

CITE_FIX = ("state the rule or figure in docs/ in the project's own words and cite "
            "docs/<file>.md#<anchor>, or put the data under bench/results/<area>/")
OCCASION_FIX = ("name what was measured, not the occasion: cite the results folder "
                "(bench/results/<area>/<yyyy-mm-dd>-<gpu>-<what>/) or the docs section")
# (pattern, reason, fix). Written so that none of them matches this file's own text.
FORBIDDEN = [
    (re.compile(r"\.\./shar[e]d\b|(?<![A-Za-z0-9_.-])shar[e]d/"),
     "refers to the shared folder outside the repository", CITE_FIX),
    (re.compile(r"DESIG[N]\.md"), "cites the design note outside the repository", CITE_FIX),
    (re.compile(r"(?i)\bsee[d]s/|see[d][ _-]?00[0-9]|see[d][ _-]?00N\b"),
     "cites the method's source documents, which are outside the repository", CITE_FIX),
    (re.compile(r"(?i)\bsessio[n][ _-]?[0-9]+"), "names the occasion that produced something", OCCASION_FIX),
    # "issue 20 s" (an issue step) is a word of the method; "issue #15", "issue 5's", "(issue 6, item 6)" name a request.
    (re.compile(r"(?i)\bissu[e]s? ?#[0-9]+|\bissu[e] [0-9]+(?=[:,)]|'s)"), "names the issue that asked for something",
     "say what the code does and cite the docs section that states the rule (docs/<file>.md#<anchor>)"),
    (re.compile(r"(?i)\bmethod's see[d]s?\b|\bthe see[d]'s\b"), "cites the method's source documents", CITE_FIX),
]
# Saved program output keeps what the program printed then: the two patterns above about requests
# and source documents do not apply to bench/results/ files other than Markdown.
OUTPUT_EXEMPT = {"names the issue that asked for something", "cites the method's source documents"}

# Lower-case words one of the patterns needs: a quick test before any regular expression runs.
FORBIDDEN_WORDS = ("shar" "ed", "desig" "n.md", "see" "d", "sessio" "n", "issu" "e")
PATH_RE = re.compile(r"bench/results/[A-Za-z0-9._+/-]*")
DOC_CITE_RE = re.compile(r"(?<![A-Za-z0-9_./-])docs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]*))?")
REL_LINK_RE = re.compile(r"\]\(([A-Za-z0-9_.-]*\.md)?#([^)\s]*)\)")


def tracked():
    out = subprocess.run(["git", "-C", repo, "ls-files", "-z"], check=True, capture_output=True).stdout
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def text_of(path):
    try:
        with open(os.path.join(repo, path), "rb") as f:
            data = f.read()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def github_anchor(heading):
    """The anchor GitHub gives a heading: markup dropped, lower-case, punctuation other than - and _
    dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)                      # inline HTML
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors_of(text):
    """Every heading anchor of a Markdown text, with GitHub's -1, -2 for repeats; fenced code skipped."""
    anchors, seen, fence = set(), {}, None
    for line in text.splitlines():
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if m:
            if fence is None:
                fence = m.group(1)[0]
            elif m.group(1)[0] == fence:
                fence = None
            continue
        if fence:
            continue
        m = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = github_anchor(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        anchors.add(base if n == 0 else f"{base}-{n}")
    return anchors


files = tracked()
present = [p for p in files if os.path.isfile(os.path.join(repo, p))]
existing = set(present)
for p in present:
    parts = p.split("/")
    for i in range(1, len(parts)):
        existing.add("/".join(parts[:i]))
results_paths = sorted(p for p in existing if p.startswith("bench/results/"))

anchor_cache = {}


def doc_anchors(doc):
    if doc not in anchor_cache:
        text = text_of(doc) if doc in existing else None
        anchor_cache[doc] = None if text is None else anchors_of(text)
    return anchor_cache[doc]


def check_citation(doc, anchor, where, shown, failures):
    anchors = doc_anchors(doc)
    if anchors is None:
        close = difflib.get_close_matches(doc, [p for p in existing if p.startswith("docs/") and p.endswith(".md")], 3)
        fix = "cite an existing document" + (f": {', '.join(close)}" if close else "")
        failures.append((where, f"{shown}: {doc} does not exist", fix))
    elif anchor is not None and anchor != "" and anchor not in anchors:
        close = difflib.get_close_matches(anchor, sorted(anchors), 3, 0.4)
        fix = (f"cite one of its headings: {', '.join(doc + '#' + a for a in close)}" if close
               else f"add the section to {doc} or cite the heading that states the rule")
        failures.append((where, f"{shown}: {doc} has no heading with anchor #{anchor}", fix))


def checks_results_paths(path):
    if path.startswith("bench/results/"):
        return path.endswith(".md")
    return path == "README.md" or path.startswith(("docs/", "src/", "include/", "tests/", "scripts/", "bench/"))


failures = []
for path in present:
    if path == SELF:
        continue
    text = text_of(path)
    if text is None:
        continue
    is_doc = path.startswith("docs/") and path.endswith(".md")
    want_paths = checks_results_paths(path) and "bench/results/" in text
    want_forbidden = any(w in text.lower() for w in FORBIDDEN_WORDS)
    # Most files hold nothing to check: look at them line by line only when something may match.
    if not (want_paths or want_forbidden or "docs/" in text or (is_doc and "#" in text)):
        continue
    for lineno, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{lineno}"
        if (want_forbidden and any(w in line.lower() for w in FORBIDDEN_WORDS)
                and not any(path == p and s in line for p, s in ALLOWED)):
            for pattern, reason, fix in FORBIDDEN:
                if reason in OUTPUT_EXEMPT and path.startswith("bench/results/") and not path.endswith(".md"):
                    continue
                m = pattern.search(line)
                if m:
                    failures.append((where, f"{reason} (\"{m.group(0)}\")", fix))
        if "docs/" in line:
            for m in DOC_CITE_RE.finditer(line):
                check_citation("docs/" + m.group(1), m.group(2), where, m.group(0), failures)
        if is_doc and "#" in line:
            for m in REL_LINK_RE.finditer(line):
                target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1))) if m.group(1) else path
                check_citation(target, m.group(2), where, m.group(0)[2:-1], failures)
        if want_paths and "bench/results/" in line:
            for m in PATH_RE.finditer(line):
                end = m.end()
                if end < len(line) and line[end] in "$<*{[":
                    continue  # a pattern or placeholder, not a path
                ref = m.group(0).rstrip(".,:;").rstrip("/")
                if ref not in existing:
                    close = difflib.get_close_matches(ref, results_paths, 2, 0.6)
                    fix = ("point at its current name" + (f": {', '.join(close)}" if close else "") +
                           " (git ls-files bench/results)")
                    failures.append((where, f"{ref} does not exist", fix))

for where, reason, fix in failures:
    print(f"{where}: {reason}\n    fix: {fix}")
if failures:
    print(f"check-references: {len(failures)} bad reference(s) in tracked files", file=sys.stderr)
    sys.exit(1)
print(f"check-references: {len(present)} tracked files, no outside, occasion or broken references")
PY
