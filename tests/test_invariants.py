"""Invariants over thousands of seeded random games, checked against a reference in plain Python.

:class:`ReferenceHand` is RULES.md written as directly as possible (sets and lists, no
numba, nothing shared with the engine but the tile numbering), table rules included. It
starts from the engine's deal and then follows the moves on its own; after every move the
engine's state, the env's action mask and the end of the hand must agree with it.
"""

from __future__ import annotations

import hashlib
import itertools
import random

import numpy as np
import pytest

import dominoes_env
from dominoes_env.core import HandState, engine_value_for_hand

#: every combination of the table rules, as keyword arguments
RULE_SETS = [dict(boneyard=b, cover_doubles=c, first_player=f)
             for b, c, f in itertools.product([False, True], [False, True], ["engine_holder", "left_of_engine"])]
RULE_IDS = ["".join(["B" if r["boneyard"] else "-", "C" if r["cover_doubles"] else "-",
                     "L" if r["first_player"] == "left_of_engine" else "-"]) for r in RULE_SETS]


class ReferenceHand:
    """One hand of RULES.md in plain Python (absolute seats and lines; line n is the dummy)."""

    def __init__(self, hand: HandState) -> None:
        config = hand.config
        self.n, self.t = config.num_players, config.num_tiles
        self.ends = [config.tiles.ends(tile) for tile in range(self.t)]
        self.engine_value = hand.engine_value
        self.hands = [set(hand.hand(seat)) for seat in range(self.n)]
        self.lines: list[list[int]] = [[] for _ in range(self.n + 1)]
        self.open_values = [self.engine_value] * (self.n + 1)
        self.markers = [False] * self.n
        self.passed_last = [False] * self.n
        self.to_move = hand.current_player
        self.went_out: int | None = None
        self.over = False
        self.cover_rule = config.cover_doubles
        self.pile = list(hand.boneyard)  # face down, the next to draw first
        self.drew = False  # the player to move drew this turn
        self.pending: int | None = None  # the line whose double must be covered

    @property
    def dummy_open(self) -> bool:
        return all(self.lines[seat] for seat in range(self.n))

    def fits(self, tile: int, line: int) -> bool:
        return self.open_values[line] in self.ends[tile]

    def legal(self) -> set[int]:
        """Rule 5-6 for the player to move, in its egocentric encoding, with the table rules:
        only the double to cover while one waits; the draw when no tile can be played."""
        seat, n = self.to_move, self.n
        actions = set()
        for rel in range(n + 1):
            line = n if rel == n else (seat + rel) % n
            if self.pending is not None:
                allowed = line == self.pending
            else:
                allowed = rel == 0 or (self.dummy_open if rel == n else self.markers[line])
            if allowed:
                actions |= {rel * self.t + tile for tile in self.hands[seat] if self.fits(tile, line)}
        if actions:
            return actions
        return {(n + 1) * self.t + 1} if self.pile and not self.drew else {(n + 1) * self.t}

    def any_tile_playable_ever(self) -> bool:
        """Rule 9: something can still be drawn, or some held tile fits the double to cover (while
        one waits) or some seat line (markers as up) or the open dummy."""
        if self.pile:
            return True
        if self.pending is not None:
            return any(self.fits(tile, self.pending) for held in self.hands for tile in held)
        lines = range(self.n + 1) if self.dummy_open else range(self.n)
        return any(self.fits(tile, line) for held in self.hands for tile in held for line in lines)

    def apply(self, action: int) -> None:
        seat, n = self.to_move, self.n
        if action == (n + 1) * self.t:
            self.markers[seat] = self.passed_last[seat] = True
            self.drew = False
            self.to_move = (seat + 1) % n
            return
        if action == (n + 1) * self.t + 1:
            self.hands[seat].add(self.pile.pop(0))
            self.drew, self.passed_last[seat] = True, False
            self.over = not self.any_tile_playable_ever()
            return
        rel, tile = divmod(action, self.t)
        line = n if rel == n else (seat + rel) % n
        low, high = self.ends[tile]
        self.open_values[line] = high if self.open_values[line] == low else low
        self.hands[seat].remove(tile)
        self.lines[line].append(tile)
        self.passed_last[seat] = self.drew = False
        if self.cover_rule:
            if low == high:
                self.pending = line
            elif self.pending == line:
                self.pending = None
        if line == seat and low != high:
            self.markers[seat] = False
        if not self.hands[seat]:
            self.over, self.went_out = True, seat
        elif not self.any_tile_playable_ever():
            self.over = True
        elif low != high:
            self.to_move = (seat + 1) % n

    def scores(self) -> list[int]:
        return [sum(sum(self.ends[tile]) for tile in held) for held in self.hands]


def check_same_state(hand: HandState, ref: ReferenceHand) -> None:
    """The engine's views agree with the reference, and every tile is in exactly one place."""
    n = ref.n
    owner, line_of, order = hand.owner.tolist(), hand.line_of.tolist(), hand.play_order.tolist()
    engine = hand.config.tiles.double(ref.engine_value)
    held = [{tile for tile in range(ref.t) if owner[tile] == seat} for seat in range(n)]
    lines = [sorted((tile for tile in range(ref.t) if line_of[tile] == line), key=order.__getitem__)
             for line in range(n + 1)]
    assert held == ref.hands
    assert lines == ref.lines
    assert hand.hand_sizes.tolist() == [len(tiles) for tiles in ref.hands]
    assert hand.open_values.tolist() == ref.open_values
    assert hand.marker_up.astype(bool).tolist() == ref.markers
    assert hand.passed_last.astype(bool).tolist() == ref.passed_last
    assert hand.line_started.astype(bool).tolist() == [bool(ref.lines[s]) for s in range(n)]
    assert hand.dummy_open == ref.dummy_open
    assert hand.is_over == ref.over
    assert hand.went_out == ref.went_out
    assert hand.boneyard == ref.pile and hand.drew == ref.drew and hand.double_to_cover == ref.pending
    if not ref.over:
        assert hand.current_player == ref.to_move
    places = [tile for tiles in ref.hands for tile in tiles] + [tile for line in ref.lines for tile in line] + ref.pile
    assert sorted(places + [engine]) == list(range(ref.t)), \
        "every tile exactly once: a hand, a line, the boneyard, or the engine"
    assert all(owner[tile] < 0 for line in ref.lines for tile in line) and owner[engine] < 0


def check_hand_start(hand: HandState, hand_index: int) -> None:
    """Rules 1-4 at the start of hand `hand_index`, with the table rules: the deal sizes, the
    engine drawn from the boneyard in turn, and who moves first."""
    config = hand.config
    n, t = config.num_players, config.num_tiles
    assert hand.engine_value == engine_value_for_hand(config, hand_index)
    if config.boneyard:
        k = config.deal_size
        drawn = t - n * k - len(hand.boneyard)  # tiles drawn in turn while looking for the engine
        start = hand_index % n
        sizes = [k + sum((start + j) % n == seat for j in range(drawn)) for seat in range(n)]
        holders = [seat for seat in range(n) if hand.hand_sizes[seat] == sizes[seat] - 1]
        assert len(holders) == 1  # exactly one seat gave up the engine
        holder = holders[0]
        if drawn:
            assert holder == (start + drawn - 1) % n  # whoever drew the engine holds it
    else:
        sizes = [t // n + (((seat - hand_index) % n) < t % n) for seat in range(n)]
        holders = [seat for seat in range(n) if hand.hand_sizes[seat] == sizes[seat] - 1]
        assert len(holders) == 1
        holder = holders[0]
    sizes[holder] -= 1  # the engine left its holder's hand
    assert hand.hand_sizes.tolist() == sizes
    assert hand.current_player == (holder if config.first_player == "engine_holder" else (holder + 1) % n)
    assert hand.open_values.tolist() == [hand.engine_value] * (n + 1)


def play_checked_games(players: int, highest: int, num_hands: int, games: int, seed: int, **rules) -> int:
    """Play `games` seeded episodes with masked random play, checking every move; return hands played."""
    env = dominoes_env.raw_env(num_players=players, highest_double=highest, num_hands=num_hands, **rules)
    policy = np.random.default_rng(seed)
    hands_played = 0
    for game in range(games):
        env.reset(seed=seed * 100_003 + game)
        hand_index, hand = 0, env.game.hand
        check_hand_start(hand, 0)
        ref = ReferenceHand(hand)
        while env.agents and not all(env.terminations.values()):
            mover = env.agent_selection
            assert mover == env.possible_agents[ref.to_move]
            mask = env.observe(mover)["action_mask"]
            assert set(np.flatnonzero(mask).tolist()) == ref.legal()
            action = int(policy.choice(np.flatnonzero(mask)))
            env.step(action)
            ref.apply(action)
            check_same_state(hand, ref)
            if ref.over:
                hands_played += 1
                assert env.infos[mover]["hand_scores"] == ref.scores()
                if env.game.is_over:
                    break
                hand_index += 1
                hand = env.game.hand
                check_hand_start(hand, hand_index)
                ref = ReferenceHand(hand)
        assert hands_played == (game + 1) * num_hands
    return hands_played


# (players, highest, hands per episode, episodes in the default run)
QUICK = [
    (2, 6, 1, 500), (3, 9, 1, 200), (4, 9, 1, 250), (6, 12, 1, 60), (8, 18, 1, 15),
    (2, 6, 7, 40), (3, 9, 3, 40), (4, 9, 10, 15), (6, 12, 2, 15), (8, 18, 2, 5),
]


@pytest.mark.parametrize("players, highest, num_hands, games", QUICK)
def test_random_games_follow_the_reference(players, highest, num_hands, games):
    assert play_checked_games(players, highest, num_hands, games, seed=players * 100 + highest) == games * num_hands


@pytest.mark.slow
@pytest.mark.parametrize("players, highest, num_hands, games", QUICK + [(5, 15, 1, 100), (7, 12, 13, 5)])
def test_random_games_follow_the_reference_many(players, highest, num_hands, games):
    games *= 10
    assert play_checked_games(players, highest, num_hands, games, seed=7 + players) == games * num_hands


# (players, highest, hands per episode, episodes) under every combination of the table rules
RULE_TABLES = [(2, 6, 1, 60), (4, 9, 1, 40), (4, 12, 2, 8), (8, 12, 1, 10), (3, 18, 1, 3)]


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
@pytest.mark.parametrize("players, highest, num_hands, games", RULE_TABLES)
def test_random_games_follow_the_reference_under_every_table_rule(players, highest, num_hands, games, rules):
    assert play_checked_games(players, highest, num_hands, games, seed=players * 31 + highest, **rules) == \
        games * num_hands


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
@pytest.mark.parametrize("players, highest, num_hands, games", RULE_TABLES + [(6, 15, 1, 5), (5, 9, 10, 3)])
def test_random_games_follow_the_reference_under_every_table_rule_many(players, highest, num_hands, games, rules):
    games *= 10
    assert play_checked_games(players, highest, num_hands, games, seed=11 + players, **rules) == games * num_hands


# --------------------------------------------------------------------------- determinism


def record_game(players: int, highest: int, num_hands: int, seed: int, scramble: bool = False, **rules) -> tuple:
    """Play one seeded episode; return (actions, digest of every observation, rewards)."""
    env = dominoes_env.env(num_players=players, highest_double=highest, num_hands=num_hands, **rules)
    env.reset(seed=seed)
    policy = np.random.default_rng(seed)
    chaos = np.random.default_rng(seed + 1)
    actions, digest, rewards = [], hashlib.sha256(), []
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        digest.update(agent.encode())
        for other in env.possible_agents:
            seen = env.observe(other) if other in env.agents else None
            if seen is not None:
                digest.update(seen["observation"].tobytes() + seen["action_mask"].tobytes())
        rewards.append((agent, reward))
        if termination or truncation:
            action = None
        else:
            action = int(policy.choice(np.flatnonzero(observation["action_mask"])))
        actions.append(action)
        if scramble:
            random.seed(int(chaos.integers(2**31)))
            np.random.seed(int(chaos.integers(2**31)))
            random.random()
            np.random.random(int(chaos.integers(1, 50)))
        env.step(action)
    return actions, digest.hexdigest(), rewards


@pytest.mark.parametrize("players, highest, num_hands", [(2, 6, 1), (4, 9, 1), (4, 9, 3), (8, 18, 1), (6, 12, 2)])
def test_same_seed_same_game(players, highest, num_hands):
    for seed in range(3):
        first = record_game(players, highest, num_hands, seed)
        assert record_game(players, highest, num_hands, seed) == first
        assert record_game(players, highest, num_hands, seed + 1000)[1] != first[1]


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_same_seed_same_game_under_every_table_rule(rules):
    for seed in range(2):
        first = record_game(4, 9, 2, seed, **rules)
        assert record_game(4, 9, 2, seed, scramble=True, **rules) == first
        assert record_game(4, 9, 2, seed + 1000, **rules)[1] != first[1]


@pytest.mark.parametrize("players, highest, num_hands", [(2, 6, 1), (4, 9, 2), (8, 12, 1)])
def test_scrambling_global_random_state_changes_nothing(players, highest, num_hands):
    for seed in range(3):
        assert record_game(players, highest, num_hands, seed, scramble=True) == record_game(
            players, highest, num_hands, seed)


def test_env_leaves_global_random_state_alone():
    random.seed(11)
    np.random.seed(11)
    python_state, numpy_state = random.getstate(), np.random.get_state()
    record_game(4, 9, 2, seed=5)
    env = dominoes_env.env()
    env.reset()  # no seed: fresh entropy, still not from the global generators
    assert random.getstate() == python_state
    after = np.random.get_state()
    assert after[0] == numpy_state[0] and np.array_equal(after[1], numpy_state[1]) and after[2:] == numpy_state[2:]


def test_reset_with_the_same_seed_replays_and_unseeded_reset_continues():
    env = dominoes_env.raw_env(num_players=3, highest_double=6)
    env.reset(seed=42)
    first = env.game.hand.state.copy()
    env.reset(seed=42)
    assert np.array_equal(env.game.hand.state, first)
    env.reset()  # continues the same generator: a new deal
    assert not np.array_equal(env.game.hand.state, first)
