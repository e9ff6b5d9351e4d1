"""Who won a hand: the one definition the harness, the league and the learners' logs share.

A hand is won by the player who went out (played its last tile), alone. A blocked hand
(nobody went out) is won by the seats with the fewest pips left, who share it equally. So
the shares of one hand sum to 1. A player left holding only (0|0) scores 0 pips but did
not go out: if someone else went out, that player won the hand, not the (0|0) holder
(RULES.md, rule 10).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BLOCKED = -1  #: the ``went_out`` entry of a hand that ended blocked


def went_out_array(went_out: Sequence[int | None] | np.ndarray) -> np.ndarray:
    """Per hand, the seat that went out, with None (blocked) as :data:`BLOCKED`, as int64."""
    return np.array([BLOCKED if seat is None else seat for seat in went_out], dtype=np.int64)


def hand_win_shares(scores: np.ndarray, went_out: Sequence[int | None] | np.ndarray) -> np.ndarray:
    """Share of each hand won by each seat.

    Args:
        scores: (hands, seats) pips left at the end of each hand.
        went_out: (hands,) the seat that went out, or None / :data:`BLOCKED` if the hand
            was blocked.

    Returns:
        (hands, seats) float shares; every row sums to 1.
    """
    scores = np.asarray(scores)
    out = went_out_array(went_out)
    lowest = scores == scores.min(axis=1, keepdims=True)
    shares = lowest / lowest.sum(axis=1, keepdims=True)
    finished = out != BLOCKED
    shares[finished] = 0.0
    shares[finished, out[finished]] = 1.0
    return shares


def went_out_shares(num_seats: int, went_out: Sequence[int | None] | np.ndarray) -> np.ndarray:
    """(hands, seats): 1 where that seat went out of that hand, else 0."""
    out = went_out_array(went_out)
    shares = np.zeros((out.shape[0], num_seats))
    finished = out != BLOCKED
    shares[finished, out[finished]] = 1.0
    return shares
