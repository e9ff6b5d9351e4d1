"""The tile set of a double-N game and its canonical numbering.

Tiles are numbered lexicographically over (low, high): 0 = (0|0), 1 = (0|1), ...,
N = (0|N), N+1 = (1|1), ..., T-1 = (N|N). Every other module speaks in these indices,
so the arrays here are computed once per set and shared (they are read-only).
"""

from __future__ import annotations

from functools import cache

import numpy as np


class TileSet:
    """Constant tables of one double-N set.

    Attributes:
        highest_double: N, the highest pip value.
        num_tiles: T = (N+1)(N+2)/2.
        low, high: the two ends of each tile (low <= high), int16 arrays of length T.
        pips: pip sum of each tile.
        is_double: whether each tile has equal ends.
        tiles_with_value: (N+1, N+1) array; row v lists, ascending, the N+1 tiles that
            have an end equal to v. Legal-move generation only looks at one row per line.
    """

    def __init__(self, highest_double: int) -> None:
        self.highest_double = highest_double
        pairs = [(a, b) for a in range(highest_double + 1) for b in range(a, highest_double + 1)]
        self.num_tiles = len(pairs)
        self.low = np.array([a for a, _ in pairs], dtype=np.int16)
        self.high = np.array([b for _, b in pairs], dtype=np.int16)
        self.pips = (self.low + self.high).astype(np.int16)
        self.is_double = self.low == self.high
        self.tiles_with_value = np.array(
            [[self.index(min(v, w), max(v, w)) for w in range(highest_double + 1)]
             for v in range(highest_double + 1)],
            dtype=np.int16,
        )
        self.tiles_with_value.sort(axis=1)
        # The set is cached and shared, so its tables are never written. The ones the compiled
        # rules take (low, high, tiles_with_value) stay writable arrays all the same: numba
        # compiles a kernel once per array type, and the batched engine's copies and every
        # pickled or deep-copied array are writable, so read-only ones here compiled each rule
        # kernel a second time (about 10 s of a cold test run). The others are locked.
        for array in (self.pips, self.is_double):
            array.setflags(write=False)

    def index(self, a: int, b: int) -> int:
        """Canonical index of the tile (a|b); the order of the ends does not matter."""
        low, high = (a, b) if a <= b else (b, a)
        if not 0 <= low <= high <= self.highest_double:
            raise ValueError(
                f"({a}|{b}) is not a tile of the double-{self.highest_double} set: "
                f"ends must be between 0 and {self.highest_double}"
            )
        # Tiles whose low end is below `low` come first: (N+1) + N + ... + (N+2-low) of them.
        before = low * (self.highest_double + 1) - low * (low - 1) // 2
        return before + (high - low)

    def ends(self, tile: int) -> tuple[int, int]:
        """The (low, high) ends of a tile index."""
        return int(self.low[tile]), int(self.high[tile])

    def name(self, tile: int) -> str:
        """Human-readable name, e.g. '(3|7)'."""
        low, high = self.ends(tile)
        return f"({low}|{high})"

    def double(self, value: int) -> int:
        """Index of the double (value|value)."""
        return self.index(value, value)


@cache
def tile_set(highest_double: int) -> TileSet:
    """The shared, read-only TileSet for a double-N game."""
    return TileSet(highest_double)
