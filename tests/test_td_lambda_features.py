"""The value network's input, computed in one compiled pass, against a plain reading of the
observation's named fields (numpy only, no torch): every column of the basic features, the
table rules' numbers (boneyard, drew, the double to cover) included, and what the line
variant adds about the own hand's best chain."""

from __future__ import annotations

import numpy as np
import pytest

import dominoes_env
from baselines.td_lambda import features as features_module
from baselines.td_lambda.features import BasicFeatures, LineFeatures
from dominoes_env import make_config
from dominoes_env.core.afterstate import afterstates, afterstates_unchecked
from dominoes_env.core.config import describe_table
from dominoes_env.core.observation import observation_fields

TABLES = [make_config(4, 9), make_config(6, 12, rules="mexican_train"), make_config(2, 12, rules="mexican_train"),
          make_config(3, 9, boneyard=True)]


def observations(config, hands=4, seed=0):
    """Every observation of the mover in `hands` random hands (with its legal mask)."""
    env = dominoes_env.raw_env(config)
    rng = np.random.default_rng(seed)
    for hand in range(hands):
        env.reset(seed=seed * 100 + hand)
        for _agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            yield observation["observation"], observation["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))


def read_basic_features(vector, config):
    """The basic input, read field by field (the layout documented in BasicFeatures.fill)."""
    fields = {field.name: field for field in observation_fields(config)}

    def field(name):
        return vector[fields[name].slice].reshape(fields[name].shape).astype(np.float64)

    n = config.num_players
    parts = [field("hand"), field("played").sum(axis=0), field("open_values").ravel(), field("markers"),
             field("passed_last"), field("hand_sizes").sum(axis=1) / config.max_hand_size,
             field("turns_until") @ np.arange(n) / max(n - 1, 1), field("dummy_open")]
    if "boneyard" in fields:
        parts += [[field("boneyard").sum() / max(1, config.boneyard_at_deal)], field("drew")]
    if "double_to_cover" in fields:
        parts.append(field("double_to_cover"))
    return np.concatenate([np.asarray(part, dtype=np.float64).ravel() for part in parts])


@pytest.mark.parametrize("config", TABLES, ids=describe_table)
def test_basic_features_read_every_field_as_documented(config):
    features = BasicFeatures(config)
    vectors = np.array([observation for observation, _ in observations(config)])
    computed = features(vectors)
    assert computed.shape == (vectors.shape[0], features.size)
    for vector, row in zip(vectors, computed):
        np.testing.assert_allclose(row, read_basic_features(vector, config), rtol=1e-6, atol=1e-7)
    if config.boneyard_at_deal:  # the rules' numbers moved: a boneyard that shrinks, a drew that is set
        boneyard = computed[:, features.rule_offsets[-1]]
        assert boneyard.max() > boneyard.min() and computed[:, features.rule_offsets[-1] + 1].any()


@pytest.mark.parametrize("config", TABLES[1:3], ids=describe_table)
def test_line_features_add_a_chain_of_the_own_tiles(config):
    line, basic = LineFeatures(config), BasicFeatures(config)
    t, hand = config.num_tiles, {f.name: f for f in observation_fields(config)}["hand"].slice
    vectors = np.array([observation for observation, _ in observations(config, hands=2)])
    computed = line(vectors)
    np.testing.assert_array_equal(computed[:, :basic.size], basic(vectors))
    chain = computed[:, basic.size:]
    held = vectors[:, hand].astype(bool)
    in_chain = chain[:, :t] == 1
    weighted = chain[:, t:2 * t] != 0  # a tile's discounted pips: none for the double-blank
    assert not (in_chain & ~held).any() and not (weighted & ~in_chain).any() and weighted.any()
    lengths = in_chain.sum(axis=1)
    np.testing.assert_allclose(chain[:, 2 * t + 3], lengths / config.max_hand_size, rtol=1e-6)
    np.testing.assert_allclose(chain[:, 2 * t + 4], (held.sum(axis=1) - lengths) / config.max_hand_size, rtol=1e-6)
    assert lengths.max() >= 2


@pytest.mark.parametrize("config", TABLES[1:3], ids=describe_table)
def test_the_searchs_unchecked_afterstates_equal_the_checked_ones(config):
    compared = 0
    for observation, mask in observations(config, hands=3):
        actions = np.flatnonzero(mask)
        if actions.shape[0] < 2:  # a draw is always alone: the search never asks its after-state
            continue
        vectors, ends_hand = afterstates_unchecked(observation[None], actions, config)
        expected_vectors, expected_ends = afterstates(observation, actions, config)
        np.testing.assert_array_equal(vectors, expected_vectors)
        np.testing.assert_array_equal(ends_hand, expected_ends)
        compared += 1
    assert compared >= 10


@pytest.mark.parametrize("slots", [4, features_module.CHAIN_CACHE_SLOTS])
def test_a_cached_chain_is_the_chain_searched_again(monkeypatch, slots):
    """The chain cache changes no number: a warm cache (evicted often with 4 slots) gives what a
    cold one does, and the hands of a search's later evaluations are found there."""
    config = TABLES[2]
    vectors = np.array([observation for observation, _ in observations(config, hands=3)])
    expected = LineFeatures(config)(vectors)
    monkeypatch.setattr(features_module, "CHAIN_CACHE_SLOTS", slots)
    warm = LineFeatures(config)
    assert warm.cache_keys.shape[0] == slots
    np.testing.assert_array_equal(warm(vectors[::-1]), expected[::-1])
    np.testing.assert_array_equal(warm(vectors), expected)
    np.testing.assert_array_equal(warm(vectors[:1]), expected[:1])
    assert warm.cache_keys[:, -1].any()
