"""Policy-based inference: exact draws of the hidden deal, weighted by how likely the opponents'
observed plays are under a softened model of their play (Rebstock et al. 2019, "Policy Based
Inference in Trick-Taking Card Games"), a particle filter over the hand. Kinds ``"policy"`` (the
uniform marginals so tilted) and ``"network+policy"`` (the network's beliefs so tilted).

The hard facts (:mod:`dominoes_env.core.hidden`) say what a hand cannot hold; a player's choices
say what it probably does not hold. A seat that put down a light tile while a heavy one fitted
probably had no heavy one that fitted: players shed their pips, and play doubles first (another
move). The model plays each tile that fitted with odds exp((pips + `double_bonus` if a double) /
`temperature`): a conditional logit fitted to td_lambda's choices on training seeds gave a
temperature of about 7.5 pips and a double worth about 10 more.

**What the player reads**, from two of its observations in a row (:class:`OpponentMoves`): its
own move (how its hand changed), then the tiles new on each line (their order along the line is
the chain from the line's open value), each seat's hand size, the boneyard, the markers and who
passed. Every seat takes one turn in between, in seat order (doubles, then one other tile, a draw
or a pass), so the tiles are shared among the seats in every way those counts, the markers (which
lines were open to whom) and the turn order allow. A seat's moves are used only when every such
way gives it the same tiles, the same draws and the same table at its turn; anything else is
skipped, which is always sound: the evidence only reweights exact draws.

**The hand at a move, exactly**: a seat that has not drawn since holds now what it held then, less
the tiles it played since (which the player saw). So a draw's hidden hand for that seat, with those
tiles added back, is its hand at the move. A seat that may have drawn since loses its older moves
(they would need the unseen tile). A pass, or a draw (the rules allow one only without a tile that
fits), so kept says the seat holds no tile with an end among the values open to it then: a hard
fact the tracker drops as soon as anyone draws (it cannot tell who), kept here as long as that seat
has surely not drawn, and added to the facts the exact sampler agrees with.

**The beliefs**: the exact marginals with those facts, then, for each seat, a pool of exact draws
(:func:`~dominoes_env.core.hidden.sample_deals`) tells how much likelier its plays are with a tile
in its hand than without: the mean over the draws of the plays' likelihood with the tile added to
the draw's hand for that seat, over the mean without it (every draw counts for every tile, so the
estimate is smooth where a mean over the few draws that hold the tile would be noisy). Each seat's
column is multiplied by its odds, rows normalised, columns balanced to the places' sizes (as the
network's beliefs are). Every probability so comes from the exact marginals: 0 where a hard fact
rules the place out, and, with no move read, the uniform kind's own.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from baselines.inference.beliefs import KINDS, NetworkBeliefs, UniformBeliefs
from baselines.inference.network import BeliefWeights, balanced
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig
from dominoes_env.core.hidden import HandKnowledge, deal_marginals, sample_deals
from dominoes_env.core.observation import observation_layout

#: The model's temperature, in pips: a tile's score over this is its log-odds against another's.
TEMPERATURE = 7.5
#: What a double adds to a tile's pips in the model (a double gives another move).
DOUBLE_BONUS = 10.0
#: The power the likelihood is raised to (1: the model as it is; 0: the uniform kind).
STRENGTH = 1.0
#: Exact draws a decision.
POOL = 64
#: The most ways of sharing an interval's tiles among the seats that are listed; more: skipped.
MAX_WAYS = 256


@dataclass(frozen=True)
class Move:
    """One opponent's move as the player read it.

    Attributes:
        seat: the seat, relative to the player.
        values: (values,) bool: the open values of the lines open to the seat then (only the waiting
            double's, while one waited to be covered).
        legal: (tiles,) bool: the tiles with an end among `values`: those that would have fitted.
        chosen: the tile it played, or -1: it played none (a pass, or a draw), so it held no legal one.
        known: (tiles,) bool: tiles it held then and played since (this one included): seen now.
    """

    seat: int
    values: np.ndarray
    legal: np.ndarray
    chosen: int
    known: np.ndarray


@dataclass
class _Table:
    """What one observation shows of the table and the seats."""

    open_values: np.ndarray  # (n + 1,)
    played: np.ndarray  # (n + 1, T) bool
    markers: np.ndarray  # (n,) bool
    started: np.ndarray  # (n,) bool
    dummy_open: bool
    waiting: int  # the line of a double to cover (cover rule), -1 when none
    sizes: np.ndarray  # (n,)
    passed: np.ndarray  # (n,) bool
    boneyard: int
    hand: np.ndarray  # (T,) bool
    engine_value: int


#: One seat's turn as one sharing reads it: its tiles, its draws (None: unknown), its moves (None: unusable).
_Turn = tuple[tuple[int, ...], int | None, list[Move] | None]


@dataclass(frozen=True)
class _Interval:
    """Between two decisions: the table after the player's move, what each seat was before, and now."""

    start: _Table
    prior_markers: np.ndarray  # (n,) the markers after each seat's previous turn
    deltas: np.ndarray | None  # (n,) hand sizes now minus before; None: unknown (the deal)
    draws: int | None  # tiles drawn in the interval; None: unknown
    first: bool  # from the deal: only the seats from the first player on moved
    now: _Table


class OpponentMoves:
    """The opponents' moves one player reads from its own observations, in order (see the module):
    ``moves`` holds those still usable, each with the seat's hand then reconstructible."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.layout = observation_layout(config)
        self._covers = "double_to_cover" in self.layout.names  # the table's rule that a double waits to be covered
        tiles = config.tiles
        self._low, self._high, self._double = tiles.low, tiles.high, tiles.is_double
        values = np.arange(config.highest_double + 1)[:, None]
        self._has_value = (tiles.low[None] == values) | (tiles.high[None] == values)  # (V, T)
        self.reset()

    def reset(self) -> None:
        """A new hand: nothing read yet."""
        self.moves: list[Move] = []
        self._previous: _Table | None = None

    def observe(self, observation: np.ndarray) -> None:
        """Read the moves since the player's previous observation of this hand."""
        now = self._read(np.asarray(observation)[:self.layout.size])
        previous, self._previous = self._previous, now
        if previous is None or not self._same_hand(previous, now):
            self.moves = []
            draws = 0 if not self.config.boneyard or now.boneyard == self.config.boneyard_at_deal else None
            n = self.config.num_players
            self._read_interval(_Interval(self._deal_table(now), np.zeros(n, dtype=np.bool_), None, draws, True, now))
            return
        start, readable = self._after_my_move(previous, now)
        if not readable:
            self.moves = []
        elif start is not None:
            self._read_interval(_Interval(start, previous.markers, now.sizes - previous.sizes,
                                          previous.boneyard - now.boneyard, False, now))

    # ------------------------------------------------------------------ the table
    def _read(self, vector: np.ndarray) -> _Table:
        views = self.layout.views(vector)
        waiting = -1
        if self._covers and views["double_to_cover"].any():
            waiting = int(views["double_to_cover"].argmax())
        boneyard = int(views["boneyard"].sum()) if self.config.boneyard else 0
        return _Table(views["open_values"].argmax(axis=1), views["played"].astype(bool),
                      views["markers"].astype(bool), views["lines_started"].astype(bool), bool(views["dummy_open"][0]),
                      waiting, views["hand_sizes"].sum(axis=1), views["passed_last"].astype(bool), boneyard,
                      views["hand"].astype(bool), int(views["hand_number"].argmax()))

    def _deal_table(self, now: _Table) -> _Table:
        """The table at the deal: every line open at the engine's value, nothing played or up."""
        n, t = self.config.num_players, self.config.num_tiles
        return _Table(np.full(n + 1, now.engine_value), np.zeros((n + 1, t), dtype=np.bool_),
                      np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_), False, -1, now.sizes,
                      np.zeros(n, dtype=np.bool_), now.boneyard, now.hand, now.engine_value)

    @staticmethod
    def _same_hand(previous: _Table, now: _Table) -> bool:
        return previous.engine_value == now.engine_value and not (previous.played & ~now.played).any()

    def _after_my_move(self, previous: _Table, now: _Table) -> tuple[_Table | None, bool]:
        """The table right after the player's move at its previous decision, and whether the move
        could be read; None (readable) when it moves again (it played a double, or drew), so no one else moved."""
        played, drawn = np.flatnonzero(previous.hand & ~now.hand), np.flatnonzero(now.hand & ~previous.hand)
        if drawn.size or played.size > 1:
            return None, drawn.size == 1 and played.size == 0
        markers, started, waiting = previous.markers.copy(), previous.started.copy(), previous.waiting
        open_values, table = previous.open_values.copy(), previous.played.copy()
        if played.size == 0:  # a pass: its marker goes up
            markers[0] = True
        else:
            tile = int(played[0])
            if self._double[tile]:
                return None, True
            line = int(now.played[:, tile].argmax())
            open_values[line] = self._low[tile] + self._high[tile] - open_values[line]
            table[line, tile] = True
            waiting = -1  # a non-double covers the double that waited, if one did
            if line < self.config.num_players:
                started[line] = True
                markers[0] &= line != 0
        dummy_open = previous.dummy_open or bool(started.all())
        return _Table(open_values, table, markers, started, dummy_open, waiting, previous.sizes, previous.passed,
                      previous.boneyard, now.hand, previous.engine_value), True

    # ------------------------------------------------------------------ reading an interval
    def _read_interval(self, interval: _Interval) -> None:
        """Share the interval's new tiles among the seats every way the facts allow; keep what all agree on."""
        start, now = interval.start, interval.now
        if (start.played & ~now.played).any():
            self.moves = []
            return
        new = now.played & ~start.played
        if int((new & ~self._double[None]).sum()) > self.config.num_players - 1:
            self.moves = []  # more than one turn a seat (a first observation late in the hand): nothing to read
            return
        orders = []  # each line's orders along it: a cycle back to a value may be laid either way round
        for line in np.flatnonzero(new.any(axis=1)).tolist():
            found = self._chains(np.flatnonzero(new[line]).tolist(), int(start.open_values[line]),
                                 int(now.open_values[line]))
            if not found:
                self.moves = []
                return
            orders.append([(line, chain) for chain in found])
        ways: list[tuple[dict[int, list[int]], tuple[tuple[int, ...], ...]]] = []
        for tried, lines in enumerate(itertools.product(*orders)):
            if tried == MAX_WAYS:
                ways = []  # too many orders of the lines' tiles to list: read nothing
                break
            chains = dict(lines)
            shared: list[tuple[tuple[int, ...], ...]] = []
            self._share(interval, chains, 1, dict.fromkeys(chains, 0), 0, False, (), shared)
            ways += [(chains, way) for way in shared]
            if len(ways) > MAX_WAYS:
                break
        if not ways or len(ways) > MAX_WAYS:
            self.moves = []  # a reading no sharing fits, or too many: forget every seat's moves
            return
        seen: dict = {}
        readings = [self._turns(interval, chains, way, seen) for chains, way in ways]
        for seat in range(1, self.config.num_players):
            self._keep(seat, [reading[seat - 1] for reading in readings])

    def _chains(self, tiles: list[int], start: int, end: int) -> list[list[int]]:
        """Every order the tiles may have gone onto a line open at `start` and now at `end`."""
        if not tiles:
            return [[]] if start == end else []
        found = []
        for tile in tiles:
            low, high = int(self._low[tile]), int(self._high[tile])
            if start in (low, high):
                found += [[tile, *rest] for rest in self._chains([other for other in tiles if other != tile],
                                                                  low + high - start, end)]
        return found

    def _share(self, interval: _Interval, chains: dict[int, list[int]], seat: int, positions: dict[int, int],
               drawn: int, moved: bool, taken: tuple[tuple[int, ...], ...], ways: list) -> None:
        """List (in `ways`) every sharing of the chains' tiles among seats `seat`.. that the counts, the
        markers and the turn order allow: each seat takes a prefix of what is left of each line."""
        n = self.config.num_players
        if len(ways) > MAX_WAYS:
            return
        if seat == n:
            if all(positions[line] == len(chain) for line, chain in chains.items()) and \
                    (interval.draws is None or drawn == interval.draws):
                ways.append(taken)
            return
        if interval.deltas is not None and interval.draws is not None and \
                sum(len(chain) - positions[line] for line, chain in chains.items()) != \
                interval.draws - drawn - int(interval.deltas[seat:].sum()):
            return  # the seats left lay what they drew less what their hands lost: the tiles left
        for counts in self._choices(interval, chains, seat, positions, moved):
            drawn_here = self._drawn(interval, seat, sum(counts))
            if drawn_here is not None and drawn_here < 0:
                continue
            after = {line: positions[line] + count for line, count in zip(chains, counts)}
            self._share(interval, chains, seat + 1, after, drawn + (drawn_here or 0), moved or any(counts)
                        or bool(interval.now.passed[seat]), (*taken, counts), ways)

    def _choices(self, interval: _Interval, chains: dict[int, list[int]], seat: int, positions: dict[int, int],
                 moved: bool) -> Iterator[tuple[int, ...]]:
        """What one seat's turn may have taken from each line (counts, in the chains' order): a turn is
        doubles, then one other tile or a pass (from the deal, a seat before the first player took none)."""
        lead, closing = [], []  # each line: the doubles the seat may take first, and whether a tile may follow
        for line, chain in chains.items():
            count = 0
            while positions[line] + count < len(chain) and self._double[chain[positions[line] + count]] and \
                    self._may_reach(interval, seat, line, chain, positions[line] + count):
                count += 1
            lead.append(count)
            at = positions[line] + count
            closing.append(at < len(chain) and not self._double[chain[at]] and
                           self._may_reach(interval, seat, line, chain, at))
        if interval.now.passed[seat]:
            yield from itertools.product(*[range(count + 1) for count in lead])
            return
        if interval.first and not moved:
            yield (0,) * len(lead)
        for last, count in enumerate(lead):
            if closing[last]:
                yield from itertools.product(*[range(other + 1) if k != last else (count + 1,)
                                               for k, other in enumerate(lead)])

    @staticmethod
    def _drawn(interval: _Interval, seat: int, played: int) -> int | None:
        """Tiles the seat drew in its turn, if it played `played`: None when unknown."""
        if interval.deltas is not None:
            return played + int(interval.deltas[seat])
        return 0 if interval.draws == 0 else None

    def _may_reach(self, interval: _Interval, seat: int, line: int, chain: list[int], position: int) -> bool:
        """Whether the seat may have put the chain's tile at `position` on `line` (generously: the
        dummy line if it is open now, and any line whose tile covers a double under the cover rule)."""
        if line == seat:
            return True
        if line == self.config.num_players:
            return interval.start.dummy_open or interval.now.dummy_open
        if self._covers and (self._double[chain[position - 1]] if position else
                                          interval.start.waiting == line):
            return True
        return bool(self._marker_at_turn(interval, seat, line))

    @staticmethod
    def _marker_at_turn(interval: _Interval, seat: int, other: int) -> bool:
        """Another seat's marker at `seat`'s turn: only its owner moves it, so it is as the owner's
        latest turn left it (this interval's, for a seat that moved before; the previous one's after)."""
        if other == 0:
            return bool(interval.start.markers[0])
        return bool(interval.now.markers[other] if other < seat else interval.prior_markers[other])

    # ------------------------------------------------------------------ each seat's turn
    def _turns(self, interval: _Interval, chains: dict[int, list[int]], way: tuple[tuple[int, ...], ...],
               seen: dict) -> list[_Turn]:
        """Each seat's turn under one sharing, played out on the table: its tiles, its draws (None:
        unknown) and its moves (None: unusable), each move with the tiles that fitted then. A turn
        depends only on what the seats before it took, so sharings that agree so far share it (`seen`)."""
        table = (interval.start.open_values, interval.start.started, interval.start.waiting)
        positions = dict.fromkeys(chains, 0)
        turns = []
        for seat in range(1, self.config.num_players):
            key = (id(chains), seat, tuple(positions.values()), way[seat - 1])
            if key not in seen:
                seen[key] = self._turn(interval, chains, seat, positions, way[seat - 1], table)
            turn, table = seen[key]
            turns.append(turn)
            positions = {line: positions[line] + count for line, count in zip(chains, way[seat - 1])}
        return turns

    def _turn(self, interval: _Interval, chains: dict[int, list[int]], seat: int, positions: dict[int, int],
              counts: tuple[int, ...], table: tuple[np.ndarray, np.ndarray, int]) -> tuple[_Turn, tuple]:
        """One seat's turn (as :meth:`_turns`) from the table before it (open values, lines started, the
        double waiting), and the table after it."""
        n = self.config.num_players
        open_values, started, waiting = table[0].copy(), table[1].copy(), table[2]
        placed = [(line, tile) for line, count in zip(chains, counts)
                  for tile in chains[line][positions[line]:positions[line] + count]]
        placed.sort(key=lambda item: not self._double[item[1]])  # doubles first (stable: a line's order kept)
        before = []
        for line, tile in placed:
            before.append(self._legal(interval, seat, open_values, started, waiting))
            open_values[line] = self._low[tile] + self._high[tile] - open_values[line]
            if line < n:
                started[line] = True
            if self._covers:
                waiting = line if self._double[tile] else (-1 if waiting == line else waiting)
        before.append(self._legal(interval, seat, open_values, started, waiting))
        tiles = [tile for _, tile in placed]
        drawn = self._drawn(interval, seat, len(tiles))
        moves = self._moves(seat, tiles, before, drawn, bool(interval.now.passed[seat]))
        if moves is not None and drawn == 0 and len({line for line, tile in placed if self._double[tile]}) > 1:
            # doubles on two lines went down in an order the table does not show: only what followed is read
            moves = [move for move in moves if move.chosen < 0 or not self._double[move.chosen]]
        return (tuple(sorted(tiles)), drawn, moves), (open_values, started, waiting)

    def _legal(self, interval: _Interval, seat: int, open_values: np.ndarray, started: np.ndarray,
               waiting: int) -> np.ndarray:
        """(V,) the open values of the lines open to the seat on this table (only the waiting double's,
        while one waits)."""
        n = self.config.num_players
        values = np.zeros(self.config.highest_double + 1, dtype=np.bool_)
        if waiting >= 0:
            values[open_values[waiting]] = True
            return values
        lines = [line for line in range(n) if line == seat or self._marker_at_turn(interval, seat, line)]
        if interval.start.dummy_open or started.all():
            lines.append(n)
        values[open_values[lines]] = True
        return values

    def _moves(self, seat: int, tiles: list[int], before: list[np.ndarray], drawn: int | None,
               passed: bool) -> list[Move] | None:
        """The moves of a turn the model can score: without a draw, each tile played (its hand then:
        now, plus the tiles it played from that one on) and a final pass; after one draw, only that it
        held no tile that fitted (a pass, or the drawn tile played at once); anything else, None."""
        t = self.config.num_tiles

        def known(played: list[int]) -> np.ndarray:
            mask = np.zeros(t, dtype=np.bool_)
            mask[played] = True
            return mask

        def move(values: np.ndarray, chosen: int, played: list[int]) -> Move:
            return Move(seat, values, self._has_value[values].any(axis=0), chosen, known(played))

        if drawn == 0:
            moves = [move(before[k], tile, tiles[k:]) for k, tile in enumerate(tiles)]
            return moves + [move(before[-1], -1, [])] if passed else moves
        if drawn == 1 and ((not tiles and passed) or (len(tiles) == 1 and not passed)):
            return [move(before[0], -1, [])]
        return None

    def _keep(self, seat: int, turns: list[_Turn]) -> None:
        """Keep what every sharing agrees on: the seat's older moves when it surely drew nothing (its
        tiles added to what it held then), its new moves when they read the same every way."""
        tiles, drawn, moves = turns[0]
        if all(turn[:2] == (tiles, 0) for turn in turns):
            mask = np.zeros(self.config.num_tiles, dtype=np.bool_)
            mask[list(tiles)] = True
            self.moves = [replace(move, known=move.known | mask) if move.seat == seat else move
                          for move in self.moves]
        else:
            self.moves = [move for move in self.moves if move.seat != seat]
        if moves is not None and all(_signature(turn[2]) == _signature(moves) for turn in turns):
            self.moves += moves


def _signature(moves: list[Move] | None) -> tuple | None:
    """What two readings of a turn must share to be the same reading."""
    if moves is None:
        return None
    return tuple((move.chosen, move.legal.tobytes(), move.known.tobytes()) for move in moves)


class PolicyModel:
    """The softened model of a seat's choice, and the likelihood of the plays read under it for each
    draw of a pool (see the module).

    Args:
        config: the table.
        temperature: in pips (> 0): the model plays a tile with odds exp(score / temperature), its
            score its pips plus `double_bonus` for a double, among the tiles that fitted then.
        double_bonus: added to a double's pips.
        strength: the power of the likelihood, in [0, 1] (0: every draw alike).

    Raises:
        ValueError: one line, naming the argument and what is allowed.
    """

    def __init__(self, config: GameConfig, temperature: float = TEMPERATURE, double_bonus: float = DOUBLE_BONUS,
                 strength: float = STRENGTH) -> None:
        self.temperature = validation.real("temperature", temperature, 0.0, 1e6, above_minimum=True,
                                           allowed="pips")
        self.double_bonus = validation.real("double_bonus", double_bonus, -100.0, 100.0, allowed="pips")
        self.strength = validation.real("strength", strength, 0.0, 1.0,
                                        allowed="the power of the likelihood; 0: the uniform kind")
        tiles = config.tiles
        scores = tiles.pips + self.double_bonus * tiles.is_double
        self.weights = np.exp((scores - scores.max()) / self.temperature)

    def log_likelihoods(self, plays: list[Move], hidden: np.ndarray,
                        held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The log-likelihood of one seat's plays (up to a constant: the chosen tile's weight over the
        weights of the tiles that fitted in its hand then), for each draw of its hand now (`held`:
        draws x hidden tiles, bool) with each hidden tile added to it, and without: two
        (draws, hidden) arrays."""
        legal = np.stack([move.legal for move in plays])
        fitting = legal[:, hidden] * self.weights[hidden]  # (plays, hidden)
        seen = (legal & np.stack([move.known for move in plays])) @ self.weights  # the chosen tile included
        totals = held.astype(np.float64) @ fitting.T + seen  # (draws, plays): the sums of the hand then
        without = totals[:, None, :] - held[:, :, None] * fitting.T[None]  # (draws, hidden, plays)
        return -np.log(without + fitting.T[None]).sum(axis=2), -np.log(without).sum(axis=2)


class PolicyFilter:
    """The particle filter: the moves read (:class:`OpponentMoves`), the model (:class:`PolicyModel`),
    and the tilt they give any beliefs at a decision (:meth:`tilted`).

    Args:
        config: the table.
        pool: exact draws a decision (1 to 4096).
        seed: of the draws, drawn again at each :meth:`reset`, so that the beliefs are a function of
            the observations.
        **model: :class:`PolicyModel`'s arguments.

    Raises:
        ValueError: one line, naming the argument and what is allowed.
    """

    def __init__(self, config: GameConfig, pool: int = POOL, seed: int = 0, **model: float) -> None:
        self.config = config
        self.pool = validation.integer("pool", pool, 1, 4096, allowed="exact draws a decision")
        self.seed = validation.integer("seed", seed, 0, 2**63 - 1)
        self.model = PolicyModel(config, **model)
        self.moves = OpponentMoves(config)
        self.reset()

    def reset(self) -> None:
        self.moves.reset()
        self.rng = np.random.default_rng(self.seed)

    def observe(self, observation: np.ndarray) -> None:
        self.moves.observe(observation)

    def with_kept_passes(self, knowledge: HandKnowledge) -> HandKnowledge:
        """The knowledge with the passes and draws still usable added as facts: the seat held no tile
        with an open value then, and holds the same tiles now but those it played since. (The tracker
        drops its pass facts whenever the boneyard shrinks: it cannot tell who drew.)"""
        forbidden = knowledge.forbidden.copy()
        for move in self.moves.moves:
            if move.chosen < 0:
                forbidden[move.seat] |= move.values
        if np.array_equal(forbidden, knowledge.forbidden):
            return knowledge
        return replace(knowledge, forbidden=forbidden)

    def tilted(self, knowledge: HandKnowledge, beliefs: np.ndarray, marginals: np.ndarray) -> np.ndarray:
        """`beliefs` (tiles x places, the player's frame) with the kept passes' facts (the uniform
        marginals with them over `marginals`, those without) and the plays' tilt, rows normalised
        and columns balanced to the places' sizes; `beliefs` themselves when no move is usable."""
        hidden = knowledge.hidden
        plays = [move for move in self.moves.moves if move.chosen >= 0]
        facts = self.with_kept_passes(knowledge)
        tilt = np.ones((hidden.shape[0], self.config.num_players + 1))
        if facts is not knowledge:
            try:
                tilt = np.divide(deal_marginals(facts), marginals, out=np.zeros_like(tilt), where=marginals > 0)
            except RuntimeError:  # no deal has them: a misreading (none seen in testing); do without them
                facts = knowledge
        if plays and hidden.shape[0] and self.model.strength > 0.0:
            tilt *= self._play_tilt(facts, plays)
        elif facts is knowledge:
            return beliefs
        rows = beliefs[hidden] * tilt
        rows /= np.maximum(rows.sum(axis=1, keepdims=True), 1e-300)
        counts = np.append(knowledge.hand_sizes, knowledge.boneyard).astype(np.float64)
        counts[0] = 0.0
        tilted = beliefs.copy()
        tilted[hidden] = balanced(rows, counts)
        return tilted

    def _play_tilt(self, facts: HandKnowledge, plays: list[Move]) -> np.ndarray:
        """(hidden, places) the odds the plays give each hidden tile of lying in each seat's hand: over
        a pool of exact draws, the mean likelihood of the seat's plays with the tile added to the
        draw's hand for that seat over the mean without it (each draw counts for every tile, so the
        estimate is smooth where one over the draws that hold the tile would be noisy)."""
        deals = sample_deals(facts, self.rng, self.pool)
        tilt = np.ones((facts.hidden.shape[0], self.config.num_players + 1))
        for seat in sorted({move.seat for move in plays}):
            with_tile, without = self.model.log_likelihoods([move for move in plays if move.seat == seat],
                                                            facts.hidden, deals == seat)
            shift = without.max(axis=0)
            tilt[:, seat] = (np.exp(with_tile - shift).sum(axis=0) / np.exp(without - shift).sum(axis=0)) \
                ** self.model.strength
        return tilt


class _Filtered(UniformBeliefs):
    """Beliefs tilted by a :class:`PolicyFilter` fed the same observations."""

    filter: PolicyFilter

    def reset(self) -> None:
        super().reset()
        self.filter.reset()

    def observe_knowledge(self, knowledge: HandKnowledge) -> None:
        super().observe_knowledge(knowledge)
        self.filter.observe(knowledge.observation)

    def probabilities(self) -> np.ndarray:
        beliefs = super().probabilities()
        assert self.knowledge is not None
        return self.filter.tilted(self.knowledge, beliefs, self.uniform_marginals())


class PolicyBeliefs(_Filtered):
    """The uniform marginals tilted by how likely each opponent's moves are under a softened model of
    its play (see the module): kind ``"policy"``. Arguments: :class:`PolicyFilter`'s and
    :class:`PolicyModel`'s, each with a one-line ValueError for a value out of range."""

    kind = "policy"

    def __init__(self, config: GameConfig, temperature: float = TEMPERATURE, double_bonus: float = DOUBLE_BONUS,
                 strength: float = STRENGTH, pool: int = POOL, seed: int = 0) -> None:
        super().__init__(config)
        self.filter = PolicyFilter(config, pool, seed, temperature=temperature, double_bonus=double_bonus,
                                   strength=strength)


class NetworkPolicyBeliefs(_Filtered, NetworkBeliefs):
    """The network's beliefs (:class:`~baselines.inference.beliefs.NetworkBeliefs`) tilted by the
    policy evidence as :class:`PolicyBeliefs` tilts the uniform ones: kind ``"network+policy"``."""

    kind = "network+policy"

    def __init__(self, config: GameConfig, weights: BeliefWeights | str | os.PathLike[str] | None = None,
                 balance: bool = True, temperature: float = TEMPERATURE, double_bonus: float = DOUBLE_BONUS,
                 strength: float = STRENGTH, pool: int = POOL, seed: int = 0) -> None:
        NetworkBeliefs.__init__(self, config, weights, balance)
        self.filter = PolicyFilter(config, pool, seed, temperature=temperature, double_bonus=double_bonus,
                                   strength=strength)


KINDS["policy"] = PolicyBeliefs  # registered where the kinds live, so that make_beliefs and the commands know them
KINDS["network+policy"] = NetworkPolicyBeliefs
