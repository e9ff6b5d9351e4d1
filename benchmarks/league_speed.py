"""League speed: the hand-crafted league (full games, 4 players, double-nine), one worker and all.

    python benchmarks/league_speed.py [--games 1000] [--seed 0] [--workers N] [--default-league]
                                      [--split] [--profile]

The league is the original project's: 4 copies each of persistent_line, double, greedy,
random and stupid (``--default-league``: the default league of ``dominoes league``, which
adds learned policies that ship a checkpoint). Prints games/s and hands/s for each run and
the ratio against the original project, which played 1,000 ten-hand games of the
hand-crafted league in about 2 minutes on the same machine (about 85 hands/s); the target
is 1,000 games in at most 12 s. Both runs play the same games (fixed seed), write their
results file like ``dominoes league`` does, and must produce the same file. CPU seconds
are printed too: this machine's cores are shared, and wall-clock / CPU shows how much of a
core the run actually got. ``--split`` shows where one core's time goes (env and loop,
policies, making policies; up to 300 games), ``--profile`` adds a one-worker cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import tempfile
import time
from pathlib import Path

import dominoes_env
from baselines.harness.parallel import default_workers
from baselines.harness.play import play_game
from baselines.harness.threads import single_threaded_torch
from baselines.league.results import results_path
from baselines.league.runner import run_league
from baselines.league.schedule import plan_game
from baselines.league.spec import DEFAULT_POLICIES, LeagueSpec, default_policies, make_spec, parse_policy_arguments
from baselines.policies.registry import build

ORIGINAL_HANDS_PER_SECOND = 85.0
TARGET_SECONDS_PER_1000_GAMES = 12.0


def cpu_seconds() -> float:
    """CPU time of this process and of its finished worker processes."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_run(spec: LeagueSpec, games: int, workers: int, out: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one run."""
    start, start_cpu = time.perf_counter(), cpu_seconds()
    run_league(spec, games, out, workers=workers)
    return time.perf_counter() - start, cpu_seconds() - start_cpu


def report(label: str, spec: LeagueSpec, games: int, seconds: tuple[float, float]) -> None:
    wall, cpu = seconds
    hands_per_second = games * spec.hands_per_game / wall
    print(f"{label:>12}: {games} games in {wall:6.2f} s = {games / wall:7.1f} games/s, "
          f"{hands_per_second:7.0f} hands/s = {hands_per_second / ORIGINAL_HANDS_PER_SECOND:5.1f} x the original; "
          f"{wall * 1000 / games:5.1f} s per 1,000 games (target <= {TARGET_SECONDS_PER_1000_GAMES:g} s); "
          f"CPU {cpu:6.2f} s")


class _Recorder:
    """Passes a policy's actions through and writes them down."""

    def __init__(self, policy, log: list[int]) -> None:
        self.policy, self.log = policy, log

    def reset(self) -> None:
        self.policy.reset()

    def act(self, observation, action_mask) -> int:
        action = self.policy.act(observation, action_mask)
        self.log.append(action)
        return action


class _Replay:
    """Plays back recorded actions: a policy that costs nothing."""

    def __init__(self, actions: list[int]) -> None:
        self.actions = iter(actions)

    def reset(self) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        return next(self.actions)


def time_split(spec: LeagueSpec, games: int) -> None:
    """One core's CPU time split into making the policies, the env with the game loop, and
    the policies' decisions: the games are played once with the policies (actions
    recorded) and once more replaying the actions, which costs only the env and the loop."""
    with single_threaded_torch():  # as the league's workers play
        _time_split(spec, games)


def _time_split(spec: LeagueSpec, games: int) -> None:
    env = dominoes_env.raw_env(spec.game, num_hands=spec.hands_per_game)
    logs, making, playing = [], 0.0, 0.0
    for game in range(games):
        plan = plan_game(spec, game)
        start = time.process_time()
        policies = [build(spec.entries[e], spec.game, seed) for e, seed in zip(plan.seats, plan.policy_seeds)]
        making += time.process_time() - start
        logs.append([[] for _ in policies])
        start = time.process_time()
        play_game(env, [_Recorder(p, log) for p, log in zip(policies, logs[-1])], plan.deal_seed)
        playing += time.process_time() - start
    replaying = 0.0
    for game in range(games):
        start = time.process_time()
        play_game(env, [_Replay(log) for log in logs[game]], plan_game(spec, game).deal_seed)
        replaying += time.process_time() - start
    decisions = sum(len(log) for game_logs in logs for log in game_logs)
    total = making + playing
    print(f"one core, {games} games, {decisions} decisions, {total:.2f} CPU s: making policies {making:.2f} s "
          f"({making / total:.0%}), env + game loop {replaying:.2f} s ({replaying / total:.0%}, "
          f"{replaying / decisions * 1e6:.1f} us per decision), policies deciding {playing - replaying:.2f} s "
          f"({(playing - replaying) / total:.0%}, {(playing - replaying) / decisions * 1e6:.1f} us per decision)")


def profile_one_worker(spec: LeagueSpec, games: int, out: Path) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    run_league(spec, games, out, workers=1)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=default_workers(), help="the 'all workers' run")
    parser.add_argument("--default-league", action="store_true",
                        help="the default league of `dominoes league` (with learned policies) instead")
    parser.add_argument("--split", action="store_true",
                        help="also split one core's time into env, policies and making policies")
    parser.add_argument("--profile", action="store_true", help="also profile a one-worker run")
    args = parser.parse_args()
    policies = default_policies(4, 9) if args.default_league else parse_policy_arguments(DEFAULT_POLICIES)
    spec = make_spec(policies, 4, 9, None, args.seed)
    print(f"league: {spec.describe()}")
    with tempfile.TemporaryDirectory() as scratch:
        one, many = Path(scratch, "one"), Path(scratch, "many")
        single = timed_run(spec, args.games, 1, one)
        report("1 worker", spec, args.games, single)
        parallel = timed_run(spec, args.games, args.workers, many)
        report(f"{args.workers} workers", spec, args.games, parallel)
        print(f"speed-up with {args.workers} workers: {single[0] / parallel[0]:.2f} x")
        same = results_path(one).read_bytes() == results_path(many).read_bytes()
        print(f"results identical: {same}")
        if args.split:
            time_split(spec, min(args.games, 300))
        if args.profile:
            profile_one_worker(spec, args.games, Path(scratch, "profile"))


if __name__ == "__main__":
    main()
