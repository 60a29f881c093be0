"""The Python package's layers import one way, and no import hides inside a function.

Layers, lowest first: the base modules (errors, units, the package's own __init__), `io`,
`analysis`, `frameworks` (measurements taken inside a framework, e.g. the torch suite, and how
they compare with the engine's), `report`, `run`, then the CLI. A module imports from its own layer and the layers below
it, never above: an upward import is a cycle in waiting, and a function-level import is how one
hides. An import inside a function is allowed only where it is marked `# deliberate: <reason>` on
its line (an optional or heavy dependency loaded when needed), so each one is a decision in sight.
"""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "commatlas"

# Lowest first; a module's layer is its subpackage, or for a top-level module, its name.
LAYERS = ("base", "io", "analysis", "frameworks", "report", "run", "cli")
TOP_LEVEL = {"__init__": "base", "errors": "base", "units": "base", "cli": "cli", "__main__": "cli"}
MARK = "# deliberate:"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "commatlas":
        return None
    if len(parts) == 1:
        return "base"
    if parts[1] in LAYERS[1:-1]:
        return parts[1]
    return TOP_LEVEL.get(parts[1], "unknown")


def imported_modules(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:  # relative: resolved against this module's package
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = package[:len(package) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if node.module is None or target == "commatlas":
        # `from commatlas import errors`: each name may be a module of its own.
        return [f"{target}.{a.name}" for a in node.names]
    return [target]


def problems(root: Path) -> list[str]:
    """One line per upward import and per unmarked function-level import under `root`."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        module = module_name(path, root)
        mine = layer_of(module)
        if mine == "unknown":
            found.append(f"{rel}: a module outside the layers {LAYERS} (add it to a layer)")
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines), str(path))

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    check(child, in_function)
                visit(child, inner)

        def check(node: ast.Import | ast.ImportFrom, in_function: bool) -> None:
            if in_function:
                text = lines[node.lineno - 1]
                reason = text.split(MARK, 1)[1].strip() if MARK in text else ""
                if not reason:
                    found.append(f"{rel}:{node.lineno}: an import inside a function "
                                 f"(move it to the top, or mark it `{MARK} <reason>`)")
            for target in imported_modules(node, module, path.name == "__init__.py"):
                theirs = layer_of(target)
                if theirs is None or theirs == "unknown":
                    continue
                if LAYERS.index(theirs) > LAYERS.index(mine):
                    found.append(f"{rel}:{node.lineno}: {mine} imports {target} ({theirs} is above {mine})")

        visit(tree, False)
    return found


def test_the_package_imports_one_way_with_no_hidden_imports() -> None:
    assert problems(PACKAGE) == []


def test_every_module_belongs_to_a_layer() -> None:
    unplaced = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                if layer_of(module_name(p, PACKAGE)) in (None, "unknown")]
    assert unplaced == []


def test_planted_upward_and_hidden_imports_are_caught(tmp_path: Path) -> None:
    copy = tmp_path / "commatlas"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "_engine", "templates"))
    results = copy / "io" / "results.py"
    results.write_text(results.read_text() + "\nfrom commatlas.report.bestmap import map_rows\n")
    answers = copy / "analysis" / "answers.py"
    answers.write_text(answers.read_text() + "\n\ndef planted():\n    from commatlas.run import execute\n"
                       "    import json  # deliberate: stdlib, loaded late for no good reason\n"
                       "    from . import keys\n")
    (copy / "stray.py").write_text("import os\n")
    n_results = len(results.read_text().splitlines())
    n_answers = len(answers.read_text().splitlines())
    assert problems(copy) == [
        f"commatlas/analysis/answers.py:{n_answers - 2}: an import inside a function "
        f"(move it to the top, or mark it `{MARK} <reason>`)",
        f"commatlas/analysis/answers.py:{n_answers - 2}: analysis imports commatlas.run (run is above analysis)",
        f"commatlas/analysis/answers.py:{n_answers}: an import inside a function "
        f"(move it to the top, or mark it `{MARK} <reason>`)",
        f"commatlas/io/results.py:{n_results}: io imports commatlas.report.bestmap (report is above io)",
        "commatlas/stray.py: a module outside the layers ('base', 'io', 'analysis', 'frameworks', 'report', 'run', "
        "'cli') "
        "(add it to a layer)",
    ]


def test_the_readme_layout_names_every_subpackage() -> None:
    readme = (PACKAGE.parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    lines = block.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("python/commatlas/"))
    named = set()
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        if not line.startswith("   "):  # "  io/  ...": a subpackage; deeper lines continue its text
            named.add(line.split()[0].rstrip("/"))
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert named == packages
    assert set(LAYERS[1:-1]) == packages  # every subpackage is a layer, and every layer a subpackage
