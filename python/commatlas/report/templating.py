"""The one jinja2 environment of every page commatlas writes (report, compare)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from commatlas.units import format_percent, format_ratio, format_size, format_value

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=jinja2.select_autoescape(["html.j2"]),
    trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
)
_ENV.filters.update(size=format_size, ratio=format_ratio, percent=format_percent, value=format_value)


def render(template: str, context: dict[str, Any]) -> str:
    return _ENV.get_template(template).render(**context)


def compile_templates() -> None:
    """Compiles every template ahead of `render` (the environment keeps them compiled): work that
    can be done while the report's figures are drawn."""
    for template in _ENV.list_templates():
        _ENV.get_template(template)
