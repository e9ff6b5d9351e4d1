"""What a hand pays each seat, and the penalty for an illegal action: one home for both views.

The AEC env, the parallel env and the single-agent env all pay with these functions, so a
reward mode means the same thing in every view.

Reward modes, per finished hand (scores are the pips each seat still holds):

- ``"score"``: minus the pips left in its hand (0 for the player who went out).
- ``"zero_sum"``: the mean of the other players' pips minus its own (sums to zero).
- ``"rank"``: (opponents with more pips - opponents with fewer) / (n - 1), in [-1, 1].

The penalty for an illegal action (where a view is asked to penalize instead of raising)
ends the episode and must be worse than anything legal play could have earned in the
hands still to come, in every reward mode; otherwise a learner could learn that cheating
pays. A hand's reward is at least ``-(largest pip count one hand can hold)`` in the
"score" and "zero_sum" modes and at least -1 in the "rank" mode, so the penalty is that
bound times the hands left, minus one.
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig

REWARD_MODES = ("score", "zero_sum", "rank")


@kernel
def hand_rewards_into(scores, mode, out):
    """The rewards of one finished hand into `out` (float64), `mode` an index of REWARD_MODES.

    Compiled, so that the batched engine pays with the same code as the other views.
    """
    n = scores.shape[0]
    total = 0.0
    for seat in range(n):
        total += scores[seat]
    for seat in range(n):
        if mode == 0:  # score
            out[seat] = -scores[seat]
        elif mode == 1:  # zero_sum
            out[seat] = (total - scores[seat]) / (n - 1) - scores[seat]
        else:  # rank
            more = 0
            fewer = 0
            for other in range(n):
                if scores[other] > scores[seat]:
                    more += 1
                elif scores[other] < scores[seat]:
                    fewer += 1
            out[seat] = (more - fewer) / (n - 1)


def hand_rewards(scores: np.ndarray, mode: str) -> np.ndarray:
    """Per-seat rewards (float64) of one finished hand's pip counts."""
    scores = np.ascontiguousarray(scores, dtype=np.int64)
    out = np.empty(scores.shape[0], dtype=np.float64)
    hand_rewards_into(scores, REWARD_MODES.index(mode), out)
    return out


def worst_hand_reward(config: GameConfig, mode: str) -> float:
    """A lower bound on what one hand can pay a seat in `mode`."""
    if mode == "rank":
        return -1.0
    return -float(config.max_hand_pips)


def illegal_action_penalty(config: GameConfig, mode: str, hands_left: int) -> float:
    """The reward for an illegal action that ends the episode with `hands_left` hands unplayed
    (the current one included): strictly below the worst legal outcome of those hands."""
    return hands_left * worst_hand_reward(config, mode) - 1.0
