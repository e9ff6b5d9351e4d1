"""The one interface every policy implements, and the registry that makes them by name.

A policy is a plain object: it sees what the environment gives its player (the
observation vector and the action mask) and returns an action. It never owns the game
loop (compare Stable-Baselines3's ``predict`` and OpenSpiel's bots), so the same object
plays in the evaluation harness, the league, or a user's own loop.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from baselines.specs import RESERVED, PolicySpec
from dominoes_env import make_config
from dominoes_env.core.config import GameConfig
from dominoes_env.core.deprecation import renamed_keyword

SeedLike = int | np.random.Generator | None

_REGISTRY: dict[str, type[Policy]] = {}


class Policy(ABC):
    """Base class: construct with the game configuration and an optional seed or generator.

    Subclasses take their parameters as keyword arguments of ``__init__`` (with the
    original project's defaults) and implement :meth:`act`.
    """

    name: ClassVar[str] = "policy"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Keep subclasses working across the 0.2.0 rename of ``highest_dominoe`` (until 0.3.0).

        A subclass written with the new name also accepts the old keyword (with a
        DeprecationWarning); one still written with the old parameter name is given the
        table size under that name, with a warning asking to rename it.
        """
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return
        parameters = inspect.signature(init).parameters
        if "highest_dominoe" in parameters and "highest_double" not in parameters:
            init = _old_style_init(cls, init)
        else:
            init = renamed_keyword(init)
        cls.__init__ = _recording_arguments(init)  # type: ignore[method-assign]

    def __init__(self, num_players: int = 4, highest_double: int = 9, seed: SeedLike = None) -> None:
        self.config: GameConfig = make_config(num_players, highest_double)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def highest_double(self) -> int:
        return self.config.highest_double

    @property
    def highest_dominoe(self) -> int:
        """Deprecated name of :attr:`highest_double` (until 0.3.0)."""
        warnings.warn("Policy.highest_dominoe was renamed highest_double in 0.2.0", DeprecationWarning, stacklevel=2)
        return self.config.highest_double

    @property
    def parameters(self) -> dict[str, Any]:
        """The constructor parameters this object was built with that differ from their defaults
        (the table size and the seed left out)."""
        args, kwargs = self.__dict__.get("_constructed_with", ((), {}))
        signature = inspect.signature(type(self).__init__)
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return {}
        chosen: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            parameter = signature.parameters[name]
            if name == "self" or name in RESERVED:
                continue
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                chosen.update({key: item for key, item in value.items() if key not in RESERVED})
            elif parameter.kind is not inspect.Parameter.VAR_POSITIONAL and not _is_default(value, parameter.default):
                chosen[name] = value
        return chosen

    @property
    def label(self) -> str:
        """The policy's spec text: its registered name (or the class's import path) with the
        parameters that differ from the defaults, e.g. ``best_line(max_line_length=6)``.

        Results are reported under this label, so two differently built policies never
        share a row, and a policy gets the same label in Python and on the command line.
        """
        return PolicySpec.of(spec_name(type(self)), self.parameters).label

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """Whether the default league seats this policy at tables of `config` (a learned
        policy only where it ships a trained player for that table size)."""
        return True

    def reset(self) -> None:  # noqa: B027 - a hook: most policies keep nothing between hands
        """Called at the start of every hand; forget anything kept from the previous one."""

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Return a legal action (an index where ``action_mask`` is 1)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_players={self.num_players}, highest_double={self.highest_double})"


def spec_name(cls: type[Policy]) -> str:
    """The name a spec uses for `cls`: its registered name, else its import path ``module.Class``."""
    if _REGISTRY.get(cls.name) is cls:
        return cls.name
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    if default is inspect.Parameter.empty or type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # e.g. arrays: not a plain default
        return False


def _recording_arguments(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap a subclass ``__init__`` so the object remembers the arguments it was built with
    (the outermost call only: that is the class the caller built)."""

    @functools.wraps(init)
    def record(self: Policy, *args: Any, **kwargs: Any) -> None:
        if "_constructed_with" not in self.__dict__:
            self.__dict__["_constructed_with"] = (args, dict(kwargs))
        init(self, *args, **kwargs)

    return record


def _old_style_init(cls: type, init: Callable[..., None]) -> Callable[..., None]:
    """Wrap the ``__init__`` of a subclass that still names its parameter ``highest_dominoe``."""

    @functools.wraps(init)
    def translate(self: Policy, *args: Any, **kwargs: Any) -> None:
        if "highest_double" in kwargs:
            warnings.warn(f"{cls.__qualname__}.__init__ names its parameter 'highest_dominoe'; rename it "
                          f"'highest_double' (the old name stops working in 0.3.0)", DeprecationWarning, stacklevel=3)
            kwargs["highest_dominoe"] = kwargs.pop("highest_double")
        init(self, *args, **kwargs)

    return translate


def register_policy(name: str) -> Callable[[type[Policy]], type[Policy]]:
    """Class decorator: make a Policy subclass available to :func:`make_policy` under `name`."""

    def decorate(cls: type[Policy]) -> type[Policy]:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"a policy named {name!r} is already registered ({_REGISTRY[name].__name__})")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return decorate


def policy_names() -> list[str]:
    """Names :func:`make_policy` accepts, sorted (learners only where their extra is installed)."""
    _load_builtin_policies()
    available = {name for name, (_, needs) in _LAZY_POLICIES.items() if _installed(needs)}
    return sorted(set(_REGISTRY) | available)


def policy_parameters(name: str) -> dict[str, Any]:
    """The tunable parameters of a policy and their defaults."""
    cls = _policy_class(name)
    signature = inspect.signature(cls.__init__)
    skip = {"self", "num_players", "highest_double", "highest_dominoe", "seed"}
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name: p.default for p in signature.parameters.values() if p.name not in skip and p.kind in named}


@renamed_keyword
def make_policy(name: str, num_players: int = 4, highest_double: int = 9, seed: SeedLike = None,
                **params: Any) -> Policy:
    """Make a registered policy by name, e.g. ``make_policy("greedy", 4, 9, seed=0)``.

    Raises:
        ValueError: an unknown name or parameter (the message lists what exists).
    """
    cls = _policy_class(name)
    known = policy_parameters(name)
    unknown = sorted(set(params) - set(known))
    if unknown:
        listing = ", ".join(f"{k}={v!r}" for k, v in known.items()) or "none"
        raise ValueError(f"policy {name!r} has no parameter(s) {unknown}; its parameters are: {listing}")
    return cls(num_players=num_players, highest_double=highest_double, seed=seed, **params)


def policy_class(name: str) -> type[Policy]:
    """The Policy subclass registered under `name` (importing a learner's module on demand).

    Raises:
        ValueError: an unknown name (the message lists the known ones), or a learner whose
            optional dependencies are not installed (the message says what to install).
    """
    return _policy_class(name)


def _policy_class(name: str) -> type[Policy]:
    _load_builtin_policies()
    if name not in _REGISTRY and name in _LAZY_POLICIES:
        module, needs = _LAZY_POLICIES[name]
        if not _installed(needs):
            raise ValueError(f"policy {name!r} needs {', '.join(needs)}: pip install 'dominoes-env[league]'")
        importlib.import_module(module)
    if name not in _REGISTRY:
        raise ValueError(f"unknown policy {name!r}; known policies: {', '.join(policy_names())}")
    return _REGISTRY[name]


def _load_builtin_policies() -> None:
    """Import the modules that register the hand-crafted policies (lazily, to avoid import cycles)."""
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def _installed(packages: tuple[str, ...]) -> bool:
    return all(importlib.util.find_spec(package) is not None for package in packages)


# Modules that register policies when imported: the hand-crafted ones always; learners
# only when asked for by name, so that listing or making a hand-crafted policy never pays
# for importing torch.
_BUILTIN_MODULES: list[str] = ["baselines.handcrafted"]
_LAZY_POLICIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "td_lambda": ("baselines.td_lambda", ("safetensors",)),  # acts in numpy; training needs the torch extra
}
