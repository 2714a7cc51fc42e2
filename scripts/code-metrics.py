#!/usr/bin/env python3
"""Code metrics for the redesign notes: per crate, lines and `pub` items; the longest
production functions; `Result<_, String>` in production code.

    python3 scripts/code-metrics.py [--longest N]   (default 10)

Production code is every `src/` file of a workspace crate, less `#[cfg(test)]` modules and
`tests.rs` files. A function's length counts the lines from its `fn` line to its closing
brace. The scan is lexical (strings, chars and comments are skipped), not a Rust parser.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def crates():
    out = []
    for top in ("ir", "passes", "compiler"):
        base = os.path.join(ROOT, top)
        if os.path.isfile(os.path.join(base, "Cargo.toml")):
            out.append(top)
        elif os.path.isdir(base):
            for d in sorted(os.listdir(base)):
                if os.path.isfile(os.path.join(base, d, "Cargo.toml")):
                    out.append(f"{top}/{d}")
    return out


def strip(text):
    """The text with comments, strings and chars blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j]) + '"')
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or text.startswith("'\\u{", i):
            j = text.find("'", i + 1)
            out.append("' '" + " " * (j - i - 2))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def test_ranges(code):
    """Line ranges (0-based, inclusive) of `#[cfg(test)]` items."""
    lines = code.split("\n")
    ranges = []
    for i, line in enumerate(lines):
        if line.strip().startswith("#[cfg(test)]"):
            end = block_end(lines, i)
            ranges.append((i, end))
    return ranges


def block_end(lines, start):
    depth, opened = 0, False
    for k in range(start, len(lines)):
        for ch in lines[k]:
            if ch == "{":
                depth += 1
                opened = True
            elif ch == "}":
                depth -= 1
        if opened and depth <= 0:
            return k
        if not opened and lines[k].rstrip().endswith(";") and k > start:
            return k
    return len(lines) - 1


def production_files(crate):
    src = os.path.join(ROOT, crate, "src")
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith(".rs") and f != "tests.rs" and "/tests/" not in os.path.join(root, f)[len(src):]:
                yield os.path.join(root, f)


FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+([A-Za-z_0-9]+)")
PUB = re.compile(r"^\s*pub\s+(async\s+)?(fn|struct|enum|trait|type|const|static|mod|use|macro)\b")
RESTRICTED = re.compile(r"^\s*pub\((crate|super|in [^)]*)\)\s")
def result_strings(line):
    """How many `Result<_, String>` the line spells (the error type at the Result's own level)."""
    n = 0
    for m in re.finditer(r"\bResult<", line):
        depth, args, cur = 1, [], ""
        for ch in line[m.end():]:
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
                if depth == 0:
                    args.append(cur)
                    break
            if ch == "," and depth == 1:
                args.append(cur)
                cur = ""
            else:
                cur += ch
        if len(args) == 2 and args[1].strip() == "String":
            n += 1
    return n


def main():
    longest_n = 10
    if "--longest" in sys.argv:
        longest_n = int(sys.argv[sys.argv.index("--longest") + 1])
    fns = []
    total = {"lines": 0, "pub": 0, "restricted": 0, "result_string": 0}
    print(f"{'crate':22} {'files':>5} {'lines':>7} {'pub':>5} {'pub(..)':>7} {'Result<_,String>':>16}")
    for crate in crates():
        files = lines_n = pub_n = restricted_n = rs_n = 0
        for path in production_files(crate):
            text = open(path, encoding="utf-8").read()
            code = strip(text)
            lines = code.split("\n")
            skip = set()
            for a, b in test_ranges(code):
                skip.update(range(a, b + 1))
            files += 1
            lines_n += len(text.split("\n")) - (1 if text.endswith("\n") else 0)
            for i, line in enumerate(lines):
                if i in skip:
                    continue
                if PUB.match(line):
                    pub_n += 1
                if RESTRICTED.match(line):
                    restricted_n += 1
                rs_n += result_strings(line)
                m = FN.match(line)
                if m and "{" in "".join(lines[i:i + 40]):
                    end = block_end(lines, i)
                    rel = os.path.relpath(path, ROOT)
                    fns.append((end - i + 1, f"{rel}:{i + 1}", m.group(6)))
        print(f"{crate:22} {files:5} {lines_n:7} {pub_n:5} {restricted_n:7} {rs_n:16}")
        total["lines"] += lines_n
        total["pub"] += pub_n
        total["restricted"] += restricted_n
        total["result_string"] += rs_n
    print(f"{'total':22} {'':5} {total['lines']:7} {total['pub']:5} {total['restricted']:7} {total['result_string']:16}")
    over = [f for f in fns if f[0] > 80]
    by_crate = {}
    for _, where, _ in over:
        crate = next((c for c in crates() if where.startswith(c + "/")), "?")
        by_crate[crate] = by_crate.get(crate, 0) + 1
    print(f"\nproduction functions over 80 lines: {len(over)} "
          + "(" + ", ".join(f"{c} {n}" for c, n in sorted(by_crate.items())) + ")")
    print(f"\nlongest production functions:")
    for n, where, name in sorted(fns, reverse=True)[:longest_n]:
        print(f"  {n:4} lines  {name}  ({where})")


if __name__ == "__main__":
    main()
