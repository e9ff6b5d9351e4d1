"""Which games exist: validation of the table size and the derived counts."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

from dominoes_env.core import validation
from dominoes_env.core.deprecation import renamed_keyword
from dominoes_env.core.tiles import TileSet, tile_set

MIN_PLAYERS, MAX_PLAYERS = 2, 8
MIN_HIGHEST, MAX_HIGHEST = 6, 18
MAX_HANDS_PER_GAME = 1000  # a full game is N+1 hands; longer games wrap around the engines


@dataclass(frozen=True)
class GameConfig:
    """The size of a game: number of seats and highest pip value.

    Construct through :func:`make_config`, which refuses combinations the rules do not
    allow with a ValueError that says what is possible.
    """

    num_players: int
    highest_double: int

    @property
    def highest_dominoe(self) -> int:
        """Deprecated name of :attr:`highest_double` (until 0.3.0)."""
        warnings.warn("GameConfig.highest_dominoe was renamed highest_double in 0.2.0", DeprecationWarning,
                      stacklevel=2)
        return self.highest_double

    @cached_property
    def tiles(self) -> TileSet:
        return tile_set(self.highest_double)

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
        return self.highest_double + 1

    @property
    def max_hand_pips(self) -> int:
        """The most pips one hand can hold: the heaviest :attr:`max_hand_size` tiles of the set."""
        heaviest = sorted(self.tiles.pips.tolist(), reverse=True)
        return int(sum(heaviest[:self.max_hand_size]))

    @property
    def total_pips(self) -> int:
        """Pip sum of the whole set: an upper bound on any hand score."""
        n = self.highest_double
        return n * (n + 1) * (n + 2) // 2


@renamed_keyword
def make_config(num_players: int = 4, highest_double: int = 9) -> GameConfig:
    """Validate a table size and return its GameConfig.

    Raises:
        ValueError: if the number of players is outside 2..8, the set is outside
            double-6..double-18, or the set cannot give each player a tile besides the engine.
    """
    num_players = validation.integer("num_players", num_players, MIN_PLAYERS, MAX_PLAYERS, "players at the table")
    highest_double = validation.integer("highest_double", highest_double, MIN_HIGHEST, MAX_HIGHEST,
                                        f"the double-{MIN_HIGHEST} to double-{MAX_HIGHEST} sets")
    num_tiles = (highest_double + 1) * (highest_double + 2) // 2
    # The engine holder loses one tile from the smallest possible hand.
    if num_tiles // num_players - 1 < 1:
        raise ValueError(
            f"a double-{highest_double} set ({num_tiles} tiles) cannot give each of "
            f"{num_players} players a tile besides the engine; use at most "
            f"{num_tiles // 2} players or a larger set"
        )
    return GameConfig(num_players, highest_double)
