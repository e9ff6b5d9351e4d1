"""A benchmark suite: the fixed tables, line-ups, deals and frozen references an agent is measured on.

A suite is one versioned JSON file shipped in the package (``baselines/benchmark/suites/v1.json``).
Changing anything in it (a table, a line-up, the number of games, a seed, a reference value)
makes a new version, a new file: old files stay, so an old scorecard can be reproduced. The
file holds:

- ``tables``: each a table (players, set, rule set) and the seed of its deals;
- ``line_ups``: the opponents each table seats beside the agent (names of shipped players;
  a list shorter than the table's other seats is repeated around it), with their own seeds;
- ``games`` and ``hands_per_game``: each line-up is played for that many games of that many
  hands, every game under every rotation of the seats, so each seat of the deal is the agent's
  once (the harness, :func:`baselines.harness.evaluate.evaluate`);
- ``reference``: what the scorecard is measured against, frozen when the version was made
  (``dominoes bench --calibrate``): the rating of every player of the reference pool on a
  fixed ELO scale, and per line-up the result of a random player and of the best shipped
  player in the agent's seats on the same deals.

:func:`load_suite` validates a file against all of this; a damaged or unknown file is
refused with one line.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from dominoes_env import files
from dominoes_env.core import validation
from dominoes_env.core.config import RULE_SETS, GameConfig, make_config

Parsed = TypeVar("Parsed")
FORMAT = "dominoes-bench-suite/1"
#: The newest suite version: what ``dominoes bench`` uses by default.
LATEST = "v1"
MAX_SUITE_BYTES = 1 << 20
MAX_GAMES = 10_000
MAX_HANDS_PER_GAME = 1000
QUICK_GAMES = 2  #: games per line-up of ``--quick``


class SuiteError(ValueError):
    """A suite that cannot be used: unknown version, damaged file (one line says what)."""


@dataclass(frozen=True)
class LineUp:
    """The opponents of one line-up: names of shipped players, repeated around the table."""

    name: str
    opponents: tuple[str, ...]
    seed: int

    def seats(self, config: GameConfig) -> list[str]:
        """The other seats' players at `config`: the opponents repeated in order."""
        return [self.opponents[k % len(self.opponents)] for k in range(config.num_players - 1)]


@dataclass(frozen=True)
class Table:
    """One table of the suite and the line-ups it seats."""

    name: str
    config: GameConfig
    line_ups: tuple[LineUp, ...]


@dataclass(frozen=True)
class Reference:
    """The frozen references of a suite version.

    Attributes:
        pool: the reference pool's ratings on the suite's ELO scale (random anchored at 1000).
        random: per cell ("table/line-up"), a random player's paired difference there.
        best: per cell, (the best shipped player, its paired difference there).
        weights: the SHA-256 of every shipped weights file the pool played with: a package whose
            shipped players changed cannot give scorecards on this scale (:func:`check_weights`).
    """

    pool: dict[str, float] = field(default_factory=dict)
    random: dict[str, float] = field(default_factory=dict)
    best: dict[str, tuple[str, float]] = field(default_factory=dict)
    weights: dict[str, str] = field(default_factory=dict)

    @property
    def calibrated(self) -> bool:
        return bool(self.pool)


@dataclass(frozen=True)
class Suite:
    """A benchmark suite (see the module docstring)."""

    version: str
    games: int
    hands_per_game: int
    tables: tuple[Table, ...]
    reference: Reference
    pool: tuple[str, ...]

    def cells(self) -> list[tuple[Table, LineUp]]:
        """Every (table, line-up) the suite plays, in file order."""
        return [(table, line_up) for table in self.tables for line_up in table.line_ups]

    def hands(self, table: Table) -> int:
        """Hands one line-up plays at `table`: games x hands per game x seat rotations."""
        return self.games * self.hands_per_game * table.config.num_players

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "version": self.version, "games": self.games, "hands_per_game": self.hands_per_game,
            "pool": list(self.pool),
            "tables": [{"name": table.name, "num_players": table.config.num_players,
                        "highest_double": table.config.highest_double, "rules": table.config.rule_set,
                        "line_ups": [{"name": line_up.name, "opponents": list(line_up.opponents),
                                      "seed": line_up.seed} for line_up in table.line_ups]}
                       for table in self.tables],
            "reference": {"pool": self.reference.pool, "random": self.reference.random,
                          "best": {cell: list(best) for cell, best in self.reference.best.items()},
                          "weights": self.reference.weights},
        }


def quick_suite(suite: Suite) -> Suite:
    """The suite with two games per line-up (version "VERSION-quick"): the same tables, line-ups,
    deals and references, a quarter of the time or less, a wider interval."""
    return Suite(f"{suite.version}-quick", min(suite.games, QUICK_GAMES), suite.hands_per_game, suite.tables,
                 suite.reference, suite.pool)


def cell_name(table: Table, line_up: LineUp) -> str:
    return f"{table.name}/{line_up.name}"


def suite_path(version: str) -> Path:
    """The packaged file of a suite version."""
    return Path(str(resources.files("baselines.benchmark") / "suites" / f"{version}.json"))


def versions() -> list[str]:
    """The suite versions shipped in the package."""
    return sorted(path.stem for path in suite_path(LATEST).parent.glob("v*.json"))


def load_suite(version_or_path: str | Path = LATEST) -> Suite:
    """A suite by version ("v1") or from a file.

    Raises:
        SuiteError: an unknown version (the message lists the shipped ones) or a file that is
            not a valid suite (the message names the field).
    """
    text = str(version_or_path)
    if isinstance(version_or_path, str) and "/" not in text and not text.endswith(".json"):
        if text not in versions():
            raise SuiteError(f"no benchmark suite {text!r}; the suites are {versions()}")
        path = suite_path(text)
    else:
        path = Path(version_or_path)
    return read_checked(path, MAX_SUITE_BYTES, suite_from_dict, SuiteError, "benchmark suite", "is not a valid suite")


def read_checked(path: str | os.PathLike, limit: int, parse: Callable[[Any], Parsed], error: type[ValueError],
                 what: str, damaged: str) -> Parsed:
    """``parse`` of the JSON in the file at `path` (at most `limit` bytes); anything wrong is one
    `error` line: "WHAT 'PATH' cannot be read: ..." or "WHAT 'PATH' DAMAGED: ..."."""
    try:
        content = json.loads(files.read_regular_file(path, limit))
    except (OSError, files.FileRefused, ValueError) as reason:
        raise error(f"{what} {str(path)!r} cannot be read: {reason}") from None
    try:
        return parse(content)
    except (ValueError, KeyError, TypeError) as reason:
        raise error(f"{what} {str(path)!r} {damaged}: {reason}") from None


def suite_from_dict(content: Any) -> Suite:
    """A suite from its JSON form, every field checked (ValueError, KeyError or TypeError naming it)."""
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}")
    version = content["version"]
    if not isinstance(version, str) or not version:
        raise ValueError("version must be a non-empty string")
    games = validation.integer("games", content["games"], 2, MAX_GAMES, "at least 2: an interval needs two deals")
    hands_per_game = validation.integer("hands_per_game", content["hands_per_game"], 1, MAX_HANDS_PER_GAME)
    pool = tuple(_names("pool", content["pool"]))
    tables = []
    for entry in content["tables"]:
        rules = validation.choice("rules", entry["rules"], RULE_SETS)
        config = make_config(entry["num_players"], entry["highest_double"], rules=rules)
        line_ups = tuple(LineUp(_name(item["name"]), tuple(_names("opponents", item["opponents"])),
                                validation.integer("seed", item["seed"], 0, 2**63 - 1))
                         for item in entry["line_ups"])
        if len({line_up.name for line_up in line_ups}) != len(line_ups):
            raise ValueError(f"table {entry['name']!r} names a line-up twice")
        tables.append(Table(_name(entry["name"]), config, line_ups))
    if len({table.name for table in tables}) != len(tables) or not tables:
        raise ValueError("tables must be listed, each name once")
    suite = Suite(version, games, hands_per_game, tuple(tables), Reference(), pool)
    cells = {cell_name(table, line_up) for table, line_up in suite.cells()}
    reference = content["reference"]
    ratings = {str(name): _finite("pool rating", value) for name, value in reference["pool"].items()}
    if ratings and set(ratings) != set(pool):
        raise ValueError("the reference pool's ratings must name exactly the pool's players")
    random = {str(cell): _finite("random reference", value) for cell, value in reference["random"].items()}
    best = {str(cell): (_name(value[0]), _finite("best reference", value[1])) for cell, value in
            reference["best"].items()}
    for what, found in (("random", random), ("best", best)):
        if found and set(found) != cells:
            raise ValueError(f"the {what} references must name exactly the suite's cells")
    weights = {_name(name): _name(digest) for name, digest in reference["weights"].items()}
    return Suite(version, games, hands_per_game, tuple(tables), Reference(ratings, random, best, weights), pool)


def weights_fingerprint(suite: Suite) -> dict[str, str]:
    """SHA-256 of every shipped weights file of the pool's players at the suite's tables."""
    from baselines.learning.files import SHIPPED_DIRECTORY, table_tag

    found = {}
    for table in suite.tables:
        for player in suite.pool:
            for path in sorted(SHIPPED_DIRECTORY.glob(f"{player}_{table_tag(table.config)}.*")):
                if path.suffix in (".json", ".safetensors"):
                    found[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def check_weights(suite: Suite) -> None:
    """Refuse a calibrated suite whose pool no longer plays with the weights it was calibrated with.

    Raises:
        SuiteError: a shipped weights file differs, is missing or is new (the message names them).
    """
    if not suite.reference.calibrated:
        return
    now = weights_fingerprint(suite)
    changed = sorted(name for name in set(now) | set(suite.reference.weights)
                     if now.get(name) != suite.reference.weights.get(name))
    if changed:
        raise SuiteError(f"the shipped weights {changed} differ from those suite {suite.version} was calibrated "
                         f"with, so ratings on its scale would not compare; use a suite calibrated for them")


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > 200:
        raise ValueError(f"a name must be a short non-empty string, got {validation.shown(value)}")
    return value


def _names(what: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what} must be a non-empty list of names")
    return [_name(item) for item in value]


def _finite(what: str, value: Any) -> float:
    return validation.real(what, value, -1e6, 1e6)
