"""The rules of RULES.md, table rules included, as compiled functions over one flat state array.

A hand's whole state lives in one int16 array (see :mod:`dominoes_env.core.state` for
the named views a reader would use). Keeping it flat makes a copy one memcpy, lets
numba compile the rules once for every table size, and leaves room for a batched
engine (a 2-D array of states) later. Each function here is one rule or one question
about a position; none of them draws random numbers or validates input (the Python
layer validates before calling in).

Layout of the state array (n players, T tiles):

=============  ======  =====================================================
slice          length  meaning
=============  ======  =====================================================
header         16      scalars, indexed by the constants below
owner          T       seat holding the tile, ON_TABLE, or OUT_OF_PLAY
line_of        T       absolute line a played tile lies on (seat, or n for
                       the dummy line), -1 otherwise
play_order     T       0, 1, 2, ... in the order tiles were played, -1 if not
open_values    n + 1   open value of each seat's line, then the dummy line
line_started   n       1 once a tile was played on that seat's line
marker_up      n       1 while the seat's marker is up
passed_last    n       1 if the seat's latest action was a pass
hand_sizes     n       tiles each seat holds
pile           T       the boneyard, face down: pile[PILE_COUNT - 1] is drawn next
=============  ======  =====================================================

The table rules (``GameConfig.boneyard``, ``cover_doubles``) are flags in the header, so
one compiled function serves every rule set, and the rule book's game (no flag) takes the
same paths as before: with no boneyard the pile is empty and nothing can be drawn, and with
no double to cover ``DOUBLE_LINE`` stays -1.
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core.compiled import kernel

# Header slots.
NUM_PLAYERS = 0
NUM_TILES = 1
CURRENT_PLAYER = 2
DUMMY_OPEN = 3
HAND_OVER = 4
WENT_OUT = 5  # seat that played its last tile, -1 if none (yet, or the hand blocked)
MOVES = 6  # decisions taken so far, passes included
ENGINE_VALUE = 7  # h: the engine is (h|h)
TILES_PLAYED = 8
RULES = 9  # table rules in force: a sum of the flags below
DREW = 10  # 1 once the player to move has drawn this turn (it may then play only the drawn tile, or pass)
DOUBLE_LINE = 11  # the line whose double must be covered before any other move, -1 if none
PILE_COUNT = 12  # tiles left in the boneyard
ENGINE_HOLDER = 13  # the seat that was dealt (or drew) the engine
HEADER_SIZE = 16

# Table rules (flags of the RULES slot).
BONEYARD_RULE = 1
COVER_DOUBLES_RULE = 2
LEFT_OF_ENGINE_RULE = 4  # the player after the engine's holder moves first

# Owner values besides a seat number.
ON_TABLE = -1
OUT_OF_PLAY = -2  # the engine, and tiles a hand-built position leaves out
IN_BONEYARD = -3  # face down in the boneyard


def state_size(num_players: int, num_tiles: int) -> int:
    """Length of the state array for a table size."""
    return HEADER_SIZE + 4 * num_tiles + (num_players + 1) + 4 * num_players


@kernel(inline="always")
def block_starts(num_players, num_tiles):
    """Where each block of the state starts: owner, line_of, play_order, open_values,
    line_started, marker_up, passed_last, hand_sizes and the pile (the table above's order).

    The rule kernels index the flat state at these offsets rather than take
    :func:`split_state`'s views: every array view made in compiled code takes and drops a
    reference count, and those atomic operations were most of a move's cost (a move about 3x,
    listing the legal moves 1.5x, the blocked-hand test 11x slower with views).
    """
    owner = HEADER_SIZE
    line_of = owner + num_tiles
    play_order = line_of + num_tiles
    open_values = play_order + num_tiles
    line_started = open_values + num_players + 1
    marker_up = line_started + num_players
    passed_last = marker_up + num_players
    hand_sizes = passed_last + num_players
    return (owner, line_of, play_order, open_values, line_started, marker_up, passed_last, hand_sizes,
            hand_sizes + num_players)


@kernel(inline="always")
def split_state(state):
    """Named views into the flat state array (no copies): the compiled twin of HandState's
    views, which the tests hold against each other. Kernels index the state at
    :func:`block_starts`' offsets instead (its docstring says why)."""
    n = state[NUM_PLAYERS]
    t = state[NUM_TILES]
    owner, line_of, play_order, open_values, line_started, marker_up, passed_last, hand_sizes, _ = \
        block_starts(n, t)
    return (state[owner:owner + t], state[line_of:line_of + t], state[play_order:play_order + t],
            state[open_values:open_values + n + 1], state[line_started:line_started + n],
            state[marker_up:marker_up + n], state[passed_last:passed_last + n], state[hand_sizes:hand_sizes + n])


@kernel(inline="always")
def pile_of(state):
    """The boneyard's slots (a view): the tiles still face down are pile[:state[PILE_COUNT]]."""
    start = pile_start(state[NUM_PLAYERS], state[NUM_TILES])
    return state[start:start + state[NUM_TILES]]


@kernel(inline="always")
def pile_start(num_players, num_tiles):
    """Where the boneyard's slots start in a state (after the tiles' and the seats' blocks)."""
    return block_starts(num_players, num_tiles)[8]


@kernel(inline="always")
def engine_value(hand_index, highest):
    """Rule 1: hand k of a game uses the engine (h|h) with h = N - k, wrapping after 0."""
    return (highest - hand_index) % (highest + 1)


@kernel(inline="always")
def double_index(value, highest):
    """The canonical index of the double (value|value) in the double-`highest` set."""
    return value * (2 * highest + 3 - value) // 2


@kernel(inline="always")
def may_draw(state):
    """The boneyard rule: a player with no tile to play draws, once per turn, while the boneyard lasts."""
    return state[PILE_COUNT] > 0 and state[DREW] == 0


@kernel(inline="always")
def last_action(state):
    """The highest action number of this table: the pass, or the draw with a boneyard."""
    n = state[NUM_PLAYERS]
    return (n + 1) * state[NUM_TILES] + (1 if state[RULES] & BONEYARD_RULE else 0)


@kernel(inline="always")
def absolute_line(seat, relative_line, num_players):
    """Egocentric line k of `seat` as an absolute line (the dummy line stays n)."""
    if relative_line == num_players:
        return num_players
    line = seat + relative_line  # both in [0, n): a subtraction, not a (slow) integer division
    return line - num_players if line >= num_players else line


@kernel(inline="always")
def next_seat(seat, num_players):
    """The seat after `seat` (in [0, n))."""
    return 0 if seat + 1 == num_players else seat + 1


@kernel(inline="always")
def relative_line(seat, line, num_players):
    """Absolute line as seen from `seat` (0 = own line, n = dummy). Line -1 (a tile off the
    table) maps into 0..n-1, which the observation encoder relies on."""
    if line == num_players:
        return num_players
    relative = line - seat  # both in [0, n): an addition, not a (slow) integer division
    return relative + num_players if relative < 0 else relative


@kernel(inline="always")
def may_play_on(state, seat, line):
    """Rule 5: own line always; another seat's line while its marker is up; the dummy once open."""
    n = state[NUM_PLAYERS]
    if line == seat:
        return True
    if line == n:
        return state[DUMMY_OPEN] == 1
    return state[block_starts(n, state[NUM_TILES])[5] + line] == 1


@kernel
def fill_legal_actions(state, tiles_with_value, out):
    """Write the legal actions of the player to move into `out`, ascending; return the count.

    An action is `relative_line * T + tile`; pass ((n+1) * T) is legal only when nothing
    else is (rule 6), and with a boneyard the draw ((n+1) * T + 1) comes first: legal exactly
    when no tile can be played, the boneyard is not empty and the player has not drawn yet
    this turn. While a double waits to be covered, the only tile moves are onto that double,
    whoever owns its line. Iterating lines egocentrically and each value's tiles in
    ascending order yields the actions already sorted.
    """
    n = state[NUM_PLAYERS]
    t = state[NUM_TILES]
    seat = state[CURRENT_PLAYER]
    owner, _, _, open_values, _, _, _, _, _ = block_starts(n, t)
    count = 0
    pending = state[DOUBLE_LINE]
    for rel in range(n + 1):
        line = absolute_line(seat, rel, n)
        if not ((line == pending) if pending >= 0 else may_play_on(state, seat, line)):
            continue
        value = state[open_values + line]
        for j in range(tiles_with_value.shape[1]):
            tile = tiles_with_value[value, j]
            if state[owner + tile] == seat:
                out[count] = rel * t + tile
                count += 1
    if count == 0:
        out[0] = (n + 1) * t + (1 if may_draw(state) else 0)
        count = 1
    return count


@kernel
def fill_legal_mask(state, tiles_with_value, mask):
    """Write the int8 legal-action mask of the player to move (all zeros once the hand is over)."""
    mask[:] = 0
    if state[HAND_OVER] == 1:
        return
    actions = np.empty(mask.shape[0], dtype=np.int64)
    for i in range(fill_legal_actions(state, tiles_with_value, actions)):
        mask[actions[i]] = 1


@kernel
def is_legal(state, low, high, action):
    """Whether `action` is legal for the player to move (any int; out of range is illegal)."""
    n = state[NUM_PLAYERS]
    t = state[NUM_TILES]
    if state[HAND_OVER] == 1 or action < 0 or action > last_action(state):
        return False
    if action == (n + 1) * t:
        return not has_tile_move(state, low, high) and not may_draw(state)
    if action == (n + 1) * t + 1:
        return may_draw(state) and not has_tile_move(state, low, high)
    seat = state[CURRENT_PLAYER]
    tile = action % t
    line = absolute_line(seat, action // t, n)
    owner, _, _, open_values, _, _, _, _, _ = block_starts(n, t)
    if state[owner + tile] != seat:
        return False
    pending = state[DOUBLE_LINE]
    if not ((line == pending) if pending >= 0 else may_play_on(state, seat, line)):
        return False
    value = state[open_values + line]
    return low[tile] == value or high[tile] == value


@kernel
def has_tile_move(state, low, high):
    """Whether the player to move holds a tile that fits a line it may play on (only the line
    of the double to cover, while one waits)."""
    n = state[NUM_PLAYERS]
    t = state[NUM_TILES]
    seat = state[CURRENT_PLAYER]
    owner, _, _, open_values, _, _, _, _, _ = block_starts(n, t)
    pending = state[DOUBLE_LINE]
    for tile in range(t):
        if state[owner + tile] != seat:
            continue
        for line in range(n + 1):
            if (line == pending) if pending >= 0 else may_play_on(state, seat, line):
                value = state[open_values + line]
                if low[tile] == value or high[tile] == value:
                    return True
    return False


@kernel
def is_blocked(state, tiles_with_value):
    """Rule 9: nothing can ever be played or drawn again.

    The boneyard is empty, and no tile in any hand fits the double waiting to be covered
    (when one waits, no other move is allowed) or else any seat's line (all markers treated
    as up) or the open dummy.
    """
    if state[PILE_COUNT] > 0:
        return False
    n = state[NUM_PLAYERS]
    owner, _, _, open_values, _, _, _, _, _ = block_starts(n, state[NUM_TILES])
    pending = state[DOUBLE_LINE]
    for line in range(n + 1):
        if (line != pending) if pending >= 0 else (line == n and state[DUMMY_OPEN] == 0):
            continue
        value = state[open_values + line]
        for j in range(tiles_with_value.shape[1]):
            if state[owner + tiles_with_value[value, j]] >= 0:
                return False
    return True


@kernel
def apply_action(state, low, high, tiles_with_value, action):
    """Play a legal action for the player to move (the caller has checked legality).

    Passing raises the marker (rule 6-7). Drawing (boneyard rule) takes the top tile of the
    boneyard into the hand; the same player moves again, to play that tile or pass. A tile
    takes the place of its matching end on the line (rule 5), starts the line, may open the
    dummy line, lowers the marker only when it is a non-double on the player's own line
    (rule 7), gives another move after a double (rule 8), makes a double the one to cover or
    covers it (cover rule), and ends the hand when the player goes out or nothing can ever
    be played or drawn again (rule 9).
    """
    n = state[NUM_PLAYERS]
    t = state[NUM_TILES]
    seat = state[CURRENT_PLAYER]
    owner, line_of, play_order, open_values, line_started, marker_up, passed_last, hand_sizes, pile = \
        block_starts(n, t)
    state[MOVES] += 1
    if action == (n + 1) * t:
        state[marker_up + seat] = 1
        state[passed_last + seat] = 1
        state[DREW] = 0
        state[CURRENT_PLAYER] = next_seat(seat, n)
        return
    if action == (n + 1) * t + 1:
        count = state[PILE_COUNT] - 1
        tile = state[pile + count]
        state[PILE_COUNT] = count
        state[owner + tile] = seat
        state[hand_sizes + seat] += 1
        state[passed_last + seat] = 0
        state[DREW] = 1
        if is_blocked(state, tiles_with_value):  # the last tile drawn fits nowhere
            state[HAND_OVER] = 1
        return
    line = absolute_line(seat, action // t, n)
    tile = action % t
    state[open_values + line] = low[tile] + high[tile] - state[open_values + line]
    state[owner + tile] = ON_TABLE
    state[line_of + tile] = line
    state[play_order + tile] = state[TILES_PLAYED]
    state[TILES_PLAYED] += 1
    state[hand_sizes + seat] -= 1
    state[passed_last + seat] = 0
    state[DREW] = 0
    is_double = low[tile] == high[tile]
    if state[RULES] & COVER_DOUBLES_RULE:
        if is_double:
            state[DOUBLE_LINE] = line
        elif state[DOUBLE_LINE] == line:
            state[DOUBLE_LINE] = -1
    if line < n and state[line_started + line] == 0:
        state[line_started + line] = 1
        started = 0
        for other in range(n):
            started += state[line_started + other]
        if started == n:
            state[DUMMY_OPEN] = 1
    if line == seat and not is_double:
        state[marker_up + seat] = 0
    if state[hand_sizes + seat] == 0:
        state[HAND_OVER] = 1
        state[WENT_OUT] = seat
    elif is_blocked(state, tiles_with_value):
        state[HAND_OVER] = 1
    elif not is_double:
        state[CURRENT_PLAYER] = next_seat(seat, n)


@kernel
def apply_if_legal(state, low, high, tiles_with_value, action):
    """Apply `action` if it is legal and return True; otherwise change nothing and return False."""
    if not is_legal(state, low, high, action):
        return False
    apply_action(state, low, high, tiles_with_value, action)
    return True


@kernel
def shuffle_deal(permutation, num_players, hand_index, rule_flags, deal_size, engine, owner, pile):
    """Rule 2 (and the boneyard rule): each tile's seat from one shuffle of the set.

    `permutation` is a uniformly random ordering of the tiles (drawn by the caller's seeded
    generator). Without a boneyard every tile is dealt: floor(T/n) to each seat in seat
    order, one more to seats k, k+1, ... (mod n) in hand k. With one, seat s gets positions
    s*k .. s*k+k-1 and the rest is the boneyard in shuffled order; if the engine lies there,
    the seats draw one tile each in turn from seat (hand_index mod n) until one draws it.
    Writes `owner` (a seat, or IN_BONEYARD) and the boneyard in draw order into `pile`;
    returns the number of tiles left face down.
    """
    n = num_players
    t = permutation.shape[0]
    if rule_flags & BONEYARD_RULE == 0:
        base, extra = t // n, t % n
        position = 0
        for seat in range(n):
            size = base + (1 if (seat - hand_index) % n < extra else 0)
            for _ in range(size):
                owner[permutation[position]] = seat
                position += 1
        return 0
    dealt = n * deal_size
    for position in range(dealt):
        owner[permutation[position]] = position // deal_size
    count = 0
    for position in range(dealt, t):
        owner[permutation[position]] = IN_BONEYARD
        pile[count] = permutation[position]
        count += 1
    drawn = 0
    seat = hand_index % n
    while owner[engine] == IN_BONEYARD:
        owner[pile[drawn]] = seat
        drawn += 1
        seat = (seat + 1) % n
    for position in range(drawn, count):
        pile[position - drawn] = pile[position]
    return count - drawn


@kernel
def start_hand(state, num_players, num_tiles, engine_value, engine, rule_flags, owner, draw_order, pile_count):
    """Rules 1-4: a hand ready to play from each tile's seat (the engine among them) and the
    boneyard in draw order. `state` is overwritten. The engine goes to the centre; its holder
    (or, by the first-player rule, the next seat) moves first."""
    state[:] = 0
    n, t = num_players, num_tiles
    state[NUM_PLAYERS] = n
    state[NUM_TILES] = t
    state[WENT_OUT] = -1
    state[ENGINE_VALUE] = engine_value
    state[RULES] = rule_flags
    state[DOUBLE_LINE] = -1
    tile_owner, line_of, play_order, open_values, _, _, _, hand_sizes, _ = block_starts(n, t)
    for tile in range(t):
        state[tile_owner + tile] = owner[tile]
        state[line_of + tile] = -1
        state[play_order + tile] = -1
        if owner[tile] >= 0:
            state[hand_sizes + owner[tile]] += 1
    holder = owner[engine]
    state[tile_owner + engine] = OUT_OF_PLAY
    state[hand_sizes + holder] -= 1
    for line in range(n + 1):
        state[open_values + line] = engine_value
    pile = pile_of(state)
    for k in range(pile_count):  # the next tile to draw goes last: drawing pops the end
        pile[k] = draw_order[pile_count - 1 - k]
    state[PILE_COUNT] = pile_count
    state[ENGINE_HOLDER] = holder
    state[CURRENT_PLAYER] = (holder + 1) % n if rule_flags & LEFT_OF_ENGINE_RULE else holder


@kernel
def deal_hand(state, permutation, num_players, hand_index, engine_value, engine, rule_flags, deal_size, scratch):
    """Deal hand `hand_index` from one shuffle into `state` (:func:`shuffle_deal`, then
    :func:`start_hand`); `scratch` holds 2T int16 slots."""
    t = permutation.shape[0]
    owner = scratch[:t]
    pile = scratch[t:]
    count = shuffle_deal(permutation, num_players, hand_index, rule_flags, deal_size, engine, owner, pile)
    start_hand(state, num_players, t, engine_value, engine, rule_flags, owner, pile, count)


@kernel
def cache_probe():
    """Nothing. numba keeps a module's compiled kernels in a cache that a change of the module's
    source empties: whether this one was loaded or compiled tells a new machine or install (or
    changed rules) from one that has run before, without slow compiling
    (:func:`baselines.harness.warmup.warm_up` then shares the work with a helper). A first run
    stopped early, or a change to another module only, looks like a run before: the warm-up then
    compiles in one process, slower but complete."""
    return 0


@kernel
def hand_scores(state, low, high, out):
    """Rule 10: pip sum of the tiles each seat still holds."""
    out[:] = 0
    for tile in range(state[NUM_TILES]):
        seat = state[HEADER_SIZE + tile]  # the owners block comes first
        if seat >= 0:
            out[seat] += low[tile] + high[tile]


@kernel
def play_random_hands(states, low, high, tiles_with_value, uniforms):
    """Play every hand in `states` (a 2-D array of dealt states) to its end with uniform
    random legal moves; return the number of decisions taken.

    This is the compiled self-play loop the benchmark measures as the raw engine; it
    uses the same rule functions as everything else. Randomness comes from `uniforms`
    (floats in [0, 1) drawn by the caller's seeded generator, reused cyclically), so no
    global generator is read or written.
    """
    buffer = np.empty(states.shape[1], dtype=np.int64)
    decisions = 0
    for i in range(states.shape[0]):
        state = states[i]
        while state[HAND_OVER] == 0:
            count = fill_legal_actions(state, tiles_with_value, buffer)
            pick = int(uniforms[decisions % uniforms.shape[0]] * count)
            apply_action(state, low, high, tiles_with_value, buffer[pick])
            decisions += 1
    return decisions
