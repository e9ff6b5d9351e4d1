"""How the examples rate a trained agent: its gain over a random player in the same seats and deals,
then a table against the shipped baselines. Shared by the library examples, so every example
measures the same thing the same way; :class:`SavedRun` and :class:`LoggedRun` are what an
example's run leaves (its files, its training log) for the tests to read.

Both are played at the table the agent was trained on (``--players``, ``--highest``, ``--rules``;
4 players, double-nine and the rule book's game by default). The gain is measured by two calls of
:func:`baselines.harness.evaluate` with the same seed, which play the same deals under every seat
rotation whatever the policies:

- ``evaluate([agent, "random", ...])``, random players in the other seats: the agent's pips per
  hand, in each seat once per deal;
- ``evaluate(["random"] * num_players)``: a random player's pips per hand in those seats and deals.

A random player is the reference because the agent was trained against random players, and
because comparing means over the same deals and seats removes the luck of the deal (the short
hand, the seat that moves first), which otherwise swamps a difference of a few pips.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from baselines import Policy, evaluate
from baselines.benchmark import BenchError, Scorecard, bench
from baselines.harness.evaluate import EvaluationResult
from baselines.harness.statistics import ci95_half_width
from dominoes_env.core.config import GameConfig, make_config

#: The shipped hand-crafted baselines of the mixed table, strongest first.
BASELINES = ("persistent_line", "double", "greedy")

#: The table the examples train and rate on unless told otherwise: 4 players, double-nine, the rule book.
DEFAULT_TABLE = make_config(4, 9)

#: ``--bench``: the whole dominoes-bench suite at the agent's table, its quick setting, or none.
BENCH_CHOICES = ("full", "quick", "off")

_OTHER_SEATS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


@dataclass(frozen=True)
class GainOverRandom:
    """The agent against a random player in the same seats and deals (at the agent's table)."""

    agent_pips: float  # the agent's mean pips left per hand, random players in the other seats
    random_pips: float  # a random player's mean pips per hand in the same seats and deals
    ci95: float  # half-width of the 95% interval of the gain, over deals (paired by deal)
    hands: int  # hands the agent played
    seed: int  # the evaluation seed: it fixes the deals

    @property
    def gain(self) -> float:
        """Pips per hand the agent saves over a random player (positive: better than random)."""
        return self.random_pips - self.agent_pips

    def line(self) -> str:
        return (f"agent {self.agent_pips:.2f} pips per hand, a random player in the same seats and deals "
                f"{self.random_pips:.2f}: gain {self.gain:+.2f} ± {self.ci95:.2f} pips per hand "
                f"({self.hands} hands, seed {self.seed})")


def random_players(table: GameConfig) -> str:
    """The other seats of `table` in words: "three random players" at 4 players, "a random player" at 2."""
    others = table.num_players - 1
    return "a random player" if others == 1 else f"{_OTHER_SEATS[others]} random players"


def gain_over_random(agent: Policy, hands: int, seed: int,
                     table: GameConfig = DEFAULT_TABLE) -> tuple[GainOverRandom, EvaluationResult]:
    """Rate `agent` with random players in the other seats of `table`, and a table of random players
    only, on the same deals.

    Returns the gain and the agent's own evaluation (its table, head-to-head and raw hands).
    """
    others = ["random"] * (table.num_players - 1)
    with_agent = evaluate([agent, *others], num_hands=hands, seed=seed, num_players=table)
    all_random = evaluate(["random"] * table.num_players, num_hands=hands, seed=seed, num_players=table)
    assert np.array_equal(np.unique(with_agent.deal), np.unique(all_random.deal))  # same deals, by design
    agent_per_deal = with_agent.per_deal_means(agent.label)
    random_per_deal = all_random.per_deal_means("random")
    gain = GainOverRandom(agent_pips=with_agent[agent.label].mean_pips, random_pips=all_random["random"].mean_pips,
                          ci95=ci95_half_width(random_per_deal - agent_per_deal),
                          hands=with_agent[agent.label].hands, seed=seed)
    return gain, with_agent


@dataclass(frozen=True)
class Rating:
    """What :func:`rate` measured."""

    gain: GainOverRandom
    against_random: EvaluationResult  # the agent and random players in the other seats
    against_baselines: EvaluationResult  # the agent and the shipped baselines
    scorecard: Scorecard | None = None  # its dominoes-bench scorecard (None: --bench off, or no suite table)


def bench_headline(agent: Policy, mode: str = "full") -> Scorecard | None:
    """Bench `agent` on dominoes-bench (`mode`: "full", "quick" or "off") and print the headline:
    its rating on the scale of the frozen reference pool, so a run can be set beside the leaderboard.

    The agent is a Policy built for one table, so it plays only the suite's cells at that table
    (the headline says so); a table the suite does not hold is reported, not an error.
    """
    if mode == "off":
        return None
    print(f"\n## dominoes-bench\n\nbenching the agent on the {mode} suite at its table ("
          f"{'a few seconds' if mode == 'quick' else 'about a minute on two cores; --bench quick: a few seconds'}) ...",
          flush=True)
    try:
        scorecard = bench(agent, quick=mode == "quick")
    except BenchError as error:
        print(f"not benched: {error}", flush=True)
        return None
    print(scorecard.headline(), flush=True)
    return scorecard


def rate(agent: Policy, hands: int, seed: int, baselines: Sequence[str] = BASELINES,
         table: GameConfig = DEFAULT_TABLE, bench_mode: str = "full") -> Rating:
    """Rate `agent` against random players, then against `baselines`, at `table`; print the tables and
    the gain; then bench it (:func:`bench_headline`, `bench_mode`).

    The baselines' table lists the agent and every baseline; with fewer seats than entries
    :func:`~baselines.harness.evaluate` deals each hand to a seated subset in turn, and with more
    seats than entries the baselines are listed again (in order) to fill them.
    """
    gain, against_random = gain_over_random(agent, hands, seed, table)
    print(f"\n## {agent.label} against {random_players(table)}\n\n{against_random.table()}\n\n{gain.line()}")
    seats = max(len(baselines), table.num_players - 1)
    entries = [baselines[index % len(baselines)] for index in range(seats)]
    against_baselines = evaluate([agent, *entries], num_hands=hands, seed=seed, num_players=table)
    print(f"\n## {agent.label} against the baselines\n\n{against_baselines.table()}", flush=True)
    return Rating(gain, against_random, against_baselines, bench_headline(agent, bench_mode))


@dataclass(frozen=True)
class Margin:
    """The agent at a table of copies of one shipped player: its pips minus theirs, paired by hand."""

    opponent: str
    pips: float  # the agent's mean pips per hand minus its opponents' (negative: it leaves fewer)
    ci95: float  # half-width of the 95% interval, over deals
    hands: int

    def line(self) -> str:
        verdict = "ahead" if self.pips + self.ci95 < 0 else "behind" if self.pips - self.ci95 > 0 else \
            "level within the interval"
        return (f"agent - {self.opponent}: {self.pips:+.2f} ± {self.ci95:.2f} pips per hand at a table of "
                f"{self.opponent} in the other seats ({self.hands} hands; {verdict})")


def margin_against(agent: Policy, opponent: str, hands: int, seed: int, table: GameConfig = DEFAULT_TABLE) -> Margin:
    """The agent in one seat, `opponent` in every other: the agent's pips minus theirs in the same hands
    (:meth:`~baselines.harness.evaluate.EvaluationResult.difference`); printed, and returned."""
    result = evaluate([agent, f"{opponent}:{table.num_players - 1}"], num_hands=hands, seed=seed, num_players=table)
    pips, ci95, played = result.difference(agent.label, result.labels[1])
    margin = Margin(opponent, pips, ci95, played)
    print(f"\n## {agent.label} against {opponent} in every other seat\n\n{margin.line()}", flush=True)
    return margin


@dataclass(frozen=True)
class SelfPlayRun:
    """What a self-play example returns: the saved agent, its pool, the rating and the margin against td_lambda."""

    model_path: Path
    pool: Any  # the baselines.OpponentPool it trained against (its record included)
    steps: int
    train_seconds: float
    rating: Rating
    margin: Margin


@dataclass(frozen=True)
class SavedRun:
    """What an example that trains a model, saves it and rates the saved file returns."""

    model_path: Path
    steps: int
    train_seconds: float
    rating: Rating


@dataclass(frozen=True)
class LoggedRun:
    """What an example that trains for some iterations and rates the result returns."""

    iterations: tuple[Any, ...]  # the example's log entry of each iteration
    label: str  # the trained agent's label in the rating's tables
    rating: Rating
