#!/usr/bin/env python3
"""Writes docs/openapi.json from `feedproxy --openapi`: the document the service serves, derived
from the route declarations (Sources/Service/Catalog/, Routes/OperationalRoutes.swift). A test
checks the committed file against the served document. Then scripts/generate/route-tables.py
writes the README's route table and docs/API.md's operation list from it.
Usage: scripts/generate/openapi.py [path to feedproxy]   (default: .build/debug/feedproxy; build it first)"""
import pathlib, subprocess, sys

root = pathlib.Path(__file__).resolve().parent.parent.parent
binary = sys.argv[1] if len(sys.argv) > 1 else str(root / ".build" / "debug" / "feedproxy")
document = subprocess.run([binary, "--openapi"], check=True, capture_output=True, text=True).stdout
target = root / "docs" / "openapi.json"
if not target.exists() or target.read_text() != document:
    target.write_text(document)
print(f"docs/openapi.json: {len(document)} bytes")
subprocess.run([sys.executable, str(root / "scripts" / "generate" / "route-tables.py")], check=True)
