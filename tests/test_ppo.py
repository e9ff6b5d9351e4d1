"""PPO: the numpy player and its weights file (no torch), then the trainer (torch marker): GAE and the
loss on hand-computed cases, masking, determinism, resuming after a kill, and the player matching
the network it was trained as."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_hidden import decisions

import dominoes_env
from baselines.policies.registry import make_policy
from baselines.ppo import PPOConfig, PPOPolicy, PPOWeights, load_weights, save_weights
from baselines.ppo.weights import layer_shapes

SMALL = dict(hidden=(8, 8), num_envs=16, rollout_steps=8, minibatches=2, epochs=2, eval_hands=8,
             eval_opponents=("greedy",))


def random_weights(config: PPOConfig, seed: int = 0) -> PPOWeights:
    rng = np.random.default_rng(seed)
    return PPOWeights({name: rng.normal(0, 0.5, shape).astype(np.float32) for name, shape in
                       layer_shapes(config).items()}, config, {"note": "random"})


def play_hand(policy, config, seed=0):
    env = dominoes_env.raw_env(config)
    env.reset(seed=seed)
    moves = 0
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent]:
            env.step(None)
            continue
        seen = env.observe(agent)
        action = policy.act(seen["observation"], seen["action_mask"])
        assert seen["action_mask"][action] == 1
        env.step(action)
        moves += 1
    return moves


# --------------------------------------------------------------------------- the player, without torch
def test_weights_round_trip_and_the_player_plays_legal_moves_without_torch(tmp_path):
    config = PPOConfig(**SMALL)
    path = save_weights(tmp_path / "mine.safetensors", random_weights(config))
    loaded = load_weights(path, expected=config.game)
    assert loaded.config == config and loaded.info == {"note": "random"}
    for name, value in random_weights(config).weights.items():
        assert np.array_equal(loaded.weights[name], value)
    policy = make_policy("ppo", config.game, seed=0, checkpoint=str(path))
    assert isinstance(policy, PPOPolicy) and play_hand(policy, config.game) > 5
    assert play_hand(make_policy("ppo", config.game, seed=1, checkpoint=str(path), sample=True), config.game) > 5


@pytest.mark.parametrize("head", ["actions", "afterstates"])
def test_greedy_plays_the_most_probable_legal_move_and_sampling_follows_the_probabilities(head):
    config = PPOConfig(**SMALL, policy_head=head)
    policy = PPOPolicy(config.game, seed=3, checkpoint=random_weights(config, 1))
    env = dominoes_env.raw_env(config.game)
    env.reset(seed=2)
    seen = env.observe(env.agent_selection)
    observations = np.repeat(seen["observation"][None], 4000, axis=0)
    masks = np.repeat(seen["action_mask"][None], 4000, axis=0)
    probabilities = policy.probabilities(seen["observation"], seen["action_mask"])[0]
    assert probabilities[seen["action_mask"] == 0].sum() == 0 and math.isclose(probabilities.sum(), 1, rel_tol=1e-6)
    assert policy.act(seen["observation"], seen["action_mask"]) == int(np.argmax(probabilities))
    sampled = PPOPolicy(config.game, seed=3, checkpoint=random_weights(config, 1), sample=True)
    counts = np.bincount(sampled.act_batch(observations, masks), minlength=masks.shape[1]) / 4000
    assert (counts[seen["action_mask"] == 0] == 0).all() and np.abs(counts - probabilities).max() < 0.04


@pytest.mark.parametrize("damage, message", [
    (lambda data: data[:100], "is damaged or not a safetensors file"),
    (lambda data: data[:-8] + b"\x00" * 8, "fails its checksum"),
    (lambda data: data.replace(b"dominoes-ppo/1", b"dominoes-xyz/1"), "is not a ppo weights file"),
    (lambda data: data.replace(b'num_players\\": 4', b'num_players\\": 9'), "unreadable configuration"),
])
def test_a_damaged_weights_file_is_refused_in_one_line(tmp_path, damage, message):
    config = PPOConfig(**SMALL)
    path = save_weights(tmp_path / "w.safetensors", random_weights(config))
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ValueError) as refused:
        load_weights(path)
    assert message in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="cannot play"):
        from baselines.policies import registry, specs

        registry.check(specs.parse(f"ppo@{path}")[0], config.game)


def test_weights_of_another_table_or_shape_are_refused(tmp_path):
    config = PPOConfig(**SMALL)
    path = save_weights(tmp_path / "w.safetensors", random_weights(config))
    with pytest.raises(ValueError, match="was trained for 4 players, double-9"):
        load_weights(path, expected=dominoes_env.make_config(3, 6))
    actions_head = PPOConfig(**SMALL, policy_head="actions")
    wrong = dict(random_weights(actions_head).weights)
    wrong["policy.bias"] = wrong["policy.bias"][:-1]
    with pytest.raises(ValueError, match=r"policy.bias must be float32 of shape \(276,\)"):
        PPOWeights(wrong, actions_head)
    with pytest.raises(ValueError, match=r"policy.weight must be float32 of shape \(1, 8\)"):
        PPOWeights(random_weights(actions_head).weights, config)  # an action head where a score head belongs
    with pytest.raises(ValueError, match="ppo weights were trained for 4 players"):
        PPOPolicy(dominoes_env.make_config(3, 6), checkpoint=random_weights(config))


@pytest.mark.parametrize("values, message", [
    ({"hidden": (0,)}, "hidden (each) must be an integer from 1 to 4096"),
    ({"opponents": ("self", "greedy")}, "'self' is the whole choice"),
    ({"gae_lambda": 1.5}, "gae_lambda must be a finite number in [0, 1]"),
    ({"num_envs": 100_000, "rollout_steps": 1000}, "num_envs x rollout_steps must be at most"),
    ({"reward": "money"}, "reward='money' is not supported"),
])
def test_a_bad_configuration_is_one_line(values, message):
    with pytest.raises(ValueError) as refused:
        PPOConfig(**values)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_the_configuration_reads_back_from_its_json():
    config = PPOConfig(game=dominoes_env.make_config(6, 12, rules="mexican_train"), hidden=(32,), activation="relu",
                       opponents=("greedy", "persistent_line"), snapshot_every=1000)
    assert PPOConfig.from_json(config.to_json()) == config
    with pytest.raises(ValueError, match="unknown configuration field"):
        PPOConfig.from_dict({**config.to_dict(), "extra": 1})


# --------------------------------------------------------------------------- the history feature
def test_a_file_without_the_history_field_reads_as_none_and_none_is_left_out_of_the_file():
    config = PPOConfig(**SMALL)
    assert "history" not in config.to_dict()  # files and resume identities read exactly as before the field
    assert PPOConfig.from_dict(config.to_dict()).history == "none"
    with_facts = PPOConfig(**SMALL, history="passes")
    assert PPOConfig.from_json(with_facts.to_json()) == with_facts
    assert with_facts.observation_size == config.observation_size + 3 * 10  # 3 other seats x values 0-9
    with pytest.raises(ValueError, match="history=.moves. is not supported"):
        PPOConfig(**SMALL, history="moves")
    with pytest.raises(ValueError, match="after-state head only"):
        PPOConfig(**SMALL, history="passes", policy_head="actions")


def test_weights_with_the_history_feature_are_played_by_ppo_history_only(tmp_path):
    config = PPOConfig(**SMALL, history="passes")
    path = str(save_weights(tmp_path / "facts.safetensors", random_weights(config)))
    flat = str(save_weights(tmp_path / "flat.safetensors", random_weights(PPOConfig(**SMALL))))
    player = make_policy("ppo_history", config.game, seed=0, checkpoint=path)
    assert not hasattr(player, "act_batch")  # it keeps facts through a hand: one object plays one game
    assert play_hand(player, config.game, seed=3) > 5
    for name, file, message in (("ppo", path, "play them with ppo_history"),
                                ("ppo_history", flat, "play them with ppo"),
                                ("ppo_history", None, "ppo_history needs checkpoint=FILE")):
        with pytest.raises(ValueError, match=message) as refused:
            make_policy(name, config.game, checkpoint=file)
        assert "\n" not in str(refused.value)


def test_the_history_player_keeps_the_facts_its_hand_proves():
    """At every decision of its seat, the facts the player keeps (and feeds its network) are those the
    knowledge tracker proves from the same observations; and some pass proves something."""
    config = PPOConfig(**SMALL, history="passes")
    player = make_policy("ppo_history", config.game, seed=0, checkpoint=random_weights(config, seed=2))
    proved = 0
    for _, seat, observation, knowledge in decisions(4, 9, 6):
        if seat == 0:
            player.act(observation["observation"], observation["action_mask"])
            assert np.array_equal(player.facts.forbidden[0, 0], knowledge.forbidden)
            proved += int(knowledge.forbidden.any())
    assert proved > 0
