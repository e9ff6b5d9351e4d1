"""Playing a chunk of a plan's hands and keeping each seat's hand as an episode of the single-agent view.

The games are played by the shared game loop (:func:`baselines.harness.play.play_game`) on the
PettingZoo AEC env, which :class:`SeatSteps` wraps to note what each agent is handed by
``last()`` and what it plays. The AEC API already is each seat's single-agent view: ``last()``
gives an agent its observation and mask, and the reward it earned since its previous move, at
each of its turns and once more when the hand is over. So a seat's episode is its T moves, the
T + 1 observations and masks it saw (the last one after the hand, its mask all zeros), and the
rewards that arrived at its next ``last()``: zeros, then its reward for the hand, as
:class:`dominoes_env.SingleAgentEnv` pays it.

The batched engine (:mod:`dominoes_env.core.batch`) is not used: it plays policies that act on
many games at once, and a dataset must record any player, the champion's search included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from baselines.datasets.plan import REWARD, DatasetPlan
from baselines.harness.play import play_game
from baselines.policies import registry
from baselines.policies.policy import Policy
from baselines.policies.specs import PolicySpec
from dominoes_env.env import raw_env


@dataclass(frozen=True)
class SeatEpisode:
    """One seat's hand, as its single-agent view saw it (T moves)."""

    hand: int  #: the hand's number in the dataset
    seat: int
    deal_seed: int  #: ``dominoes_env.raw_env(...).reset(seed=deal_seed)`` deals this hand
    observations: np.ndarray  #: (T + 1, D) int8: at each move, then after the hand
    action_masks: np.ndarray  #: (T + 1, A) int8: the legal moves of each observation (the last: none)
    actions: np.ndarray  #: (T,) int64
    rewards: np.ndarray  #: (T,) float64: zeros, then the seat's reward for the hand
    hand_scores: np.ndarray  #: (n,) int64: pips left in each seat
    went_out: int  #: the seat that went out, -1 if the hand was blocked
    moves: np.ndarray  #: (M,) int64: every seat's moves in order, the whole hand (replays it from the deal)

    @property
    def steps(self) -> int:
        return int(self.actions.shape[0])


@dataclass
class _Seat:
    observations: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)


class SeatSteps(BaseWrapper):
    """An AEC dominoes env that notes, per agent, each ``last()`` it is handed and each move it makes."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.seats: dict[str, _Seat] = {}
        self.moves: list[int] = []

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self.seats = {agent: _Seat() for agent in self.env.possible_agents}
        self.moves = []

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, termination, truncation, info = self.env.last(observe)
        seat = self.seats[self.env.agent_selection]
        seat.observations.append(observation["observation"])
        seat.masks.append(observation["action_mask"])
        seat.rewards.append(float(reward))
        return observation, reward, termination, truncation, info

    def step(self, action: Any) -> None:
        agent = self.env.agent_selection
        live = not (self.env.terminations[agent] or self.env.truncations[agent])
        self.env.step(action)  # an illegal action raises here, before anything is noted
        if live:
            self.seats[agent].actions.append(int(action))
            self.moves.append(int(action))


def play_chunk(plan: DatasetPlan, chunk: int) -> tuple[list[SeatEpisode], int]:
    """The episodes of a chunk's hands, and how many seat-hands were left out because the seat
    never moved (the hand ended before its first turn: an episode of no step, which Minari cannot hold)."""
    deal_seeds, player_seeds = plan.chunk_seeds(chunk)
    env = SeatSteps(raw_env(plan.config, num_hands=1, reward=REWARD))
    built: dict[tuple[int, str], Policy] = {}
    episodes: list[SeatEpisode] = []
    left_out = 0
    for hand, deal_seed in zip(plan.chunk_range(chunk), deal_seeds):
        seated = plan.seated(hand)
        players = [_player(built, plan, seat, spec, int(player_seeds[seat])) for seat, spec in enumerate(seated)]
        result = play_game(env, players, int(deal_seed))
        for seat in plan.recorded_seats(hand):
            steps = env.seats[env.possible_agents[seat]]
            if not steps.actions:
                left_out += 1
                continue
            went_out = result.went_out[0]
            episodes.append(SeatEpisode(
                hand=hand, seat=seat, deal_seed=int(deal_seed), observations=np.array(steps.observations),
                action_masks=np.array(steps.masks), actions=np.array(steps.actions, dtype=np.int64),
                rewards=np.array(steps.rewards[1:], dtype=np.float64), hand_scores=result.hand_scores[0].copy(),
                went_out=-1 if went_out is None else went_out, moves=np.array(env.moves, dtype=np.int64)))
    return episodes, left_out


def _player(built: dict[tuple[int, str], Policy], plan: DatasetPlan, seat: int, spec: PolicySpec, seed: int
            ) -> Policy:
    """The chunk's player of `spec` in `seat`, built once per chunk (the seats' seeds are the chunk's)."""
    key = (seat, spec.label)
    if key not in built:
        built[key] = registry.build(spec, plan.config, seed=seed)
    return built[key]
