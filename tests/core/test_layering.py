"""The core's layers, read from the source of the whole tree: every import (at module level, inside functions, and
modules named by string as ``importlib.import_module`` takes them) goes down the layers; no import circle is left
but the known ones inside one folder, and those bind modules, never names, while importing; plugin packages use
the core's public API. The layers are described in the docstrings of ``framework/``, ``ops/`` and ``runtime/``
and in the README ("How the core is layered")."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.glob("packages/*/src"), *ROOT.glob("examples/plugins/*/src")])

# Bottom to top; a module may import its own layer and the layers below it (ops and runtime are side by side:
# neither imports the other). Modules of the core that no prefix names are API modules.
LAYERS = {
    "leaf": ("tensorweave.dtypes", "tensorweave.errors", "tensorweave.hookspecs", "tensorweave.formats",
             "tensorweave.protos", "tensorweave.records"),
    "framework": ("tensorweave.framework",),
    "ops": ("tensorweave.ops",),
    "runtime": ("tensorweave.runtime",),
    "api": (),
    "top": ("tensorweave", "tensorweave.plugins", "tensorweave.extension", "tensorweave.cli"),
}
BELOW = {
    "leaf": set(),
    "framework": {"leaf"},
    "ops": {"leaf", "framework"},
    "runtime": {"leaf", "framework"},
    "api": {"leaf", "framework", "ops", "runtime"},
    "top": {"leaf", "framework", "ops", "runtime", "api"},
}

# Circles that stay, each inside one folder, with the reason they cannot be cut; a new circle fails the test.
KNOWN_CIRCLES = {
    "creating an op converts its inputs, and converting a Python value creates a Const or Pack op": {
        "tensorweave.framework.apply_op", "tensorweave.framework.tensor_conversion",
    },
    "the array and math op families' gradients and shape functions build ops of one another (reduce_sum's "
    "gradient reshapes and tiles; reshape's, tile's and broadcasting ops' gradients sum)": {
        f"tensorweave.ops.{name}" for name in (
            "broadcast_gradient_ops", "comparison_ops", "concat_split_ops", "cumulative_ops", "dynamic_partition_ops",
            "fill_ops", "gather_ops", "math_ops", "pad_tile_ops", "range_ops", "reduction_ops", "segment_ops",
            "shape_ops", "slicing_ops", "state_ops", "transpose_ops", "unary_math_ops")
    },
}

# The core modules a plugin package may import: the root package, the extension API, the hook specifications,
# and the namespaces tensorweave/__init__.py exposes (tf.train, tf.nn, ...) are added by _public_modules.
PUBLIC = {"tensorweave", "tensorweave.extension", "tensorweave.hookspecs"}
# Where plugin packages still reach past the public API, because the extension API has no name for it yet.
KNOWN_PLUGIN_REACHES = {
    ("tensorweave_distributed.cluster", "tensorweave.runtime.device_mgr"),  # ClusterDeviceMgr extends DeviceMgr
    ("tensorweave_distributed.rendezvous", "tensorweave.runtime.rendezvous"),  # MpiRendezvous wraps LocalRendezvous
}


class Edge:
    """One import: ``src`` imports ``dst`` at ``path:line``; ``when`` is 'module level', 'inside a function' or
    'by name' (a string naming the module); ``binds_module`` says whether it binds the module or names in it."""

    def __init__(self, src, dst, path, line, when, binds_module):
        self.src, self.dst, self.path, self.line, self.when, self.binds_module = src, dst, path, line, when, binds_module

    def __str__(self):
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.when}): {self.src} imports {self.dst}"


def _modules():
    found = {}
    for src in SOURCES:
        for path in sorted(src.rglob("*.py")):
            name = ".".join(path.relative_to(src).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _resolve(name):
    """The module of the tree that importing ``name`` runs (``a.b.c`` -> ``a.b`` when c is a name in a.b)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _docstrings(tree):
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
    return {id(n.body[0].value) for n in nodes
            if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _loader_name(func):
    """Whether a call is ``importlib.import_module(...)``, ``import_module(...)`` or ``__import__(...)``."""
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("import_module", "__import__")


def _edges_of(module, path):
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    docstrings = _docstrings(tree)
    seen = set()  # module names already counted as the argument of an import_module call
    edges = []

    def add(target, node, when, binds_module):
        dst = _resolve(target)
        if dst is not None and dst != module:
            edges.append(Edge(module, dst, path, node.lineno, when, binds_module))

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            when = "inside a function" if in_function else "module level"
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child, when, True)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: from the package, one level up per extra dot
                    parts = package.split(".")
                    parent = ".".join(parts[:len(parts) - child.level + 1])
                    base = f"{parent}.{base}" if base else parent
                for alias in child.names:
                    submodule = f"{base}.{alias.name}"
                    add(submodule if submodule in MODULES else base, child, when, submodule in MODULES)
            elif isinstance(child, ast.Call) and _loader_name(child.func) and child.args and isinstance(
                    child.args[0], ast.Constant) and isinstance(child.args[0].value, str):
                add(child.args[0].value, child, "by name", True)
                seen.add(id(child.args[0]))
            elif (isinstance(child, ast.Constant) and isinstance(child.value, str) and "." in child.value
                  and child.value in MODULES and id(child) not in docstrings | seen):
                add(child.value, child, "by name", True)  # a dotted module path kept for loading later
            visit(child, inside)

    visit(tree, False)
    return edges


EDGES = [edge for module, path in MODULES.items() for edge in _edges_of(module, path)]


def _layer(module):
    if module != "tensorweave" and not module.startswith("tensorweave."):
        return None  # a plugin package
    best = max(((len(prefix), name) for name, prefixes in LAYERS.items() for prefix in prefixes
                if module == prefix or module.startswith(prefix + ".") and prefix != "tensorweave"), default=None)
    return best[1] if best else "api"


def _circles():
    """The strongly connected components of the import graph with more than one module (Tarjan's algorithm)."""
    graph = {m: sorted({e.dst for e in EDGES if e.src == m}) for m in MODULES}
    index, low, on_stack, stack, circles = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    circles.append(members)
    return circles


def _cycle_through(members):
    """One import cycle inside ``members``, as the edges that make it, so a failure shows where to cut."""
    start = min(members)
    paths = {start: []}
    frontier = [start]
    while frontier:
        module = frontier.pop(0)
        for edge in sorted((e for e in EDGES if e.src == module and e.dst in members), key=lambda e: e.dst):
            if edge.dst == start:
                return [*paths[module], edge]
            if edge.dst not in paths:
                paths[edge.dst] = [*paths[module], edge]
                frontier.append(edge.dst)
    return []


CIRCLES = _circles()


def _public_modules():
    """PUBLIC plus the namespaces the root package imports by ``from tensorweave import <name>``."""
    tree = ast.parse(MODULES["tensorweave"].read_text())
    namespaces = {f"tensorweave.{alias.name}" for node in tree.body if isinstance(node, ast.ImportFrom)
                  and node.module == "tensorweave" for alias in node.names}
    return PUBLIC | {m for m in namespaces if m in MODULES}


def test_the_scan_sees_the_whole_tree():
    assert {"tensorweave.framework.graph", "tensorweave.ops.math_ops", "tensorweave.runtime.session",
            "tensorweave_cpu.plugin", "tensorweave_example_plugin.plugin"} <= set(MODULES)
    whens = {e.when for e in EDGES}
    assert whens == {"module level", "inside a function", "by name"}, whens


def test_each_layer_imports_only_the_layers_below_it():
    wrong = []
    for edge in EDGES:
        src, dst = _layer(edge.src), _layer(edge.dst)
        if src is not None and dst is not None and dst != src and dst not in BELOW[src]:
            wrong.append(f"{edge}: {src} may import only {', '.join(sorted(BELOW[src] | {src}))}")
    assert not wrong, "imports that go up the layers:\n" + "\n".join(wrong)


def test_the_core_imports_no_plugin_package():
    wrong = [str(e) for e in EDGES if _layer(e.src) is not None and _layer(e.dst) is None]
    assert not wrong, ("the core imports plugin packages by name; reach them through the registries "
                       "(tensorweave_register_api, transports) instead:\n" + "\n".join(wrong))


def test_no_import_circle_but_the_known_ones():
    known = list(KNOWN_CIRCLES.values())
    new = []
    for members in CIRCLES:
        if not any(members <= allowed for allowed in known):
            cycle = _cycle_through(members)
            new.append(f"{len(members)} modules: {', '.join(sorted(members))}\n    for example:\n    "
                       + "\n    ".join(str(e) for e in cycle))
    assert not new, "import circles (cut one edge of each):\n" + "\n".join(new)
    gone = sorted(m for allowed in known for m in allowed if not any(m in members for members in CIRCLES))
    assert not gone, f"no longer in a circle, take them off KNOWN_CIRCLES: {gone}"


def test_a_known_circle_binds_modules_not_names_while_importing():
    """Inside a circle a module may be half-built when another imports it, so module-level imports there bind the
    module (``from tensorweave.framework import apply_op``) and its names are read when a function runs."""
    wrong = sorted({f"{e}: import the module and read the name when called" for members in CIRCLES for e in EDGES
                    if e.src in members and e.dst in members and e.when == "module level" and not e.binds_module})
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", sorted({m.split(".")[0] for m in MODULES if _layer(m) is None}))
def test_plugin_packages_use_the_public_api(package):
    public = _public_modules()
    reaches = {(e.src, e.dst) for e in EDGES if e.src.split(".")[0] == package and _layer(e.dst) is not None
               and e.dst not in public}
    new = sorted(str(e) for e in EDGES if (e.src, e.dst) in reaches - KNOWN_PLUGIN_REACHES)
    assert not new, (f"{package} imports core modules outside the public API ({', '.join(sorted(public))}); use "
                     "tensorweave.extension or a public name:\n" + "\n".join(new))
    gone = sorted(pair for pair in KNOWN_PLUGIN_REACHES if pair[0].split(".")[0] == package and pair not in reaches)
    assert not gone, f"take these off KNOWN_PLUGIN_REACHES: {gone}"


def test_imports_inside_functions_of_the_core_say_why():
    """An import inside a function is kept only where it saves start-up time, and a comment on it says so."""
    wrong = []
    for edge in EDGES:
        if edge.when == "inside a function" and _layer(edge.src) is not None:
            lines = edge.path.read_text().splitlines()
            if "#" not in lines[edge.line - 1] and not lines[edge.line - 2].strip().startswith("#"):
                wrong.append(str(edge))
    assert not wrong, "imports inside functions without a comment saying why (or move them up):\n" + "\n".join(wrong)
