"""Multi-agent PPO with RLlib (action masking, every seat sharing one policy, self-play), rated against the baselines.

    python examples/rllib_ppo.py --seed 0                                # 5 x 2,000 steps, then the rating
    python examples/rllib_ppo.py --iterations 1 --batch-size 400 --eval-hands 48       # a smoke run
    python examples/rllib_ppo.py --players 3 --highest 12 --rules mexican_train   # another table

RLlib pins its own gymnasium, so it lives in its own virtual environment (see
docs/integrations/rllib.md): ``python3 -m venv .venv-rllib && . .venv-rllib/bin/activate &&
pip install "torch==2.13.0" && pip install -e ".[test]" "ray[rllib]>=2.60"``.

It trains and rates at the table of ``--players``, ``--highest`` and ``--rules`` (4 players,
double-nine and the rule book by default). What RLlib needs, and why each piece is here:

- A ``MultiAgentEnv`` (:class:`baselines.adapters.rllib.DominoesMultiAgentEnv`) over the AEC env. RLlib computes
  an action for every agent that is handed an observation, so only the agent to move gets one;
  the parallel view would hand every seat an observation each step and RLlib would then learn
  from actions that are never played.
- RLlib's action-masking RLModule (``ActionMaskingTorchRLModule``, shipped in
  ``ray.rllib.examples``) reads ``{"observations": ..., "action_mask": ...}``: the key is
  ``observations`` (ours is ``observation``), and it takes the log of the mask, so both are
  float32 here (ours are int8).
- ``disable_env_checking=True``: RLlib's pre-check steps the env with actions sampled from
  the whole action space, ignoring the mask; our env raises ``IllegalActionError`` and RLlib
  reports it as an unrelated error about ``truncateds``.
- Rewards: a hand pays every seat when it ends, whoever moved. The adapter passes every seat's
  reward of every step; RLlib keeps the rewards of a seat that has no observation in that step
  and credits them to that seat's last action.
- One policy for every seat (``policy_mapping_fn``): the observation is egocentric, so one
  network can play any seat, and it learns from all of them.
- The rating (``examples/rating.py``, shared by the library examples): the greedy trained policy,
  wrapped by ``FunctionPolicy`` around the module's masked inference pass, against random players
  in the other seats beside a random player in the same seats and deals, then a table with the
  shipped baselines (persistent_line, double, greedy), at the table it trained on.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import ray
import torch
from rating import DEFAULT_TABLE, LoggedRun, rate
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from settings_cli import add_table_and_rating_options, check_table_and_rating_options

from baselines.adapters import FunctionPolicy
from baselines.adapters.rllib import DominoesMultiAgentEnv, env_config
from baselines.command_line.options import count
from dominoes_env import GameConfig

POLICY = "shared"  # the one policy every seat maps to

#: PPO's settings. A hand is about 14 decisions per seat with one reward at the end, so
#: nothing is discounted; the entropy bonus keeps the policy from settling early.
HIDDEN = 256  # units in each of the two hidden layers
LEARNING_RATE = 3e-4
EPOCHS = 4  # passes over each batch
MINIBATCH = 256  # steps per gradient step
GAMMA, LAMBDA = 1.0, 0.95
ENTROPY_COEFF = 0.01

MAX_ITERATIONS, MAX_BATCH_SIZE = 100_000, 1_000_000


def make_config(batch_size: int, seed: int, table: GameConfig = DEFAULT_TABLE) -> PPOConfig:
    """PPO on the adapter at `table`: sampling in the driver process, one shared masked module."""
    return (
        PPOConfig()
        .environment(DominoesMultiAgentEnv, env_config=env_config(table),
                     disable_env_checking=True)  # the check's random actions ignore the mask
        .env_runners(num_env_runners=0)  # sample in this process: two cores are not worth a worker
        .learners(num_learners=0)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            POLICY: RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                 model_config={"head_fcnet_hiddens": [HIDDEN, HIDDEN]}),
        }))
        .training(train_batch_size_per_learner=batch_size, minibatch_size=MINIBATCH, num_epochs=EPOCHS,
                  lr=LEARNING_RATE, gamma=GAMMA, lambda_=LAMBDA, entropy_coeff=ENTROPY_COEFF,
                  # A hand pays minus the pips left (-100..0): RLlib's default vf_clip_param=10 would
                  # stop the critic learning from any error above about 3 pips.
                  vf_clip_param=10_000.0)
        .debugging(seed=seed)
    )


def greedy_predict(module: RLModule) -> Callable[[np.ndarray, np.ndarray], int]:
    """predict(observation, action_mask) -> the most probable legal action, for FunctionPolicy.

    The module's inference pass masks the logits itself; it is given the layout the
    adapter produces (float32, under ``observations``).
    """
    def predict(observation: np.ndarray, action_mask: np.ndarray) -> int:
        batch = {Columns.OBS: {"observations": torch.as_tensor(observation, dtype=torch.float32)[None],
                               "action_mask": torch.as_tensor(action_mask, dtype=torch.float32)[None]}}
        with torch.no_grad():
            logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        return int(logits.argmax())
    return predict


@dataclass(frozen=True)
class IterationLog:
    """What one ``algo.train()`` reported for the shared policy."""

    env_steps: int  # env steps sampled in this iteration
    episodes: int  # hands finished in this iteration
    mean_pips: float  # mean pips left per seat and hand (self-play); nan when no hand finished
    policy_loss: float
    vf_loss: float
    entropy: float
    seconds: float


def _log(result: dict, seconds: float, num_players: int) -> IterationLog:
    learner = result["learners"][POLICY]
    runners = result["env_runners"]
    # episode_return_mean sums the returns of every seat; with the default "score" reward it is
    # minus the pips left at the table.
    returns = runners.get("episode_return_mean", math.nan)
    return IterationLog(env_steps=int(runners["num_env_steps_sampled"]), episodes=int(runners["num_episodes"]),
                        mean_pips=-float(returns) / num_players, policy_loss=float(learner["policy_loss"]),
                        vf_loss=float(learner["vf_loss"]), entropy=float(learner["entropy"]), seconds=seconds)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_table_and_rating_options(parser)  # the table as the dominoes commands take it, --seed, --eval-hands ...
    parser.add_argument("--iterations", type=int, default=5, help="algo.train() calls (default 5)")
    parser.add_argument("--batch-size", type=int, default=2000,
                        help="env steps (one move each) per iteration (default 2000: about 35 hands)")
    args = parser.parse_args(argv)
    check_table_and_rating_options(parser, args)
    try:
        count("--iterations", args.iterations, 1, MAX_ITERATIONS)
        count("--batch-size", args.batch_size, MINIBATCH, MAX_BATCH_SIZE)
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv: Sequence[str] | None = None) -> LoggedRun:
    """Train on a local Ray instance, then rate the greedy trained policy."""
    args = parse_args(argv)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        algo = make_config(args.batch_size, args.seed, args.table).build_algo()
        logs = []
        started = time.perf_counter()
        for iteration in range(1, args.iterations + 1):
            logs.append(_log(algo.train(), time.perf_counter() - started, args.table.num_players))
            log = logs[-1]
            print(f"iteration {iteration}: {log.env_steps} steps, {log.episodes} hands, self-play mean pips "
                  f"{log.mean_pips:.2f}; policy loss {log.policy_loss:+.4f}, vf loss {log.vf_loss:.4f}, "
                  f"entropy {log.entropy:.3f} ({log.seconds:.0f} s)", flush=True)
        module = algo.get_module(POLICY)
        algo.stop()
    finally:
        ray.shutdown()
    label = f"rllib_ppo({sum(log.env_steps for log in logs)} steps)"
    agent = FunctionPolicy(args.table, predict=greedy_predict(module), label=label, one_hand=True)
    return LoggedRun(tuple(logs), label, rate(agent, args.eval_hands, args.rating_seed, table=args.table,
                                                   bench_mode=args.bench))


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
