"""The architecture's rules, checked on the source: layers point down, and no module imports
itself back through others, nor any folder of `baselines` through other folders (every import
counts: top-level, inside functions, and type-only)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PACKAGES = ("dominoes_env", "baselines")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> set[str]:
    """The modules of this tree that `module` imports, anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            if not all(name in MODULES for name in submodules):  # `from package import module`: the module
                named.add(base)
            named.update(submodules)
    edges = set()
    for name in named:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module and not module.startswith(name + "."):  # a package's own parents: no edge
            edges.add(name)
    return edges


GRAPH = {module: _imported(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]] = GRAPH) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm): the modules
    of `graph`, or the folders of :func:`_folder_graph`."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return found


def test_the_graph_sees_the_imports_it_must():
    """The checks below mean something only if the graph holds the edges the code has."""
    assert "baselines.policies.policy" in GRAPH["baselines.policies.registry"]
    assert "dominoes_env.core.validation" in GRAPH["baselines.policies.specs"]
    assert "baselines.td_lambda.policy" in GRAPH["baselines.td_lambda.tables"]


def test_the_env_package_imports_nothing_from_baselines():
    """Layers point down: the env takes player objects or factories, and names reach it through an
    entry point (dominoes_env.players.NAME_RESOLVERS), never an import of the policy registry."""
    upward = {module: sorted(edge for edge in edges if edge.startswith("baselines"))
              for module, edges in GRAPH.items() if module.startswith("dominoes_env")}
    assert {module: edges for module, edges in upward.items() if edges} == {}


def test_no_module_imports_itself_back():
    assert _cycles() == []


def _folder(module: str) -> str | None:
    """The top-level subpackage of `baselines` that holds a module (None: outside them, or the face)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "baselines" and len(parts) > 1 else None


def _folder_graph() -> dict[str, dict[str, list[str]]]:
    """The imports between the top-level subpackages of `baselines`: a module anywhere under
    `baselines/X/` importing one of `baselines.Y` (Y not X) is an edge X -> Y. Each edge keeps the
    module imports that make it, to name them when it closes a loop."""
    folders: dict[str, dict[str, list[str]]] = {}
    for module, edges in GRAPH.items():
        mine = _folder(module)
        if mine is None:
            continue
        out = folders.setdefault(mine, {})
        for other in sorted(edges):
            theirs = _folder(other)
            if theirs is not None and theirs != mine:
                out.setdefault(theirs, []).append(f"{module} -> {other}")
    return folders


def test_no_folder_of_baselines_imports_itself_back():
    """Counted by folder the subpackages form no loop either: two folders that import each other,
    even through different modules, can be neither read nor moved apart. A loop found is reported
    with the module imports that close it."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the finder finds
    folders = _folder_graph()
    assert "td_lambda" in folders["advice"] and "command_line" in folders["td_lambda"]  # the graph sees edges
    loops = {" <-> ".join(loop): sorted(edge for folder in loop for other, edges in folders[folder].items()
                                         if other in loop for edge in edges)
             for loop in _cycles({folder: set(edges) for folder, edges in folders.items()})}
    assert loops == {}


def _layer_order() -> list[list[str]]:
    """The units of `baselines`, bottom layer first, as CONTRIBUTING.md's ``layers`` block writes them."""
    block = re.search(r"```layers\n(.*?)```", (ROOT / "CONTRIBUTING.md").read_text(), re.S)
    assert block, "CONTRIBUTING.md has no ```layers block"
    return [line.split("#")[0].split() for line in block.group(1).splitlines() if line.split("#")[0].strip()]


def _unit(module: str, units: set[str]) -> str | None:
    """The finest unit that holds a module of `baselines` (None: the order leaves it out)."""
    name = module.removeprefix("baselines.") if module != "baselines" else "baselines"
    while name and name not in units:
        name = name.rpartition(".")[0]
    return name or None


def test_the_subpackages_of_baselines_import_only_down_the_layer_order():
    """Each import statement of `baselines`, anywhere in a module, points to a lower layer or
    stays in its own unit; a module no layer holds is an error (a new package takes its place)."""
    order = _layer_order()
    level = {unit: depth for depth, line in enumerate(order) for unit in line}
    assert len(level) == sum(map(len, order)), "a unit is named twice in the layer order"
    ours = [module for module in GRAPH if module.startswith("baselines")]
    assert [module for module in ours if _unit(module, set(level)) is None] == []
    upward = []
    for module in ours:
        mine = _unit(module, set(level))
        for other in GRAPH[module]:
            theirs = _unit(other, set(level)) if other.startswith("baselines") else None
            if theirs is not None and theirs != mine and level[theirs] >= level[mine]:
                upward.append(f"{module} -> {other}")
    assert upward == []


def test_the_layer_check_catches_an_upward_import():
    """The rule above is not empty: the harness below the learners, the advice above them."""
    order = _layer_order()
    level = {unit: depth for depth, line in enumerate(order) for unit in line}
    assert level["harness"] < level["td_lambda"] < level["advice"] < level["cli"]
    assert _unit("baselines.ppo.cli", set(level)) == "ppo.cli" and _unit("baselines.ppo.trainer", set(level)) == "ppo"
    assert "baselines.td_lambda.policy" in GRAPH["baselines.advice.hints"]


def test_names_reach_the_env_through_the_entry_point(monkeypatch):
    import dominoes_env
    from dominoes_env import players

    factory, copies = players.by_name("greedy:3")
    assert copies == 3 and factory.label == "greedy" and isinstance(factory, players.PlayerFactory)
    env = dominoes_env.SingleAgentEnv(opponents="greedy", num_players=3, highest_double=6)
    env.reset(seed=0)
    seated = [type(player).__name__ for player in env.players if player is not None]
    assert seated == ["GreedyPolicy", "GreedyPolicy"]

    monkeypatch.setattr(players, "_resolvers", lambda: ())  # an installation without baselines
    try:
        players.by_name("greedy")
    except ValueError as error:
        assert "no installed package turns names into players" in str(error)
    else:
        raise AssertionError("a name was played without a resolver")
    assert players.by_name(object()) is None  # not a name: the caller seats it as an object


def test_the_parallel_view_reads_only_the_aec_envs_public_api():
    tree = ast.parse(MODULES["dominoes_env.parallel"].read_text())
    private = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr.startswith("_")
               and isinstance(node.value, ast.Attribute) and node.value.attr == "aec"]
    assert private == []


def test_every_scalar_view_reports_a_hand_end_as_one_named_type():
    import numpy as np

    import dominoes_env
    from dominoes_env.core.game import HandEnded

    env = dominoes_env.raw_env(3, 6, num_hands=2)
    parallel = dominoes_env.parallel_env(3, 6, num_hands=2)
    env.reset(seed=4)
    parallel.reset(seed=4)
    ends, rng = [], np.random.default_rng(0)
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent]:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
        env.step(action)
        *_, infos = parallel.step({agent: action})
        if env.hand_ended is not None:
            ends.append(env.hand_ended)
            assert HandEnded.from_info(env.infos[agent]) == env.hand_ended
            assert all(HandEnded.from_info(info) == env.hand_ended for info in infos.values())
        else:
            assert not any(HandEnded.from_info(info) for info in infos.values() if info)
    assert [end.hand_index for end in ends] == [0, 1]
    assert ends[1].totals == tuple(np.add(ends[0].scores, ends[1].scores).tolist())
    assert all(end.went_out is None or end.scores[end.went_out] == 0 for end in ends)


def test_every_document_the_code_and_docs_name_is_in_the_repository():
    """A reader of the repository can open every document the package, the README, the docs and
    the benchmarks point to, and meets no name of a document kept elsewhere."""
    sources = [*ROOT.glob("dominoes_env/**/*.py"), *ROOT.glob("baselines/**/*.py"), *ROOT.glob("benchmarks/*.py"),
               *ROOT.glob("docs/**/*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    elsewhere = re.compile(r"BASELINES\.md|(?i:seeds?[/ ]0\d\d|\bissue \d+|shared/)")  # docs/baselines.md is ours
    named = re.compile(r"\b((?:docs|benchmarks|examples|tests)/[\w/.-]+\.(?:md|py|png|gif))")
    for source in sources:
        text = source.read_text()
        assert not elsewhere.findall(text), (source, elsewhere.findall(text))
        for path in named.findall(text):
            if re.search(r"[A-Z]{3,}", Path(path).stem):  # a placeholder: tests/test_NAME.py
                continue
            assert (ROOT / path).exists(), f"{source.relative_to(ROOT)} names {path}, which is not in the repository"


def test_a_table_rule_is_spelled_in_few_modules_above_the_core():
    """The table travels as one value (GameConfig, TableRuleOptions): a new rule touches the core,
    the one options module and the docs, not every signature that passes a table on."""
    spelling = sorted(module for module, path in MODULES.items()
                      if not module.startswith("dominoes_env.core") and "cover_doubles" in path.read_text())
    assert len(spelling) <= 4, spelling


def test_baselines_has_a_floor_plan():
    """Its top level is its face; everything else lives in a subpackage that says what it holds."""
    top = sorted(path.name for path in (ROOT / "baselines").glob("*.py"))
    assert top == ["__init__.py"]
    for package in (path for path in (ROOT / "baselines").iterdir() if (path / "__init__.py").exists()):
        docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
        assert docstring and len(docstring) > 80, f"baselines/{package.name} says nothing of what lives there"


ROLE = re.compile(r":(class|func|meth|mod|attr|data|exc|obj):`~?([\w.]+)(?:\(\))?`")


def _module_exists(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _resolves(target: str, module: str, cls: str | None) -> bool:
    """Whether a docstring's reference names something that exists: as written, or relative to its
    class, its module or its package (Sphinx's lookup order)."""
    import importlib

    package = module.rpartition(".")[0]
    for name in [f"{module}.{cls}.{target}" if cls else "", target, f"{module}.{target}", f"{package}.{target}"]:
        parts = name.split(".") if name else []
        for cut in range(len(parts), 0, -1):
            try:
                found: object = importlib.import_module(".".join(parts[:cut]))
            except ImportError as error:
                missing = error.name or ""
                if missing and not f"{'.'.join(parts[:cut])}.".startswith(f"{missing}."):
                    return True  # it exists but needs an extra not installed here (torch): the full run checks it
                if not missing and _module_exists(".".join(parts[:cut])):
                    return True  # it exists; a library it imports refused to load here (ray.tune without pyarrow)
                continue
            try:
                for part in parts[cut:]:
                    found = getattr(found, part)
            except AttributeError:
                break
            except ImportError:  # a learner's name that needs its extra (torch): the run with every library checks it
                return True
            return True
    return False


def _check_references(node: ast.AST, module: str, cls: str | None, unresolved: list[str]) -> None:
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        for match in ROLE.finditer(ast.get_docstring(node) or ""):
            if not _resolves(match.group(2), module, cls):
                unresolved.append(f"{module} ({cls or 'module'}): {match.group(0)}")
    for child in ast.iter_child_nodes(node):
        _check_references(child, module, child.name if isinstance(child, ast.ClassDef) else cls, unresolved)


def test_every_docstring_reference_resolves():
    """The API reference shows the docstrings: a :class:, :func:, :mod: or :attr: reference must name
    something that exists (renamed or moved names leave none behind). Instance attributes set in
    __init__ are written ``as code``, not as references."""
    unresolved: list[str] = []
    for module, path in MODULES.items():
        if module.startswith(("baselines.td_lambda.network", "baselines.td_lambda.learner", "baselines.adapters.sb3")):
            continue  # torch and SB3 import at their top; the torch and examples runs cover them
        if module == "dominoes_env.jax.pgx_env":
            continue  # importing pgx starts JAX's threads, and this process forks later (conftest: JAX last)
        _check_references(ast.parse(path.read_text()), module, None, unresolved)
    assert unresolved == []


def test_no_function_is_longer_than_a_screen():
    """A function of the packages fits on a screen (80 lines, docstring included), compiled kernels too:
    a longer one does several jobs, and its parts want names."""
    longest = {f"{module}.{node.name} ({node.end_lineno - node.lineno + 1} lines)"
               for module, path in MODULES.items() for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 80}
    assert longest == set()
