"""The observation vector: what each agent sees, decoded, equals the engine's state from its seat."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import start_env_from_hand

import dominoes_env
from dominoes_env.core import HandState, make_config, observation_fields
from dominoes_env.core.observation import decode_fields, observation_layout, one_hand_part

FIELD_NAMES = ["hand", "played", "open_values", "markers", "lines_started", "dummy_open", "hand_sizes",
               "passed_last", "whose_turn", "turns_until", "hand_number"]
#: the page that documents the observation's layout, field by field (the README links to it)
LAYOUT_PAGE = Path(__file__).resolve().parents[1] / "docs" / "observation.md"


def expected_view(hand: HandState, seat: int, totals: np.ndarray | None) -> dict:
    """What RULES.md lets `seat` know, in its egocentric frame, read from the engine's views."""
    n = hand.config.num_players
    seats = [(seat + k) % n for k in range(n)]
    lines = seats + [n]
    line_of = hand.line_of.tolist()
    on_line = tuple(tuple(t for t in range(hand.config.num_tiles) if line_of[t] == line) for line in lines)
    current = (hand.current_player - seat) % n
    return {
        "hand": tuple(hand.hand(seat)),
        "played": tuple(sorted(t for tiles in on_line for t in tiles)),
        "played_on_line": on_line,
        "open_values": tuple(int(hand.open_values[line]) for line in lines),
        "markers": tuple(bool(hand.marker_up[s]) for s in seats),
        "lines_started": tuple(bool(hand.line_started[s]) for s in seats),
        "dummy_open": hand.dummy_open,
        "hand_sizes": tuple(int(hand.hand_sizes[s]) for s in seats),
        "passed_last": tuple(bool(hand.passed_last[s]) for s in seats),
        "current_player": current,
        "turns_until": tuple((k - current) % n for k in range(n)),
        "hand_number": hand.engine_value,
        "scores": None if totals is None else tuple(int(totals[s]) for s in seats),
    }


def expected_size(players: int, highest: int, num_hands: int) -> int:
    """D from the issue's list of fields, counted independently of the layout code."""
    t, v, m = (highest + 1) * (highest + 2) // 2, highest + 1, -(-((highest + 1) * (highest + 2) // 2) // players)
    size = t + (players + 1) * t + (players + 1) * v + 3 * players + 1 + players * m + players + players**2 + v
    if num_hands > 1:
        worst_game_score = num_hands * highest * (highest + 1) * (highest + 2) // 2
        size += players * worst_game_score.bit_length()
    return size


def check_vector_structure(vector: np.ndarray, players: int, highest: int, num_hands: int) -> None:
    assert vector.dtype == np.int8 and vector.ndim == 1
    assert vector.shape[0] == expected_size(players, highest, num_hands)
    assert set(np.unique(vector).tolist()) <= {0, 1}
    for field in observation_fields(make_config(players, highest), num_hands):
        block = vector[field.slice].reshape(field.shape)
        if field.encoding == "one-hot":
            assert np.all(block.reshape(-1, field.shape[-1]).sum(axis=1) == 1), field.name
        if field.encoding == "thermometer":
            assert np.all(np.diff(block.astype(int), axis=-1) <= 0), f"{field.name} is not a thermometer"


@pytest.mark.parametrize("players, highest, num_hands, games", [
    (2, 6, 1, 30), (3, 9, 2, 6), (4, 9, 1, 15), (4, 9, 3, 4), (6, 12, 2, 2), (8, 18, 1, 2), (5, 15, 2, 2)])
def test_decoded_observation_equals_the_engine_state(players, highest, num_hands, games):
    env = dominoes_env.raw_env(players, highest, num_hands)
    rng = np.random.default_rng(players * highest)
    checked = 0
    for game in range(games):
        env.reset(seed=game)
        totals = np.zeros(players, dtype=np.int64)
        while not any(env.terminations.values()):
            hand = env.game.hand
            if rng.random() < 0.2:  # random points of the game, every agent's view
                for seat, agent in enumerate(env.possible_agents):
                    vector = env.observe(agent)["observation"]
                    check_vector_structure(vector, players, highest, num_hands)
                    decoded = dominoes_env.decode_observation(vector, players, highest)
                    assert decoded == expected_view(hand, seat, totals if num_hands > 1 else None)
                    checked += 1
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
            if hand.is_over:
                totals += hand.scores()
    assert checked > 10 * players


def test_observation_of_a_literal_position_from_each_seat():
    """Three players, double-6, engine (6|6): seat 0 played (6|2) on its own line, seat 1 passed
    (marker up), seat 2 played (6|4) on seat 1's line; seat 0 to move."""
    config = make_config(3, 6)
    index = config.tiles.index
    hand = HandState.from_position(
        config, [[index(2, 5), index(0, 1)], [index(3, 3)], [index(1, 1), index(0, 0), index(4, 5)]], 6,
        current_player=0, lines={0: [index(6, 2)], 1: [index(6, 4)]}, markers=[1], passed_last=[1])
    env = dominoes_env.env(3, 6)
    start_env_from_hand(env, hand)
    seat1 = dominoes_env.decode_observation(env.observe("player_1"), 3, 6)
    assert seat1["hand"] == (index(3, 3),)
    assert seat1["open_values"] == (4, 6, 2, 6)  # own line, seat 2's, seat 0's, dummy
    assert seat1["played_on_line"] == ((index(4, 6),), (), (index(2, 6),), ())
    assert seat1["markers"] == (True, False, False)
    assert seat1["lines_started"] == (True, False, True)
    assert seat1["passed_last"] == (True, False, False)
    assert seat1["hand_sizes"] == (1, 3, 2)
    assert seat1["current_player"] == 2 and seat1["turns_until"] == (1, 2, 0)
    assert seat1["dummy_open"] is False and seat1["hand_number"] == 6 and seat1["scores"] is None
    seat0 = dominoes_env.decode_observation(env.observe("player_0"), 3, 6)
    assert seat0["hand"] == (index(0, 1), index(2, 5))
    assert seat0["open_values"] == (2, 4, 6, 6)
    assert seat0["current_player"] == 0 and seat0["turns_until"] == (0, 1, 2)
    assert seat0["played"] == (index(2, 6), index(4, 6))


def test_no_other_players_tiles_leak_into_the_observation():
    """Changing only who holds the hidden tiles leaves seat 0's observation unchanged."""
    config = make_config(3, 6)
    index = config.tiles.index
    mine = [index(2, 6), index(0, 1)]  # (2|6) fits: the position is not already blocked
    a = HandState.from_position(config, [mine, [index(3, 3), index(1, 1)], [index(0, 0), index(4, 5)]], 6)
    b = HandState.from_position(config, [mine, [index(0, 0), index(4, 5)], [index(3, 3), index(1, 1)]], 6)
    seen = []
    for hand in (a, b):
        env = dominoes_env.raw_env(3, 6)
        start_env_from_hand(env, hand)
        seen.append(env.observe("player_0")["observation"])
    assert np.array_equal(seen[0], seen[1])


@pytest.mark.parametrize("players, highest, num_hands", [(2, 6, 1), (4, 9, 1), (4, 9, 10), (8, 18, 1), (8, 18, 19)])
def test_declared_size_matches_the_space(players, highest, num_hands):
    env = dominoes_env.env(players, highest, num_hands)
    assert env.observation_space("player_0")["observation"].shape == (expected_size(players, highest, num_hands),)


def parse_layout(table: str) -> list[tuple[int, int, str, str]]:
    rows = []
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        first, last = (int(x) for x in cells[0].split("-"))
        rows.append((first, last, cells[1].strip("`"), cells[2]))
    return rows


@pytest.mark.parametrize("players, highest, num_hands", [(2, 6, 1), (4, 9, 1), (4, 9, 10), (6, 12, 3), (8, 18, 1)])
def test_layout_table_matches_the_fields(players, highest, num_hands):
    rows = parse_layout(dominoes_env.layout_table(players, highest, num_hands))
    names = FIELD_NAMES + (["scores"] if num_hands > 1 else [])
    assert [name for _, _, name, _ in rows] == names
    assert rows[0][0] == 0 and rows[-1][1] == expected_size(players, highest, num_hands) - 1
    for (_, last), (first, _) in zip([(r[0], r[1]) for r in rows], [(r[0], r[1]) for r in rows[1:]]):
        assert first == last + 1, "the table must tile the vector without gaps"
    fields = observation_fields(make_config(players, highest), num_hands)
    for (first, last, name, shape), field in zip(rows, fields):
        assert (first, last, name) == (field.slice.start, field.slice.stop - 1, field.name)
        assert [int(x) for x in shape.split(" x ")] == list(field.shape)


@pytest.mark.parametrize("players, highest, hands", [(3, 6, 1), (4, 9, 1), (5, 12, 3)])
def test_each_documented_block_is_its_named_view(players, highest, hands):
    """Setting a bit inside one documented block changes that field's named view and no other."""
    rows = parse_layout(dominoes_env.layout_table(players, highest, hands))
    layout = observation_layout(make_config(players, highest), hands)
    assert [name for _, _, name, _ in rows] == list(layout.views(np.zeros(layout.size)))
    for first, last, name, _ in rows:
        for index in (first, last):
            vector = np.zeros(layout.size, dtype=np.int8)
            vector[index] = 1
            changed = {field for field, view in layout.views(vector).items() if view.any()}
            assert changed == {name}, name
    batch = np.zeros((7, 2, layout.size), dtype=np.int8)  # views of a batch keep its leading axes
    assert layout.views(batch)["played"].shape == (7, 2, players + 1, layout.config.num_tiles)


def _real_observation(players=4, highest=9, hands=1):
    env = dominoes_env.raw_env(players, highest, hands)
    env.reset(seed=3)
    return env.observe(env.agent_selection)["observation"]


def test_decode_accepts_any_binary_dtype_and_the_env_dict():
    vector = _real_observation()
    decoded = dominoes_env.decode_observation(vector, 4, 9)
    for other in (vector.astype(np.float32), vector.astype(bool), vector.astype(np.int64)):
        assert dominoes_env.decode_observation(other, 4, 9) == decoded
    assert dominoes_env.decode_observation({"observation": vector}, 4, 9) == decoded


def _damaged(vector, field, index, value):
    layout = observation_layout(make_config(4, 9))
    damaged = vector.copy()
    damaged[layout.field(field).offset + index] = value
    return damaged


@pytest.mark.parametrize("make_bad, message", [
    (lambda v: v[:100], r"has 479 entries .*got 100"),
    (lambda v: np.concatenate([v, np.zeros(3, dtype=np.int8)]), r"has 479 entries .*got 482"),
    (lambda v: _real_observation(3, 12), r"has 479 entries"),  # another table size
    (lambda v: _real_observation(4, 9, 10)[:-1], r"score bits"),
    (lambda v: v * 2, r"only 0 and 1"),
    (lambda v: v.astype(np.float32) / 2, r"only 0 and 1"),
    (lambda v: np.array([str(x) for x in v]), r"holds numbers"),
    (lambda v: v.reshape(1, -1), r"1-D"),
    (lambda v: _damaged(v, "open_values", 3, 1 - observation_layout(make_config(4, 9)).views(v)["open_values"][0, 3]),
     r"'open_values' is not one-hot"),
    (lambda v: _damaged(v, "hand_sizes", 13, 1), r"'hand_sizes' is not a thermometer|hand size"),
    (lambda v: _damaged(v, "whose_turn", 2, 1), r"'whose_turn' is not one-hot"),
    (lambda v: _damaged(v, "dummy_open", 0, 1), r"dummy line"),
])
def test_decode_refuses_what_no_position_produces(make_bad, message):
    with pytest.raises(ValueError, match=message):
        dominoes_env.decode_observation(make_bad(_real_observation()), 4, 9)


def test_the_docs_and_docstring_document_the_layout():
    table = dominoes_env.layout_table(4, 9)
    assert table in LAYOUT_PAGE.read_text()
    documented = re.findall(r"^    \| ``(\w+)`` \|", dominoes_env.DominoesEnv.__doc__, flags=re.M)
    assert documented == FIELD_NAMES + ["scores"]
    assert f"D = {expected_size(4, 9, 1)}" in dominoes_env.DominoesEnv.__doc__


def test_decode_refuses_a_vector_of_the_wrong_size():
    with pytest.raises(ValueError, match="479"):
        dominoes_env.decode_observation(np.zeros(100, dtype=np.int8), 4, 9)


def test_a_tile_held_and_played_is_refused():
    vector = _real_observation()
    layout = observation_layout(make_config(4, 9))
    held = int(np.flatnonzero(layout.views(vector)["hand"])[0])
    damaged = vector.copy()
    damaged[layout.field("played").offset + held] = 1
    with pytest.raises(ValueError, match="both held and on the table"):
        dominoes_env.decode_observation(damaged, 4, 9)


@pytest.mark.parametrize("players, highest, rules", [(4, 9, None), (6, 12, "mexican_train"), (2, 6, None)])
def test_the_one_hand_part_of_a_longer_game_is_its_observation_without_the_scores(players, highest, rules):
    """What a one-hand model is given in a game of several hands (one_hand_part) decodes to the
    same position as the whole observation, except the scores."""
    config = make_config(players, highest, rules=rules)
    env = dominoes_env.env(num_players=players, highest_double=highest, num_hands=3, rules=rules)
    env.reset(seed=7)
    rng = np.random.default_rng(7)
    checked = 0
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        whole = decode_fields(config, observation["observation"])
        part = decode_fields(config, one_hand_part(config, observation["observation"]))
        assert whole["scores"] is not None and part["scores"] is None
        assert {**whole, "scores": None} == part
        checked += 1
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert checked > 30
    with pytest.raises(ValueError, match="has .* entries .* got 5"):
        one_hand_part(config, np.zeros(5, np.int8))
