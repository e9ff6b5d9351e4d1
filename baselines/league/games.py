"""Playing league games: the work every backend hands out, in chunks of game indices.

A game depends only on the league and its index (:func:`~baselines.league.schedule.plan_game`):
its policies are made fresh for it from their seeds, so no state crosses from one game to
the next and any worker can play any game with the same result. Asked to, a worker also
records each game's moves (:mod:`dominoes_env.records`) and sends the record back with its
result; the runner writes both where the league was started.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import dominoes_env
from baselines.harness.play import play_game
from baselines.harness.threads import single_threaded_torch
from baselines.league.results import GameRecord
from baselines.league.schedule import plan_game
from baselines.league.spec import LeagueError, LeagueSpec
from baselines.policies import registry
from dominoes_env.records import RecordedGame, RecordGames


@dataclass(frozen=True)
class PlayedGame:
    """A finished league game: its results line, and its game record when the league records them."""

    result: GameRecord
    record: RecordedGame | None = None


class GamePlayer:
    """Plays the games of one league, reusing one environment (wrapped to record the moves when
    `record_games`)."""

    def __init__(self, spec: LeagueSpec, record_games: bool = False) -> None:
        self.spec = spec
        self.record_games = record_games
        self.env = dominoes_env.raw_env(spec.game, num_hands=spec.hands_per_game)
        self.recorder = RecordGames(self.env) if record_games else None

    def play(self, game: int) -> PlayedGame:
        spec = self.spec
        plan = plan_game(spec, game)
        seated = [spec.entries[entry] for entry in plan.seats]
        labels = tuple(policy.label for policy in seated)
        try:
            table = spec.game
            policies = [registry.build(policy, table, seed=seed) for policy, seed in zip(seated, plan.policy_seeds)]
            if self.recorder is not None:
                self.recorder.players = labels
            result = play_game(self.recorder or self.env, policies, plan.deal_seed)
        except Exception as error:  # say which game and which players, then stop the league
            raise LeagueError(f"game {game} of the league (seats: {list(labels)}, deal seed {plan.deal_seed}) "
                              f"failed: {type(error).__name__}: {error}") from error
        hand_scores = tuple(tuple(int(x) for x in hand) for hand in result.hand_scores)
        line = GameRecord(
            game=game, seed=plan.deal_seed, seats=plan.seats, policies=labels,
            hand_scores=hand_scores, totals=tuple(int(t) for t in result.totals), went_out=result.went_out,
        )
        return PlayedGame(line, None if self.recorder is None else self.recorder.recorded)


_player: GamePlayer | None = None


def play_games(spec: LeagueSpec, games: Sequence[int], search_path: Sequence[str] = (),
               record_games: bool = False) -> list[PlayedGame]:
    """Play `games` of `spec` in this process (the unit of work of every backend), with their game
    records if `record_games`.

    `search_path`: directories put on ``sys.path`` first, so that a policy named by its
    import path resolves in every worker as it did where the league was started (a spawned
    or Ray worker does not start in, or with, the caller's current directory). The
    environment is kept between calls for the same league, so a worker pays for it once.
    """
    for directory in reversed(search_path):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    global _player
    if _player is None or _player.spec != spec or _player.record_games != record_games:
        _player = GamePlayer(spec, record_games)
    with single_threaded_torch():
        return [_player.play(game) for game in games]
