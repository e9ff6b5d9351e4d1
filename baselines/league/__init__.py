"""The league: many policies play many games; ratings, tables and plots come from the results.

Modules, one job each: :mod:`spec` (what a league is), :mod:`schedule` (which table plays
game g, with which seeds), :mod:`games` (playing games), :mod:`results` (the append-only
results file), :mod:`runner` (resuming and handing games to a local pool or Ray),
:mod:`ratings` (multiplayer ELO and OpenSkill), :mod:`report` and :mod:`plot` (tables and
the figure), :mod:`cli` (``dominoes league``).
"""

from baselines.league.ratings import LeagueRatings, PolicyRating, rate
from baselines.league.results import GameRecord, read_results
from baselines.league.runner import run_league
from baselines.league.spec import (
    DEFAULT_POLICIES,
    LeagueError,
    LeagueSpec,
    default_policies,
    make_spec,
    parse_policy_arguments,
)
from baselines.policies.specs import PolicySpec

__all__ = [
    "DEFAULT_POLICIES", "GameRecord", "LeagueError", "LeagueRatings", "LeagueSpec", "PolicyRating", "PolicySpec",
    "default_policies", "make_spec", "parse_policy_arguments", "rate", "read_results", "run_league",
]
