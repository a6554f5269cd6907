#!/usr/bin/env python3
"""make lint: the demo page's files read as what they are (Sources/Service/Demo/demo.*, embedded
in the binary at build time): the JavaScript parsed as an ES module by Node (`node --check`), the
CSS by tinycss2 (every rule and declaration), the HTML by html5lib in strict mode (any parse
error fails). Installs what is missing: nodejs (apt, as root), tinycss2 and html5lib (pip)."""
import os
import shutil
import subprocess
import sys
import tempfile

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "Sources", "Service", "Demo")


def need_python(module, package):
    try:
        __import__(module)
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True,
                       stderr=subprocess.DEVNULL if os.geteuid() == 0 else None)


def need_node():
    if shutil.which("node"):
        return "node"
    if os.geteuid() != 0:
        sys.exit("demo-lint: missing node (run as root, or: sudo apt-get install nodejs)")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "nodejs"], check=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return "node"


def lint_js(path):
    node = need_node()
    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, "demo.mjs")  # .mjs: parsed as the module the page loads
        shutil.copyfile(path, module)
        done = subprocess.run([node, "--check", module], capture_output=True, text=True)
    return [] if done.returncode == 0 else [done.stderr.strip().replace(module, path)]


def lint_css(path):
    need_python("tinycss2", "tinycss2")
    import tinycss2
    text = open(path, encoding="utf-8").read()
    problems = []

    def check(nodes, where):
        for node in nodes:
            if node.type == "error":
                problems.append(f"{path}:{node.source_line}:{node.source_column}: {where}: {node.message}")

    rules = tinycss2.parse_stylesheet(text, skip_whitespace=True, skip_comments=True)
    check(rules, "rule")
    for rule in rules:
        if rule.type == "qualified-rule" or (rule.type == "at-rule" and rule.content is not None and rule.at_keyword != "media"):
            check(tinycss2.parse_declaration_list(rule.content, skip_whitespace=True, skip_comments=True), "declaration")
        if rule.type == "at-rule" and rule.at_keyword == "media" and rule.content is not None:
            inner = tinycss2.parse_rule_list(rule.content, skip_whitespace=True, skip_comments=True)
            check(inner, "rule in @media")
            for r in inner:
                if r.type == "qualified-rule":
                    check(tinycss2.parse_declaration_list(r.content, skip_whitespace=True, skip_comments=True), "declaration in @media")
    return problems


def lint_html(path):
    need_python("html5lib", "html5lib")
    import html5lib
    parser = html5lib.HTMLParser(strict=True)
    try:
        parser.parse(open(path, "rb").read())
        return []
    except Exception as error:  # html5lib raises ParseError with the position in its message
        return [f"{path}: {error}"]


def main():
    problems = (lint_js(os.path.join(DEMO, "demo.js")) + lint_css(os.path.join(DEMO, "demo.css"))
                + lint_html(os.path.join(DEMO, "demo.html")))
    for p in problems:
        print(p)
    if problems:
        sys.exit(f"demo-lint: {len(problems)} problems")
    print("demo-lint: demo.js (ES module), demo.css and demo.html parse clean")


if __name__ == "__main__":
    main()
