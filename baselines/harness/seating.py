"""Who sits where over a set of deals: the one seat-rotation scheduler.

Seat position changes scores (the seat right after a strong player scores worst), so
every comparison here plays each deal under every rotation of its table: in rotation r,
seat s holds the table's entry ``(s + r) mod n``. Over the n rotations of a deal each
entry sits in every seat once, with the same neighbours on each side. The evaluation
harness and the league both seat their tables with :func:`rotate`; they differ only in
how a table is drawn (:func:`fair_tables` here for the harness, a seeded draw per round in
:mod:`baselines.league.schedule`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def rotate(table: Sequence[int], rotation: int) -> tuple[int, ...]:
    """The seating of `table` in rotation `rotation`: seat s holds ``table[(s + rotation) % n]``."""
    n = len(table)
    return tuple(int(table[(seat + rotation) % n]) for seat in range(n))


def deals_needed(num_hands: int, num_entries: int, num_players: int, hands_per_game: int) -> int:
    """Deals to play: enough for `num_hands` (each deal played under every rotation), and a
    multiple that gives every entry the same number of tables."""
    deals = -(-num_hands // (num_players * hands_per_game))
    step = num_entries // math.gcd(num_entries, num_players)  # deals * n must be a multiple of P
    return -(-deals // step) * step


def fair_tables(num_entries: int, num_players: int, num_deals: int, rng: np.random.Generator) -> np.ndarray:
    """(deals, seats) entry indices: all entries in a random order, or fair draws from more entries.

    With more entries than seats, tables are cut one after another from a stream of random
    permutations of all entries, so that after every whole permutation each entry has sat
    exactly once. A table that straddles two permutations must not seat an entry twice:
    the new permutation puts the entries already at that table last.
    """
    if num_entries == num_players:
        return np.array([rng.permutation(num_players) for _ in range(num_deals)], dtype=np.int64)
    tables = np.empty((num_deals, num_players), dtype=np.int64)
    queue: list[int] = []
    for d in range(num_deals):
        table: list[int] = []
        while len(table) < num_players:
            if not queue:
                order = rng.permutation(num_entries).tolist()
                queue = [e for e in order if e not in table] + [e for e in order if e in table]
            table.append(queue.pop(0))
        tables[d] = table
    return tables
