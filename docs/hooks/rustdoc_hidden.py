"""MkDocs hook: rustdoc's hidden lines (a line of a Rust block that starts with ``# ``, such as
``# Ok::<(), ndgather::Error>(())``) are left out of the site's pages, as rustdoc leaves them
out of its own; the doctests that run the pages still see them."""
import re

FENCE = re.compile(r"^([ \t]*)```rust\n(.*?)^\1```", re.S | re.M)
HIDDEN = re.compile(r"^[ \t]*#( |$)")


def _strip(match: re.Match) -> str:
    indent, body = match.group(1), match.group(2)
    kept = [line for line in body.splitlines(keepends=True) if not HIDDEN.match(line)]
    return f"{indent}```rust\n{''.join(kept)}{indent}```"


def on_page_markdown(markdown: str, **kwargs) -> str:
    return FENCE.sub(_strip, markdown)
