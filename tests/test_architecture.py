"""The module graph of `tempsup/` and `app/`: one-way dependencies, read from the source.

Every module is parsed with `ast` and every import counts: at the top, inside
functions (an import deferred to call time is still a dependency: the two
modules cannot be read or tested apart) and inside `if TYPE_CHECKING:`
blocks (an annotation names a dependency too). The edge from a submodule to
its own package (`tempsup.jobs.record` → `tempsup.jobs`) is not counted:
Python runs a package's `__init__` first whoever imports the submodule, so
it says nothing about what the submodule's code needs.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tempsup", "app")
# the job service, each module importing only those before it
JOB_LAYERS = (
    "record",
    "store",
    "disk",
    "limits",
    "kinds",
    "entries",
    "results",
    "lease",
    "queue",
    "redis",
    "pool",
    "worker",
    "celery_app",
)
# one concept per module: no job-service file or class grows back into a god object
JOB_FILE_LINES = 500
JOB_CLASS_LINES = 350
# modules that may build a job queue: the entry points, and the job service itself
QUEUE_BUILDERS = {"tempsup.cli", "app.services"}
QUEUE_CLASSES = {"JobQueue", "RedisQueue", "open_queue"}
# The library's rooms and which others each may import (`tempsup.X` for a subpackage
# or a top-level module; "tempsup" is the public `__init__`). A new edge is a design
# decision: add it here on purpose, or the test below names it. Read bottom-up: errors
# and core import nothing of ours, the science (model, theory, training) only what is
# below it, the surfaces (figures, jobs, paper, teaching, cli) sit on top.
ROOMS: dict[str, set[str]] = {
    "errors": set(),
    "settings": {"errors"},
    "core": {"errors"},
    "model": {"core", "errors"},
    "theory": {"core", "errors", "model"},
    "training": {"core", "errors", "model", "theory"},
    "io": {"core", "errors", "model", "theory"},
    "analysis": {"core", "errors", "io", "model", "theory", "training"},
    "figures": {"analysis", "core", "errors", "io", "model", "theory"},
    "bows": {"core", "errors", "figures", "model", "training"},
    "api": {"analysis", "bows", "core", "errors", "io", "model"},
    "jobs": {"analysis", "bows", "errors", "io", "model", "settings", "training"},
    "paper": {"analysis", "core", "errors", "figures", "io", "jobs", "model", "theory"},
    "teaching": {"analysis", "errors", "figures", "io", "jobs", "model", "paper"},
    "cli": {
        "analysis",
        "bows",
        "core",
        "errors",
        "figures",
        "io",
        "jobs",
        "model",
        "paper",
        "settings",
        "teaching",
    },
    "tempsup": {"api", "bows", "errors", "io", "model"},
}
# the top of the library holds the public API and the entry points, nothing else
TOP_LEVEL_FILES = {"__init__.py", "api.py", "cli.py", "errors.py", "settings.py"}
TOP_LEVEL_MAX = 8


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, ast.Module]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return found


MODULES = modules()


def imported(name: str, tree: ast.Module) -> set[str]:
    """Every module `name` imports (anywhere in its body), as absolute dotted names."""
    is_package = name in PACKAGES or (ROOT / name.replace(".", "/") / "__init__.py").is_file()
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def graph() -> dict[str, set[str]]:
    """Internal module -> the internal modules it imports (not its own packages)."""
    edges = {}
    for name, tree in MODULES.items():
        deps = {m for m in imported(name, tree) if m in MODULES and m != name}
        edges[name] = {d for d in deps if not name.startswith(d + ".")}
    return edges


def test_the_module_graph_is_acyclic():
    try:
        order = list(graphlib.TopologicalSorter(graph()).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")
    assert set(order) == set(MODULES)


def test_the_library_never_imports_the_app_or_dash():
    for name, tree in MODULES.items():
        if name.split(".")[0] != "tempsup":
            continue
        bad = {m for m in imported(name, tree) if m.split(".")[0] in ("app", "dash", "flask")}
        assert not bad, f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("layer", JOB_LAYERS)
def test_the_job_service_depends_one_way(layer):
    name = f"tempsup.jobs.{layer}"
    allowed = {f"tempsup.jobs.{lower}" for lower in JOB_LAYERS[: JOB_LAYERS.index(layer)]}
    inside = {m for m in graph()[name] if m.startswith("tempsup.jobs.")}
    assert inside <= allowed, f"{name} imports {sorted(inside - allowed)}, above it"


def test_every_job_module_has_a_layer():
    """A new module of the job service takes its place in the order (or the order
    above would not be enforced on it)."""
    found = {name.rpartition(".")[2] for name in MODULES if name.startswith("tempsup.jobs.")}
    assert found == set(JOB_LAYERS), f"not in JOB_LAYERS: {sorted(found - set(JOB_LAYERS))}"


def test_the_job_service_has_no_long_files_or_classes():
    for path in sorted((ROOT / "tempsup" / "jobs").glob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= JOB_FILE_LINES, f"{path.name}: {lines} lines, at most {JOB_FILE_LINES}"
        for node in ast.walk(MODULES[module_name(path)]):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                assert size <= JOB_CLASS_LINES, (
                    f"{path.name}: class {node.name} has {size} lines, at most {JOB_CLASS_LINES}"
                )


def test_only_entry_points_build_a_queue():
    """A queue is made by `open_queue` and the entry points; the rest is handed one."""
    for name, tree in MODULES.items():
        if name in QUEUE_BUILDERS or name == "tempsup.jobs" or name.startswith("tempsup.jobs."):
            continue
        calls = {
            node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
        }
        assert not calls & QUEUE_CLASSES, f"{name} builds a queue ({sorted(calls & QUEUE_CLASSES)})"


def test_the_checker_sees_imports_inside_functions_and_type_checking_blocks():
    """The graph is only as good as its reader: deferred imports are edges too."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from tempsup.io.run import Run\n"
        "def f():\n    from tempsup.jobs.record import JobState\n    import tempsup.model.config\n"
    )
    assert {"tempsup.io.run", "tempsup.jobs.record", "tempsup.model.config"} <= imported(
        "tempsup.x", tree
    )
    cyclic = {"a": {"b"}, "b": {"a"}}
    with pytest.raises(graphlib.CycleError):
        list(graphlib.TopologicalSorter(cyclic).static_order())


def room(name: str) -> str:
    """The room a library module lives in: its subpackage, or itself at the top."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "tempsup"


def test_every_room_imports_only_the_rooms_it_may():
    crossings: dict[str, set[str]] = {}
    for name, deps in graph().items():
        if not name.startswith("tempsup"):
            continue
        for dep in deps:
            if dep.startswith("tempsup") and room(dep) != room(name):
                crossings.setdefault(room(name), set()).add(room(dep))
    assert set(crossings) <= set(ROOMS), (
        f"rooms not in ROOMS: {sorted(set(crossings) - set(ROOMS))}"
    )
    for source, targets in crossings.items():
        extra = targets - ROOMS[source]
        assert not extra, f"tempsup.{source} imports {sorted(extra)}, not in ROOMS[{source!r}]"


def test_the_rooms_table_is_acyclic_and_names_every_room():
    rooms = {room(name) for name in MODULES if name.startswith("tempsup")}
    assert rooms == set(ROOMS), f"rooms vs ROOMS: {sorted(rooms ^ set(ROOMS))}"
    list(graphlib.TopologicalSorter(ROOMS).static_order())


def test_the_top_of_the_library_holds_only_the_api_and_entry_points():
    top = {path.name for path in (ROOT / "tempsup").glob("*.py")}
    assert len(top) <= TOP_LEVEL_MAX and top == TOP_LEVEL_FILES, sorted(top ^ TOP_LEVEL_FILES)


def test_the_public_names_keep_working():
    import tempsup

    missing = [name for name in tempsup.__all__ if not hasattr(tempsup, name)]
    assert not missing, missing
