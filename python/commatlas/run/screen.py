"""Lines the CLI prints itself (what runs, notes, hints), folded to the terminal at word
boundaries: rich's own wrapping is for its renderables, and `soft_wrap` leaves a 200-character
reason to the terminal, which cuts it inside words. Without a terminal rich's width is 80
columns (or COLUMNS), so piped output fits 80 columns too."""

from __future__ import annotations

import textwrap

from rich.console import Console

CONTINUATION = "  "  # a folded line's continuation is indented: it reads as one item


def folded(text: str, width: int, indent: str = CONTINUATION) -> list[str]:
    """`text` in lines of at most `width` columns, broken only at spaces (a single word longer
    than the width, such as a path, stays whole on its own line)."""
    return textwrap.wrap(text, width=max(width, 20), subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [""]


def print_folded(console: Console, text: str, indent: str = CONTINUATION) -> None:
    for line in folded(text, console.width, indent):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def print_whole(console: Console, text: str) -> None:
    """A line that must stay one line whatever the width (a command to copy and paste)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)
