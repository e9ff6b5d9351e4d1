"""The hidden-information kit: sound facts (the truth always agrees), samples that agree with them and
with what the player sees, uniform over the agreeing deals, and positions a search can play forward."""

from __future__ import annotations

import itertools
import re
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare
from test_invariants import RULE_IDS, RULE_SETS

import dominoes_env
from baselines.policies.registry import make_policy
from dominoes_env.core import hidden, rules
from dominoes_env.core.hidden import (
    BONEYARD,
    HandKnowledge,
    KnowledgeTracker,
    sample_deals,
    sampled_positions,
    sampled_states,
)


def true_places(env, seat: int, knowledge: HandKnowledge) -> np.ndarray:
    """Where each hidden tile really is, in the player's frame (seat k = the k-th after it; -1 boneyard)."""
    config = env.game.config
    owner = env.game.hand.state[rules.HEADER_SIZE:rules.HEADER_SIZE + config.num_tiles]
    return np.array([BONEYARD if owner[tile] == rules.IN_BONEYARD else (owner[tile] - seat) % config.num_players
                     for tile in knowledge.hidden])


def facts_true_of_the_deal(env, seat: int, forbidden: np.ndarray) -> int:
    """Brute force against the env's true hands: every fact ``forbidden[k, v]`` (in `seat`'s frame) holds
    now, the k-th seat after `seat` holding no tile with an end v; row 0 claims nothing. Returns the
    number of facts checked."""
    config = env.game.config
    n, low, high = config.num_players, config.tiles.low, config.tiles.high
    assert forbidden.shape == (n, config.highest_double + 1) and forbidden.dtype == np.bool_
    assert not forbidden[0].any()
    for k in range(1, n):
        for tile in env.game.hand.hand((seat + k) % n):
            assert not (forbidden[k, low[tile]] or forbidden[k, high[tile]]), f"seat {seat}'s fact on seat +{k}"
    return int(forbidden.sum())


def decisions(num_players, highest, games, policy="greedy", **table_rules):
    """(env, seat, observation, knowledge) at every decision of `games` seeded games, every seat tracked."""
    env = dominoes_env.raw_env(num_players, highest, num_hands=2, **table_rules)
    for game in range(games):
        env.reset(seed=game)
        config = env.game.config
        trackers = [KnowledgeTracker(config) for _ in range(num_players)]
        players = [make_policy(policy, config, seed=game * 10 + seat) for seat in range(num_players)]
        hand_index = env.game.hand_index
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            if env.game.hand_index != hand_index:  # a policy is reset at each hand, and so is its tracker
                hand_index = env.game.hand_index
                for tracker in trackers:
                    tracker.reset()
            seat = env.possible_agents.index(agent)
            knowledge = trackers[seat].observe(observation["observation"])
            yield env, seat, observation, knowledge
            env.step(players[seat].act(observation["observation"], observation["action_mask"]))


MEXICAN_TRAIN = {"rules": "mexican_train"}
TABLES = [(4, 9, {}), (3, 6, {}), (2, 6, {}), (6, 12, {}), (8, 12, {}), (2, 15, {}), (8, 18, {}),
          *[(4, 9, rules) for rules in RULE_SETS if rules],
          *[(n, 12, MEXICAN_TRAIN) for n in (2, 4, 6, 8)], (3, 18, MEXICAN_TRAIN), (8, 18, MEXICAN_TRAIN)]
TABLE_IDS = ["4p-d9", "3p-d6", "2p-d6", "6p-d12", "8p-d12", "2p-d15", "8p-d18",
             *[f"4p-d9-{i}" for r, i in zip(RULE_SETS, RULE_IDS) if r],
             *[f"{n}p-d12-mexican_train" for n in (2, 4, 6, 8)], "3p-d18-mexican_train", "8p-d18-mexican_train"]


@pytest.mark.parametrize("num_players, highest, table_rules", TABLES, ids=TABLE_IDS)
def test_the_truth_always_agrees_and_samples_agree_with_what_the_player_sees(num_players, highest, table_rules):
    check_soundness(num_players, highest, table_rules, games=4 if num_players * highest < 100 else 1)


@pytest.mark.slow
@pytest.mark.parametrize("num_players, highest, table_rules", TABLES, ids=TABLE_IDS)
def test_soundness_over_thousands_of_positions(num_players, highest, table_rules):
    """As many games as it takes to check 1,500 positions (a few at 8 players, dozens at 2)."""
    assert check_soundness(num_players, highest, table_rules, games=200, enough=1500) >= 1500


def check_soundness(num_players, highest, table_rules, games, enough=None) -> int:
    """Checks every decision of `games` games, or stops once `enough` decisions were checked."""
    rng = np.random.default_rng(0)
    counted = facts = 0
    for env, seat, observation, knowledge in decisions(num_players, highest, games, **table_rules):
        if enough is not None and counted >= enough:
            break
        counted += 1
        facts += int(knowledge.forbidden.sum())
        assert knowledge.agrees(true_places(env, seat, knowledge))  # every fact the sampler uses is true
        assert not knowledge.forbidden[0].any()
        n = num_players
        assert knowledge.hidden.shape[0] == knowledge.hand_sizes[1:].sum() + knowledge.boneyard
        deals = sample_deals(knowledge, rng, 3)
        kept = facts_kept(knowledge, hidden.sampling_plan(knowledge))  # all but rarely; see sampling_plan
        for deal in deals:
            assert kept.agrees(deal)
        for deal, state in zip(deals, sampled_states(knowledge, deals, rng)):
            position = dominoes_env.HandState(knowledge.config, state)
            assert position.current_player == 0
            assert position.hand(0) == np.flatnonzero(knowledge.observation[:knowledge.config.num_tiles]).tolist()
            for k in range(1, n):  # the sample's hands hold hidden tiles only, of the observed sizes
                assert sorted(position.hand(k)) == knowledge.hidden[deal == k].tolist()
                assert len(position.hand(k)) == knowledge.hand_sizes[k]
            assert sorted(position.boneyard) == knowledge.hidden[deal == BONEYARD].tolist()
            # the sampled position is the player's own: the same observation and legal moves
            np.testing.assert_array_equal(dominoes_env.core.Observer(knowledge.config).encode(position.state, 0),
                                          knowledge.observation)
            np.testing.assert_array_equal(position.legal_mask(), observation["action_mask"])
    assert counted > 50 and facts > 0
    return counted


@pytest.mark.parametrize("num_players, highest, table_rules", TABLES, ids=TABLE_IDS)
def test_every_fact_the_tracker_claims_is_true_of_the_real_hands(num_players, highest, table_rules):
    """At every decision of greedy and of random play, each seat's facts hold of the true deal (the env's
    hands, read directly, not through the sampler's ``agrees``), at every table and rule set; and passes
    prove something."""
    claimed = 0
    for policy in ("greedy", "random"):
        for env, seat, _, knowledge in decisions(num_players, highest, 3 if num_players * highest < 100 else 1,
                                                 policy=policy, **table_rules):
            claimed += facts_true_of_the_deal(env, seat, knowledge.forbidden)
    assert claimed > 0


@pytest.mark.parametrize("num_players, highest, table_rules",
                         [(4, 9, {}), (4, 9, {"boneyard": True, "cover_doubles": True}), (6, 12, MEXICAN_TRAIN)],
                         ids=["4p-d9", "4p-d9-boneyard-cover", "6p-d12-mexican_train"])
def test_the_tracker_sees_a_new_hand_without_reset_and_reset_forgets_at_once(num_players, highest, table_rules):
    """Policies reset their tracker at each hand, but its reading must not depend on it: trackers never
    reset, through games of two hands, know at every decision what those reset at each hand know.
    ``forbidden`` (which players read) is the facts so far, an (n, values) bool array in the player's
    frame, apart from the knowledge's copy; after reset() it is all False at once."""
    never: list[KnowledgeTracker] = []
    probe, forgot = None, False  # a third tracker of seat 0, reset once it knows something
    for env, seat, observation, knowledge in decisions(num_players, highest, 3, policy="random", **table_rules):
        never = never or [KnowledgeTracker(env.game.config) for _ in range(num_players)]
        assert np.array_equal(never[seat].observe(observation["observation"]).forbidden, knowledge.forbidden)
        assert np.array_equal(never[seat].forbidden, knowledge.forbidden)
        if seat == 0 and not forgot:
            probe = probe or KnowledgeTracker(env.game.config)
            probed = probe.observe(observation["observation"])
            if probe.forbidden.any():
                probed.forbidden[:] = False  # the knowledge is a copy
                assert np.array_equal(probe.forbidden, knowledge.forbidden)
                probe.reset()
                assert probe.forbidden.shape == (num_players, highest + 1) and probe.forbidden.dtype == np.bool_
                forgot = not probe.forbidden.any()
    assert forgot


def test_positions_play_forward_with_every_rule():
    rng = np.random.default_rng(1)
    for *_, knowledge in decisions(4, 9, 3, boneyard=True, cover_doubles=True):
        for position in sampled_positions(knowledge, rng, 2):
            while not position.is_over:
                legal = position.legal_actions()
                position.apply(int(legal[rng.integers(legal.shape[0])]))
            assert position.scores().shape == (4,)


def consistent_deals(knowledge: HandKnowledge) -> list[tuple[int, ...]]:
    """Every deal of the hidden tiles that agrees with the facts, by brute force."""
    n = knowledge.config.num_players
    places = [*range(1, n), BONEYARD]
    sizes = [*knowledge.hand_sizes[1:].tolist(), knowledge.boneyard]
    deals = []
    tiles = range(knowledge.hidden.shape[0])

    def fill(place_index, left, deal):
        if place_index == len(places) - 1:
            for tile in left:
                deal[tile] = places[-1]
            if knowledge.agrees(np.array(deal)):
                deals.append(tuple(deal))
            return
        for chosen in itertools.combinations(left, sizes[place_index]):
            for tile in chosen:
                deal[tile] = places[place_index]
            fill(place_index + 1, [t for t in left if t not in chosen], deal)

    fill(0, list(tiles), [0] * knowledge.hidden.shape[0])
    return deals


@pytest.mark.parametrize("num_players, table_rules", [(3, {}), (2, {"boneyard": True}), (3, {"boneyard": True})])
def test_samples_are_uniform_over_the_agreeing_deals(num_players, table_rules):
    """On double-six tables, at positions where a pass has ruled deals out and the agreeing deals
    can be listed, the samples' frequencies match a uniform draw (chi-square at a fixed seed)."""
    rng = np.random.default_rng(7)
    tested = 0
    for *_, knowledge in decisions(num_players, 6, 40, policy="random", **table_rules):
        if not knowledge.forbidden.any() or knowledge.hidden.shape[0] > 12:
            continue
        deals = consistent_deals(knowledge)
        everything = len(list(itertools.combinations(range(knowledge.hidden.shape[0]),
                                                     int(knowledge.hand_sizes[1]))))
        if not 4 <= len(deals) <= 300 or len(deals) == everything:
            continue
        draws = 40 * len(deals)
        counts = Counter(map(tuple, sample_deals(knowledge, rng, draws).tolist()))
        assert set(counts) <= set(deals)  # never a deal that breaks a fact
        observed = [counts[deal] for deal in deals]
        assert chisquare(observed).pvalue > 1e-3
        tested += 1
        if tested == 4:
            break
    assert tested >= 2


def test_a_tracker_that_misses_observations_is_told_so_when_nothing_agrees():
    tracker = KnowledgeTracker(dominoes_env.make_config(2, 6))
    env = dominoes_env.raw_env(2, 6)
    env.reset(seed=3)
    knowledge = tracker.observe(env.observe(env.agent_selection)["observation"])
    impossible = HandKnowledge(knowledge.config, knowledge.observation, knowledge.hidden, knowledge.hand_sizes,
                               knowledge.boneyard, np.ones_like(knowledge.forbidden))
    with pytest.raises(RuntimeError, match="no deal agrees with the facts"):
        sample_deals(impossible, np.random.default_rng(0), 1)


def test_a_seat_that_passed_after_another_passer_lacks_that_passers_line():
    """Seats move in order between two of the player's decisions: when seat j passed and seat k > j
    passed later in that interval, with j's line unchanged, j's marker was up at k's turn, so k holds
    no tile matching j's line. The tracker knows it (on the rule book's tables, where every such
    pass counts)."""
    checked = 0
    for num_players, highest in ((4, 9), (6, 12)):
        previous: dict[int, np.ndarray] = {}
        for _, seat, _, knowledge in decisions(num_players, highest, 12, policy="random"):
            views = dominoes_env.core.observation.observation_layout(knowledge.config).views(knowledge.observation)
            before, held_before = previous.get(seat, (None, None))
            previous[seat] = (views["played"].copy(), views["hand"].astype(bool))
            if before is None or (before.astype(bool) & ~views["played"].astype(bool)).any():
                continue  # a seat's first decision of a hand
            moved = held_before & ~views["hand"].astype(bool)
            if knowledge.config.tiles.is_double[moved].any():
                continue  # its move was a double: it moves again, and no other seat moved in between
            passed = views["passed_last"].astype(bool)
            unchanged = ~(views["played"].astype(bool) & ~before.astype(bool)).any(axis=1)
            open_values = views["open_values"].argmax(axis=1)
            for j in range(1, num_players):
                for k in range(j + 1, num_players):
                    if passed[j] and passed[k] and unchanged[j] and views["hand_sizes"][0].sum() > 0:
                        assert knowledge.forbidden[k, open_values[j]], (j, k)
                        checked += 1
    assert checked > 20


def test_samples_are_uniform_with_several_seats_and_the_boneyard_constrained():
    """The counting sampler on facts that split the places into three groups (two seats with
    different forbidden values, the rest free): the samples' frequencies over every agreeing deal
    match a uniform draw (chi-square at a fixed seed)."""
    rng = np.random.default_rng(3)
    tested = 0
    for *_, knowledge in decisions(4, 6, 30, policy="random", boneyard=True):
        if not 6 <= knowledge.hidden.shape[0] <= 9 or knowledge.hand_sizes[1:].min() == 0:
            continue
        forbidden = knowledge.forbidden.copy()
        low = knowledge.config.tiles.low[knowledge.hidden]
        forbidden[1, low[0]] = True
        forbidden[2, low[-1]] = True
        constrained = HandKnowledge(knowledge.config, knowledge.observation, knowledge.hidden,
                                    knowledge.hand_sizes, knowledge.boneyard, forbidden)
        deals = consistent_deals(constrained)
        if not 4 <= len(deals) <= 400:
            continue
        counts = Counter(map(tuple, sample_deals(constrained, rng, 40 * len(deals)).tolist()))
        assert set(counts) <= set(deals)
        assert chisquare([counts[deal] for deal in deals]).pvalue > 1e-3
        tested += 1
        if tested == 3:
            break
    assert tested >= 2


def facts_kept(knowledge: HandKnowledge, plan: hidden.SamplingPlan) -> HandKnowledge:
    """`knowledge` without the facts `plan` set aside: what every sample must agree with."""
    kept = knowledge.forbidden.copy()
    kept[list(plan.dropped)] = False
    return HandKnowledge(knowledge.config, knowledge.observation, knowledge.hidden, knowledge.hand_sizes,
                         knowledge.boneyard, kept)


def test_a_counting_table_over_its_bound_sets_facts_aside_and_stays_sound(monkeypatch):
    """Above MAX_COUNTING_ENTRIES the facts of the constrained seat with the most tiles are set
    aside: the plan says which, the samples agree with the facts kept, and the call never fails."""
    monkeypatch.setattr(hidden, "MAX_COUNTING_ENTRIES", 40)
    rng = np.random.default_rng(0)
    set_aside = 0
    for env, seat, _, knowledge in decisions(6, 12, 3, policy="random"):
        plan = hidden.sampling_plan(knowledge)
        assert plan.table_entries <= 40  # the bound holds, whatever had to be set aside
        weaker = facts_kept(knowledge, plan)
        for deal in sample_deals(knowledge, rng, 4):
            assert weaker.agrees(deal)
        assert weaker.agrees(true_places(env, seat, knowledge))
        set_aside += bool(plan.dropped)
    assert set_aside > 0


@pytest.mark.slow
@pytest.mark.parametrize("table_rules", [{}, MEXICAN_TRAIN], ids=["rule-book", "mexican_train"])
def test_no_sampling_call_fails_on_the_largest_table(table_rules):
    """8 players, double-18: more than 10,000 calls of 16 samples, each agreeing with the facts."""
    rng = np.random.default_rng(0)
    calls = 0
    for *_, knowledge in decisions(8, 18, 40, **table_rules):
        kept = facts_kept(knowledge, hidden.sampling_plan(knowledge))
        for deal in sample_deals(knowledge, rng, 16):
            assert kept.agrees(deal)
        calls += 1
        if calls >= 10_500:
            break
    assert calls >= 10_000


def test_samples_without_facts_are_a_uniform_shuffle():
    """With no fact but the sizes the sampler deals a plain shuffle: every deal of the hidden tiles
    into the seats and the boneyard is equally likely (chi-square at a fixed seed)."""
    rng = np.random.default_rng(11)
    for *_, knowledge in decisions(3, 6, 20, policy="random", boneyard=True):
        if 6 <= knowledge.hidden.shape[0] <= 8 and knowledge.hand_sizes[1:].min() > 0 and knowledge.boneyard > 0:
            break
    free = HandKnowledge(knowledge.config, knowledge.observation, knowledge.hidden, knowledge.hand_sizes,
                         knowledge.boneyard, np.zeros_like(knowledge.forbidden))
    deals = consistent_deals(free)
    counts = Counter(map(tuple, sample_deals(free, rng, 30 * len(deals)).tolist()))
    assert set(counts) <= set(deals) and len(deals) >= 20
    assert chisquare([counts[deal] for deal in deals]).pvalue > 1e-3


def _knowledge_at_the_deal(num_players: int = 4, highest: int = 9, **table) -> HandKnowledge:
    tracker = KnowledgeTracker(dominoes_env.make_config(num_players, highest, **table))
    env = dominoes_env.raw_env(tracker.config)
    env.reset(seed=1)
    return tracker.observe(env.observe(env.agent_selection)["observation"])


@pytest.mark.parametrize("change, message", [
    ({"hand_sizes": "negative"}, "hand_sizes must each be from 0"),
    ({"hand_sizes": "more"}, "hold 42 tiles, but 41 are hidden: they must be equal"),
    ({"hand_sizes": "float"}, "hand_sizes must be a numpy array of integers"),
    ({"hand_sizes": "short"}, "hand_sizes must be a numpy array of integers of shape (4)"),
    ({"boneyard": 3}, "knowledge.boneyard must be an integer from 0 to 0 (no boneyard at this table), got 3"),
    ({"boneyard": -1}, "knowledge.boneyard must be an integer from 0 to 0"),
    ({"hidden": "repeated"}, "knowledge.hidden must be distinct tiles of the set"),
    ({"hidden": "beyond"}, "knowledge.hidden must be distinct tiles of the set (0 to 54)"),
    ({"forbidden": "ints"}, "knowledge.forbidden must be a numpy array of booleans of shape (4, 10)"),
    ({"observation": "short"}, "knowledge.observation must be a numpy array of numbers"),
    ({"config": None}, "knowledge.config must be a GameConfig"),
])
def test_the_sampler_refuses_knowledge_no_position_can_have(change, message):
    """Each one was sampled as if possible (negative or impossible sizes) or failed deep in numba."""
    knowledge = _knowledge_at_the_deal()
    sizes, hidden = knowledge.hand_sizes, knowledge.hidden
    values = {
        "hand_sizes": {"negative": np.array([9, 12, 12, -6]), "more": sizes + np.array([0, 1, 0, 0]),
                       "float": sizes.astype(float), "short": sizes[:3]},
        "hidden": {"repeated": np.sort(np.append(hidden[1:], hidden[1])), "beyond": np.append(hidden[:-1], 60)},
        "forbidden": {"ints": knowledge.forbidden.astype(int)},
        "observation": {"short": knowledge.observation[:10]},
    }
    name, value = next(iter(change.items()))
    fields = {**knowledge.__dict__, name: values[name][value] if name in values else value}
    bad = HandKnowledge(**fields)
    for call in (lambda: sample_deals(bad, np.random.default_rng(0), 2),
                 lambda: sampled_positions(bad, np.random.default_rng(0), 2)):
        with pytest.raises(ValueError) as refused:
            call()
        assert message in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("rng, count, message", [
    (None, 1, "rng must be a numpy.random.Generator (np.random.default_rng(seed)), got None"),
    (np.random.RandomState(0), 1, "rng must be a numpy.random.Generator"),
    (0, 1, "rng must be a numpy.random.Generator"),
    ("rng", -1, "rng must be"),
    ("rng", -1.5, "count must be an integer from 0 to 65536"),
    ("rng", 10**9, "count must be an integer from 0 to 65536"),
])
def test_the_sampler_says_in_one_line_what_an_rng_or_a_count_must_be(rng, count, message):
    knowledge = _knowledge_at_the_deal()
    rng = np.random.default_rng(0) if isinstance(rng, str) and count != -1 else rng
    with pytest.raises(ValueError, match=re.escape(message)):
        sample_deals(knowledge, rng, count)


def test_deals_given_to_sampled_states_must_fill_every_place():
    knowledge = _knowledge_at_the_deal(3, 6, rules="mexican_train")
    rng = np.random.default_rng(0)
    deals = sample_deals(knowledge, rng, 4)
    assert sampled_states(knowledge, deals, rng).shape[0] == 4
    for bad in (deals[:, 1:], deals.astype(float), np.where(deals == 1, 2, deals), np.full_like(deals, 7)):
        with pytest.raises(ValueError, match="deals must be"):
            sampled_states(knowledge, bad, rng)
