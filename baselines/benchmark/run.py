"""Playing a suite for one agent: every cell (a table and a line-up) through the harness, resumable.

A cell is one :func:`~baselines.harness.evaluate.evaluate` call: the agent in one seat and the
line-up's players in the others, ``games`` games of ``hands_per_game`` hands, each game under
every rotation of the seats, on the deals of the line-up's seed (the same for every agent, so
two scorecards of one suite version compare deal by deal). The agent plays under the label
``agent``, so benching a shipped player against copies of itself keeps the two apart.

Each finished cell is appended to ``cells.jsonl`` in the output directory (first line: which
suite and which agent), in cell order, so a killed run resumes where it stopped and gives
the same file; the scorecard (:mod:`baselines.benchmark.scorecard`) is computed from it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from baselines.benchmark.rating import Outcome
from baselines.benchmark.suite import MAX_GAMES, MAX_HANDS_PER_GAME, LineUp, Suite, Table, cell_name, check_weights
from baselines.harness.evaluate import EvaluationResult, evaluate
from baselines.harness.parallel import BACKENDS, ordered_map
from baselines.harness.statistics import ci95_half_width
from baselines.policies import registry, specs
from baselines.policies.policy import Policy
from dominoes_env import files
from dominoes_env.core import validation
from dominoes_env.core.config import MAX_PLAYERS, describe_table

AGENT = "agent"  #: the agent's label in every cell
CELLS_FILE = "cells.jsonl"
CELLS_FORMAT = "dominoes-bench-cells/1"
#: Every file a bench writes into its output directory.
OUT_FILES = (CELLS_FILE, "scorecard.json", "scorecard.md", "scorecard.png")
#: The fields of a cell result in the cells file, as :meth:`CellResult.to_dict` writes them.
CELL_FIELDS = ("cell", "hands", "games", "agent_pips", "opponent_pips", "difference", "ci95", "hands_won",
               "games_won", "per_deal", "outcomes")
#: Bounds on a cell read back: its hands (a suite's games x hands a game x players) and pips.
MAX_CELL_HANDS = MAX_GAMES * MAX_HANDS_PER_GAME * MAX_PLAYERS
MAX_PIPS = 1e6
#: Decimals a cell's numbers keep in the cells file.
DIGITS = 6
#: How far a read-back difference may be from agent_pips - opponent_pips: the three are rounded
#: to DIGITS decimals each, so at most 1.5e-6 apart, plus room for the float sums.
DIFFERENCE_TOLERANCE = 2e-6


class BenchError(ValueError):
    """A bench that cannot run or resume (one line says why)."""


@dataclass(frozen=True)
class CellResult:
    """What one cell measured (all of it goes into the scorecard)."""

    cell: str
    hands: int
    games: int
    agent_pips: float  # mean pips per hand left by the agent
    opponent_pips: float  # mean pips per hand of the other seats, over the same hands
    difference: float  # agent_pips - opponent_pips (paired by hand)
    ci95: float  # half-width of its 95% interval, over deals
    hands_won: float  # share of hands the agent won (went out; a blocked hand shared by the lowest)
    games_won: float  # share of games with the agent's total the lowest (ties shared)
    per_deal: tuple[float, ...]  # the difference per deal, in deal order (for paired comparisons)
    outcomes: tuple[Outcome, ...]  # per game and opponent kind, for the rating

    def to_dict(self) -> dict[str, Any]:
        return {"cell": self.cell, "hands": self.hands, "games": self.games,
                "agent_pips": _round(self.agent_pips), "opponent_pips": _round(self.opponent_pips),
                "difference": _round(self.difference), "ci95": _round(self.ci95),
                "hands_won": _round(self.hands_won), "games_won": _round(self.games_won),
                "per_deal": [_round(value) for value in self.per_deal],
                "outcomes": [[o.opponent, o.game, o.score, o.count] for o in self.outcomes]}

    @classmethod
    def from_dict(cls, content: Any) -> CellResult:
        """A cell result from its JSON form, every field's type and range checked, and the difference
        against the pips it is made of (a resumed cell goes into the scorecard as it is read, so a
        NaN, a count of 0 or an edited difference here would be a rating).

        Raises:
            ValueError: naming the field, its value and what is allowed.
        """
        if not isinstance(content, dict):
            raise ValueError(f"a cell result is a JSON object, got {validation.shown(content)}")
        missing = [key for key in CELL_FIELDS if key not in content]
        unexpected = sorted(map(str, set(content) - set(CELL_FIELDS)))
        if missing or unexpected:
            wrong = [f"{what} {keys}" for what, keys in (("missing", missing), ("unexpected", unexpected)) if keys]
            raise ValueError(f"{', '.join(wrong)} (a cell result has the fields {list(CELL_FIELDS)})")
        if not isinstance(content["cell"], str):
            raise ValueError(f"cell must be a name 'TABLE/LINE-UP', got {validation.shown(content['cell'])}")
        hands = validation.integer("hands", content["hands"], 1, MAX_CELL_HANDS)
        per_deal, outcomes = content["per_deal"], content["outcomes"]
        if not isinstance(per_deal, list) or not 1 <= len(per_deal) <= hands:
            raise ValueError(f"per_deal must be a list of 1 to {hands} numbers (one a deal)")
        if not isinstance(outcomes, list) or not outcomes:
            raise ValueError("outcomes must be a non-empty list of [opponent, game, score, count]")
        agent_pips = _pips("agent_pips", content["agent_pips"])
        opponent_pips = _pips("opponent_pips", content["opponent_pips"])
        difference = _gap("difference", content["difference"])
        if abs(difference - (agent_pips - opponent_pips)) > DIFFERENCE_TOLERANCE:
            raise ValueError(f"difference {difference} is not agent_pips - opponent_pips = "
                             f"{_round(agent_pips - opponent_pips)} (within {DIFFERENCE_TOLERANCE})")
        return cls(content["cell"], hands, validation.integer("games", content["games"], 1, hands),
                   agent_pips, opponent_pips, difference, _pips("ci95", content["ci95"]),
                   validation.real("hands_won", content["hands_won"], 0, 1),
                   validation.real("games_won", content["games_won"], 0, 1),
                   tuple(_gap("per_deal", value) for value in per_deal), tuple(map(_outcome, outcomes)))


def _pips(what: str, value: Any) -> float:
    return validation.real(what, value, 0, MAX_PIPS)


def _gap(what: str, value: Any) -> float:
    return validation.real(what, value, -MAX_PIPS, MAX_PIPS)


def _outcome(value: Any) -> Outcome:
    """One [opponent, game, score, count] of a cell read back: `score` wins (ties a half) of `count` seats."""
    if not (isinstance(value, list) and len(value) == 4 and isinstance(value[0], str) and isinstance(value[1], str)):
        raise ValueError(f"an outcome must be [opponent, game, score, count], got {validation.shown(value)}")
    count = validation.integer("an outcome's count", value[3], 1, MAX_PLAYERS - 1)
    return Outcome(value[0], value[1], validation.real("an outcome's score", value[2], 0, count), count)


def _round(value: float) -> float:
    return round(float(value), DIGITS)


class _Agent:
    """The agent as a factory the harness calls per seat and deal, under the label ``agent``."""

    label = AGENT

    def __init__(self, make: Callable[[Any, int, Any], Policy]) -> None:
        self.make = make

    def __call__(self, num_players: Any, highest_double: int, seed: Any) -> Policy:
        return self.make(num_players, highest_double, seed)


def agent_label(agent: str | Callable[..., Policy] | Policy) -> str:
    """What the scorecard and the cells file name the agent: its spec text, its ``label``, or the
    import path of a factory without one (never a ``repr`` with a memory address, which would
    differ in every process and refuse the resumption of its own cells)."""
    if isinstance(agent, str):
        return agent
    label = getattr(agent, "label", None)
    if isinstance(label, str) and label:
        return label
    return f"{getattr(agent, '__module__', '?')}.{getattr(agent, '__qualname__', type(agent).__qualname__)}"


def agent_factory(spec_text: str) -> _Agent:
    """The agent of a spec text (anything the league takes), checked now: ValueError if it cannot be made."""
    spec, copies = specs.parse(spec_text)
    if copies != 1:
        raise BenchError(f"bench one agent, not copies: {spec_text!r}")

    def make(num_players: Any, highest_double: int, seed: Any) -> Policy:
        from dominoes_env.core.config import config_of

        return registry.build(spec, config_of(num_players, highest_double), seed)

    return _Agent(make)


def play_cell(suite: Suite, table: Table, line_up: LineUp, agent: Callable[..., Policy] | Policy) -> CellResult:
    """Play one cell for `agent` (a factory, or a Policy built for this table), under the label ``agent``."""
    if isinstance(agent, Policy):
        policy = agent
        agent = _Agent(lambda num_players, highest_double, seed: policy)
    elif not isinstance(agent, _Agent):
        agent = _Agent(agent)
    result = evaluate([agent, *line_up.seats(table.config)], num_hands=suite.hands(table), seed=line_up.seed,
                      num_players=table.config, hands_per_game=suite.hands_per_game)
    return summarise(cell_name(table, line_up), result, suite.hands_per_game)


def summarise(cell: str, result: EvaluationResult, hands_per_game: int) -> CellResult:
    """A cell's measures from the harness's raw hands (the agent is the policy labelled ``agent``)."""
    mine = result.seating == result.labels.index(AGENT)
    others = ~mine
    agent_pips = (result.scores * mine).sum(axis=1) / mine.sum(axis=1)
    opponent_pips = (result.scores * others).sum(axis=1) / others.sum(axis=1)
    gaps = agent_pips - opponent_pips
    deals, index = np.unique(result.deal, return_inverse=True)
    per_deal = np.bincount(index, weights=gaps) / np.bincount(index)
    hands = result.scores.shape[0]
    games = hands // hands_per_game
    totals = result.scores.reshape(games, hands_per_game, -1).sum(axis=1)  # (games, seats): each game's score
    seats = result.seating.reshape(games, hands_per_game, -1)
    if not (seats == seats[:, :1]).all():
        raise AssertionError("the harness changed the seating within a game")
    seating = seats[:, 0]
    agent_seat = np.argmax(seating == result.labels.index(AGENT), axis=1)
    agent_totals = totals[np.arange(games), agent_seat]
    lowest = totals.min(axis=1)
    games_won = np.where(agent_totals == lowest, 1.0 / (totals == lowest[:, None]).sum(axis=1), 0.0)
    outcomes = []
    for game in range(games):
        by_kind: dict[str, list[float]] = {}
        for seat in range(totals.shape[1]):
            if seat == agent_seat[game]:
                continue
            label = result.labels[seating[game, seat]]
            gap = totals[game, seat] - agent_totals[game]
            by_kind.setdefault(label, []).append(1.0 if gap > 0 else 0.5 if gap == 0 else 0.0)
        for label, scores in sorted(by_kind.items()):
            outcomes.append(Outcome(label, f"{cell}#{game}", float(sum(scores)), len(scores)))
    return CellResult(cell, hands, games, float(agent_pips.mean()), float(opponent_pips.mean()), float(gaps.mean()),
                      ci95_half_width(per_deal), float(result[AGENT].won), float(games_won.mean()),
                      tuple(float(value) for value in per_deal), tuple(outcomes))


def _play_task(task: tuple[Suite, int, str, tuple[str, ...]]) -> CellResult:
    """A worker's cell: the agent is rebuilt from its spec text in the worker."""
    suite, index, spec_text, search_path = task
    import sys

    for directory in reversed(search_path):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    table, line_up = suite.cells()[index]
    return play_cell(suite, table, line_up, agent_factory(spec_text))


def run_cells(suite: Suite, agent: str | Callable[..., Policy] | Policy, out_dir: str | os.PathLike | None,
              workers: int = 1, backend: str = "local", ray_address: str | None = None,
              on_cell: Callable[[CellResult], None] | None = None) -> list[CellResult]:
    """Every cell of `suite` for `agent`, read back from ``out_dir/cells.jsonl`` where already played.

    `agent` is a spec text (any worker can make it), a factory or a Policy (played in this
    process; a Policy only at tables of its own size and rules).

    Raises:
        BenchError: the cells file belongs to another suite or agent, or is damaged (a line
            that is not a cell of `suite`: nothing is played and the file is left as it is).
    """
    check_weights(suite)
    validation.choice("backend", backend, BACKENDS)  # before the cells file is opened
    playable = set(playable_tables(suite, agent))  # a bad spec is one line before any cell
    indexed = [(index, cell) for index, cell in enumerate(suite.cells()) if cell[0].name in playable]
    indices = [index for index, _ in indexed]
    cells = [cell for _, cell in indexed]
    done = _read_cells(out_dir, suite, agent_label(agent)) if out_dir is not None else {}
    wanted = [cell_name(table, line_up) for table, line_up in cells]
    missing = [k for k, name in enumerate(wanted) if name not in done]
    writer = _open_cells(out_dir, cells_header(suite, agent_label(agent)), bool(done)) \
        if out_dir is not None else None
    try:
        for fresh in _played(suite, agent, cells, [indices[k] for k in missing], missing, workers, backend,
                             ray_address):
            result = CellResult.from_dict(fresh.to_dict())  # rounded as a resumed run reads it back
            done[result.cell] = result
            if writer is not None:
                writer.write((json.dumps(result.to_dict(), sort_keys=True) + "\n").encode())
                writer.flush()
            if on_cell is not None:
                on_cell(result)
    finally:
        if writer is not None:
            writer.close()
    return [done[name] for name in wanted]


def playable_tables(suite: Suite, agent: str | Callable[..., Policy] | Policy) -> list[str]:
    """The suite's tables the agent can play: a Policy only its own; a spec every table it can be
    made for (a checkpoint is trained for one table).

    Raises:
        BenchError: it can play none of them (the message says why for each).
    """
    reasons = []
    playable = []
    if isinstance(agent, str):
        spec, copies = specs.parse(agent)
        registry.policy_class(spec.name)  # an unknown name: its own one line (ValueError)
        if copies != 1:
            raise BenchError(f"bench one agent, not copies: {agent!r}")
    for table in suite.tables:
        if isinstance(agent, Policy):
            if agent.config == table.config:
                playable.append(table.name)
            else:
                reasons.append(f"{table.name}: the policy was built for {describe_table(agent.config)}")
            continue
        if not isinstance(agent, str):
            playable.append(table.name)
            continue
        spec, _ = specs.parse(agent)
        try:
            registry.check(spec, table.config)
        except ValueError as error:
            reasons.append(f"{table.name}: {error}")
            continue
        playable.append(table.name)
    if not playable:
        raise BenchError(f"the agent plays none of the suite's tables: {'; '.join(dict.fromkeys(reasons))}")
    return playable


def _played(suite: Suite, agent: str | Callable[..., Policy] | Policy, cells: list[tuple[Table, LineUp]],
            suite_indices: list[int], missing: list[int], workers: int, backend: str,
            ray_address: str | None) -> Iterator[CellResult]:
    """The missing cells' results, in order (`suite_indices`: their places in ``suite.cells()``,
    which a worker is sent instead of the cell; `missing`: their places in `cells`)."""
    if isinstance(agent, str):
        search_path = (registry.importable_current_directory(),)
        yield from ordered_map(_play_task, [(suite, index, agent, search_path) for index in suite_indices], backend,
                               workers, ray_address, lambda: BenchError("the ray backend needs Ray: "
                                                                        "pip install 'dominoes-env[ray]'"))
    else:
        for k in missing:
            table, line_up = cells[k]
            yield play_cell(suite, table, line_up, agent)


def read_cells(path: str | os.PathLike, suite: Suite, agent: str) -> dict[str, CellResult]:
    """The cells of `agent` (its label) already played in the cells file at `path` (none if there is
    no file), every line checked and nothing written: the leaderboard checks each player's file
    with it before it benches any.

    Raises:
        BenchError: the file belongs to another suite or agent, or a line is not a cell of `suite`
            (the message names the file and the line); the file is left as it is.
    """
    return _checked_cells(Path(path), suite, agent)[0]


def _read_cells(out_dir: str | os.PathLike, suite: Suite, agent: str) -> dict[str, CellResult]:
    """:func:`read_cells` of ``out_dir/cells.jsonl``, then its unfinished last line (a killed
    write) cut off, so that the cells played now are appended after the last complete one."""
    path = Path(out_dir) / CELLS_FILE
    done, complete = _checked_cells(path, suite, agent)
    if complete is not None:
        files.write_atomically(path, complete)
    return done


def _checked_cells(path: Path, suite: Suite, agent: str) -> tuple[dict[str, CellResult], bytes | None]:
    """The cells in the file and, where it ends in an unfinished line, its bytes without that line."""
    if not path.exists():
        return {}, None
    try:
        lines = files.read_regular_file(path, 1 << 30).decode().split("\n")
    except (OSError, files.FileRefused, UnicodeDecodeError) as error:
        raise BenchError(f"{str(path)!r} cannot be read: {error}") from None
    complete = lines[:-1]  # the part after the last newline is an unfinished write: played again
    header = cells_header(suite, agent)
    try:
        found = json.loads(complete[0]) if complete else None
    except ValueError:
        found = None
    if found != header:
        raise BenchError(f"{str(path)!r} holds another bench ({found}); this one is {header}: choose another --out")
    cells = {cell_name(table, line_up): (table, line_up) for table, line_up in suite.cells()}
    done: dict[str, CellResult] = {}
    lines_of: dict[str, int] = {}
    for number, line in enumerate(complete[1:], start=2):
        try:
            result = _cell_of(line, suite, cells)
            if result.cell in lines_of:
                raise ValueError(f"cell {result.cell!r} is recorded twice (also on line {lines_of[result.cell]})")
        except (ValueError, TypeError, RecursionError) as error:
            raise BenchError(f"{path}, line {number}: not a cell result of suite {suite.version}: "
                             f"{validation.reason(error)}") from None
        done[result.cell], lines_of[result.cell] = result, number
    return done, (("\n".join(complete) + "\n").encode() if lines[-1] else None)


def _cell_of(line: str, suite: Suite, cells: dict[str, tuple[Table, LineUp]]) -> CellResult:
    """A line of the cells file as a cell of `suite` (`cells`: each cell's table and line-up), or a
    ValueError saying what is wrong: not JSON, a field, a cell the suite does not play, counts or
    outcomes it does not."""
    try:
        content = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON at column {error.colno} ({error.msg})") from None
    result = CellResult.from_dict(content)
    if result.cell not in cells:
        raise ValueError(f"cell {result.cell!r} is not one of the suite's cells {sorted(cells)}")
    table, line_up = cells[result.cell]
    counts = (suite.hands(table), suite.hands(table) // suite.hands_per_game, suite.games)
    if (result.hands, result.games, len(result.per_deal)) != counts:
        raise ValueError(f"cell {result.cell!r} has {result.hands} hands, {result.games} games and "
                         f"{len(result.per_deal)} deals; the suite plays {counts[0]}, {counts[1]} and {counts[2]}")
    _check_outcomes(result, Counter(specs.parse(name)[0].label for name in line_up.seats(table.config)))
    return result


def _check_outcomes(result: CellResult, seats: Counter[str]) -> None:
    """Refuse outcomes :func:`summarise` does not make for this cell: exactly one per game
    ``CELL#0`` .. ``CELL#(games-1)`` and opponent label of the line-up, its count the seats that
    label holds (`seats`). Why: the rating drops an opponent outside the pool without a word,
    and a pool opponent in the place of another, or a game counted twice, would move it.

    Raises:
        ValueError: naming the outcome's value and what the cell allows.
    """
    games = {f"{result.cell}#{game}" for game in range(result.games)}
    seen = set()
    for outcome in result.outcomes:
        key = (outcome.opponent, outcome.game)
        if outcome.opponent not in seats:
            raise ValueError(f"an outcome's opponent {outcome.opponent!r} is not one of the line-up's {sorted(seats)}")
        if outcome.game not in games:
            raise ValueError(f"an outcome's game {outcome.game!r} is not one of the cell's "
                             f"'{result.cell}#0' to '{result.cell}#{result.games - 1}'")
        if key in seen:
            raise ValueError(f"the outcome against {outcome.opponent!r} in game {outcome.game!r} is recorded twice")
        if outcome.count != seats[outcome.opponent]:
            raise ValueError(f"the outcome against {outcome.opponent!r} in game {outcome.game!r} has count "
                             f"{outcome.count}; the line-up gives it {seats[outcome.opponent]} seats")
        seen.add(key)
    if len(seen) != len(games) * len(seats):
        raise ValueError(f"cell {result.cell!r} has {len(seen)} outcomes; its {len(games)} games against "
                         f"{sorted(seats)} make {len(games) * len(seats)}")


def cells_header(suite: Suite, agent: str) -> dict[str, str]:
    """The first line of a cells file: which suite and which agent (its label) the cells belong to."""
    return {"format": CELLS_FORMAT, "suite": suite.version, "agent": agent}


def _open_cells(out_dir: str | os.PathLike, header: dict[str, str], resuming: bool) -> Any:
    try:
        directory = files.check_output_directory("--out", out_dir, OUT_FILES)
    except files.FileRefused as error:
        raise BenchError(str(error)) from None
    path = directory / CELLS_FILE
    if not resuming:
        files.write_atomically(path, (json.dumps(header, sort_keys=True) + "\n").encode())
    return files.open_for_writing(path, append=True)
