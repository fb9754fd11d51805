"""Layers that hold: no module reaches into another module's private (``_name``) parts.

Every module under clearside/ and clearside_ui/ (pages included) is parsed with ``ast``. A private name of another
module may be neither imported (``from x import _name``) nor used as an attribute of an imported module
(``x._name``); a module's own private names, dunders and ``self._x`` are its own business. The
import-linter contracts in ``.importlinter`` (run by scripts/test.sh) check the import graph itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("clearside", "clearside_ui")

def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(path: Path, node: ast.ImportFrom, root: Path) -> str:
    """The absolute module a (possibly relative) ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    base = _module_name(path, root).split(".")
    base = base if path.name == "__init__.py" else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def defined(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, variables and attributes it assigns."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if _private(name)}


def class_privates(tree: ast.AST) -> dict[str, set[str]]:
    """Each class the module defines, with the private methods and attributes its body defines."""
    return {node.name: {name for item in node.body for name in _names(item) if _private(name)}
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def _names(item: ast.stmt) -> list[str]:
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [item.name]
    if isinstance(item, ast.Assign):
        return [t.id for t in item.targets if isinstance(t, ast.Name)]
    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
        return [item.target.id]
    return []


def _annotated(tree: ast.AST) -> dict[str, str]:
    """Names annotated with a plain class name (``store: Store``, ``job: LiveJob | None``), name → class."""
    found = {}
    for node in ast.walk(tree):
        target, annotation = (node.arg, node.annotation) if isinstance(node, ast.arg) else (
            (node.target.id, node.annotation) if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            else (None, None))
        if target is None or annotation is None:
            continue
        text = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
        first = str(text).split("|")[0].strip()
        if first.isidentifier():
            found[target] = first
    return found


def _trees(root: Path) -> dict[Path, ast.AST]:
    return {path: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for package in PACKAGES for path in sorted((root / package).rglob("*.py"))}


def crossings(path: Path, trees: dict[Path, ast.AST], root: Path = ROOT,
              privates: dict[Path, dict[str, set[str]]] | None = None) -> list[tuple[int, str]]:
    """``(line, what)`` for each use of another module's private name in the module at ``path``:
    ``from x import _name``, ``module._name`` on an imported module, and ``obj._name`` where ``obj`` is
    annotated with a class another of our modules defines with that private name (``store._row(...)`` on a
    ``store: Store``). Private attributes of third-party objects are outside this check."""
    tree = trees[path]
    own = defined(tree)
    privates = privates if privates is not None else {p: class_privates(t) for p, t in trees.items()}
    classes: dict[str, set[str]] = {}  # the classes of our other modules, with their private names
    for other_path in trees:
        if other_path != path:
            for name, names in privates[other_path].items():
                classes.setdefault(name, set()).update(names)
    for name in privates[path]:
        classes.pop(name, None)  # a class of this module: its privates are this module's own
    typed = _annotated(tree)
    found: list[tuple[int, str]] = []
    imported: set[str] = set()  # local names bound by an import of one of our modules (os._exit is not ours)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {(alias.asname or alias.name).split(".")[0] for alias in node.names
                         if alias.name.split(".")[0] in PACKAGES}
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(path, node, root)
            for alias in node.names:
                if source.split(".")[0] not in PACKAGES:
                    continue
                if _private(alias.name):
                    found.append((node.lineno, f"from {source} import {alias.name}"))
                imported.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name):
            continue
        foreign = node.attr in classes.get(typed.get(base.id, ""), set()) and node.attr not in own
        if base.id in imported or foreign:
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_no_module_uses_another_modules_private_names():
    offences = []
    trees = _trees(ROOT)
    privates = {path: class_privates(tree) for path, tree in trees.items()}  # once, not once a module
    for path in trees:
        where = path.relative_to(ROOT).as_posix()
        for line, text in crossings(path, trees, privates=privates):
            offences.append(f"{where}:{line}: {text}")
    assert not offences, ("Private names used across modules (make them public, or move the code that needs "
                          "them next to them):\n" + "\n".join(offences))


def test_the_checker_sees_each_kind_of_crossing(tmp_path):
    """The check itself can fail: an imported private name, a private attribute of an imported module, and a
    private attribute another module defines used on an object; a module's own privates pass, and so do those of
    modules outside ClearSide (``os._exit`` is public API)."""
    package = tmp_path / "clearside"
    package.mkdir()
    (package / "b.py").write_text("def _helper(): ...\nclass Store:\n    def _row(self): ...\n", encoding="utf-8")
    (package / "a.py").write_text("from .b import _helper\nfrom . import b\nimport json\n"
                                  "x = b._other()\ny = json._default_decoder\n"
                                  "def load(store: Store):\n    return store._row()\n"
                                  "class C:\n    def _mine(self):\n        return self._mine, C()._mine\n",
                                  encoding="utf-8")
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in (package / "a.py", package / "b.py")}
    assert [text for _, text in crossings(package / "a.py", trees, tmp_path)] == [
        "from clearside.b import _helper", "b._other", "store._row"]  # json's privates are json's business
    assert crossings(package / "b.py", trees, tmp_path) == []


def architecture_map(text: str) -> dict[str, set[str]]:
    """ARCHITECTURE.md's module map: each ``### `folder/` `` heading of its "## Modules" section and the module
    names of the ``- `name`:`` items under it."""
    section = text.split("\n## Modules\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, set[str]] = {}
    folder = None
    for line in section.splitlines():
        if line.startswith("### `") and line.rstrip().endswith("/`"):
            folder = line.strip()[5:-2]
            found[folder] = set()
        elif line.startswith("- `") and folder is not None:
            found[folder].add(line[3:].split("`", 1)[0])
    return found


def package_map(root: Path) -> dict[str, set[str]]:
    """Every module of the two packages by folder (Alembic's migration scripts aside)."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found.setdefault(path.parent.relative_to(root).as_posix(), set()).add(path.stem)
    return found


def test_the_architecture_page_names_every_module_and_no_other():
    documented = architecture_map((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    actual = package_map(ROOT)
    missing = {f"{folder}/{name}" for folder, names in actual.items() for name in names - documented.get(folder, set())}
    stale = {f"{folder}/{name}" for folder, names in documented.items() for name in names - actual.get(folder, set())}
    assert not missing, f"ARCHITECTURE.md's module map does not name: {sorted(missing)}"
    assert not stale, f"ARCHITECTURE.md's module map names modules that do not exist: {sorted(stale)}"


def test_the_module_map_check_sees_a_missing_and_a_stale_module(tmp_path):
    page = "# A\n\n## Modules\n\n### `pkg/`\n- `one`: the first\n- `gone`: removed\n\n## Next\n- `two`: elsewhere\n"
    assert architecture_map(page) == {"pkg": {"one", "gone"}}
    (tmp_path / "clearside").mkdir()
    for name in ("__init__", "one", "two"):
        (tmp_path / "clearside" / f"{name}.py").write_text("")
    assert package_map(tmp_path) == {"clearside": {"__init__", "one", "two"}}
