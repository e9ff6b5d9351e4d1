"""Policy specs: the one grammar ``dominoes evaluate`` and ``dominoes league`` read, and policy labels.

A spec names a policy and its parameters::

    NAME[(KEY=VALUE, ...)][@CHECKPOINT][:COPIES]

- ``NAME`` is a registered policy (``persistent_line``); ``KEY=VALUE`` pairs are its
  constructor parameters, values written as Python literals (``best_line(max_line_length=6)``,
  ``td_lambda(epsilon=0.05)``); a bare word is a string.
- ``@CHECKPOINT`` is short for ``checkpoint=CHECKPOINT`` (a learned policy's weights).
- ``:COPIES`` repeats the entry (``random:3``).

The table size and the seed are not policy parameters: they come from the evaluation or
the league (``--players``, ``--highest``, ``--seed``).

A spec's :attr:`PolicySpec.label` is its canonical text (parameters sorted, values as
Python literals), the name under which results are reported and recorded: two different
policies never share a label, and the same policy always gets the same one, whether it was
typed on the command line or built in Python (:attr:`baselines.policies.policy.Policy.label`).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dominoes_env.core import validation

#: Most copies of one policy in an evaluation or a league.
MAX_COPIES = 1000
#: The longest spec read, in characters: a name, a few parameters and a weights path fit many
#: times over, and the parser's work and memory stay small whatever the text (a spec of tens
#: of thousands of operators makes Python's own parser fail with MemoryError or RecursionError).
MAX_SPEC_CHARS = 1024
#: Parameters every policy gets from the evaluation or league, never from a spec.
RESERVED = ("num_players", "highest_double", "seed")

_SPEC = re.compile(r"^(?P<name>[A-Za-z_][\w.\-]*)(?:\((?P<params>.*)\))?(?:@(?P<checkpoint>.+?))?"
                   r"(?::(?P<copies>-?\d+))?$", re.S)


class SpecError(ValueError):
    """A policy spec that cannot be read; the message shows the grammar."""


def _hashable(value: Any) -> Any:
    """Lists and dicts from literals become tuples, so specs can be hashed and compared."""
    if isinstance(value, list | tuple):
        return tuple(_hashable(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((key, _hashable(item)) for key, item in value.items()))
    return value


@dataclass(frozen=True)
class PolicySpec:
    """A policy by name with its parameters (sorted by key).

    Attributes:
        name: a registered policy name.
        params: (key, value) pairs, sorted by key; values are hashable Python literals.
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, name: str, params: Mapping[str, Any] | None = None) -> PolicySpec:
        """A spec from a name and a parameter mapping (checked: no reserved keys)."""
        params = dict(params or {})
        reserved = sorted(set(params) & set(RESERVED))
        if reserved:
            raise SpecError(f"policy {name!r}: {', '.join(reserved)} cannot be set per policy; the table size "
                            f"and the seed come from the evaluation or league (--players, --highest, --seed)")
        return cls(name, tuple(sorted((key, _hashable(value)) for key, value in params.items())))

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def label(self) -> str:
        """The canonical text: ``name``, ``name(k=v, ...)``, ``name@checkpoint``."""
        params = dict(self.params)
        checkpoint = params.pop("checkpoint", None)
        text = self.name
        if params:
            text += "(" + ", ".join(f"{key}={_shown(value)}" for key, value in params.items()) + ")"
        if checkpoint is not None:
            # a path as the user wrote it (a Path too: never "PosixPath('...')"); an object in memory by its repr
            written = os.fspath(checkpoint) if isinstance(checkpoint, str | os.PathLike) else None
            text += f"@{written}" if written is not None else f"(checkpoint={checkpoint!r})"
        return text

    def __str__(self) -> str:
        return self.label


def _shown(value: Any) -> str:
    """A parameter value in a label: a literal as Python writes it; an object (a model in
    memory) by its type and identity, so two different objects never share a label."""
    if value is None or isinstance(value, str | int | float | bool):
        return repr(value)
    if isinstance(value, tuple) and all(item is None or isinstance(item, str | int | float | bool) for item in value):
        return repr(value)
    return f"<{type(value).__name__} {id(value):#x}>"


def parse(text: str, default_copies: int = 1) -> tuple[PolicySpec, int]:
    """Read one ``NAME[(KEY=VALUE,...)][@CHECKPOINT][:COPIES]`` argument: (spec, copies).

    Raises:
        SpecError: the text does not follow the grammar (the message shows it), a value
            cannot be read, a reserved parameter is given, or the copies are out of range.
    """
    if not isinstance(text, str):
        raise SpecError(f"a policy spec is text, got {text!r}")
    if len(text) > MAX_SPEC_CHARS:
        raise SpecError(f"a policy spec is at most {MAX_SPEC_CHARS:,} characters, got one of {len(text):,} "
                        f"({text[:40]!r}...)")
    if not text.strip().isprintable():  # a label is printed in tables and records: no escapes, no newlines
        raise SpecError(f"cannot read policy {text!r}: a spec is printable text (no control characters such as "
                        f"escapes, tabs or newlines)")
    match = _SPEC.match(text.strip())
    if match is None:
        raise SpecError(f"cannot read policy {text!r}: write NAME, NAME:COPIES, 'NAME(KEY=VALUE,...)' or "
                        f"NAME@CHECKPOINT, e.g. random:3 or 'best_line(max_line_length=6)'")
    params = _parameters(text, match["params"])
    if match["checkpoint"]:
        if "checkpoint" in params:
            raise SpecError(f"policy {text!r} gives its checkpoint twice (@ and checkpoint=)")
        params["checkpoint"] = match["checkpoint"]
    copies = default_copies if match["copies"] is None else int(match["copies"])
    try:
        copies = validation.integer(f"the number of copies of {text!r}", copies, 1, MAX_COPIES)
    except ValueError as error:
        raise SpecError(str(error)) from None
    return PolicySpec.of(match["name"], params), copies


def parse_all(texts: list[str] | tuple[str, ...], default_copies: int = 1) -> list[tuple[PolicySpec, int]]:
    """Parse several arguments; a policy listed twice is refused (give it once with :COPIES)."""
    parsed = [parse(text, default_copies) for text in texts]
    labels = [spec.label for spec, _ in parsed]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise SpecError(f"policy {repeated[0]!r} is listed more than once; give it once with NAME:COPIES")
    return parsed


def _parameters(text: str, inside: str | None) -> dict[str, Any]:
    """KEY=VALUE pairs; values are Python literals, anything else (a bare word, a path) a string."""
    if inside is None or not inside.strip():
        return {}
    source = f"f({inside})"
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        call = None
    except (MemoryError, RecursionError):  # nested past what Python's parser takes
        raise SpecError(f"cannot read the parameters of {text[:60]!r}: nested too deeply") from None
    if isinstance(call, ast.Call) and not call.args and all(k.arg for k in call.keywords):
        try:
            return {keyword.arg: _value(source, keyword.value) for keyword in call.keywords if keyword.arg}
        except (MemoryError, RecursionError):
            raise SpecError(f"cannot read the parameters of {text[:60]!r}: nested too deeply") from None
    params: dict[str, Any] = {}  # not Python syntax (e.g. a path value): plain KEY=VALUE pairs
    for item in filter(None, (part.strip() for part in inside.split(","))):
        key, equals, value = item.partition("=")
        if not equals or not key.strip().isidentifier():
            raise SpecError(f"cannot read parameter {item!r} of {text!r}: write KEY=VALUE")
        params[key.strip()] = _literal(value.strip())
    return params


def _value(source: str, node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:  # a bare word like x, or a path like runs/ckpt.safetensors: the text as written
        return ast.get_source_segment(source, node)
    except TypeError:  # a literal Python cannot build, e.g. a set of lists {[1]}
        raise SpecError(f"cannot read {ast.get_source_segment(source, node)!r}: not a value Python can build "
                        f"(e.g. a set or dict key that is a list)") from None


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):  # not a literal, or past the parser
        return text
