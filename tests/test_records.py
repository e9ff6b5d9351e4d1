"""Game records: recorded from the env, written and read back, replayed through the env to the
same scores, and every kind of damage refused in one line that names the file and the move."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import dominoes_env
from baselines import make_policy
from baselines.harness.play import play_game
from dominoes_env.core import HandState, make_config
from dominoes_env.records import (
    GameRecorder,
    RecordError,
    RecordGames,
    parse_record,
    read_record,
    replay,
    write_record,
)

RULE_SETS = [{}, {"boneyard": True}, {"cover_doubles": True, "first_player": "left_of_engine"},
             {"boneyard": True, "cover_doubles": True}]


def recorded_game(players=3, highest=6, hands=2, seed=0, **rules):
    """A game of random players recorded through the wrapper."""
    env = RecordGames(dominoes_env.raw_env(players, highest, hands, **rules), players=[f"p{k}" for k in range(players)])
    config = env.unwrapped.config
    result = play_game(env, [make_policy("random", config, seed=seed + k) for k in range(players)], seed=seed)
    return env.recorded, result


def saved(tmp_path, data, name="game.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
@pytest.mark.parametrize("players, highest", [(2, 6), (4, 9), (8, 12)])
def test_a_record_reads_back_equal_and_holds_the_game(tmp_path, players, highest, rules):
    for seed in range(3):
        recorded, result = recorded_game(players, highest, 3, seed, **rules)
        assert recorded.finished and recorded.seed == seed
        assert recorded.game_scores == tuple(result.totals.tolist())
        assert [hand.scores for hand in recorded.hands] == [tuple(h) for h in result.hand_scores.tolist()]
        assert read_record(write_record(recorded, tmp_path / "game.json")) == recorded


def test_a_record_in_the_notation_before_0_3_0_still_reads():
    """Records written before the one notation of a move ("own line", "dummy line") read as they did."""
    from dominoes_env.core import actions

    recorded, _ = recorded_game(3, 6, 2, seed=1)
    data = recorded.to_json()
    config = recorded.config
    changed = 0
    for hand in data["hands"]:
        for move in hand["moves"]:
            earlier = actions.earlier_description(config, move["action"], move["seat"])
            changed += earlier != move["move"]
            move["move"] = earlier
    assert changed and parse_record(data) == recorded


def test_deals_with_draws_for_the_engine_are_recorded_and_checked():
    config = make_config(4, 9, boneyard=True)
    drawn = 0
    for seed in range(60):
        recorded, _ = recorded_game(4, 9, 1, seed, boneyard=True)
        sizes = [len(tiles) for tiles in recorded.hands[0].deal]
        drawn += sum(sizes) > 4 * config.deal_size  # the engine lay face down: seats drew for it
        assert parse_record(recorded.to_json()) == recorded
    assert drawn > 0


@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
def test_a_record_replays_to_the_same_scores_through_the_env(rules):
    recorded, _ = recorded_game(4, 9, 3, 5, **rules)
    config = recorded.config
    env = dominoes_env.env(4, 9, recorded.num_hands, **config.rules())
    totals = np.zeros(4, dtype=np.int64)
    for number, hand in enumerate(recorded.hands):
        start = HandState.from_deal(config, [list(tiles) for tiles in hand.deal], 9 - hand.hand_index, hand.boneyard)
        env.reset(seed=0, options={"position": start, "hand_index": hand.hand_index, "hands_played": number,
                                   "game_scores": totals.tolist()})
        for move in hand.moves:
            assert env.agent_selection == f"player_{move.seat}"
            env.step(move.action)
        info = env.infos["player_0"]
        assert info["hand_scores"] == list(hand.scores) and info["went_out"] == hand.went_out
        totals = np.array(info["game_scores"])
    assert tuple(totals.tolist()) == recorded.game_scores
    assert all(env.terminations.values())  # the last hand ended the episode


def test_the_same_seed_deals_what_the_record_holds():
    recorded, _ = recorded_game(4, 9, 2, 11)
    env = dominoes_env.raw_env(4, 9, 2)
    env.reset(seed=11)
    assert env.game.hand.starting_deal() == ([list(t) for t in recorded.hands[0].deal], [])


def test_replay_gives_each_deal_and_the_position_after_every_move():
    recorded, _ = recorded_game(3, 6, 2, 3)
    positions = list(replay(recorded))
    assert len(positions) == recorded.num_moves + len(recorded.hands)
    assert [p.move_number for p in positions[:3]] == [0, 1, 2] and positions[0].move is None
    last = positions[-1]
    assert last.hand.is_over and tuple(last.hand.scores()) == recorded.hands[-1].scores
    assert last.game_scores == recorded.hands[0].scores  # the totals before the last hand


def test_the_wrapper_writes_each_episode_and_skips_refused_actions(tmp_path):
    env = RecordGames(dominoes_env.env(3, 6, illegal_action="penalize"), tmp_path / "records")
    rng = np.random.default_rng(0)
    for seed in (1, 2):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            action = None if termination or truncation else int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(action)
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == ["episode_000000.json", "episode_000001.json"]
    assert read_record(tmp_path / "records" / "episode_000001.json").seed == 2
    env.reset(seed=3)
    mover = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(mover)["action_mask"] == 0)[0])
    env.step(illegal)  # penalized: the game ends, and the refused action is no move
    assert env.recorded.num_moves == 0 and not env.recorded.finished
    assert read_record(tmp_path / "records" / "episode_000002.json").num_moves == 0


def test_a_game_from_a_position_cannot_be_recorded():
    config = make_config(3, 6)
    tile = config.tiles.index
    position = HandState.from_position(config, [[tile(6, 2)], [tile(6, 4)], [tile(0, 3)]], 6)
    env = RecordGames(dominoes_env.raw_env(3, 6))
    with pytest.raises(ValueError, match="a game record starts from a deal"):
        env.reset(seed=0, options={"position": position})
    game = dominoes_env.raw_env(3, 6, 3)
    game.reset(seed=0, options={"position": HandState.deal(config, 1, np.random.default_rng(0)), "hand_index": 1,
                                "hands_played": 1, "game_scores": [1, 2, 3]})
    with pytest.raises(ValueError, match="resumed in its middle"):
        GameRecorder(game.game)


def test_a_game_left_in_the_middle_is_a_valid_record(tmp_path):
    env = RecordGames(dominoes_env.raw_env(3, 6, 2))
    env.reset(seed=4)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    back = read_record(write_record(env.recorded, tmp_path / "left.json"))
    assert not back.finished and back.num_moves == 5 and back.hands[0].scores is None
    assert back.game_scores == (0, 0, 0)


# --------------------------------------------------------------------------- damaged records
def damaged(change):
    """The JSON of a finished 3-player double-6 game, changed by `change(data)`."""
    recorded, _ = recorded_game(3, 6, 2, 7)
    data = recorded.to_json()
    change(data)
    return data


def swap_a_tile(data):
    """Seat 0's first tile also appears in seat 1's hand (in place of seat 1's first)."""
    data["hands"][0]["deal"][1][0] = data["hands"][0]["deal"][0][0]


def illegal_move(data):
    move = data["hands"][0]["moves"][2]
    move["action"] = 4 * 28  # a pass (lines x tiles), while a tile can be played
    move["move"] = "pass"


DAMAGE = [
    (swap_a_tile, r"hand 1: deal: tile \(\d\|\d\) is dealt twice \(seat 0 and seat 1\)$"),
    (illegal_move, r"hand 1, move 3 \(seat \d, action 112\): action 112 \(pass\) is not legal for seat \d; legal "),
    (lambda d: d["hands"][0]["moves"][0].update(seat=(d["hands"][0]["moves"][0]["seat"] + 1) % 3),
     r"hand 1, move 1 \(seat \d, action \d+\): it is seat \d's turn, not seat \d's$"),
    (lambda d: d["hands"][0]["moves"][1].update(action=10**9),
     r"hand 1, move 2 \(seat \d, action 1000000000\): action 1000000000 is out of range 0\.\.112"),
    (lambda d: d["hands"][0]["moves"][0].update(move="(6|6) on own line"),
     r"hand 1, move 1 \(.*\): the move says '\(6\|6\) on own line' but action \d+ is [\"'].*[\"']$"),
    (lambda d: d["hands"][1]["scores"].__setitem__(0, d["hands"][1]["scores"][0] + 1),
     r"hand 2: scores \[.*\] do not match the moves, which leave \[.*\]$"),
    (lambda d: d["hands"][0].update(went_out=None if d["hands"][0]["went_out"] is not None else 0),
     r"hand 1: went_out .* does not match the moves"),
    (lambda d: d["game_scores"].__setitem__(1, 999),
     r"game_scores \[.*999.*\] are not the sums of the hands' scores"),
    (lambda d: d["hands"][0]["moves"].pop(), r"hand 1: scores are given but the moves stop before the hand is over"),
    (lambda d: d["hands"][0]["moves"].append(d["hands"][0]["moves"][-1]),
     r"hand 1, move \d+ \(seat \d, action \d+\): the hand is already over$"),
    (lambda d: d["hands"][0]["deal"][0].append(d["hands"][0]["deal"][1].pop()),
     r"hand 1: deal: the seats hold \[\d+, \d+, \d+\] tiles; the deal rule gives \[\d+, \d+, \d+\]"),
    (lambda d: d["hands"][1].update(hand_index=5, engine=1), r"hand 2: hand_index 5 does not follow 0$"),
    (lambda d: d["hands"][0].update(engine=3), r"hand 1: engine 3: hand_index 0 plays the engine \(6\|6\)$"),
    (lambda d: d["hands"][0]["deal"][0].__setitem__(0, [2, 9]), r"hand 1: a tile's end must be an integer from 0 to 6"),
    (lambda d: d["game"].update(num_players=9), r"num_players must be an integer from 2 to 8"),
    (lambda d: d["game"].update(num_hands=1), r"hands must hold 1 to 1 entries, got 2$"),
    (lambda d: d.update(version=7), r"format version 7; this program reads versions \[1\]$"),
    (lambda d: d.update(format="something"), r"not a game record \(format 'something'"),
    (lambda d: d.pop("hands"), r"missing field 'hands'$"),
    (lambda d: d.update(players=["a"]), r"players must name the 3 seats"),
    (lambda d: d["hands"][0].update(scores=None, went_out=None),
     r"hand 1: the hand is over but its scores are missing"),
    (lambda d: d["hands"][0]["moves"][0].update(seat=True), r"hand 1, move 1 \(seat True, .*seat must be an integer"),
]


@pytest.mark.parametrize("change, message", DAMAGE, ids=[str(k) for k in range(len(DAMAGE))])
def test_a_damaged_record_is_one_clear_line_naming_the_file_and_the_place(tmp_path, change, message):
    path = saved(tmp_path, damaged(change))
    with pytest.raises(RecordError) as refused:
        read_record(path)
    text = str(refused.value)
    assert text.startswith(f"record {path}: ") and "\n" not in text
    assert re.search(message, text), text


@pytest.mark.parametrize("content, message", [
    ("{not json", r"not JSON: "), ("[1, 2]", r"a game record is a JSON object"), ("[" * 100_000, r"not JSON: "),
    ("", r"not JSON: "),
])
def test_a_file_that_is_no_record_is_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RecordError, match=f"^record {re.escape(str(path))}: {message}"):
        read_record(path)
    with pytest.raises(RecordError, match="cannot be read"):
        read_record(tmp_path / "missing.json")
