"""Put a benchmark's figures between <!-- bench:KEY --> and <!-- /bench:KEY -->
in a Markdown page of the checkout (the README, docs/accuracy.md, ...)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def put_block(key, text, page="README.md"):
    """Replace what is between the page's markers for KEY with `text`."""
    path = ROOT / page
    s = path.read_text()
    start, end = f"<!-- bench:{key} -->", f"<!-- /bench:{key} -->"
    if start not in s or end not in s.split(start, 1)[1]:
        raise SystemExit(f"{path}: no {start} ... {end} markers to put the figures between")
    head, rest = s.split(start, 1)
    tail = rest.split(end, 1)[1]
    path.write_text(f"{head}{start}\n{text.strip()}\n{end}{tail}")
