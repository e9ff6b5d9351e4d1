"""The six hand-crafted policies of docs/baselines.md: random, greedy, stupid, double, best_line, persistent_line.

Every policy but random is a *score per legal move plus one shared tie-break*: it gives
each action a score and :func:`best_legal_action` plays the legal action with the highest
score, **the lowest action index among equal scores**. Since ``action = line * T + tile``
with line 0 the player's own line, that rule prefers the own line, then the next seats'
lines in seat order, then the dummy line, and within a line the lower tile index. It is
deterministic and costs nothing (the reference's ``np.argmax`` also took the first of equal
options, in an order of its own that is not reproduced).

The policies read only what the environment hands their player (the observation vector
and the action mask) through the layout declared in :mod:`dominoes_env.core.observation`
(:class:`ObservationView` reads the few fields they need by name), never the env's internals,
and they work for every table size the env supports.
"""

from __future__ import annotations

import math

import numpy as np

from baselines.policies.chain_search import (
    IN_LINE_DISCOUNT,
    MAX_LINE_LENGTH,
    MAX_SEARCH_NODES,
    OFF_LINE_DISCOUNT,
    check_parameters,
    discount_powers,
    search_chain,
    value_in_hand_of,
)
from baselines.policies.policy import BatchPolicy, Policy, SeedLike
from baselines.policies.registry import register_policy
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout
from dominoes_env.vector import random_legal_actions


@kernel
def best_legal_action(scores, action_mask):
    """The shared tie-break: the legal action with the highest score, lowest index among equals."""
    best = -1
    for action in range(action_mask.shape[0]):
        if action_mask[action] and (best < 0 or scores[action] > scores[best]):
            best = action
    return best


@kernel
def first_legal_in_order(action_masks, order):
    """For each row of the masks, the first action of `order` the row allows."""
    chosen = np.empty(action_masks.shape[0], dtype=np.int64)
    for row in range(action_masks.shape[0]):
        for action in order:
            if action_masks[row, action]:
                chosen[row] = action
                break
    return chosen


@kernel
def kept_chain_value(observation, hand_start, open_start, chain, low, high, in_pow, off_pow):
    """Value of a kept chain for the hand in `observation`, or NaN if the chain no longer
    starts at the own line's open value or a chain tile has left the hand.

    Compiled, since persistent_line asks it at most of its decisions.
    """
    head = chain[0]
    if observation[open_start + low[head]] == 0 and observation[open_start + high[head]] == 0:
        return np.nan
    for tile in chain:
        if observation[hand_start + tile] == 0:
            return np.nan
    total = np.int64(0)  # not the literal 0: a literal would compile the callee twice
    for tile in range(low.shape[0]):
        if observation[hand_start + tile]:
            total += low[tile] + high[tile]
    return value_in_hand_of(chain, total, low, high, in_pow, off_pow)


class ObservationView:
    """The few fields the hand-crafted policies read, by name, from the env's one layout.

    A multi-hand game only appends the scores, so the one-hand layout's views hold for
    every game length.
    """

    def __init__(self, config: GameConfig) -> None:
        self.layout = observation_layout(config)
        # the slices, found by name once: a decision reads them without looking fields up again
        self._hand = self._row(0, "hand")
        self._own_open_values = self._row(0, "open_values")
        self._played_on_own_line = self._row(0, "played")

    def _row(self, row: int, name: str) -> slice:
        """Row `row` of field `name` (the whole field when it is one row)."""
        field = self.layout.field(name)
        width = field.shape[-1]
        return slice(field.offset + row * width, field.offset + (row + 1) * width)

    def hand_tiles(self, observation: np.ndarray) -> np.ndarray:
        """Tiles held, ascending (int64)."""
        return observation[self._hand].nonzero()[0]

    def open_value(self, observation: np.ndarray) -> int:
        """The open value of the player's own line (row 0 of ``open_values``)."""
        return int(observation[self._own_open_values].argmax())

    def tiles_on_own_line(self, observation: np.ndarray) -> int:
        """How many tiles lie on the player's own line (row 0 of ``played``), anyone's."""
        return int(np.count_nonzero(observation[self._played_on_own_line]))


def _per_action(config: GameConfig, tile_scores: np.ndarray) -> np.ndarray:
    """A score table over all actions from one score per tile (the pass, and the draw with a
    boneyard, score 0: each is legal only when it is the only legal move)."""
    extra = config.num_actions - config.pass_action
    return np.append(np.tile(tile_scores.astype(np.float64), config.num_lines), np.zeros(extra))


@register_policy("random")
class RandomPolicy(BatchPolicy):
    """Uniform over the legal (tile, line) pairs: a tile legal in two places is twice as likely."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = action_mask.nonzero()[0]
        # one uniform float is several times cheaper than Generator.integers, and uniform too
        return int(legal[int(self.rng.random() * legal.shape[0])])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return random_legal_actions(action_masks, self.rng)


class ScoredPolicy(Policy):
    """A score per action, then the shared tie-break.

    The base scores depend on the tile only and are computed once per table size;
    :meth:`move_scores` may adjust them for the position (best_line does).
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None) -> None:
        super().__init__(num_players, highest_double, seed)
        self.scores = _per_action(self.config, self.tile_scores(self.config))

    @staticmethod
    def tile_scores(config: GameConfig) -> np.ndarray:
        """Score of playing each tile, wherever it goes."""
        raise NotImplementedError

    def move_scores(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Score of every action (only the legal ones matter)."""
        return self.scores

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(best_legal_action(self.move_scores(observation, action_mask), action_mask))


class TileScoredPolicy(ScoredPolicy, BatchPolicy):
    """A score per tile and nothing else: the same table for every game, so it acts on batches.

    With fixed scores the choice is the first legal action in one preference order (score
    descending, then action index ascending: the shared tie-break), so a batch is one
    gather of the masks in that order and one argmax.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None) -> None:
        super().__init__(num_players, highest_double, seed)
        self.preference = np.lexsort((np.arange(self.scores.shape[0]), -self.scores))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return first_legal_in_order(action_masks, self.preference)


@register_policy("greedy")
class GreedyPolicy(TileScoredPolicy):
    """Plays the heaviest tile: score = pip sum."""

    @staticmethod
    def tile_scores(config: GameConfig) -> np.ndarray:
        return config.tiles.pips.astype(np.float64)


@register_policy("stupid")
class StupidPolicy(TileScoredPolicy):
    """Plays the lightest tile: score = minus the pip sum."""

    @staticmethod
    def tile_scores(config: GameConfig) -> np.ndarray:
        return -config.tiles.pips.astype(np.float64)


@register_policy("double")
class DoublePolicy(TileScoredPolicy):
    """Plays any double first (+infinity: it gives another move), else the heaviest tile."""

    @staticmethod
    def tile_scores(config: GameConfig) -> np.ndarray:
        return np.where(config.tiles.is_double, np.inf, config.tiles.pips.astype(np.float64))


@register_policy("best_line")
class BestLinePolicy(ScoredPolicy):
    """Plans the best chain of tiles for its own line every turn (docs/baselines.md "best-line").

    Move scores are those of ``double`` (pips, any double +infinity), except that the move
    "first tile of the best chain, on my own line" scores the chain's value, unless that
    tile is a double, which keeps +infinity (decided: a double always wins). The chain and
    its value come from :mod:`baselines.policies.chain_search`. The reference's ``lineTemperature``
    had no effect and is left out: the best chain is always the highest-valued one.

    Args:
        max_line_length: longest chain searched (reference default 12).
        in_line_discount: discount per turn of the chain's own tiles (default 0.9).
        off_line_discount: discount per turn of the tiles left out of the chain (default 0.7).
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 max_line_length: int = MAX_LINE_LENGTH, in_line_discount: float = IN_LINE_DISCOUNT,
                 off_line_discount: float = OFF_LINE_DISCOUNT) -> None:
        super().__init__(num_players, highest_double, seed)
        self.in_line_discount, self.off_line_discount, self.max_line_length = check_parameters(
            in_line_discount, off_line_discount, max_line_length, self.config.num_tiles)
        self.view = ObservationView(self.config)
        tiles = self.config.tiles
        self._low, self._high, self._is_double = tiles.low, tiles.high, tiles.is_double
        self._in_pow = discount_powers(self.in_line_discount, self.max_line_length)
        self._off_pow = discount_powers(self.off_line_discount, self.max_line_length)
        self._positions = np.empty(self.max_line_length, dtype=np.int64)

    tile_scores = staticmethod(DoublePolicy.tile_scores)

    def search(self, hand: np.ndarray, open_value: int) -> tuple[np.ndarray, float]:
        """The best chain (tile indices in play order, possibly empty) and its value."""
        value, length, _ = search_chain(hand, open_value, self._low, self._high, self._in_pow, self._off_pow,
                                        self.max_line_length, self._positions, MAX_SEARCH_NODES)
        return hand[self._positions[:length]], float(value)

    def chain_move_scores(self, chain: np.ndarray, value: float) -> np.ndarray:
        """The double scores with the chain's first tile on the own line (action = tile) scored `value`."""
        if chain.shape[0] == 0 or self._is_double[chain[0]]:
            return self.scores
        scores = self.scores.copy()
        scores[chain[0]] = value
        return scores

    def move_scores(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        chain, value = self.search(self.view.hand_tiles(observation), self.view.open_value(observation))
        return self.chain_move_scores(chain, value)


@register_policy("persistent_line")
class PersistentLinePolicy(BestLinePolicy):
    """best_line that keeps its chain across turns and only re-values it (docs/baselines.md "persistent-line").

    The kept chain (:attr:`chain`) is dropped, and searched again at the next decision,
    exactly when: its last tile has been played; the policy plays a different tile on its
    own line; it plays a chain tile on another line; or someone else has played on its
    line (seen as more tiles on its line than its own moves put there). Otherwise each
    decision re-values the rest of the chain for the current hand, with turns counted
    from now. :meth:`reset` (start of a hand) drops it too. As a guard for callers that
    forget ``reset()``, a chain that no longer starts at the line's open value or whose
    tiles are not all in the hand is dropped as well (within a hand neither can happen:
    only the policy's own moves take tiles from its hand, and only someone else playing on
    its line, caught first, moves the open value under the chain).
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 max_line_length: int = MAX_LINE_LENGTH, in_line_discount: float = IN_LINE_DISCOUNT,
                 off_line_discount: float = OFF_LINE_DISCOUNT) -> None:
        super().__init__(num_players, highest_double, seed, max_line_length, in_line_discount, off_line_discount)
        # the compiled re-valuation reads the hand and the own line's open value in place
        self._hand_start = self.view.layout.field("hand").offset
        self._open_start = self.view.layout.field("open_values").offset
        self._num_tiles, self._pass_action = self.config.num_tiles, self.config.pass_action
        self.reset()

    @property
    def chain(self) -> tuple[int, ...]:
        """The chain kept for the coming turns (tile indices in play order); empty when none."""
        return tuple(self._chain.tolist())

    def reset(self) -> None:
        self._chain = np.empty(0, dtype=np.int64)
        self._tiles_on_own_line = 0

    def move_scores(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return self._chain_scores(observation, self.view.tiles_on_own_line(observation))

    def _chain_scores(self, observation: np.ndarray, seen_on_own_line: int) -> np.ndarray:
        """The moves' scores from the kept chain, re-valued, or from a new search when someone else
        played on my line (more tiles there than my moves put: `seen_on_own_line`) or it no longer fits."""
        value = np.nan
        if self._chain.shape[0] and seen_on_own_line == self._tiles_on_own_line:
            # nobody else played on my line: re-value the kept chain (NaN if it no longer fits)
            value = kept_chain_value(observation, self._hand_start, self._open_start, self._chain,
                                     self._low, self._high, self._in_pow, self._off_pow)
        if math.isnan(value):
            self._chain, value = self.search(self.view.hand_tiles(observation), self.view.open_value(observation))
        return self.chain_move_scores(self._chain, value)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        seen = self.view.tiles_on_own_line(observation)  # read once: the scores and the follow-up share it
        action = int(best_legal_action(self._chain_scores(observation, seen), action_mask))
        self._follow(action, seen)
        return action

    def _follow(self, action: int, tiles_on_own_line: int) -> None:
        """Update the kept chain after playing `action` (the cases of docs/baselines.md)."""
        on_own_line = action < self._num_tiles  # actions 0..T-1 put a tile on my own line
        self._tiles_on_own_line = tiles_on_own_line + on_own_line
        if action >= self._pass_action or not self._chain.shape[0]:  # a pass or a draw leaves the chain
            return
        tile = action % self._num_tiles
        chain = self._chain.tolist()
        if on_own_line:  # the chain's head moves it on; any other tile on my line breaks it
            self._chain = self._chain[1:] if chain[0] == tile else self._chain[:0]
        elif tile in chain:  # a chain tile played elsewhere
            self._chain = self._chain[:0]
