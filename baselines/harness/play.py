"""Playing games through the environment: the one loop the harness and the league share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pettingzoo import AECEnv

from baselines.policies.policy import Policy, SeesEveryHand
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.game import HandEnded


@dataclass(frozen=True)
class GameResult:
    """Scores of one game, by seat: ``hand_scores[h][seat]`` pips left after hand h."""

    hand_scores: np.ndarray  # (num_hands, num_players) int
    went_out: tuple[int | None, ...]  # seat that went out in each hand, None if blocked

    @property
    def totals(self) -> np.ndarray:
        return self.hand_scores.sum(axis=0)


class HandWatcher:
    """Spots, from what the AEC env reports in ``infos``, the step that ended a hand.

    When a hand ends the env gives every agent the same info (a
    :class:`~dominoes_env.core.game.HandEnded`'s :meth:`~dominoes_env.core.game.HandEnded.info`)
    and keeps it until the next hand ends; a hand index not seen before marks the step that
    ended it. Any AEC dominoes env reports this way, the bare env and its wrappers alike.
    """

    def __init__(self) -> None:
        self._last: int | None = None

    def finished(self, info: dict) -> HandEnded | None:
        """The hand the step just taken ended, if it ended one."""
        ended = HandEnded.from_info(info)
        if ended is None or ended.hand_index == self._last:
            return None
        self._last = ended.hand_index
        return ended


def play_game(env: AECEnv, policies: Sequence[Policy], seed: int) -> GameResult:
    """Play one episode of `env` (reset with `seed`) with ``policies[seat]`` in each seat.

    Only the AEC API is used: ``agent_iter``, ``last``, ``step`` and ``infos``, where the
    env reports each finished hand (``hand_index``, ``hand_scores``, ``went_out``). Each
    policy's :meth:`~Policy.reset` is called at the start of every hand; a calibration player
    that sees every hand (:class:`~baselines.policies.policy.SeesEveryHand`) is shown the
    whole state before each of its moves, and no other player is. The bare env
    (``dominoes_env.raw_env``) is the fastest; any AEC dominoes env works.
    """
    if getattr(env.unwrapped, "illegal_action", "raise") != "raise":
        raise ValueError("play_game needs an env with illegal_action='raise': a penalized game ends before its "
                         "hands do")
    seats = len(env.possible_agents)
    if len(policies) != seats:
        raise ValueError(f"{seats} seats need {seats} policies, got {len(policies)}")
    env.reset(seed=seed)
    seat_of = {agent: seat for seat, agent in enumerate(env.possible_agents)}
    hand_scores: list[list[int]] = []
    went_out: list[int | None] = []
    watcher = HandWatcher()
    for policy in policies:
        policy.reset()
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        policy = policies[seat_of[agent]]
        if isinstance(policy, SeesEveryHand):
            policy.show(env.unwrapped.state())
        try:
            env.step(policy.act(observation["observation"], observation["action_mask"]))
        except IllegalActionError as error:  # with seats rotated the seat alone does not say who it was
            raise IllegalActionError(f"{policy.label} (seat {agent}) made an illegal move: {error}") from None
        finished = watcher.finished(env.infos[agent])
        if finished is not None:
            hand_scores.append(list(finished.scores))
            went_out.append(finished.went_out)
            for policy in policies:
                policy.reset()
    return GameResult(np.array(hand_scores, dtype=np.int64), tuple(went_out))
