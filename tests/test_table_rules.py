"""The table rules (boneyard, cover doubles, first player): one scenario per rule from a literal
position, and every layer working under every combination.

Positions are written as in tests/test_rules.py: absolute lines (line s is seat s's, line n
the dummy), tiles as (a, b) pairs; a boneyard is listed in draw order (the next tile first).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test
from test_invariants import RULE_IDS, RULE_SETS
from test_rules import action, tiles

import dominoes_env
from baselines import evaluate, make_policy
from baselines.cli import main as dominoes
from baselines.league import read_results, run_league
from baselines.league.results import results_path
from baselines.league.spec import LeagueError, make_spec, parse_policy_arguments
from dominoes_env.core import HandState, IllegalActionError, make_config
from dominoes_env.core.afterstate import afterstate
from dominoes_env.core.config import TABLE_RULE_NAMES, boneyard_deal_size, boneyard_table, table_arguments

BONEYARD = make_config(3, 6, boneyard=True)  # T = 28, pass = 112, draw = 113
COVER = make_config(3, 6, cover_doubles=True)
BOTH = make_config(3, 6, boneyard=True, cover_doubles=True)


def position(config, hands, engine=6, current=0, lines=None, markers=(), boneyard=(), drew=False,
             double_to_cover=None):
    return HandState.from_position(
        config, [tiles(config, *h) for h in hands], engine, current_player=current,
        lines={line: tiles(config, *t) for line, t in (lines or {}).items()}, markers=markers,
        boneyard=tiles(config, *boneyard), drew=drew, double_to_cover=double_to_cover)


def draw(hand: HandState) -> None:
    hand.apply(hand.config.draw_action)


def moves(hand: HandState) -> set:
    """The legal set as {(egocentric line, (low, high))} | {"pass"} | {"draw"}."""
    config = hand.config
    named = {config.pass_action: "pass", config.draw_action: "draw"}
    return {named.get(a) or (a // config.num_tiles, config.tiles.ends(a % config.num_tiles))
            for a in hand.legal_actions().tolist()}


# --------------------------------------------------------------------------- the deal
def test_the_deal_table_scales_the_double_twelve_counts():
    assert boneyard_deal_size(4, 12) == 15 and boneyard_deal_size(6, 12) == 12 and boneyard_deal_size(8, 12) == 10
    assert boneyard_deal_size(4, 9) == 9 and boneyard_deal_size(2, 6) == 5 and boneyard_deal_size(8, 6) == 3
    for players in range(2, 9):
        for highest in range(6, 19):
            config = make_config(players, highest, boneyard=True)
            assert config.deal_size >= 1 and config.boneyard_at_deal >= 1
    assert "| 4 | 5 (boneyard 8) | 9 (boneyard 19) | 15 (boneyard 31) |" in boneyard_table()


def test_a_boneyard_deal_keeps_the_rest_face_down_and_the_engine_is_drawn_in_turn():
    config = make_config(4, 9, boneyard=True)
    searched = 0
    for seed in range(200):
        hand = HandState.deal(config, 0, np.random.default_rng(seed))
        pile = hand.boneyard
        assert len(pile) + int(hand.hand_sizes.sum()) + 1 == config.num_tiles
        drawn = config.boneyard_at_deal - len(pile)
        if drawn:  # the engine lay face down: seats 0, 1, ... drew one tile each until one drew it
            searched += 1
            assert hand.current_player == (drawn - 1) % 4
            assert sorted(hand.hand_sizes.tolist()) != [9, 9, 9, 8]
        else:
            assert sorted(hand.hand_sizes.tolist()) == [8, 9, 9, 9]
    assert 40 < searched < 160  # 19 of the 55 tiles lie face down: the engine is there about a third of the time


@pytest.mark.parametrize("rules", [{}, {"boneyard": True}])
def test_left_of_engine_moves_first(rules):
    for seed in range(20):
        holder = HandState.deal(make_config(4, 9, **rules), 3, np.random.default_rng(seed)).current_player
        left = HandState.deal(make_config(4, 9, first_player="left_of_engine", **rules), 3,
                              np.random.default_rng(seed)).current_player
        assert left == (holder + 1) % 4


# --------------------------------------------------------------------------- boneyard
def test_a_player_who_cannot_play_draws_and_may_play_the_drawn_tile_at_once():
    hand = position(BONEYARD, [[(1, 2)], [(3, 4)], [(0, 0)]], boneyard=[(6, 5), (2, 2)])
    assert moves(hand) == {"draw"}
    draw(hand)
    assert hand.current_player == 0 and hand.drew and hand.boneyard == tiles(BONEYARD, (2, 2))
    assert hand.legal_actions().tolist() == [action(BONEYARD, 0, 5, 6)]  # only the drawn tile: no second draw
    hand.apply(action(BONEYARD, 0, 5, 6))
    assert hand.current_player == 1 and not hand.drew and hand.marker_up[0] == 0


def test_a_drawn_tile_that_does_not_fit_is_followed_by_a_pass_that_raises_the_marker():
    hand = position(BONEYARD, [[(1, 2)], [(3, 4)], [(0, 0)]], boneyard=[(0, 1), (6, 5)])
    draw(hand)
    assert hand.legal_actions().tolist() == [BONEYARD.pass_action]
    with pytest.raises(IllegalActionError, match="not legal"):
        draw(hand)  # one draw per turn
    hand.apply(BONEYARD.pass_action)
    assert hand.marker_up[0] == 1 and hand.current_player == 1 and not hand.drew
    assert hand.hand_sizes[0] == 2 and hand.boneyard == tiles(BONEYARD, (5, 6))


def test_drawing_is_legal_exactly_when_no_tile_can_be_played():
    playable = position(BONEYARD, [[(6, 2)], [(3, 4)], [(0, 0)]], boneyard=[(1, 1)])
    assert BONEYARD.draw_action not in playable.legal_actions()
    assert not playable.is_legal(BONEYARD.draw_action)
    empty = position(BONEYARD, [[(1, 2)], [(3, 4), (5, 6)], [(0, 0)]])
    assert moves(empty) == {"pass"}  # nothing to draw: a pass


def test_with_a_boneyard_the_hand_is_blocked_only_once_it_is_empty():
    hand = position(BONEYARD, [[(1, 2)], [(3, 4)], [(0, 0)]], boneyard=[(1, 3)])
    assert not hand.is_over  # nothing fits, but a tile is still face down
    draw(hand)  # the last tile: it fits nowhere, and nobody can ever play again
    assert hand.is_over and hand.went_out is None
    assert hand.scores().tolist() == [3 + 4, 7, 0]


def test_nobody_observes_the_boneyards_tiles():
    env = dominoes_env.raw_env(3, 6, boneyard=True)
    shuffled = HandState.from_position(BONEYARD, [tiles(BONEYARD, (1, 2)), tiles(BONEYARD, (3, 4)),
                                                  tiles(BONEYARD, (0, 0))], 6, boneyard=tiles(BONEYARD, (1, 3), (5, 5)))
    other = HandState.from_position(BONEYARD, [tiles(BONEYARD, (1, 2)), tiles(BONEYARD, (3, 4)),
                                               tiles(BONEYARD, (0, 0))], 6, boneyard=tiles(BONEYARD, (5, 5), (1, 3)))
    seen = []
    for hand in (shuffled, other):
        env.reset(seed=0, options={"position": hand})
        seen.append([env.observe(agent)["observation"] for agent in env.possible_agents])
    for first, second in zip(*seen):
        np.testing.assert_array_equal(first, second)  # the order face down changes nothing anyone sees
    decoded = dominoes_env.decode_observation(seen[0][0], BONEYARD)
    assert decoded["boneyard_size"] == 2 and not decoded["drew"]


# --------------------------------------------------------------------------- cover doubles
def test_after_a_double_the_same_player_must_cover_it():
    hand = position(COVER, [[(5, 5), (5, 2), (6, 3), (0, 1)], [(1, 4), (6, 4)], [(0, 0)]], lines={0: [(6, 5)]},
                    markers=[1])
    assert moves(hand) == {(0, (5, 5)), (0, (2, 5)), (1, (3, 6))}  # seat 1's marker is up: its line is open
    hand.apply(action(COVER, 0, 5, 5))
    assert hand.double_to_cover == 0 and hand.current_player == 0
    assert moves(hand) == {(0, (2, 5))}  # (3|6) on seat 1's open line must wait
    hand.apply(action(COVER, 0, 2, 5))
    assert hand.double_to_cover is None and hand.current_player == 1
    assert moves(hand) == {(0, (4, 6))}  # covered: any legal move again


def test_a_player_who_cannot_cover_passes_and_the_next_must_cover_even_on_a_closed_line():
    hand = position(COVER, [[(5, 5), (0, 1), (3, 3 - 1)], [(5, 2), (6, 4)], [(0, 0)]], lines={0: [(6, 5)]})
    hand.apply(action(COVER, 0, 5, 5))  # seat 0 doubles on its own line, its marker is down
    assert moves(hand) == {"pass"}
    hand.apply(COVER.pass_action)
    assert hand.current_player == 1 and hand.marker_up[0] == 1
    assert moves(hand) == {(2, (2, 5))}  # seat 0's line is egocentric line 2 for seat 1; (4|6) must wait
    hand.apply(action(COVER, 2, 2, 5))
    assert hand.double_to_cover is None and hand.current_player == 2


def test_with_a_boneyard_a_player_who_cannot_cover_draws_first():
    hand = position(BOTH, [[(5, 5), (0, 1)], [(3, 4)], [(0, 0)]], lines={0: [(6, 5)]}, boneyard=[(5, 3), (1, 1)])
    hand.apply(action(BOTH, 0, 5, 5))
    assert hand.legal_actions().tolist() == [BOTH.draw_action]
    draw(hand)
    assert moves(hand) == {(0, (3, 5))}  # the drawn tile covers the double


def test_an_uncoverable_double_blocks_the_hand_when_nothing_can_be_drawn():
    hand = position(COVER, [[(5, 5), (6, 2)], [(3, 4)], [(0, 0)]], lines={0: [(6, 5)]})
    hand.apply(action(COVER, 0, 5, 5))  # nobody holds a 5 and there is no boneyard
    assert hand.is_over and hand.went_out is None
    assert hand.scores().tolist() == [8, 7, 0]  # the uncovered double changes no score


def test_going_out_with_a_double_ends_the_hand_and_leaves_it_uncovered():
    hand = position(COVER, [[(5, 5)], [(5, 4), (3, 4)], [(0, 0)]], lines={0: [(6, 5)]})
    hand.apply(action(COVER, 0, 5, 5))
    assert hand.is_over and hand.went_out == 0 and hand.scores().tolist() == [0, 16, 0]


def test_the_double_to_cover_is_observed_egocentrically():
    hand = position(COVER, [[(0, 1)], [(5, 2), (2, 2)], [(1, 1)]], lines={0: [(6, 5), (5, 5)]}, current=1,
                    double_to_cover=0)
    env = dominoes_env.raw_env(3, 6, cover_doubles=True)
    env.reset(seed=0, options={"position": hand})
    for seat, agent in enumerate(env.possible_agents):
        decoded = dominoes_env.decode_observation(env.observe(agent)["observation"], COVER)
        assert decoded["double_to_cover"] == (0 - seat) % 3
    with pytest.raises(ValueError, match="does not end in a double"):
        position(COVER, [[(0, 1)], [(5, 2)], [(1, 1)]], lines={0: [(6, 5)]}, double_to_cover=0)
    with pytest.raises(ValueError, match="needs the cover rule"):
        position(BONEYARD, [[(0, 1)], [(5, 2)], [(1, 1)]], lines={0: [(6, 5), (5, 5)]}, double_to_cover=0)
    with pytest.raises(ValueError, match="needs the boneyard rule"):
        position(COVER, [[(0, 1)], [(5, 2)], [(1, 1)]], boneyard=[(3, 3)])


def test_a_boneyard_larger_than_the_deal_leaves_is_refused_by_both_constructors():
    """It would be no position of the game, and its observation has room for the deal's boneyard only."""
    assert BONEYARD.boneyard_at_deal == 13
    rest = [(a, b) for a in range(7) for b in range(a, 7) if (a, b) not in {(0, 1), (1, 1), (2, 5)}]
    with pytest.raises(ValueError, match="a boneyard of 25 tiles; the deal leaves at most 13 face down"):
        position(BONEYARD, [[(0, 1)], [(5, 2)], [(1, 1)]], boneyard=rest)
    with pytest.raises(ValueError, match="a boneyard of 25 tiles; the deal leaves at most 13 face down"):
        HandState.from_deal(BONEYARD, [tiles(BONEYARD, (0, 1)), tiles(BONEYARD, (2, 5)), tiles(BONEYARD, (6, 6))], 6,
                            boneyard=tiles(BONEYARD, *[tile for tile in rest if tile != (6, 6)] + [(1, 1)]))
    largest = position(BONEYARD, [[(0, 1)], [(5, 2)], [(1, 1)]], boneyard=rest[:13])
    env = dominoes_env.raw_env(3, 6, boneyard=True)
    env.reset(options={"position": largest})
    assert dominoes_env.decode_observation(env.observe("player_0")["observation"], BONEYARD)["boneyard_size"] == 13


# --------------------------------------------------------------------------- every layer, every combination
@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_pettingzoo_api_and_seed_tests_under_every_table_rule(rules):
    api_test(dominoes_env.env(4, 9, 2, **rules), num_cycles=300)
    seed_test(lambda: dominoes_env.env(3, 6, 1, **rules), num_cycles=200)


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_after_states_match_the_env_under_every_table_rule(rules):
    env = dominoes_env.raw_env(4, 9, 1, **rules)
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(8):
        env.reset(seed=seed)
        while env.agents and not env.terminations[env.agent_selection]:
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            seen = env.observe(agent)
            chosen = int(rng.choice(np.flatnonzero(seen["action_mask"])))
            hand = env.game.hand
            env.step(chosen)
            if chosen == env.config.draw_action:
                with pytest.raises(ValueError, match="a draw has no after-state"):
                    afterstate(seen["observation"], chosen, env.config)
                continue
            np.testing.assert_array_equal(afterstate(seen["observation"], chosen, env.config),
                                          env.observer.encode(hand.state, seat))
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_every_shipped_policy_plays_every_table_rule(rules):
    names = ["random", "greedy", "stupid", "double", "best_line", "persistent_line"]
    result = evaluate(names, num_hands=48, seed=1, **rules)  # play_game checks every move against the mask
    assert result.num_hands >= 48 and result.config == make_config(4, 9, **rules)


@pytest.mark.parametrize("rules", [{"boneyard": True, "cover_doubles": True}, {"first_player": "left_of_engine"}])
def test_the_single_agent_and_parallel_views_take_the_table_rules(rules):
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import parallel_api_test

    check_env(dominoes_env.SingleAgentEnv(opponents="persistent_line", **rules))
    parallel_api_test(dominoes_env.parallel_env(3, 6, 2, **rules), num_cycles=500)


def test_a_learned_player_without_weights_for_a_table_names_the_tables_it_has_and_the_command():
    with pytest.raises(ValueError, match="no td_lambda checkpoint ships for 4 players, double-9 \\(boneyard\\)"):
        make_policy("td_lambda", make_config(4, 9, boneyard=True))
    for name, learner in (("td_lambda", "td-lambda"), ("linear_sarsa", "sarsa"), ("lookahead", "lookahead")):
        with pytest.raises(ValueError) as refused:
            make_policy(name, make_config(3, 12, rules="mexican_train"))
        message = str(refused.value)
        assert "ships for 3 players, double-12 (mexican_train: boneyard, doubles covered)" in message
        assert "(it ships for: 4 players, double-9" in message
        assert f"`dominoes train {learner} --players 3 --highest 12 --rules mexican_train`" in message


def test_the_mexican_train_rule_set_is_a_preset_of_the_options():
    assert make_config(6, 12, rules="mexican_train") == make_config(6, 12, boneyard=True, cover_doubles=True)
    assert make_config(6, 12, rules="mexican_train").rule_set == "mexican_train"
    assert make_config(4, 9, rules="rule_book") == make_config(4, 9) and make_config(4, 9).rule_set == "rule_book"
    assert make_config(4, 9, boneyard=True).rule_set is None
    assert make_config(4, 9, rules="mexican_train", first_player="left_of_engine").first_player == "left_of_engine"
    with pytest.raises(ValueError, match="rules='mexican_train' sets boneyard=True; leave boneyard out"):
        make_config(4, 12, rules="mexican_train", boneyard=False)
    with pytest.raises(ValueError, match="rules='chicken_foot' is not supported; choose one of"):
        make_config(4, 12, rules="chicken_foot")
    env = dominoes_env.raw_env(6, 12, rules="mexican_train")
    assert env.config == make_config(6, 12, boneyard=True, cover_doubles=True)
    mexican_train = make_config(6, 12, rules="mexican_train")
    assert table_arguments(mexican_train) == " --players 6 --highest 12 --rules mexican_train"
    assert table_arguments(make_config(4, 9, cover_doubles=True), size=False) == " --cover-doubles"


def test_the_commands_take_the_named_rule_set(capsys):
    assert dominoes(["table", "--players", "6", "--highest", "12", "--rules", "mexican_train"]) == 0
    assert "6 players, double-12 (mexican_train: boneyard, doubles covered)" in capsys.readouterr().out
    assert dominoes(["table", "--rules", "rule_book", "--boneyard"]) == 2
    assert "error: rules='rule_book' sets boneyard=False" in capsys.readouterr().err


def test_evaluate_and_the_league_take_the_table_rules(tmp_path, capsys):
    assert dominoes(["evaluate", "greedy", "random:3", "--hands", "8", "--boneyard", "--cover-doubles",
                     "--first-player", "left_of_engine", "--no-progress"]) == 0
    assert "4 players, double-9 (boneyard, doubles covered, left of the engine starts)" in capsys.readouterr().out
    out = tmp_path / "league"
    arguments = ["league", "--policies", "greedy:2", "random:2", "--players", "3", "--highest", "6",
                 "--hands-per-game", "2", "--games", "6", "--out", str(out), "--no-progress"]
    assert dominoes([*arguments, "--boneyard"]) == 0
    header = json.loads(results_path(out).read_text().splitlines()[0])
    assert make_config(3, 6, **header["league"]["rules"]) == make_config(3, 6, boneyard=True)  # every rule recorded
    assert set(header["league"]["rules"]) == set(TABLE_RULE_NAMES)
    assert "--boneyard" in (out / "ratings.md").read_text()  # the command that plays it again
    capsys.readouterr()
    before = results_path(out).read_bytes()
    assert dominoes([*arguments, "--games", "9"]) == 2  # resuming with other rules: a different league
    assert "holds a different league" in capsys.readouterr().err
    assert results_path(out).read_bytes() == before


def test_a_league_is_one_rule_set():
    specs = parse_policy_arguments(["greedy:2", "random:2"])
    book = make_spec(specs, 3, 6, 1, seed=0)
    boneyard = make_spec(specs, 3, 6, 1, seed=0, boneyard=True)
    assert book != boneyard and boneyard.game.boneyard and "(boneyard)" in boneyard.describe()
    with pytest.raises(LeagueError, match="first_player='nobody'"):
        make_spec(specs, 3, 6, 1, seed=0, first_player="nobody")


def test_league_games_under_table_rules_are_recorded_and_read_back(tmp_path):
    spec = make_spec(parse_policy_arguments(["persistent_line:2", "random:2"]), 3, 6, 2, seed=4, boneyard=True,
                     cover_doubles=True)
    run_league(spec, 6, tmp_path, workers=1)
    contents = read_results(results_path(tmp_path))
    assert contents.spec == spec and len(contents.records) == 6


def test_every_table_with_shipped_weights_seats_all_the_learned_players_by_default():
    from baselines.advice import default_opponent
    from baselines.league.spec import default_policies
    from baselines.learning.files import shipped_tables

    tables = shipped_tables("td_lambda", "safetensors")
    assert make_config(4, 9) in tables and make_config(4, 12, rules="mexican_train") in tables
    for config in tables:
        names = [spec.name for spec, _ in default_policies(config)]
        assert {"td_lambda", "linear_sarsa", "lookahead", "champion"} <= set(names), config
        assert default_opponent(config).name == "champion"  # with its own network or td_lambda's
        for name in ("linear_sarsa", "lookahead"):
            assert config in shipped_tables(name, "json")
