"""The JAX rules against the compiled engine, move by move: from positions of random play at
many tables and every table rule, the legal mask, the position after the move and the scores
agree slot for slot (``jax.vmap`` over every position at once). One table per row and value of
``TABLE_RULES`` is generated from the list, and a rule the JAX rules do not implement is refused."""

from __future__ import annotations

import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from dominoes_env import make_config  # noqa: E402
from dominoes_env.core import config as tables  # noqa: E402
from dominoes_env.core import rules  # noqa: E402
from dominoes_env.core.config import TABLE_RULES, TableRule, describe_table  # noqa: E402
from dominoes_env.core.state import HandState  # noqa: E402
from dominoes_env.jax import JaxRules, as_state  # noqa: E402
from dominoes_env.jax.rules import IMPLEMENTED_RULES  # noqa: E402

#: the default run's tables (every table rule among them); the slow run adds the rest
QUICK = [make_config(2, 6), make_config(6, 12, rules="mexican_train"),
         make_config(5, 9, boneyard=True, first_player="left_of_engine")]
MORE = [make_config(4, 9), make_config(3, 6, rules="mexican_train"), make_config(8, 12, rules="mexican_train"),
        make_config(4, 9, cover_doubles=True), make_config(8, 18)]
TABLES = [*QUICK, *(pytest.param(config, marks=pytest.mark.slow) for config in MORE)]


def random_play(config, hands, seed):
    """(states before, actions, masks, states after, scores after) of every move of random play."""
    rng = np.random.default_rng(seed)
    tiles = config.tiles
    mask = np.empty(config.num_actions, dtype=np.int8)
    scores = np.empty(config.num_players, dtype=np.int64)
    before, actions, masks, after, final = [], [], [], [], []
    for hand in range(hands):
        state = HandState.deal(config, hand % (config.highest_double + 1), rng).state.copy()
        while state[rules.HAND_OVER] == 0:
            rules.fill_legal_mask(state, tiles.tiles_with_value, mask)
            action = int(rng.choice(np.flatnonzero(mask)))
            before.append(state.copy())
            masks.append(mask.astype(bool))
            actions.append(action)
            rules.apply_action(state, tiles.low, tiles.high, tiles.tiles_with_value, action)
            after.append(state.copy())
            rules.hand_scores(state, tiles.low, tiles.high, scores)
            final.append(scores.copy())
    return np.array(before), np.array(actions), np.array(masks), np.array(after), np.array(final)


@functools.cache
def compiled(config):
    """The table's JAX rules, vmapped and jitted once per table (the tables of several tests repeat)."""
    jax_rules = JaxRules(config)
    return (jax.jit(jax.vmap(jax_rules.legal_mask)), jax.jit(jax.vmap(jax_rules.apply)),
            jax.jit(jax.vmap(jax_rules.scores)))


def assert_every_move_agrees(config, hands, seed):
    """Random play of `hands` hands in the compiled engine, each move replayed in the JAX rules: the
    legal mask, the position after the move and the scores agree slot for slot."""
    before, actions, masks, after, scores = random_play(config, hands=hands, seed=seed)
    legal_mask, apply, hand_scores = compiled(config)
    states = as_state(before)
    np.testing.assert_array_equal(np.asarray(legal_mask(states)), masks)
    stepped = apply(states, jnp.asarray(actions))
    np.testing.assert_array_equal(np.asarray(stepped), after)
    np.testing.assert_array_equal(np.asarray(hand_scores(stepped)), scores)
    # the hand's end is seen by both: no legal move after it
    assert not np.asarray(legal_mask(as_state(after[after[:, rules.HAND_OVER] == 1]))).any()


@pytest.mark.parametrize("config", TABLES, ids=lambda config: describe_table(config))
def test_every_move_agrees_with_the_compiled_engine(config):
    assert_every_move_agrees(config, hands=6, seed=3)


#: one table per row of TABLE_RULES and value: 4 players, double-9, that rule at that value (the
#: others at the rule book's), so a rule added to the list is played here without a new line
RULE_TABLES = [(rule.name, value) for rule in TABLE_RULES for value in rule.values]


@pytest.mark.parametrize(("rule", "value"), RULE_TABLES, ids=[f"{name}={value}" for name, value in RULE_TABLES])
def test_each_table_rule_at_each_value_agrees_move_by_move(rule, value):
    assert_every_move_agrees(make_config(4, 9, **{rule: value}), hands=3, seed=17)


def test_the_jax_rules_implement_every_table_rule():
    missing = [rule.name for rule in TABLE_RULES if rule.name not in IMPLEMENTED_RULES]
    assert not missing, (f"table rule(s) {missing} of TABLE_RULES have no JAX implementation: add them to "
                         "dominoes_env/jax/rules.py (the rule in JaxRules, its name in IMPLEMENTED_RULES)")
    assert IMPLEMENTED_RULES <= {rule.name for rule in TABLE_RULES}, "IMPLEMENTED_RULES names no table rule"


def test_a_table_rule_the_jax_rules_do_not_implement_is_refused_in_one_line(monkeypatch):
    extra = TableRule("no_spinners", (False, True), "doubles are not spinners", "no spinners", "NO_SPINNERS_RULE")
    at_rule_book, set_off = make_config(4, 9), make_config(4, 9, boneyard=True)  # GameConfig has no such field:
    object.__setattr__(at_rule_book, "no_spinners", False)  # these tables stand in for ones that have it
    object.__setattr__(set_off, "no_spinners", True)
    monkeypatch.setattr(tables, "TABLE_RULES", (*TABLE_RULES, extra))
    JaxRules(at_rule_book)  # a rule at the rule book's value asks nothing of the JAX rules
    with pytest.raises(ValueError, match=r"no_spinners=True") as refusal:
        JaxRules(set_off)
    message = str(refusal.value)
    assert "\n" not in message and "boneyard, cover_doubles, first_player" in message, message


@pytest.mark.parametrize("config", TABLES, ids=lambda config: describe_table(config))
def test_a_shuffle_deals_the_position_the_compiled_engine_deals(config):
    jax_rules = JaxRules(config)
    deal = jax.jit(jax_rules.deal_from_permutation)
    rng = np.random.default_rng(5)
    t = config.num_tiles
    shuffles = [(hand_index, rng.permutation(t)) for hand_index in range(4)]
    if config.boneyard:  # the engine face down: the seats draw until one has it (at the end: all of it drawn)
        engine = config.tiles.double(config.highest_double - 1)
        for place in (config.num_players * config.deal_size + 3, t - 1):
            rest = [tile for tile in rng.permutation(t) if tile != engine]
            shuffles.append((1, np.array(rest[:place] + [engine] + rest[place:])))
    for hand_index, permutation in shuffles:
        permutation = permutation.astype(np.int16)
        expected = np.empty(rules.state_size(config.num_players, t), dtype=np.int16)
        engine_value = (config.highest_double - hand_index) % (config.highest_double + 1)
        rules.deal_hand(expected, permutation, config.num_players, hand_index, engine_value,
                        config.tiles.double(engine_value), config.rule_flags, config.deal_size,
                        np.empty(2 * t, dtype=np.int16))
        np.testing.assert_array_equal(np.asarray(deal(jnp.asarray(permutation), hand_index)), expected)
    dealt = jax.vmap(jax_rules.deal, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), 64), 0)
    assert len({np.asarray(position).tobytes() for position in dealt}) == 64  # the key shuffles


@pytest.mark.parametrize("config", TABLES, ids=lambda config: describe_table(config))
@pytest.mark.parametrize("num_hands", [1, 3])
def test_every_seat_observes_what_the_environment_encodes(config, num_hands):
    from dominoes_env.core.observation import Observer
    from dominoes_env.jax.observation import JaxObserver
    before, _, _, after, _ = random_play(config, hands=2, seed=7)
    positions = np.concatenate([before[::3], after[after[:, rules.HAND_OVER] == 1]])
    n = config.num_players
    rng = np.random.default_rng(0)
    scores = rng.integers(0, config.total_pips * num_hands // n + 1, size=(positions.shape[0], n))
    encoder, jax_observer = Observer(config, num_hands), JaxObserver(config, num_hands)
    observe = jax.jit(jax.vmap(jax_observer.observe, in_axes=(0, None, 0)))
    for viewer in range(n):
        expected = np.array([encoder.encode(position, viewer, score) for position, score in zip(positions, scores)])
        np.testing.assert_array_equal(np.asarray(observe(as_state(positions), viewer, jnp.asarray(scores))), expected)


@pytest.mark.slow
def test_ten_thousand_positions_agree_in_mask_step_observation_and_reward():
    """The issue's differential: 2,000 positions of random play to the hand's end at each of five tables."""
    from dominoes_env.core.observation import Observer
    from dominoes_env.jax.observation import JaxObserver
    tables = [make_config(2, 6), make_config(4, 9), make_config(6, 12, rules="mexican_train"),
              make_config(8, 12, rules="mexican_train"), make_config(8, 18)]
    checked = 0
    for number, config in enumerate(tables):
        hands, before = 8, np.empty(0)
        while before.shape[0] < 2000:
            hands *= 2
            before, actions, masks, after, scores = random_play(config, hands=hands, seed=100 + number)
        before, actions, masks, after, scores = (array[:2000] for array in (before, actions, masks, after, scores))
        jax_rules, observer = JaxRules(config), JaxObserver(config)
        states = as_state(before)
        np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(jax_rules.legal_mask))(states)), masks)
        stepped = jax.jit(jax.vmap(jax_rules.apply))(states, jnp.asarray(actions))
        np.testing.assert_array_equal(np.asarray(stepped), after)
        ended = after[:, rules.HAND_OVER] == 1
        np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(jax_rules.scores))(stepped))[ended], scores[ended])
        movers = jnp.asarray(before[:, rules.CURRENT_PLAYER].astype(np.int32))
        observed = jax.jit(jax.vmap(observer.observe))(states, movers)
        encoder = Observer(config)
        expected = np.array([encoder.encode(state, int(state[rules.CURRENT_PLAYER])) for state in before])
        np.testing.assert_array_equal(np.asarray(observed), expected)
        checked += before.shape[0]
    assert checked == 10_000
