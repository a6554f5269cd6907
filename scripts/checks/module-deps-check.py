#!/usr/bin/env python3
"""make lint: dependencies point one way. The README's module table lists the modules in order
(`| \`Sources/X\` …`); a module may import only modules listed above it (and C shims, and the
toolchain's), never one below or a sibling listed after it. Reads every `import` of every Swift
file under Sources/<Module>/; prints each import against the order and fails on any."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def main():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    order = re.findall(r"^\| `Sources/(\w+)`", readme, re.M)
    if len(order) < 5:
        sys.exit("module-deps-check: README's module table not found")
    rank = {m: i for i, m in enumerate(order)}
    sources = os.path.join(ROOT, "Sources")
    problems, seen = [], 0
    for module in sorted(os.listdir(sources)):
        if module.startswith("C") and module[1:2].isupper():
            continue  # a C shim
        if module not in rank:
            problems.append(f"Sources/{module}: not in README's module table")
            continue
        for folder, _, files in os.walk(os.path.join(sources, module)):
            for name in files:
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(folder, name)
                for line in open(path, encoding="utf-8"):
                    m = re.match(r"\s*(?:@testable\s+|@_\w+\s+)?import\s+(?:\w+\s+)?(\w+)", line)
                    if not m or m.group(1) not in rank:
                        continue
                    seen += 1
                    if rank[m.group(1)] >= rank[module]:
                        problems.append(f"{os.path.relpath(path, ROOT)}: {module} imports {m.group(1)}, listed at or after it")
    for p in problems:
        print(p)
    if problems:
        sys.exit(f"module-deps-check: {len(problems)} imports against the order")
    print(f"module-deps-check: {seen} imports of {len(order)} modules, each of a module listed above its importer")


if __name__ == "__main__":
    main()
