"""Which games exist: validation of the table size and the derived counts."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import cached_property

from dominoes_env.core.tiles import TileSet, tile_set

MIN_PLAYERS, MAX_PLAYERS = 2, 8
MIN_HIGHEST, MAX_HIGHEST = 6, 18


@dataclass(frozen=True)
class GameConfig:
    """The size of a game: number of seats and highest pip value.

    Construct through :func:`make_config`, which refuses combinations the rules do not
    allow with a ValueError that says what is possible.
    """

    num_players: int
    highest_dominoe: int

    @cached_property
    def tiles(self) -> TileSet:
        return tile_set(self.highest_dominoe)

    @property
    def num_tiles(self) -> int:
        return self.tiles.num_tiles

    @property
    def num_lines(self) -> int:
        """Seat lines plus the dummy line."""
        return self.num_players + 1

    @property
    def pass_action(self) -> int:
        return self.num_lines * self.num_tiles

    @property
    def num_actions(self) -> int:
        return self.pass_action + 1

    @property
    def max_hand_size(self) -> int:
        """Largest hand any seat can be dealt (before the engine is taken out)."""
        return -(-self.num_tiles // self.num_players)

    @property
    def default_num_hands(self) -> int:
        """A full game: engines N, N-1, ..., 0."""
        return self.highest_dominoe + 1

    @property
    def total_pips(self) -> int:
        """Pip sum of the whole set: an upper bound on any hand score."""
        n = self.highest_dominoe
        return n * (n + 1) * (n + 2) // 2


def _check_int(name: str, value: object, allowed: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer ({allowed}), got {value!r}")
    return int(value)


def make_config(num_players: int = 4, highest_dominoe: int = 9) -> GameConfig:
    """Validate a table size and return its GameConfig.

    Raises:
        ValueError: if the number of players is outside 2..8, the set is outside
            double-6..double-18, or the set cannot give each player a tile besides the engine.
    """
    num_players = _check_int("num_players", num_players, f"{MIN_PLAYERS} to {MAX_PLAYERS} players")
    highest_dominoe = _check_int("highest_dominoe", highest_dominoe,
                                 f"double-{MIN_HIGHEST} to double-{MAX_HIGHEST}: {MIN_HIGHEST}..{MAX_HIGHEST}")
    if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise ValueError(
            f"num_players={num_players} is not supported: choose {MIN_PLAYERS} to {MAX_PLAYERS} players"
        )
    if not MIN_HIGHEST <= highest_dominoe <= MAX_HIGHEST:
        raise ValueError(
            f"highest_dominoe={highest_dominoe} is not supported: choose a double-{MIN_HIGHEST} "
            f"to double-{MAX_HIGHEST} set (highest_dominoe {MIN_HIGHEST}..{MAX_HIGHEST})"
        )
    num_tiles = (highest_dominoe + 1) * (highest_dominoe + 2) // 2
    # The engine holder loses one tile from the smallest possible hand.
    if num_tiles // num_players - 1 < 1:
        raise ValueError(
            f"a double-{highest_dominoe} set ({num_tiles} tiles) cannot give each of "
            f"{num_players} players a tile besides the engine; use at most "
            f"{num_tiles // 2} players or a larger set"
        )
    return GameConfig(num_players, highest_dominoe)
