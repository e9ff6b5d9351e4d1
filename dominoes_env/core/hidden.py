"""What a player cannot see, sampled soundly: the hidden-information kit.

A search that plays a hand forward needs the other seats' tiles, which the player never
sees. This module keeps what one player's observations prove about them
(:class:`KnowledgeTracker`), samples hidden deals that agree with every such fact
(:func:`sample_deals`), and turns a sample into a full engine position in the player's own
frame (:func:`sampled_states`, :func:`sampled_positions`), so a search plays forward with the
engine itself, every rule included.

**The facts a sample agrees with**, and why each is sound:

1. *The tiles the player cannot see* are exactly the hidden ones: every tile of the set but
   its own hand, the tiles on the table and the engine. Every hidden tile is in another
   seat's hand, or in the boneyard (boneyard rule).
2. *Each opponent's hand size, and the boneyard's size*, are observed exactly.
3. *What passes prove* (rules 5 and 6: a player with a legal move may not pass). When seat
   k passes, it holds no tile that fits a line open to it at that moment; its hand then is
   its hand now, since its latest action was that pass (``passed_last``). So for every line
   whose open value v *certainly* was open to k at that moment, k holds no tile with an end
   v: "value v is forbidden to k". The tracker only uses lines it can vouch for. Between two
   of the player's own decisions every other seat takes exactly one turn, in seat order, and
   the tracker knows the table right after the player's own move (the previous observation,
   and the player's move, read from how its hand changed) and at its next decision. A line
   to which nobody added a tile in between kept its open value all along; it was open to k
   all along if it is k's own line (always open to k), or the dummy line and it was open
   already (it never closes), or another seat's line whose marker was up after the player's
   move (a marker only comes down when its owner plays on its own line, which would have
   added a tile), or another seat's line that nobody added to and whose owner passed earlier
   in this interval (seats move in order, so that pass put its marker up before k's turn). A
   seat that passed in this interval (``passed_last`` now, the interval not empty) had every
   such value forbidden. Under the cover-doubles rule a pass only proves that no tile covers
   the waiting double, so an interval in which a double waited or was played proves nothing.
   The interval before the player's first decision starts from the deal (every line open at
   the engine's value, no marker up, the dummy line closed).
4. *Forbidden values last.* Without a boneyard a hand only shrinks, so a value forbidden to
   k stays forbidden for the rest of the hand. With one, a seat may draw and keep a tile the
   player cannot identify: when the boneyard shrank in an interval, every other seat's older
   facts are dropped (a pass in that interval still covers the passer's whole hand).

Facts 3 and 4 are read by one compiled reading, :mod:`dominoes_env.core.pass_facts`, which ppo's
history feature shares (the tracker is its reader of one game and one seat): a search and a
network read the same facts.

Facts it does not use. Some need the opponents' policies (what a seat's choice of move says
about the tiles it kept, what a draw followed by a play says about the drawn tile); some are
sound but left out for their cost or rarity: the order of plays within an interval beyond the
markers it proves (a seat that played on a line before a later seat passed), and passes under
the cover-doubles rule that cover more than the waiting double. Samples are uniform over the
deals that agree with facts 1-4 (``tests/test_hidden.py`` checks that the truth always agrees,
and the distribution on tables small enough to enumerate).

**Sampling** (:func:`sample_deals`): exact and uniform, by counting (with no fact but the sizes,
a plain shuffle), and it cannot fail on a
position the rules allow (the true deal agrees, so there is always one). The facts say "place p
(a seat, or the boneyard) holds exactly c_p hidden tiles, none with an end in V_p". Places that
allow the same tiles form one group (the boneyard and every seat with no fact are one group);
the tiles some group refuses, the *constrained* ones, are few. A table counts, for each
constrained tile i and each room left in the groups, the deals of tiles i.. that fill it (the
free tiles' deals in closed form, a multinomial); a sample deals the constrained tiles one by
one, each to a group with probability proportional to the deals that remain, the free tiles
at random into the room left, then each group's tiles at random among its places. The cost is
the table's size, (constrained tiles + 1) x the product of (room + 1) over all groups but one;
above :data:`MAX_COUNTING_ENTRIES` the facts of the constrained seat with the most tiles are
set aside until it fits (samples then agree with the facts kept; :class:`SamplingPlan` says
which). ``benchmarks/hidden_sampling.py`` saw that at 0.4% of the decisions of 8 players with
double-18 under the rule book (the largest table, where hands of 23 tiles meet many passes) and
never on the other tables it measures; a call of 32 samples then took at most 55 ms. Seeded:
every draw comes from the generator passed in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dominoes_env.core import observation as layout
from dominoes_env.core import rules, validation
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout
from dominoes_env.core.pass_facts import PassFacts
from dominoes_env.core.state import HandState

#: The counting table's largest size (entries of 8 bytes): what bounds a sample's cost.
MAX_COUNTING_ENTRIES = 1 << 20
#: The most deals one call samples.
MAX_SAMPLES = 1 << 16
BONEYARD = -1  # the boneyard's place in a sample's owner table (rules.IN_BONEYARD in a state)


@dataclass(frozen=True)
class HandKnowledge:
    """What one player knows at one of its decisions, in its own frame (it is seat 0).

    Attributes:
        config: the table.
        observation: its observation vector (one-hand layout; a multi-hand game's scores dropped).
        hidden: (m,) the tiles it cannot see, ascending.
        hand_sizes: (n,) tiles each seat holds (seat k = the k-th after the player).
        boneyard: tiles face down (0 without the boneyard rule).
        forbidden: (n, V) bool: ``forbidden[k, v]``: seat k holds no tile with an end v (row 0,
            the player's own, is all False).
    """

    config: GameConfig
    observation: np.ndarray
    hidden: np.ndarray
    hand_sizes: np.ndarray
    boneyard: int
    forbidden: np.ndarray

    def check(self) -> None:
        """Refuse knowledge no position can have (built by hand rather than by a tracker): one
        ValueError naming the field and what is allowed. The sampler's public calls check it,
        so that impossible sizes are refused instead of sampled.
        """
        config = self.config
        if not isinstance(config, GameConfig):
            raise ValueError(f"knowledge.config must be a GameConfig, got {validation.shown(config)}")
        n, t, values = config.num_players, config.num_tiles, config.highest_double + 1
        size = observation_layout(config).size
        _check_array("knowledge.observation", self.observation, (size,), "numbers")
        _check_array("knowledge.hidden", self.hidden, (None,), "integers")
        hidden = np.asarray(self.hidden)
        if hidden.shape[0] and (hidden.min() < 0 or hidden.max() >= t or (np.diff(hidden) <= 0).any()):
            raise ValueError(f"knowledge.hidden must be distinct tiles of the set (0 to {t - 1}), ascending")
        _check_array("knowledge.hand_sizes", self.hand_sizes, (n,), "integers")
        boneyard = validation.integer("knowledge.boneyard", self.boneyard, 0, t if config.boneyard else 0,
                                      allowed=None if config.boneyard else "no boneyard at this table")
        sizes = np.asarray(self.hand_sizes)
        if (sizes < 0).any() or (sizes > t).any():
            raise ValueError(f"knowledge.hand_sizes must each be from 0 to {t}, got {sizes.tolist()}")
        if int(sizes[1:].sum()) + boneyard != hidden.shape[0]:
            raise ValueError(f"the other seats' hand sizes ({sizes[1:].tolist()}) and the boneyard ({boneyard}) hold "
                             f"{int(sizes[1:].sum()) + boneyard} tiles, but {hidden.shape[0]} are hidden: they must "
                             f"be equal")
        _check_array("knowledge.forbidden", self.forbidden, (n, values), "booleans")

    def allowed(self) -> np.ndarray:
        """(m, n + 1) bool: where each hidden tile may lie (seats 1..n-1, the boneyard last; column 0 unused)."""
        tiles = self.config.tiles
        low, high = tiles.low[self.hidden], tiles.high[self.hidden]
        n = self.config.num_players
        allowed = np.zeros((self.hidden.shape[0], n + 1), dtype=np.bool_)
        allowed[:, 1:n] = ~(self.forbidden[1:, low] | self.forbidden[1:, high]).T
        allowed[:, n] = self.boneyard > 0
        return allowed

    def agrees(self, owners: np.ndarray) -> bool:
        """Whether a deal of the hidden tiles (``owners[tile]``: seat, or -1 for the boneyard, for
        each tile of ``hidden``) agrees with every fact: sizes and forbidden values."""
        n = self.config.num_players
        if owners.shape != self.hidden.shape or ((owners < 1) & (owners != BONEYARD)).any() or (owners >= n).any():
            return False
        places = np.where(owners == BONEYARD, n, owners)
        counts = np.bincount(places, minlength=n + 1)
        if counts[n] != self.boneyard or not np.array_equal(counts[1:n], self.hand_sizes[1:]):
            return False
        return bool(self.allowed()[np.arange(owners.shape[0]), places].all())


class KnowledgeTracker:
    """Keeps what one player's observations prove about the hidden tiles, through one hand.

    Give it every observation of its player, in order (a policy sees each of its decisions),
    and call :meth:`reset` at each new hand; :meth:`observe` returns the player's
    :class:`HandKnowledge` at that decision. It reads the player's own moves from how its
    hand changed between two decisions, so it needs nothing else. The facts passes prove are
    read by :class:`~dominoes_env.core.pass_facts.PassFacts` (one game, one seat), the reading
    ppo's history feature uses for many games at once: one reading for every reader.
    """

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.layout = observation_layout(config)
        self._tiles = config.tiles
        self._facts = PassFacts(config, games=1)
        self._row = np.zeros(1, dtype=np.int64)  # the tracker's game and seat in its facts
        self.reset()

    @property
    def forbidden(self) -> np.ndarray:
        """(n, V) bool, in the player's frame: ``forbidden[k, v]``: seat k holds no tile with an end v
        (the facts so far; row 0, the player's own, is all False)."""
        return self._facts.forbidden[0, 0]

    def reset(self) -> None:
        """A new hand: nothing is known yet."""
        self._facts.reset()

    def observe(self, observation: np.ndarray) -> HandKnowledge:
        """Take the player's observation at its decision; return what it now knows."""
        vector = np.asarray(observation, dtype=np.int8)[:self.layout.size].copy()
        self._facts.learn(vector[None], self._row, self._row)  # a new hand, seen or reset, starts from the deal
        views = self.layout.views(vector)
        return self._knowledge(vector, views, int(views["hand_number"].argmax()))

    def _knowledge(self, vector: np.ndarray, views: layout.ObservationViews, engine_value: int) -> HandKnowledge:
        visible = views["hand"].astype(bool) | views["played"].astype(bool).any(axis=0)
        visible[self._tiles.double(engine_value)] = True
        boneyard = int(views["boneyard"].sum()) if self.config.boneyard else 0
        return HandKnowledge(self.config, vector, np.flatnonzero(~visible), views["hand_sizes"].sum(axis=1),
                             boneyard, self.forbidden.copy())


def knowledge_of_sizes(config: GameConfig, observation: np.ndarray) -> HandKnowledge:
    """What one observation shows on its own: the hidden tiles and how many each place holds, no
    fact from earlier decisions. Sound for a position whose earlier observations are not known
    (one taken in mid-hand): samples are uniform over the deals that fit the sizes.

    Raises:
        ValueError: the vector is no observation of this table.
    """
    tracker = KnowledgeTracker(config)
    vector = layout.as_vector(config, observation)[0][:tracker.layout.size].copy()
    views = tracker.layout.views(vector)
    return tracker._knowledge(vector, views, int(views["hand_number"].argmax()))


# --------------------------------------------------------------------------- sampling
@dataclass(frozen=True)
class SamplingPlan:
    """How :func:`sample_deals` counts the deals of one :class:`HandKnowledge` (see the module's
    "Sampling"): places that allow the same tiles merged into groups, the tiles some group refuses
    (dealt one by one, by the counts) and the rest (dealt at random into the room left).

    Attributes:
        groups: (n + 1,) the group of each place (seats 1..n-1, the boneyard last; -1 for column 0
            and for places that take no tile).
        capacity: (g,) tiles each group takes.
        allowed: (m, g) bool: where each hidden tile may lie, by group.
        implied: the group whose room is implied by the others' (one that allows every tile when
            there is one); the others are the counting table's dimensions.
        dropped: seats whose facts were set aside so that the counting table stays within
            :data:`MAX_COUNTING_ENTRIES` (almost always empty; the module's "Sampling").
    """

    groups: np.ndarray
    capacity: np.ndarray
    allowed: np.ndarray
    implied: int
    dropped: tuple[int, ...]

    @cached_property
    def constrained(self) -> np.ndarray:
        """The tiles some group refuses, in the order they are dealt."""
        return np.flatnonzero(~self.allowed.all(axis=1))

    @property
    def table_entries(self) -> int:
        """Entries of the counting table: (constrained tiles + 1) x the states of the other groups' room."""
        states = int(np.prod([c + 1 for g, c in enumerate(self.capacity.tolist()) if g != self.implied]))
        return (self.constrained.shape[0] + 1) * states


def sampling_plan(knowledge: HandKnowledge) -> SamplingPlan:
    """The plan :func:`sample_deals` follows for this knowledge (its cost: :attr:`SamplingPlan.table_entries`)."""
    n = knowledge.config.num_players
    capacity = np.zeros(n + 1, dtype=np.int64)
    capacity[1:n] = knowledge.hand_sizes[1:]
    capacity[n] = knowledge.boneyard
    allowed = knowledge.allowed()
    dropped: list[int] = []
    while True:
        plan = _plan(allowed, capacity, tuple(dropped))
        if plan.table_entries <= MAX_COUNTING_ENTRIES:
            return plan
        # set aside the facts of the constrained seat with the most tiles: the table's largest dimension
        seats = [k for k in range(1, n) if capacity[k] and not allowed[:, k].all()]
        seat = max(seats, key=lambda k: (capacity[k], -k))
        allowed[:, seat] = True
        dropped.append(seat)


def _plan(allowed: np.ndarray, capacity: np.ndarray, dropped: tuple[int, ...]) -> SamplingPlan:
    places = [p for p in range(1, capacity.shape[0]) if capacity[p] > 0]
    groups = np.full(capacity.shape[0], -1, dtype=np.int64)
    columns: list[bytes] = []
    for place in places:  # places that allow exactly the same tiles are one group
        key = allowed[:, place].tobytes()
        if key not in columns:
            columns.append(key)
        groups[place] = columns.index(key)
    count = len(columns)
    group_capacity = np.zeros(count, dtype=np.int64)
    group_allowed = np.zeros((allowed.shape[0], count), dtype=np.bool_)
    for place in places:
        group_capacity[groups[place]] += capacity[place]
        group_allowed[:, groups[place]] = allowed[:, place]
    free = [g for g in range(count) if group_allowed[:, g].all()]
    implied = free[0] if free else int(np.argmax(group_capacity)) if count else 0
    return SamplingPlan(groups, group_capacity, group_allowed, implied, dropped)


def _counted(plan: SamplingPlan) -> tuple[np.ndarray, ...]:
    """The counting table of a plan with what reads it: the constrained and the free tiles, the
    table's dimensions (the groups but the implied one), their radix and strides, each constrained
    tile's allowed dimensions and whether the implied group takes it, and the table.

    Raises:
        RuntimeError: no deal agrees with the facts (the observations were not all shown in order).
    """
    constrained = plan.constrained
    free = np.flatnonzero(plan.allowed.all(axis=1))
    dimensions = np.array([g for g in range(plan.capacity.shape[0]) if g != plan.implied], dtype=np.int64)
    radix = plan.capacity[dimensions] + 1
    strides = np.ones(dimensions.shape[0], dtype=np.int64)
    for k in range(1, dimensions.shape[0]):
        strides[k] = strides[k - 1] * radix[k - 1]
    rows = np.ascontiguousarray(plan.allowed[constrained][:, dimensions])
    implied_allowed = np.ascontiguousarray(plan.allowed[constrained, plan.implied])
    table = _counting_table(rows, implied_allowed, radix, strides, free.shape[0])
    if not table[0, int(((radix - 1) * strides).sum())] > 0:
        raise RuntimeError("no deal agrees with the facts: were all of the player's observations shown to the "
                           "tracker, in order, with reset() at each hand?")
    return constrained, free, dimensions, radix, strides, rows, implied_allowed, table


def sample_deals(knowledge: HandKnowledge, rng: np.random.Generator, count: int = 1) -> np.ndarray:
    """`count` deals of the hidden tiles, uniform over those that agree with the facts.

    Returns:
        (count, m) int64: the place of each tile of ``knowledge.hidden`` (a seat 1..n-1 in the
        player's frame, or -1 for the boneyard), in a uniformly random order within the
        boneyard when one is kept (see :func:`sampled_states`).

    Raises:
        ValueError: knowledge no position can have (:meth:`HandKnowledge.check`), an `rng` that
            is not a ``numpy.random.Generator``, or a `count` out of 0 to :data:`MAX_SAMPLES`.
        RuntimeError: no deal agrees with the facts. Sound facts always leave the true deal, so
            this means the observations were not all shown to the tracker in order.
    """
    count = _check_call(knowledge, rng, count)
    n = knowledge.config.num_players
    m = knowledge.hidden.shape[0]
    out = np.empty((count, m), dtype=np.int64)
    if m == 0:
        return out
    if not knowledge.forbidden.any():  # no fact but the sizes (most decisions): a uniform shuffle
        rooms = np.append(knowledge.hand_sizes[1:], knowledge.boneyard).astype(np.int64)
        _shuffled_deals(rooms, rng, out)
        out[out == n] = BONEYARD
        return out
    plan = sampling_plan(knowledge)
    constrained, free, dimensions, radix, strides, rows, implied_allowed, table = _counted(plan)
    members = np.full((plan.capacity.shape[0], n + 1), -1, dtype=np.int64)  # each group's places, in order
    member_rooms = np.zeros((plan.capacity.shape[0], n + 1), dtype=np.int64)
    filled = np.zeros(plan.capacity.shape[0], dtype=np.int64)
    capacity = np.zeros(n + 1, dtype=np.int64)
    capacity[1:n] = knowledge.hand_sizes[1:]
    capacity[n] = knowledge.boneyard
    for place in range(1, n + 1):
        g = plan.groups[place]
        if g >= 0:
            members[g, filled[g]], member_rooms[g, filled[g]] = place, capacity[place]
            filled[g] += 1
    _sample_from_table(table, rows, implied_allowed, radix, strides, constrained, free, dimensions, plan.implied,
                       plan.capacity, members, member_rooms, rng, out)
    out[out == n] = BONEYARD
    return out


def deal_marginals(knowledge: HandKnowledge) -> np.ndarray:
    """Where each hidden tile lies under :func:`sample_deals`' distribution, exactly: the
    marginals of the uniform distribution over the deals that agree with the facts (those the
    plan keeps, as the samples do), computed from the same counting table instead of sampled.

    Returns:
        (m, n + 1) float64: ``[j, p]`` the probability that tile ``hidden[j]`` lies at place p
        (a seat 1..n-1 in the player's frame, the boneyard last; column 0, the player's own, is
        0). Each row sums to 1.

    Raises:
        ValueError: knowledge no position can have (:meth:`HandKnowledge.check`).
        RuntimeError: no deal agrees with the facts (as :func:`sample_deals`).
    """
    if not isinstance(knowledge, HandKnowledge):
        raise ValueError(f"knowledge must be a HandKnowledge (KnowledgeTracker.observe), got "
                         f"{validation.shown(knowledge)}")
    knowledge.check()
    n, m = knowledge.config.num_players, knowledge.hidden.shape[0]
    capacity = np.zeros(n + 1, dtype=np.int64)
    capacity[1:n] = knowledge.hand_sizes[1:]
    capacity[n] = knowledge.boneyard
    out = np.zeros((m, n + 1), dtype=np.float64)
    if m == 0:
        return out
    if not knowledge.forbidden.any():  # every deal of the sizes alike: each tile at p with p's share of the room
        out[:] = capacity / m
        return out
    plan = sampling_plan(knowledge)
    constrained, free, dimensions, radix, strides, rows, implied_allowed, table = _counted(plan)
    by_group = _group_marginals(table, rows, implied_allowed, radix, strides, constrained, free, dimensions,
                                plan.implied, plan.capacity, m)
    for place in range(1, n + 1):  # within a group every place takes the same tiles: shares by room
        group = plan.groups[place]
        if group >= 0:
            out[:, place] = by_group[:, group] * capacity[place] / plan.capacity[group]
    return out


@kernel
def _group_marginals(table, rows, implied_allowed, radix, strides, constrained, free, dimensions, implied,
                     group_capacity, m):
    """(m, groups): the probability of each hidden tile's group under :func:`_sample_from_table`'s
    draws: the distribution of the room left is carried forward through the constrained tiles,
    each step weighted as a sample weighs it; the free tiles then fill the room left at random."""
    m_c, q = rows.shape
    states = 1
    for k in range(q):
        states *= radix[k]
    result = np.zeros((m, group_capacity.shape[0]), dtype=np.float64)
    forward = np.zeros(states, dtype=np.float64)
    following = np.zeros(states, dtype=np.float64)
    weights = np.empty(q + 1, dtype=np.float64)
    room = np.empty(q, dtype=np.int64)
    start = 0
    for k in range(q):
        start += (radix[k] - 1) * strides[k]
    forward[start] = 1.0
    dimension_capacity = 0
    for k in range(q):
        dimension_capacity += radix[k] - 1
    for i in range(m_c + 1):
        for s in range(states):
            mass = forward[s]
            if mass == 0.0:
                continue
            left, held = s, 0
            for k in range(q):
                room[k] = left % radix[k]
                left //= radix[k]
                held += room[k]
            implied_room = group_capacity[implied] - (i - (dimension_capacity - held))
            if i == m_c:  # the free tiles, dealt at random into the room left
                count = free.shape[0]
                for j in range(count):
                    for k in range(q):
                        result[free[j], dimensions[k]] += mass * room[k] / count
                    result[free[j], implied] += mass * implied_room / count
                continue
            total = 0.0
            for k in range(q):
                weights[k] = table[i + 1, s - strides[k]] if rows[i, k] and room[k] > 0 else 0.0
                total += weights[k]
            weights[q] = table[i + 1, s] if implied_allowed[i] and implied_room > 0 else 0.0
            total += weights[q]
            if total == 0.0:
                continue
            for k in range(q):
                if weights[k] > 0.0:
                    share = mass * weights[k] / total
                    result[constrained[i], dimensions[k]] += share
                    following[s - strides[k]] += share
            if weights[q] > 0.0:
                share = mass * weights[q] / total
                result[constrained[i], implied] += share
                following[s] += share
        if i < m_c:
            for s in range(states):
                forward[s] = following[s]
                following[s] = 0.0
    return result


def _check_call(knowledge: HandKnowledge, rng: np.random.Generator, count: int) -> int:
    """The checks at the sampler's door (a few microseconds beside a sample's cost)."""
    if not isinstance(knowledge, HandKnowledge):
        raise ValueError(f"knowledge must be a HandKnowledge (KnowledgeTracker.observe), got "
                         f"{validation.shown(knowledge)}")
    knowledge.check()
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got "
                         f"{validation.shown(rng)}")
    return validation.integer("count", count, 0, MAX_SAMPLES)


_DTYPES = {"integers": (np.integer,), "booleans": (np.bool_,), "numbers": (np.integer, np.floating)}


def _check_array(name: str, value: object, shape: tuple[int | None, ...], kind: str) -> None:
    """`value` is a numpy array of `shape` (None: any length) whose dtype holds `kind`."""
    if (not isinstance(value, np.ndarray) or value.ndim != len(shape)
            or any(want is not None and have != want for have, want in zip(value.shape, shape))
            or not any(np.issubdtype(value.dtype, dtype) for dtype in _DTYPES[kind])):
        wanted = ", ".join("m" if want is None else str(want) for want in shape)
        got = f"a {value.dtype} array of shape {value.shape}" if isinstance(value, np.ndarray) else \
            validation.shown(value)
        raise ValueError(f"{name} must be a numpy array of {kind} of shape ({wanted}), got {got}")


def _check_deals(knowledge: HandKnowledge, deals: object) -> None:
    """`deals` place every hidden tile (a seat 1..n-1 or the boneyard) and fill each place to its size."""
    _check_array("deals", deals, (None, knowledge.hidden.shape[0]), "integers")
    assert isinstance(deals, np.ndarray)
    n = knowledge.config.num_players
    places = np.where(deals == BONEYARD, n, deals)
    fits = deals.shape[0] <= MAX_SAMPLES and bool(((places >= 1) & (places <= n)).all())
    if fits and deals.shape[0]:
        sizes = np.append(knowledge.hand_sizes[1:], knowledge.boneyard)
        counts = np.stack([np.bincount(row, minlength=n + 1)[1:] for row in places])
        fits = bool((counts == sizes).all())
    if not fits:
        raise ValueError(f"deals must be at most {MAX_SAMPLES} rows, each placing every hidden tile in a seat 1 to "
                         f"{n - 1} or the boneyard (-1) and filling each to its size, as sample_deals gives them")


@kernel
def _shuffled_deals(rooms, rng, out):
    """Each row of `out`: the tiles in a uniformly random order, dealt to places 1, 2, ... in turn,
    ``rooms[p - 1]`` tiles to place p."""
    m = out.shape[1]
    order = np.empty(m, dtype=np.int64)
    for row in range(out.shape[0]):
        for k in range(m):
            order[k] = k
        for k in range(m - 1, 0, -1):
            j = int(rng.random() * (k + 1))
            order[k], order[j] = order[j], order[k]
        place, left = 0, rooms[0]
        for k in range(m):
            while left == 0:
                place += 1
                left = rooms[place]
            out[row, order[k]] = place + 1
            left -= 1


@kernel(inline="always")
def _log_factorial(k):
    return math.lgamma(k + 1.0)


@kernel
def _counting_table(rows, implied_allowed, radix, strides, free_tiles):
    """``table[i, state]``: the deals of constrained tiles i.. and the free tiles when the groups'
    room (other than the implied one's) is `state` (mixed radix), each row scaled to a maximum of 1
    (a sample only compares entries of one row)."""
    m_c, q = rows.shape
    states = 1
    for k in range(q):
        states *= radix[k]
    table = np.zeros((m_c + 1, states), dtype=np.float64)
    room = np.empty(q, dtype=np.int64)
    # the free tiles go anywhere: u! / (prod r_k! * (u - sum r)!) deals of them fill the room r
    logs = np.full(states, -np.inf)
    top = -np.inf
    for s in range(states):
        left, total, value = s, 0, 0.0
        for k in range(q):
            r = left % radix[k]
            left //= radix[k]
            total += r
            value -= _log_factorial(r)
        if total <= free_tiles:
            value -= _log_factorial(free_tiles - total)
            logs[s] = value
            top = max(top, value)
    for s in range(states):
        if logs[s] > -np.inf:
            table[m_c, s] = math.exp(logs[s] - top)
    for i in range(m_c - 1, -1, -1):
        tiles_left = m_c - i + free_tiles  # tile i and every tile after it
        best = 0.0
        for s in range(states):
            left, total = s, 0
            for k in range(q):
                room[k] = left % radix[k]
                left //= radix[k]
                total += room[k]
            if total > tiles_left:
                continue
            value = 0.0
            for k in range(q):
                if rows[i, k] and room[k] > 0:
                    value += table[i + 1, s - strides[k]]
            if implied_allowed[i] and tiles_left - total > 0:
                value += table[i + 1, s]
            table[i, s] = value
            best = max(best, value)
        if best > 0:
            for s in range(states):
                table[i, s] /= best
    return table


@kernel
def _sample_from_table(table, rows, implied_allowed, radix, strides, constrained, free, dimensions, implied,
                       group_capacity, members, member_rooms, rng, out):
    """Each row of `out`: a deal drawn from the counts (the constrained tiles one by one, each where
    the deals that remain weigh it; the free tiles at random into the room left), then each group's
    tiles shared among its places at random."""
    m_c, q = rows.shape
    groups = group_capacity.shape[0]
    weights = np.empty(q + 1, dtype=np.float64)
    group_of = np.empty(out.shape[1], dtype=np.int64)
    room = np.empty(groups, dtype=np.int64)
    order = np.empty(out.shape[1], dtype=np.int64)
    for row in range(out.shape[0]):
        for g in range(groups):
            room[g] = group_capacity[g]
        s = 0
        for k in range(q):
            s += (radix[k] - 1) * strides[k]
        for i in range(m_c):
            total = 0.0
            for k in range(q):
                weights[k] = table[i + 1, s - strides[k]] if rows[i, k] and room[dimensions[k]] > 0 else 0.0
                total += weights[k]
            weights[q] = table[i + 1, s] if implied_allowed[i] and room[implied] > 0 else 0.0
            total += weights[q]
            pick = rng.random() * total
            choice = q
            for k in range(q + 1):
                if weights[k] > 0.0:
                    choice = k
                    if pick < weights[k]:
                        break
                    pick -= weights[k]
            if choice < q:
                group_of[constrained[i]] = dimensions[choice]
                room[dimensions[choice]] -= 1
                s -= strides[choice]
            else:
                group_of[constrained[i]] = implied
                room[implied] -= 1
        count = free.shape[0]  # the free tiles: a uniform shuffle, dealt into the room left
        for k in range(count):
            order[k] = free[k]
        for k in range(count - 1, 0, -1):
            j = int(rng.random() * (k + 1))
            order[k], order[j] = order[j], order[k]
        g = 0
        for k in range(count):
            while room[g] == 0:
                g += 1
            group_of[order[k]] = g
            room[g] -= 1
        for g in range(groups):  # a group's tiles shared among its places: a uniform shuffle, dealt in turn
            count = 0
            for tile in range(out.shape[1]):
                if group_of[tile] == g:
                    order[count] = tile
                    count += 1
            for k in range(count - 1, 0, -1):
                j = int(rng.random() * (k + 1))
                order[k], order[j] = order[j], order[k]
            place, left = 0, member_rooms[g, 0]
            for k in range(count):
                while left == 0:
                    place += 1
                    left = member_rooms[g, place]
                out[row, order[k]] = members[g, place]
                left -= 1


# --------------------------------------------------------------------------- positions
def sampled_states(knowledge: HandKnowledge, deals: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Full engine states (one row per deal), in the player's frame (it is seat 0, to move).

    The visible part comes from the observation (:func:`~dominoes_env.core.observation.read_state`);
    each hidden tile goes where the deal puts it, and the boneyard's tiles are laid face down in
    a uniformly random order, so a search that draws draws a random hidden tile.

    Raises:
        ValueError: as :func:`sample_deals`, or `deals` that are not deals of this knowledge's
            hidden tiles (a (count, m) integer array of places that :meth:`HandKnowledge.agrees`
            on the sizes).
    """
    _check_call(knowledge, rng, 0)
    _check_deals(knowledge, deals)
    config = knowledge.config
    fields = observation_layout(config)
    n, t = config.num_players, config.num_tiles
    base = np.zeros(rules.state_size(n, t), dtype=np.int16)
    layout.read_state(knowledge.observation, fields.offsets, n, t, config.highest_double, config.max_hand_size,
                      config.rule_flags, np.zeros(t, dtype=np.int16), base)
    states = np.empty((deals.shape[0], base.shape[0]), dtype=np.int16)
    _lay_deals(base, knowledge.hidden, deals, rng, states)
    return states


@kernel
def _lay_deals(base, hidden, deals, rng, states):
    """Each row: `base` with the hidden tiles where its deal puts them, the boneyard's shuffled."""
    offset = rules.pile_start(base[rules.NUM_PLAYERS], base[rules.NUM_TILES])
    owner_start = rules.HEADER_SIZE  # the owners block comes first (rules.split_state)
    for row in range(deals.shape[0]):
        state = states[row]
        for k in range(base.shape[0]):
            state[k] = base[k]
        count = 0
        for k in range(hidden.shape[0]):
            tile = hidden[k]
            if deals[row, k] < 0:
                state[owner_start + tile] = rules.IN_BONEYARD
                state[offset + count] = tile
                count += 1
            else:
                state[owner_start + tile] = deals[row, k]
        for k in range(count - 1, 0, -1):  # the face-down order: a uniform shuffle
            j = int(rng.random() * (k + 1))
            state[offset + k], state[offset + j] = state[offset + j], state[offset + k]


def sampled_positions(knowledge: HandKnowledge, rng: np.random.Generator, count: int = 1) -> list[HandState]:
    """`count` sampled positions as :class:`HandState` objects (seat 0 is the player, to move)."""
    states = sampled_states(knowledge, sample_deals(knowledge, rng, count), rng)
    return [HandState(knowledge.config, state) for state in states]
