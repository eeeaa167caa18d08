"""The layout tells the architecture: data flows one way through the packages,
tracer -> analyzer -> replay -> cluster, with the model's schema (models/) the
contract the analyzer writes and replay reads, and `iomodel/` (the command,
and helpers every package may use) on top.  Read from each module's imports."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDER = ["tracer", "models", "analyzer", "replay", "cluster"]
# modules of the iomodel/ folder any package may use: they import no package but
# the bottom one (mpi.py finds the tracer's builds)
SHARED = {"iomodel.outputs", "iomodel.mpi"}


def imported(path):
    """The iomodel packages (ORDER's names) and shared modules a module imports, relative imports resolved."""
    pkg = path.parent.name
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            # a relative import from a package's module: `.` is iomodel.PKG, `..` iomodel
            base = ".".join(["iomodel", pkg][:3 - node.level]) if node.level else ""
            module = ".".join(filter(None, [base, node.module]))
            names |= {module, *(f"{module}.{a.name}" for a in node.names)}
    return {n.split(".")[1] for n in names if n.startswith("iomodel.") and n.split(".")[1] in ORDER} | \
        {n for n in names if n in SHARED}


def test_packages_import_only_those_before_them():
    against = []
    for i, pkg in enumerate(ORDER):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            later = {p for p in imported(path) if p in ORDER[i + 1:]}
            if later:
                against.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(later))}")
    assert not against, "data must flow one way (" + " -> ".join(ORDER) + "):\n" + "\n".join(against)


def test_shared_modules_import_no_package():
    for name in SHARED:
        path = ROOT / (name.replace(".", "/") + ".py")
        assert not imported(path) - SHARED - {ORDER[0]}, f"{name} is used by every package: it must import none of {ORDER[1:]}"


def test_the_cluster_side_is_found_without_the_replayer():
    """Where a prediction is made: cluster/, whose modules say so by their names."""
    assert {p.stem for p in (ROOT / "cluster").glob("*.py")} >= \
        {"description", "profile", "characterize", "predict", "compare", "placement"}
    assert not {p.stem for p in (ROOT / "replay").glob("*.py")} & {"predict", "compare", "profile", "characterize"}
