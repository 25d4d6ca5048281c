#!/usr/bin/env python3
"""Rewrites the counts table at the top of docs/conformance.md from its rows (the same rules as
tests/it/conformance_doc.rs, which checks the result)."""
import re, sys, pathlib

doc = pathlib.Path(__file__).resolve().parent.parent / "docs" / "conformance.md"
text = doc.read_text()
groups = ["disruption", "budgets", "termination", "capi", "scheduling"]
counts = {g: [0, 0, 0, 0, 0] for g in groups}
words = ["covered", "gap", "n/a", "differs"]
for line in text.splitlines():
    cells = line.strip().strip("|").split(" | ")
    rid = cells[0].strip()
    if not re.fullmatch(r"[A-Z][A-Za-z]*-[A-Za-z0-9]+-\d+", rid) or len(cells) < 4:
        continue
    status = cells[-1].strip()
    word = "n/a" if status.startswith("n/a") else (status.split(":")[0].split() or [""])[0]
    if word not in words:
        sys.exit(f"{rid}: status {status!r}")
    g = {"D-": "disruption", "B-": "budgets", "C-": "capi"}.get(rid[:2])
    if g is None:
        g = "termination" if rid[:2] in ("T-", "L-", "E-", "G-", "N-") else "scheduling"
    counts[g][0] += 1
    counts[g][words.index(word) + 1] += 1
lines = text.splitlines(keepends=True)
start = next(i for i, l in enumerate(lines) if l.startswith("| suite group |")) + 2
for i, g in enumerate(groups):
    cells = lines[start + i].split("|")
    lines[start + i] = "|".join(cells[:2] + [f" {n} " for n in counts[g]] + [cells[-1]])
total = [sum(counts[g][k] for g in groups) for k in range(5)]
cells = lines[start + len(groups)].split("|")
lines[start + len(groups)] = "|".join(cells[:2] + [f" **{n}** " for n in total] + [cells[-1]])
doc.write_text("".join(lines))
print(dict(counts), total)
