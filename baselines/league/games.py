"""Playing league games: the work every backend hands out, in chunks of game indices.

A game depends only on the league and its index (:func:`~baselines.league.schedule.plan_game`):
its policies are made fresh for it from their seeds, so no state crosses from one game to
the next and any worker can play any game with the same result.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import dominoes_env
from baselines.league.results import GameRecord
from baselines.league.schedule import plan_game
from baselines.league.spec import LeagueSpec
from baselines.play import play_game


class GamePlayer:
    """Plays the games of one league, reusing one environment."""

    def __init__(self, spec: LeagueSpec) -> None:
        self.spec = spec
        self.env = dominoes_env.raw_env(spec.num_players, spec.highest_double, num_hands=spec.hands_per_game)

    def play(self, game: int) -> GameRecord:
        spec = self.spec
        plan = plan_game(spec, game)
        refs = [spec.entries[entry] for entry in plan.seats]
        policies = [ref.make(spec.num_players, spec.highest_double, seed)
                    for ref, seed in zip(refs, plan.policy_seeds)]
        try:
            result = play_game(self.env, policies, plan.deal_seed)
        except Exception as error:  # say which game and which players, then stop the league
            raise RuntimeError(f"game {game} of the league (seats: {[ref.label for ref in refs]}, "
                               f"deal seed {plan.deal_seed}) failed: {type(error).__name__}: {error}") from error
        hand_scores = tuple(tuple(int(x) for x in hand) for hand in result.hand_scores)
        return GameRecord(
            game=game, seed=plan.deal_seed, seats=plan.seats, policies=tuple(ref.label for ref in refs),
            hand_scores=hand_scores, totals=tuple(int(t) for t in result.totals), went_out=result.went_out,
        )


def warm_up(spec: LeagueSpec, announce: Callable[[], None] | None = None, after_seconds: float = 1.0) -> None:
    """Compile the rules engine and every policy's kernels once, in this process, before any worker starts.

    Plays one hand with each policy of the league. numba compiles on first use and keeps
    the machine code in its disk cache, so on a new machine this takes seconds (later
    runs load the cache in a fraction of that); workers forked afterwards inherit the
    compiled code, and spawned or Ray workers load it from the cache, instead of each
    compiling it again. `announce` is called if the work takes longer than
    `after_seconds`, i.e. when it is really compiling, so the user knows why it waits.
    """
    timer = threading.Timer(after_seconds, announce) if announce is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        env = dominoes_env.raw_env(spec.num_players, spec.highest_double, num_hands=1)
        distinct = [policy for policy, _ in spec.policies]
        seats = spec.num_players
        for first in range(0, len(distinct), seats):
            table = [distinct[(first + k) % len(distinct)] for k in range(seats)]
            with single_threaded_torch():
                play_game(env, [policy.make(seats, spec.highest_double, seed=k) for k, policy in enumerate(table)], 0)
    finally:
        if timer is not None:
            timer.cancel()


_player: GamePlayer | None = None


def play_games(spec: LeagueSpec, games: Sequence[int]) -> list[GameRecord]:
    """Play `games` of `spec` in this process (the unit of work of every backend).

    The environment is kept between calls for the same league, so a worker pays for it once.
    """
    global _player
    if _player is None or _player.spec != spec:
        _player = GamePlayer(spec)
    with single_threaded_torch():
        return [_player.play(game) for game in games]


@contextmanager
def single_threaded_torch() -> Iterator[None]:
    """Run learned policies' networks on one thread while playing.

    Their forward passes are tiny; torch's intra-op threads only fight the other workers
    (measured here: a td_lambda game took 40x longer with 2 threads on a busy machine).
    The caller's setting is restored afterwards.
    """
    torch = sys.modules.get("torch")  # only when a user's learned policy has already imported it
    threads = torch.get_num_threads() if torch is not None else 1
    if torch is not None and threads > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch is not None and threads > 1:
            torch.set_num_threads(threads)
