"""Playing games through the environment: the one loop the harness and the league share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dominoes_env.env import DominoesEnv
from baselines.policy import Policy


@dataclass(frozen=True)
class GameResult:
    """Scores of one game, by seat: ``hand_scores[h][seat]`` pips left after hand h."""

    hand_scores: np.ndarray  # (num_hands, num_players) int
    went_out: tuple[int | None, ...]  # seat that went out in each hand, None if blocked

    @property
    def totals(self) -> np.ndarray:
        return self.hand_scores.sum(axis=0)


def play_game(env: DominoesEnv, policies: Sequence[Policy], seed: int) -> GameResult:
    """Play one episode of `env` (reset with `seed`) with ``policies[seat]`` in each seat.

    Each policy's :meth:`~Policy.reset` is called at the start of every hand. The env is
    the bare :class:`DominoesEnv` (``dominoes_env.raw_env``): the policies only ever see
    ``observe(agent)``.
    """
    if env.illegal_action != "raise":
        raise ValueError("play_game needs an env with illegal_action='raise': a penalized game ends before its hands do")
    if len(policies) != env.config.num_players:
        raise ValueError(f"{env.config.num_players} seats need {env.config.num_players} policies, got {len(policies)}")
    env.reset(seed=seed)
    game = env.game
    seat_of = {agent: seat for seat, agent in enumerate(env.possible_agents)}
    went_out: list[int | None] = []
    hand_index = -1
    while not game.is_over:
        if game.hand_index != hand_index:
            hand_index = game.hand_index
            for policy in policies:
                policy.reset()
        agent = env.agent_selection
        observation = env.observe(agent)
        hand = game.hand
        action = policies[seat_of[agent]].act(observation["observation"], observation["action_mask"])
        env.step(action)
        if hand.is_over:
            went_out.append(hand.went_out)
    return GameResult(np.array(game.hand_scores, dtype=np.int64), tuple(went_out))
