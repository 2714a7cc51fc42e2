#!/usr/bin/env python3
"""Makes a `specc bench` case from a published Python package's source distribution, in the
manner of Commit0: the package's documentation as the spec's text, its public surface as
requirements, its own tests as the hidden suite, and its code removed.

    python3 scripts/make-bench-case.py cachetools==5.5.0 cases/cachetools [--specc PATH]

It downloads the sdist from PyPI's simple index (its sha256 checked; nothing is installed), unpacks it and writes
into the case folder:
  spec.md     the README as the root's prose; a section per documentation file (docs/*.rst,
              *.md, *.txt) with its text; and, from `specc adopt`'s scan of the package's code
              (run on a copy without its tests and docs), a section per module whose public
              items are requirements ("`path` MUST keep `signature`"), the adopted marks
              removed so that every section is built;
  hidden/     the package's tests (tests/ or test/), never shown to a model;
  specc.toml  roles for a live provider to edit, and `[eval]` running the hidden tests with
              pytest against the built tree (`src/` and the root on PYTHONPATH).
The package's code is not copied. The case is a stand-in for Commit0's, not one of them: its
version is what PyPI serves, not the benchmark's pinned commit. See docs/bench.md.
"""

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile

DOC_SUFFIXES = (".rst", ".md", ".txt")

CONFIG = """# A bench case made by scripts/make-bench-case.py from {name} {version}'s sdist.
# Point the roles at your provider (keys stay in the environment), or build it through
# ../shared/tools/model-bridge.py with a provider of kind "openai-compatible".

[providers.live]
kind = "openai-compatible"
base_url = "http://127.0.0.1:8089/v1"

[roles.planner]
provider = "live"
model = "planner"
# A package's whole surface in one plan: a capable planner wrote 14,899 tokens for cachetools.
max_tokens = 16384

[roles.worker]
provider = "live"
model = "worker"
max_tokens = 8192

[prices.planner]
input = 3.0
output = 15.0

[prices.worker]
input = 0.8
output = 4.0

[budget]
dollars = 20.0

[build]
jobs = 1

[limits]
steps = 60
attempt_seconds = 14400
command_seconds = 300

# The package's own tests, never shown to a model. They run in the sandbox with the
# system's python3, which needs pytest (Debian: apt-get install python3-pytest).
[eval]
command = "PYTHONPATH=src:. python3 -m pytest -q -p no:cacheprovider hidden_tests"
tests = "hidden"
into = "hidden_tests"
every = {{ merges = 1 }}
format = "pytest"
"""


def sdist(name, version):
    """The sdist's bytes and file name, from PyPI's simple index (PEP 503), its sha256
    checked."""
    import hashlib
    import html

    url = f"https://pypi.org/simple/{re.sub(r'[-_.]+', '-', name).lower()}/"
    with urllib.request.urlopen(url, timeout=60) as r:
        page = r.read().decode()
    norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()
    for href in re.findall(r'href="([^"]+)"', page):
        href = urllib.parse.urljoin(url, html.unescape(href))
        file = href.split("#")[0].rsplit("/", 1)[-1]
        stem = re.sub(r"\.(tar\.gz|zip)$", "", file)
        if stem == file or norm(stem) != norm(f"{name}-{version}"):
            continue
        want = re.search(r"sha256=([0-9a-f]{64})", href)
        if not want:
            sys.exit(f"{file}: the index gives no sha256 to check it against")
        with urllib.request.urlopen(href.split("#")[0], timeout=120) as r:
            data = r.read()
        if hashlib.sha256(data).hexdigest() != want.group(1):
            sys.exit(f"{file}: its sha256 is not the index's")
        return data, file
    sys.exit(f"{name} {version} has no sdist on PyPI")


def unpack(data, filename, into):
    if filename.endswith(".zip"):
        zipfile.ZipFile(io.BytesIO(data)).extractall(into)
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            t.extractall(into, filter="data")
    entries = os.listdir(into)
    return os.path.join(into, entries[0]) if len(entries) == 1 else into


def readme(root):
    for n in sorted(os.listdir(root)):
        if n.lower().startswith("readme") and os.path.isfile(os.path.join(root, n)):
            with open(os.path.join(root, n), encoding="utf-8", errors="replace") as f:
                text = f.read()
            # Badges and images say nothing a model can build from.
            lines = [l for l in text.splitlines() if not re.match(r"^\s*(\.\. image::|:target:|:alt:|\[!\[)", l)]
            return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return ""


def docs(root):
    out = []
    d = os.path.join(root, "docs")
    if os.path.isdir(d):
        for base, _, files in os.walk(d):
            for n in sorted(files):
                if n.endswith(DOC_SUFFIXES) and not n.startswith(("conf", "Makefile")):
                    p = os.path.join(base, n)
                    with open(p, encoding="utf-8", errors="replace") as f:
                        out.append((os.path.relpath(p, root), f.read().strip()))
    return out


def tests_dir(root):
    for n in ("tests", "test"):
        if os.path.isdir(os.path.join(root, n)):
            return os.path.join(root, n)
    sys.exit("the sdist ships no tests/ or test/ folder: it cannot make a hidden suite")


def surface(root, specc):
    """`specc adopt`'s spec of the package's code alone, its adopted marks removed."""
    with tempfile.TemporaryDirectory() as tmp:
        code = os.path.join(tmp, "code")
        shutil.copytree(root, code, ignore=shutil.ignore_patterns("tests", "test", "docs", "*.egg-info"))
        subprocess.run(["git", "init", "-q", "-b", "main", code], check=True)
        done = subprocess.run([specc, "adopt", code], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"specc adopt failed: {done.stderr}")
        with open(os.path.join(code, "spec.md"), encoding="utf-8") as f:
            text = f.read()
    # Front matter (the [adopted] digests) and the paragraph about adopting go: every
    # section is to be built.
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    text = "\n".join(l for l in text.splitlines() if "`specc adopt` wrote this spec" not in l)
    # Only the package and module sections: from the first `## ` heading.
    at = text.find("\n## ")
    text = text[at + 1:] if at >= 0 else ""
    # The scan's folder name is this script's, not the package's; the code is to be
    # written, not kept.
    text = re.sub(r"^## \w+ `code` \{#code\}", "## The public surface {#code}", text, count=1, flags=re.M)
    text = "\n".join(l for l in text.splitlines() if l.strip() != "The Python code `code`.")
    return text.replace(" MUST keep `", " MUST provide `")


def fence(lines):
    """reStructuredText's literal blocks (`.. code-block:: LANG`, or a paragraph ending in
    `::`) as fenced Markdown blocks, dedented: their lines are code, never headings."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*\.\. (?:code-block|code|sourcecode)::\s*(\S*)", line)
        literal = m or (line.rstrip().endswith("::") and not line.strip().startswith(".."))
        if not literal:
            out.append(line)
            i += 1
            continue
        lang = m.group(1) if m else ""
        if not m:
            out.append(line.rstrip()[:-1])  # "Text::" reads "Text:"
        j = i + 1
        block = []
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
            block.append(lines[j])
            j += 1
        while block and not block[-1].strip():
            block.pop()
        body = [b for b in block if b.strip()]
        if not body:
            i += 1
            continue
        indent = min(len(b) - len(b.lstrip()) for b in body)
        # Options of the directive (`:linenos:`) are not code.
        code = [b[indent:] for b in block if not re.match(r"^\s*:\w[\w-]*:", b)]
        while code and not code[0].strip():
            code.pop(0)
        out += ["", "```" + lang] + code + ["```", ""]
        i = j
    return out


def demote(text):
    """reStructuredText's underlined titles as Markdown headings from level 3 on, in the
    order their underline characters first appear, so that a document's sections stay
    inside its own section of the spec."""
    lines = fence(text.splitlines())
    levels = []
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            # A fenced block is copied as it is.
            j = lines.index("```", i + 1) if "```" in lines[i + 1:] else len(lines) - 1
            out.extend(lines[i : j + 1])
            i = j + 1
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        under = re.fullmatch(r"([=\-~^\"'`#*+])\1{2,}", nxt.strip())
        if line.strip() and under and len(nxt.strip()) >= len(line.strip()) and not re.fullmatch(r"([=\-~^\"'`#*+])\1{2,}", line.strip()):
            c = under.group(1)
            if c not in levels:
                levels.append(c)
            out.append("#" * min(6, 3 + levels.index(c)) + " " + line.strip())
            i += 2
            continue
        # An overline above a title: dropped, the title is taken by the line after.
        if re.fullmatch(r"([=\-~^\"'`#*+])\1{2,}", line.strip()) and nxt.strip() and i + 2 < len(lines) and lines[i + 2].strip() == line.strip():
            i += 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package", help="NAME==VERSION as on PyPI")
    ap.add_argument("out", help="the case folder to make (must not exist)")
    ap.add_argument("--specc", default=shutil.which("specc") or "target/debug/specc")
    a = ap.parse_args()
    name, _, version = a.package.partition("==")
    if not version:
        sys.exit("give NAME==VERSION")
    if os.path.exists(a.out):
        sys.exit(f"{a.out} exists: a case is made anew")
    data, filename = sdist(name, version)
    with tempfile.TemporaryDirectory() as tmp:
        root = unpack(data, filename, tmp)
        tests = tests_dir(root)
        os.makedirs(a.out)
        shutil.copytree(tests, os.path.join(a.out, "hidden"))
        spec = [f"# {name} {version}", "", demote(readme(root)), ""]
        spec.append(
            f"The package `{name}` is written from this text: a Python package importable from "
            "`src/` or the repository's root, using only the standard library unless the text "
            "says otherwise. Its own test suite, never shown, scores it."
        )
        spec.append("")
        for rel, text in docs(root):
            spec += [f"## Documentation: {rel}", "", demote(text), ""]
        spec.append(surface(root, os.path.abspath(a.specc)))
    with open(os.path.join(a.out, "spec.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(spec).rstrip() + "\n")
    with open(os.path.join(a.out, "specc.toml"), "w", encoding="utf-8") as f:
        f.write(CONFIG.format(name=name, version=version))
    print(f"{a.out}: spec.md, specc.toml and hidden/ ({sum(len(f) for _, _, f in os.walk(os.path.join(a.out, 'hidden')))} files) from {filename}")


if __name__ == "__main__":
    main()
