"""The type stub ``streameval/_native.pyi`` against the compiled module, and the running sums'
lists against each other.

The stub is what mypy and readers see of the Rust binding: every name it declares must exist in
the compiled module (each class with the methods and attributes it lists) and the reverse, so a
function added, renamed or removed in ``src/*.rs`` fails here until the stub says so. The 19
running sums are declared once per language (``streameval.stats.ContingencyStats`` in Python,
``STATS`` in ``src/core.rs``, which makes the native attributes); the other lists of them (the
mixin's typing block, the reference's annotations, the stub) are checked against those here.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from streameval import _table, reference, stats
from streameval.contingency import NATIVE

pytestmark = pytest.mark.skipif(not NATIVE, reason="the native extension is not built")

STUB = Path(stats.__file__).with_name("_native.pyi")
# what every extension module or class has without declaring it
MODULE_IMPLICIT = {"__name__", "__doc__", "__file__", "__loader__", "__package__", "__spec__", "__all__"}


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text())


def declared(body) -> set:
    """The names a stub body declares: functions, classes, annotated or assigned names."""
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def stub_classes() -> dict:
    return {n.name: n for n in stub_tree().body if isinstance(n, ast.ClassDef)}


def test_the_stub_declares_exactly_the_compiled_module():
    from streameval import _native

    stub = {n for n in declared(stub_tree().body) if not n.startswith("__")}
    compiled = {n for n in vars(_native) if n not in MODULE_IMPLICIT and not n.startswith("__")}
    assert stub == compiled, f"only in the stub: {stub - compiled}; only compiled: {compiled - stub}"


@pytest.mark.parametrize("name", sorted(stub_classes()))
def test_each_stub_class_declares_exactly_its_compiled_members(name):
    from streameval import _native

    cls = getattr(_native, name)
    assert inspect.isclass(cls), name
    node = stub_classes()[name]
    stub = declared(node.body)
    own = {n for n in vars(cls) if not n.startswith("__")}
    listed = {n for n in stub if not n.startswith("__")}
    assert listed == own, f"{name}: only in the stub: {listed - own}; only compiled: {own - listed}"
    # the special methods the stub lists exist on the class (the others are Python's defaults)
    missing = {n for n in stub if n.startswith("__") and not hasattr(cls, n)}
    assert not missing, f"{name}: the stub lists {missing}, which the compiled class lacks"


def parameters(fn: ast.FunctionDef) -> list:
    a = fn.args
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]


def test_the_stub_gives_each_compiled_function_its_parameters():
    """Every function and method the stub declares takes the parameters the compiled one takes,
    by name and in order (``__new__`` aside: the compiled table takes any arguments; a special
    method filled into a type slot, such as ``Reading.__call__``, shows CPython's generic
    ``(*args, **kwargs)`` whatever it takes, so only its existence is checked, above)."""
    import types

    from streameval import _native

    wrong = []
    for node in stub_tree().body:
        members = [(node, getattr(_native, node.name))] if isinstance(node, ast.FunctionDef) else []
        if isinstance(node, ast.ClassDef):
            cls = getattr(_native, node.name)
            members = [(f, cls if f.name == "__init__" else getattr(cls, f.name)) for f in node.body
                       if isinstance(f, ast.FunctionDef) and not f.decorator_list and f.name != "__new__"]
        for fn, obj in members:
            if isinstance(obj, types.WrapperDescriptorType):
                continue
            compiled = [p for p in inspect.signature(obj).parameters if p != "self"]
            if parameters(fn) != compiled:
                wrong.append(f"{node.name}.{fn.name}: stub {parameters(fn)}, compiled {compiled}")
    assert not wrong, "\n".join(wrong)


def properties(body) -> set:
    """The names of the ``@property`` functions of a class body."""
    return {f.name for f in body if isinstance(f, ast.FunctionDef)
            and any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list)}


def test_the_running_sums_are_one_list():
    """``STAT_NAMES`` (from ``ContingencyStats``) equals the native ``STAT_NAMES`` (from
    ``STATS`` in src/core.rs), and every other listing of the sums names exactly them."""
    from streameval import _native

    names = stats.STAT_NAMES
    assert tuple(_native.STAT_NAMES) == names
    assert len(names) == 19
    # the per-side names, term by term, plus the cell sums and counts
    sides = [n for side in stats.SIDE_STATS.values() for n in side]
    assert set(sides) <= set(names) and len(set(sides)) == 12
    assert set(stats.SideStats._fields) == {"sq", "xlogx", "bcubed", "elm", "max", "singletons"}
    # the native table's attributes, one per sum, read-only
    t = _native.Table()
    t.update(0, 1)
    assert [getattr(t, n) for n in names] == t.stat_values()
    with pytest.raises(AttributeError, match="read-only"):
        t.n = 5
    # the stub's Table properties, the mixin's typing block, the reference's annotations
    props = properties(stub_classes()["Table"].body)
    assert set(names) <= props and props - set(names) == {"missing"}
    api = ast.parse(Path(_table.__file__).read_text())
    typed = {p for node in ast.walk(api) if isinstance(node, ast.If) for p in properties(node.body)}
    assert set(names) <= typed and typed - set(names) == {"missing", "f_sums", "skipped"}
    annotated = set(inspect.get_annotations(reference.ReferenceContingency))
    assert set(names) <= annotated
    assert annotated - set(names) == {"f_sums", "missing", "skipped", "version"}
