"""Shared by the benchmark scripts: replace a marked block in docs/BENCHMARKS.md."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_block(begin, end, block, heading):
    """Puts `block` (which starts with `begin` and ends with `end`) in place of the old one, or
    appends it under `heading` the first time."""
    path = os.path.join(ROOT, "docs", "BENCHMARKS.md")
    text = open(path).read()
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text += f"\n{heading}\n{block}\n"
    open(path, "w").write(text)
