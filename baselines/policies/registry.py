"""Finding a policy class by name: the registry, import paths, and installed packages' entry points.

A policy spec's NAME (see :mod:`baselines.policies.specs`) is resolved, in this order, as:

1. a registered name: the shipped policies (``persistent_line``, ``td_lambda``, ...) and any
   class decorated with :func:`register_policy` in a module that has been imported;
2. an import path ``package.module.Class`` (any name with a dot): the module is imported
   with the current directory importable, as ``python -m`` does, so ``dominoes evaluate
   my_policies.MyPolicy random:3`` finds ``./my_policies.py``;
3. an entry point of the group ``dominoes_env.policies`` declared by an installed package::

       [project.entry-points."dominoes_env.policies"]
       my_policy = "my_package.policies:MyPolicy"

Every worker of the league (forked, spawned or Ray) resolves a name the same way; any
failure is a ValueError with one clear message.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from baselines.policies.policy import Policy, SeedLike, SeesEveryHand
from baselines.policies.specs import PolicySpec, parse
from dominoes_env.core.config import GameConfig, describe_table

ENTRY_POINT_GROUP = "dominoes_env.policies"

_REGISTRY: dict[str, type[Policy]] = {}

# Modules that register policies when imported: the hand-crafted ones always; the others
# only when asked for by name, so that listing or making a hand-crafted policy never pays
# for importing a learner's dependencies.
_BUILTIN_MODULES: list[str] = ["baselines.policies.handcrafted"]
_LAZY_POLICIES: dict[str, tuple[str, tuple[str, ...], str]] = {
    # name: (module, packages it needs, the extra that installs them)
    "td_lambda": ("baselines.td_lambda", ("safetensors",), "league"),  # acts in numpy; training needs torch
    "linear_sarsa": ("baselines.linear_sarsa", (), "league"),  # numpy and numba only
    "lookahead": ("baselines.lookahead", (), "league"),  # numpy and numba only (its td_lambda evaluation: safetensors)
    "champion": ("baselines.champion", ("safetensors",), "league"),  # numpy and numba only
    "oracle": ("baselines.champion", ("safetensors",), "league"),  # the champion's search shown every hand
    "ppo": ("baselines.ppo", ("safetensors",), "league"),  # acts in numpy; training needs torch
    "ppo_history": ("baselines.ppo", ("safetensors",), "league"),  # ppo's network with its history feature
    "openspiel_ismcts": ("baselines.openspiel", ("pyspiel",), "openspiel"),
    "maskable_ppo": ("baselines.adapters.sb3", ("sb3_contrib",), "sb3"),
}


def register_policy(name: str) -> Callable[[type[Policy]], type[Policy]]:
    """Class decorator: make a Policy subclass available to :func:`make_policy` under `name`."""

    def decorate(cls: type[Policy]) -> type[Policy]:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"a policy name is an identifier (letters, digits, _), got {name!r}")
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"a policy named {name!r} is already registered ({_REGISTRY[name].__name__})")
        cls.name = name
        cls.registered_name = name  # its own attribute: a subclass is not registered under its parent's name
        _REGISTRY[name] = cls
        return cls

    return decorate


def spec_name(cls: type[Policy]) -> str:
    """The name a spec uses for `cls`: its registered name, else its import path ``module.Class``."""
    registered = cls.__dict__.get("registered_name")
    return registered if registered and _REGISTRY.get(registered) is cls else f"{cls.__module__}.{cls.__qualname__}"


def policy_names() -> list[str]:
    """Names :func:`make_policy` accepts besides import paths, sorted: registered policies, the
    learners whose dependencies are installed, and installed packages' entry points."""
    _load_builtin_policies()
    available = {name for name, (_, needs, _) in _LAZY_POLICIES.items() if _installed(needs)}
    return sorted(set(_REGISTRY) | available | set(_entry_points()))


def known_policy_names() -> list[str]:
    """:func:`policy_names` and the learned players whose extra is not installed here: every name
    a configuration written by another installation of this package may hold."""
    return sorted(set(policy_names()) | set(_LAZY_POLICIES))


def policy_parameters(name: str) -> dict[str, Any]:
    """The tunable parameters of a policy and their defaults."""
    cls = policy_class(name)
    signature = inspect.signature(cls.__init__)
    skip = {"self", "num_players", "highest_double", "seed"}
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name: p.default for p in signature.parameters.values() if p.name not in skip and p.kind in named}


def make_policy(name: str, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                **params: Any) -> Policy:
    """Make a policy by name (see the module docstring), e.g. ``make_policy("greedy", 4, 9, seed=0)``;
    a GameConfig in place of `num_players` gives the table with its table rules.

    Raises:
        ValueError: an unknown name or parameter (the message lists what exists).
    """
    cls = policy_class(name)
    known = policy_parameters(name)
    unknown = sorted(set(params) - set(known))
    if unknown:
        listing = ", ".join(f"{k}={v!r}" for k, v in known.items()) or "none"
        raise ValueError(f"policy {name!r} has no parameter(s) {unknown}; its parameters are: {listing}")
    return cls(num_players=num_players, highest_double=highest_double, seed=seed, **params)


def build(spec: PolicySpec, config: GameConfig, seed: SeedLike = None) -> Policy:
    """The policy a spec stands for, for a table (a GameConfig, with its table rules)."""
    return make_policy(spec.name, config, seed=seed, **spec.kwargs)


def check(spec: PolicySpec, config: GameConfig, shown_as: str | None = None) -> None:
    """Build the policy once for `config`, so that a bad name, parameter, checkpoint or missing
    extra is refused before any game: one ValueError naming the policy (`shown_as`, else its
    label) and the table."""
    try:
        build(spec, config, seed=0)
    except Exception as error:  # unknown name, bad parameter, damaged checkpoint, missing extra, ...
        raise ValueError(f"{shown_as or spec.label!r} cannot play {describe_table(config)}: {error}") from None


def refuse_seeing_every_hand(spec: PolicySpec, where: str) -> None:
    """Refuse a calibration player that sees every hand (:class:`SeesEveryHand`, the ``oracle``)
    in a loop that does not show it the deal: one ValueError saying where it does play."""
    if issubclass(policy_class(spec.name), SeesEveryHand):
        raise ValueError(f"{spec.label!r} sees every hand: it plays in dominoes evaluate, the bench and the league "
                         f"(which show it the deal), not {where}")


@dataclass(frozen=True)
class SpecPlayers:
    """A spec with its construction: what the envs seat for a policy given by name (a
    :class:`dominoes_env.players.PlayerFactory`)."""

    spec: PolicySpec

    @property
    def label(self) -> str:
        return self.spec.label

    def make(self, config: GameConfig, seed: SeedLike = None) -> Policy:
        refuse_seeing_every_hand(self.spec, "as an env's opponent")
        return build(self.spec, config, seed)


def resolve_players(opponent: Any, default_copies: int = 1) -> tuple[SpecPlayers, int] | None:
    """How ``dominoes_env`` seats policies given by name: the package's entry point in the group
    ``dominoes_env.player_names`` (the env knows no policy registry). A spec text
    (``"random"``, ``"random:3"``, ``"best_line(max_line_length=6)"``) or a PolicySpec becomes a
    factory with its copies; anything else is not a name (None).

    Raises:
        SpecError: a text that is no spec.
    """
    if isinstance(opponent, str):
        spec, copies = parse(opponent, default_copies=default_copies)
        return SpecPlayers(spec), copies
    if isinstance(opponent, PolicySpec):
        return SpecPlayers(opponent), 1
    return None


def policy_class(name: str) -> type[Policy]:
    """The Policy subclass a name stands for (registered, an import path, or an entry point).

    Raises:
        ValueError: an unknown name (the message lists the known ones), a learner whose
            optional dependencies are not installed (the message says what to install), or
            an import path or entry point that does not lead to a Policy subclass.
    """
    if not isinstance(name, str):
        raise ValueError(f"a policy name is text, got {name!r}")
    _load_builtin_policies()
    if name not in _REGISTRY and name in _LAZY_POLICIES:
        module, needs, extra = _LAZY_POLICIES[name]
        if not _installed(needs):
            raise ValueError(f"policy {name!r} needs {', '.join(needs)}: pip install 'dominoes-env[{extra}]'")
        importlib.import_module(module)
    if name in _REGISTRY:
        return _REGISTRY[name]
    if "." in name:
        return _from_import_path(name)
    entry_points = _entry_points()
    if name in entry_points:
        return _policy_subclass(_load_entry_point(name, entry_points[name]), f"entry point {name!r}")
    raise ValueError(f"unknown policy {name!r}; known policies: {', '.join(policy_names())}; or give an "
                     f"import path package.module.Class")


def importable_current_directory() -> str:
    """Put the current directory on ``sys.path`` (as ``python -m`` does) and return it."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    return here


def _from_import_path(path: str) -> type[Policy]:
    """``package.module.Class`` (or ``module.Outer.Inner``): import the longest module prefix."""
    here = importable_current_directory()
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and module_name.startswith(error.name):
                continue  # this prefix is not a module: try a shorter one
            raise ValueError(f"importing {module_name!r} for policy {path!r} failed: {error}") from None
        except Exception as error:  # the user's module itself fails to import
            raise ValueError(f"importing {module_name!r} for policy {path!r} failed: "
                             f"{type(error).__name__}: {error}") from None
        target: Any = module
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                raise ValueError(f"policy {path!r}: module {module_name!r} has no {'.'.join(parts[cut:])!r}")
            target = getattr(target, attribute)
        return _policy_subclass(target, f"policy {path!r}")
    raise ValueError(f"policy {path!r}: no module {parts[0]!r} in the current directory ({here}) or the "
                     f"installed packages")


def _policy_subclass(target: Any, what: str) -> type[Policy]:
    if not (isinstance(target, type) and issubclass(target, Policy)) or inspect.isabstract(target):
        raise ValueError(f"{what} is {target!r}, not a (concrete) subclass of baselines.Policy")
    return target


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {entry.name: entry for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _load_entry_point(name: str, entry: importlib.metadata.EntryPoint) -> Any:
    try:
        return entry.load()
    except Exception as error:
        raise ValueError(f"the entry point {name!r} ({entry.value}) of group {ENTRY_POINT_GROUP!r} cannot be "
                         f"loaded: {type(error).__name__}: {error}") from None


def _load_builtin_policies() -> None:
    """Import the modules that register the hand-crafted policies (lazily, to avoid import cycles)."""
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def _installed(packages: tuple[str, ...]) -> bool:
    return all(importlib.util.find_spec(package) is not None for package in packages)
