"""A game of several hands: engines N, N-1, ..., with scores carried over (rule 11)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dominoes_env.core.config import MAX_HAND_INDEX, MAX_HANDS_PER_GAME, GameConfig
from dominoes_env.core.state import HandState
from dominoes_env.core.validation import integer


@dataclass(frozen=True)
class HandEnded:
    """A hand that just ended: what :meth:`Game.apply` returns and every view reports.

    The AEC, parallel and single-agent views put :meth:`info` in the step's infos (their keys
    are these fields' names below, part of the envs' API); the batched views report the same
    keys as arrays over their games. :meth:`from_info` reads it back.

    Attributes:
        hand_index: the hand's number in its game (0 for the first).
        scores: pips left by seat (lower is better).
        totals: the game scores by seat, this hand counted.
        went_out: the seat that went out, None if the hand was blocked.
    """

    hand_index: int
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    went_out: int | None

    #: the infos' keys of each field, in one place
    KEYS = {"hand_index": "hand_index", "scores": "hand_scores", "totals": "game_scores", "went_out": "went_out"}

    def info(self) -> dict[str, Any]:
        """The fields as the envs' infos name them (lists of ints: JSON-ready)."""
        return {key: list(value) if isinstance(value, tuple) else value
                for key, value in ((self.KEYS[name], getattr(self, name)) for name in self.KEYS)}

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> HandEnded | None:
        """The hand an env's info reports as ended, or None if it reports none."""
        if cls.KEYS["scores"] not in info:
            return None
        values = {name: info[key] for name, key in cls.KEYS.items()}
        return cls(values["hand_index"], tuple(values["scores"]), tuple(values["totals"]), values["went_out"])


class Game:
    """A sequence of `num_hands` hands dealt from one seeded generator.

    When a hand ends the next one is dealt at once, so ``hand`` is always the hand
    being played (or the last one, once the game is over).
    """

    def __init__(self, config: GameConfig, num_hands: int, rng: np.random.Generator,
                 first_hand: HandState | None = None, first_hand_index: int | None = None,
                 hands_played: int = 0, game_scores: Any = None) -> None:
        """Deal the first hand from `rng`, or start from the given position `first_hand`.

        With `first_hand`, `first_hand_index` (the hand's number in the game, which fixes
        the engines and deals of the hands after it) defaults to the first hand whose engine
        is the position's: N - h. A game resumed in its middle gives `hands_played` (hands of
        its `num_hands` already finished) and `game_scores` (their totals by seat).
        """
        self.config = config
        self.num_hands, self.hands_before, self.totals, self.hand_index = self.check_start(
            config, num_hands, first_hand, first_hand_index, hands_played, game_scores)
        self.rng = rng
        self.hand_scores: list[np.ndarray] = []
        self.ended_early = False
        self.hand = HandState.deal(config, 0, rng) if first_hand is None else first_hand.copy()

    @staticmethod
    def check_start(config: GameConfig, num_hands: int, first_hand: HandState | None = None,
                    first_hand_index: int | None = None, hands_played: int = 0, game_scores: Any = None
                    ) -> tuple[int, int, np.ndarray, int]:
        """The arguments of a game, checked before anything is dealt or drawn (so that a caller
        can refuse a reset before it changes anything): ``num_hands``, ``hands_played``, the
        scores so far and the first hand's index, or a one-line ValueError."""
        num_hands = integer("num_hands", num_hands, 1, MAX_HANDS_PER_GAME)
        hands_before = integer("hands_played", hands_played, 0, num_hands - 1)
        totals = np.zeros(config.num_players, dtype=np.int64)
        if game_scores is not None:
            if not isinstance(game_scores, (list, tuple, np.ndarray)):
                raise ValueError(f"game_scores must be a list of {config.num_players} scores, got {game_scores!r}")
            scores = [integer("game_scores", score, 0, config.total_pips * num_hands) for score in game_scores]
            if len(scores) != config.num_players:
                raise ValueError(f"game_scores must give {config.num_players} scores, got {len(scores)}")
            totals[:] = scores
        if first_hand is None:
            return num_hands, hands_before, totals, 0
        if not isinstance(first_hand, HandState) or first_hand.config != config:
            raise ValueError(f"the starting position must be a HandState of {config.num_players} players, "
                             f"double-{config.highest_double}")
        if first_hand.is_over:
            raise ValueError("the starting position is a finished hand")
        if first_hand_index is None:
            first_hand_index = config.highest_double - first_hand.engine_value
        return num_hands, hands_before, totals, integer("hand_index", first_hand_index, 0, MAX_HAND_INDEX)

    @property
    def is_over(self) -> bool:
        return self.ended_early or self.hands_before + len(self.hand_scores) == self.num_hands

    def end(self) -> None:
        """End the game now, whatever is left (an illegal action under a penalty)."""
        self.ended_early = True

    @property
    def hands_left(self) -> int:
        """Hands not finished yet, the one being played included."""
        return self.num_hands - self.hands_before - len(self.hand_scores)

    @property
    def scores_before_hand(self) -> np.ndarray:
        """Game scores before the hand being played (the totals once the game is over)."""
        return self.totals

    def apply(self, action: Any, checked: bool = False) -> HandEnded | None:
        """Play an action; return the hand it ended, if it ended one.

        Raises IllegalActionError (the game unchanged) for an illegal action, unless
        `checked` says the caller already validated it against the legal mask.
        """
        if checked:
            self.hand.apply_unchecked(action)
        else:
            self.hand.apply(action)
        if not self.hand.is_over:
            return None
        scores = self.hand.scores()
        self.hand_scores.append(scores)
        self.totals = self.totals + scores
        ended = HandEnded(self.hand_index, tuple(scores.tolist()), tuple(self.totals.tolist()), self.hand.went_out)
        if not self.is_over:
            self.hand_index += 1
            self.hand = HandState.deal(self.config, self.hand_index, self.rng)
        return ended
