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
from dominoes_env.core.observation import one_hand_part

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


# --------------------------------------------------------------------------- the hand-made feature
def test_the_best_chain_feature_is_td_lambdas_own_numbers_and_its_player_needs_no_torch(tmp_path):
    """With features="best_chain" the network reads, after each vector, exactly the best-chain block of
    td_lambda's input; the field is left out of files at its default, and a player of such weights plays."""
    from baselines.ppo.features import NetworkInputs
    from baselines.td_lambda.features import LineFeatures

    config = PPOConfig(**SMALL, features="best_chain")
    assert "features" not in PPOConfig(**SMALL).to_dict() and PPOConfig.from_dict(PPOConfig(**SMALL).to_dict()) \
        .features == "none"
    assert PPOConfig.from_json(config.to_json()) == config
    assert config.observation_size == PPOConfig(**SMALL).observation_size + 2 * 55 + 5  # double-nine: 55 tiles
    seen = np.array([seen["observation"] for _, _, seen, _ in decisions(4, 9, games=2)], dtype=np.int8)
    seen = one_hand_part(config.game, seen)
    inputs = NetworkInputs(config.game, "best_chain")(seen)
    line = LineFeatures(config.game)
    np.testing.assert_array_equal(inputs[:, :seen.shape[1]], seen)
    np.testing.assert_array_equal(inputs[:, seen.shape[1]:], line(seen)[:, line.basic_size:])
    assert inputs[:, seen.shape[1]:].any(axis=1).mean() > 0.5  # most positions have a chain to read
    assert NetworkInputs(config.game, "none")(seen) is seen
    with pytest.raises(ValueError, match="features=.pairs. is not supported"):
        PPOConfig(**SMALL, features="pairs")
    path = save_weights(tmp_path / "chain.safetensors", random_weights(config))
    assert play_hand(make_policy("ppo", config.game, seed=0, checkpoint=str(path)), config.game) > 5


TRAINING_OPTIONS_WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None  # any `import torch` now fails
from baselines.cli import main
for words in (["train", "dagger", "--teacher", "persistent_line"], ["train", "dagger", "--teacher", "td_lambda:3"],
              ["train", "dagger", "--players", "2", "--highest", "6"], ["train", "dagger", "--out", OUT]):
    try:
        code = main(words)
    except SystemExit as exited:
        code = exited.code
    print("exit", code)
"""


def test_every_train_command_builds_its_options_without_torch_and_dagger_checks_its_teacher_first(tmp_path):
    """`dominoes train` imports every learner's options (torch is an extra): none may import torch. DAgger
    refuses a teacher it cannot use before it asks for torch, and without torch says so in one line."""
    import subprocess
    import sys

    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + TRAINING_OPTIONS_WITHOUT_TORCH],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.split() == ["exit", "2"] * 4, (done.stdout, done.stderr)
    errors = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(errors) == 4, done.stderr
    assert "keeps nothing between moves" in errors[0] and "without :COPIES" in errors[1]
    assert "cannot play 2 players, double-6" in errors[2] and "torch" in errors[3] and not out.exists()
