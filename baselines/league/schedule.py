"""Which table plays game g, in which seats, with which seeds: a pure function of the league.

Games come in rounds of ``num_players`` games. A round draws its table (distinct league
entries) and its deals once; game r of the round seats that table rotated by r places,
so over a round every entry plays the same deals from every seat (seat position changes
scores, and this cancels it out). Everything is derived from ``(spec.seed, round)`` with
NumPy's SeedSequence, so a game's plan does not depend on which games ran before it, on
how many workers play them, or on whether the run was interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from baselines.harness.seating import rotate
from baselines.league.spec import LeagueSpec

_SEED_BOUND = 2**63  # seeds are drawn below this, so they fit a signed 64-bit integer


@dataclass(frozen=True)
class GamePlan:
    """One game of the league.

    Attributes:
        game: the game index (0, 1, ...).
        deal_seed: the seed of ``env.reset``; the same for every game of a round.
        seats: the league entry sitting in each seat.
        policy_seeds: the seed of the policy in each seat (an entry keeps its seed over
            the games of a round).
    """

    game: int
    deal_seed: int
    seats: tuple[int, ...]
    policy_seeds: tuple[int, ...]


def plan_game(spec: LeagueSpec, game: int) -> GamePlan:
    """The plan of game number `game` (0-based) of `spec`."""
    if game < 0:
        raise ValueError(f"game indices start at 0, got {game}")
    players = spec.num_players
    round_index, rotation = divmod(game, players)
    table, deal_seed, table_seeds = _draw_round(spec, round_index)
    positions = rotate(range(players), rotation)  # the table position sitting in each seat
    return GamePlan(
        game=game,
        deal_seed=deal_seed,
        seats=tuple(table[k] for k in positions),
        policy_seeds=tuple(table_seeds[k] for k in positions),
    )


@lru_cache(maxsize=256)  # the games of a round ask in turn; drawing costs ~100 microseconds
def _draw_round(spec: LeagueSpec, round_index: int) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
    """A round's table (distinct entries), deal seed and policy seeds (by table position)."""
    rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(round_index,)))
    table = rng.choice(len(spec.entries), size=spec.num_players, replace=False)
    deal_seed = int(rng.integers(_SEED_BOUND))
    table_seeds = rng.integers(_SEED_BOUND, size=spec.num_players)
    return tuple(int(e) for e in table), deal_seed, tuple(int(s) for s in table_seeds)
