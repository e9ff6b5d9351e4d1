"""Bringing your own policy: import paths and entry points on the command line, in every kind
of league worker, and adapters for trained models."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from baselines import evaluate
from baselines.adapters import FunctionPolicy
from baselines.cli import main as dominoes
from baselines.harness import parallel
from baselines.league import read_results, run_league
from baselines.league.results import results_path
from baselines.league.spec import LeagueError, make_spec, parse_policy_arguments
from baselines.policies import registry
from dominoes_env import make_config
from dominoes_env.core.observation import observation_layout

USER_MODULE = textwrap.dedent('''
    import numpy as np
    from baselines import Policy


    class HeaviestLast(Policy):
        """A user's policy: the lightest legal tile (the pass when it must)."""

        def act(self, observation, action_mask):
            legal = np.flatnonzero(action_mask)
            pips = np.append(np.tile(self.config.tiles.pips, self.config.num_lines), 99)
            return int(legal[np.argmin(pips[legal])])


    class NotAPolicy:
        pass
''')


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """./my_policies_<id>.py in a fresh current directory, as a user would write it."""
    name = f"my_policies_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield name
    sys.modules.pop(name, None)


def test_an_import_path_names_a_policy_in_the_current_directory(user_module, capsys):
    assert dominoes(["evaluate", f"{user_module}.HeaviestLast", "random:3", "--hands", "8", "--no-progress"]) == 0
    assert f"| {user_module}.HeaviestLast | 8 |" in capsys.readouterr().out
    result = evaluate([f"{user_module}.HeaviestLast", "stupid", "random", "random"], num_hands=40, seed=1)
    # the same policy as the registered "stupid" (lightest tile first) in every decision but the
    # tie-break, and never merged with it: two rows
    assert result.labels[:2] == (f"{user_module}.HeaviestLast", "stupid")


@pytest.mark.parametrize("spec, message", [
    ("no_such_module_here.Policy", "no module 'no_such_module_here' in the current directory"),
    ("{module}.Missing", "has no 'Missing'"),
    ("{module}.NotAPolicy", "not a .*subclass of baselines.Policy"),
    ("{module}.np", "not a .*subclass of baselines.Policy"),
])
def test_a_bad_import_path_is_one_clear_line(user_module, capsys, spec, message):
    assert dominoes(["evaluate", spec.format(module=user_module), "random:3", "--hands", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dominoes evaluate: error: ") and err.count("\n") == 1
    assert __import__("re").search(message, err), err


def test_a_module_that_fails_to_import_is_reported_not_raised(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_policies.py").write_text("raise RuntimeError('oops')\n")
    monkeypatch.chdir(tmp_path)
    assert dominoes(["evaluate", "broken_policies.X", "random:3", "--hands", "8"]) == 2
    assert "importing 'broken_policies' for policy 'broken_policies.X' failed: RuntimeError: oops" in \
        capsys.readouterr().err
    sys.modules.pop("broken_policies", None)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_league_workers_resolve_import_paths_as_the_parent_does(user_module, tmp_path, monkeypatch, method):
    monkeypatch.setattr(parallel, "start_method", lambda: method)
    spec = make_spec(parse_policy_arguments([f"{user_module}.HeaviestLast:2", "random:2"]), 3, 6, 1, seed=2)
    run_league(spec, 12, tmp_path / "two", workers=2)
    run_league(spec, 12, tmp_path / "one", workers=1)
    assert results_path(tmp_path / "two").read_bytes() == results_path(tmp_path / "one").read_bytes()
    assert f"{user_module}.HeaviestLast" in read_results(results_path(tmp_path / "one")).records[0].policies


def test_a_worker_that_cannot_resolve_a_policy_is_one_clear_line(user_module, tmp_path, monkeypatch, capsys):
    spec = make_spec(parse_policy_arguments([f"{user_module}.HeaviestLast:2", "random:2"]), 3, 6, 1, seed=2)
    (tmp_path / f"{user_module}.py").unlink()  # the module disappears after the league was checked
    sys.modules.pop(user_module, None)
    monkeypatch.setattr(parallel, "start_method", lambda: "spawn")
    with pytest.raises(LeagueError, match=r"game \d+ of the league .*failed: ValueError: .*no module"):
        run_league(spec, 12, tmp_path / "out", workers=2)


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """An installed distribution declaring a policy in the dominoes_env.policies entry-point group."""
    (tmp_path / "plugin_policies.py").write_text(USER_MODULE)
    info = tmp_path / "dominoes_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dominoes-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dominoes_env.policies]\nlightest_plugin = plugin_policies:HeaviestLast\n"
                                           "broken_plugin = plugin_policies:Nowhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("plugin_policies", None)


def test_installed_packages_add_policies_through_entry_points(installed_plugin, tmp_path, capsys):
    assert "lightest_plugin" in registry.policy_names()
    policy = registry.make_policy("lightest_plugin", 4, 9, seed=0)
    assert type(policy).__name__ == "HeaviestLast"
    assert dominoes(["league", "--policies", "lightest_plugin:2", "random:2", "--players", "3", "--highest", "6",
                     "--hands-per-game", "1", "--games", "6", "--out", str(tmp_path / "l"), "--no-progress"]) == 0
    assert dominoes(["evaluate", "broken_plugin", "random:3", "--hands", "8"]) == 2
    assert "entry point 'broken_plugin' (plugin_policies:Nowhere)" in capsys.readouterr().err


def test_a_function_becomes_a_policy():
    def lightest_first(observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    policy = FunctionPolicy(4, 9, predict=lightest_first, label="first_legal")
    result = evaluate([policy, "random", "random", "random"], num_hands=20, seed=0)
    assert result.labels[0] == "first_legal"
    cheat = FunctionPolicy(4, 9, predict=lambda observation, mask: int(np.flatnonzero(mask == 0)[0]), label="cheat")
    with pytest.raises(ValueError, match="'cheat' chose action .* its mask does not allow"):
        evaluate([cheat, "random", "random", "random"], num_hands=4)
    with pytest.raises(ValueError, match="needs predict=callable"):
        FunctionPolicy(4, 9)


def test_a_one_hand_function_plays_games_of_several_hands_without_the_scores():
    """A model trained on one-hand games reads the one-hand layout; one_hand=True gives it that
    part of a longer game's observation (the same fields, without the scores)."""
    one_hand_size = observation_layout(make_config(4, 9)).size
    seen = []

    def first_legal(observation, action_mask):
        seen.append(observation.shape[0])
        return int(np.flatnonzero(action_mask)[0])

    policy = FunctionPolicy(4, 9, predict=first_legal, label="first_legal", one_hand=True)
    evaluate([policy, "random", "random", "random"], num_hands=24, seed=0, hands_per_game=3)
    assert seen and set(seen) == {one_hand_size}
    seen.clear()
    whole = FunctionPolicy(4, 9, predict=first_legal, label="first_legal")
    evaluate([whole, "random", "random", "random"], num_hands=24, seed=0, hands_per_game=3)
    assert set(seen) == {observation_layout(make_config(4, 9), 3).size}
    with pytest.raises(ValueError, match="one_hand must be"):
        FunctionPolicy(4, 9, predict=first_legal, one_hand="yes")


def test_a_trained_maskable_ppo_model_plays_from_the_command_line(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    import dominoes_env

    env = dominoes_env.SingleAgentEnv(num_players=3, highest_double=6)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    path = tmp_path / "model.zip"
    model.save(path)
    assert dominoes(["evaluate", f"maskable_ppo@{path}", "random:2", "--players", "3", "--highest", "6",
                     "--hands", "9", "--no-progress"]) == 0
    assert f"| maskable_ppo@{path} |" in capsys.readouterr().out
    in_memory = registry.make_policy("maskable_ppo", 3, 6, model=model)
    assert in_memory.label.startswith("maskable_ppo(model=<MaskablePPO 0x")
    with pytest.raises(ValueError, match="reads observations .* has observations"):
        registry.make_policy("maskable_ppo", 4, 9, checkpoint=str(path))
    with pytest.raises(ValueError, match="needs exactly one of checkpoint"):
        registry.make_policy("maskable_ppo", 3, 6)
    # The one-hand model plays games of several hands on the one-hand part of each observation:
    # the same moves as the model given that part itself.
    table = make_config(3, 6)
    observation = np.zeros((2, observation_layout(table, 4).size), np.int8)
    mask = np.zeros((2, table.num_actions), np.int8)
    observation[:, ::3], mask[:, [2, 5, 9]] = 1, 1
    part = observation[:, :observation_layout(table).size]
    expected, _ = model.predict(part, action_masks=mask.astype(bool), deterministic=True)
    assert np.array_equal(in_memory.act_batch(observation, mask), expected)
    assert dominoes(["evaluate", f"maskable_ppo@{path}", "random:2", "--players", "3", "--highest", "6",
                     "--hands", "18", "--hands-per-game", "2", "--no-progress"]) == 0
    with pytest.raises(ValueError, match="an observation of 3 players, double-6 has"):
        in_memory.act(observation[0, :-1], mask[0])
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(b"not a zip")
    assert dominoes(["evaluate", f"maskable_ppo@{damaged}", "random:2", "--players", "3", "--highest", "6"]) == 2
    assert "cannot be loaded" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_workers_resolve_import_paths_too(user_module, tmp_path):
    ray = pytest.importorskip("ray")
    spec = make_spec(parse_policy_arguments([f"{user_module}.HeaviestLast:2", "random:2"]), 3, 6, 1, seed=2)
    run_league(spec, 9, tmp_path / "local", workers=1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        run_league(spec, 9, tmp_path / "ray", backend="ray")
    finally:
        ray.shutdown()
    assert results_path(tmp_path / "ray").read_bytes() == results_path(tmp_path / "local").read_bytes()
