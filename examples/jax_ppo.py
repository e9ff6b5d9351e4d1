"""PPO compiled whole with the game in JAX (PureJaxRL's manner): self-play of one network at every
seat, the rollouts, the returns and the updates in one program that never leaves the device.

    python examples/jax_ppo.py --seed 0                            # 2,000,000 steps at 4 players, double-nine
    python examples/jax_ppo.py --steps 65536 --eval-hands 40 --bench quick   # a smoke run (about a minute)

Needs the ``jax`` extra (JAX and optax); a GPU is used where JAX finds one. How it learns:

- ``JaxDominoes`` (:mod:`dominoes_env.jax`) steps `--num-envs` games at once under ``vmap``; every
  decision is the player to move's, whoever it is, and one network (a shared trunk, a policy head
  over the masked actions, a value head) plays every seat.
- Rewards are zero-sum (each seat's pips below the other seats' mean, paid when the hand ends),
  so a seat's gain is the others' loss, as in self-play it must be.
- A decision's return is what its mover is paid from that step to the hand's end: summed
  backwards per seat over the rollout, cut where a hand ends, and where the rollout stops before
  the end valued by the network from each seat's own observation. The advantage is that return
  minus the value of the decision's observation (Monte Carlo, no discount: a hand is short).
- A finished game is dealt again from the rollout's fresh deals (dealt once per rollout, not at
  every step: under ``vmap`` a reset's shuffle would be paid by every game at every step).
- The end, as every library example ends: the network saved (``.npz``), loaded back into a numpy
  forward pass (no JAX needed to play it), rated against random players and the shipped baselines
  and benched (``examples/rating.py``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from rating import SavedRun, rate
from settings_cli import parse_run

from baselines.adapters import FunctionPolicy
from baselines.learning.options import bounded
from dominoes_env import GameConfig
from dominoes_env.core.config import describe_table
from dominoes_env.jax import JaxDominoes, restart_finished

DEFAULT_STEPS = 2_000_000


@dataclass(frozen=True)
class Settings:
    """PPO's settings (PureJaxRL's names)."""

    num_envs: int = field(default=256, metadata=bounded("games stepped at once", 1, 1 << 20))
    num_steps: int = field(default=64, metadata=bounded("steps of each game per rollout", 1, 4096))
    hidden: tuple[int, ...] = field(default=(256, 256), metadata=bounded("hidden layer widths", 1, 4096, many=True))
    learning_rate: float = field(default=3e-4, metadata=bounded("Adam's step size", 1e-6, 1.0))
    update_epochs: int = field(default=4, metadata=bounded("passes over each rollout", 1, 100))
    num_minibatches: int = field(default=8, metadata=bounded("minibatches per pass", 1, 4096))
    clip_eps: float = field(default=0.2, metadata=bounded("PPO's clip range", 0.0, 10.0))
    ent_coef: float = field(default=0.01, metadata=bounded("entropy bonus", 0.0, 10.0))
    vf_coef: float = field(default=0.5, metadata=bounded("value loss weight", 0.0, 100.0))
    max_grad_norm: float = field(default=0.5, metadata=bounded("gradient clipping", 1e-3, 1e3))
    pip_scale: float = field(default=10.0, metadata=bounded("pips per unit of reward", 1e-3, 1e3))


def init_network(key: jax.Array, sizes: Sequence[int], num_actions: int) -> dict[str, Any]:
    """A trunk of ReLU layers, then a policy head and a value head (orthogonal weights, PureJaxRL's scales)."""
    keys = jax.random.split(key, len(sizes) + 1)
    orthogonal = jax.nn.initializers.orthogonal
    trunk = [{"w": orthogonal(np.sqrt(2))(k, (i, o)), "b": jnp.zeros(o)}
             for k, i, o in zip(keys, sizes[:-1], sizes[1:])]
    policy_key, value_key = jax.random.split(keys[-1])
    return {"trunk": trunk,
            "policy": {"w": orthogonal(0.01)(policy_key, (sizes[-1], num_actions)), "b": jnp.zeros(num_actions)},
            "value": {"w": orthogonal(1.0)(value_key, (sizes[-1], 1)), "b": jnp.zeros(1)}}


def forward(params: dict[str, Any], observation: Any, xp: Any = jnp) -> tuple[Any, Any]:
    """(logits, value) of observations: in JAX for training, in numpy (``xp=np``) for playing."""
    x = observation.astype(xp.float32)
    for layer in params["trunk"]:
        x = xp.maximum(x @ layer["w"] + layer["b"], 0.0)
    return x @ params["policy"]["w"] + params["policy"]["b"], (x @ params["value"]["w"] + params["value"]["b"])[..., 0]


def masked(logits: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, logits, -1e9)


def zero_sum(rewards: jax.Array) -> jax.Array:
    """Each seat's pips below the other seats' mean: from the game's "score" rewards (minus pips)."""
    n = rewards.shape[-1]
    return (n * rewards - rewards.sum(axis=-1, keepdims=True)) / (n - 1)


def make_train(config: GameConfig, settings: Settings):
    """The compiled parts: ``start(key)``, ``run(runner, chunk)`` (``chunk.shape[0]`` updates in one
    program) and the decisions of one update."""
    env = JaxDominoes(config)
    s = settings
    batch = s.num_envs * s.num_steps
    minibatch = batch // s.num_minibatches
    optimizer = optax.chain(optax.clip_by_global_norm(s.max_grad_norm), optax.adam(s.learning_rate, eps=1e-5))
    init, step, observe = jax.vmap(env.init), jax.vmap(env.step), jax.vmap(env.observe, in_axes=(0, None))

    def start(key):
        network_key, game_key, key = jax.random.split(key, 3)
        params = init_network(network_key, (env.observation_shape[0], *s.hidden), env.num_actions)
        return params, optimizer.init(params), init(jax.random.split(game_key, s.num_envs)), key

    def rollout(params, state, key):
        key, deal = jax.random.split(key)
        fresh = init(jax.random.split(deal, s.num_envs))

        def one_step(carry, _):
            state, key = carry
            key, pick = jax.random.split(key)
            logits, value = forward(params, state.observation)
            logits = masked(logits, state.legal_action_mask)
            action = jax.random.categorical(pick, logits)
            log_prob = jax.nn.log_softmax(logits)[jnp.arange(s.num_envs), action]
            stepped = step(state, action)
            done = stepped.terminated
            after = restart_finished(stepped, fresh)
            record = (state.observation, state.legal_action_mask, action, log_prob, value, state.current_player,
                      zero_sum(stepped.rewards) / s.pip_scale, done)
            return (after, key), record

        (state, key), records = jax.lax.scan(one_step, (state, key), None, length=s.num_steps)
        return state, key, records

    def returns(params, state, records):
        """Each decision's return to its mover, and the advantage."""
        _, _, _, _, values, movers, rewards, done = records
        bootstrap = jnp.stack([forward(params, observe(state, seat))[1] for seat in range(config.num_players)], 1)

        def backwards(following, step_records):
            reward, finished = step_records
            total = reward + jnp.where(finished[:, None], 0.0, following)
            return total, total

        _, totals = jax.lax.scan(backwards, bootstrap, (rewards, done), reverse=True)
        target = jnp.take_along_axis(totals, movers[..., None], axis=2)[..., 0]
        return target, target - values

    def loss(params, data):
        observations, masks, actions, old_log_probs, targets, advantages = data
        logits, values = forward(params, observations)
        log_probs = jax.nn.log_softmax(masked(logits, masks))
        chosen = jnp.take_along_axis(log_probs, actions[:, None], axis=1)[:, 0]
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        ratio = jnp.exp(chosen - old_log_probs)
        policy_loss = -jnp.minimum(ratio * advantages,
                                   jnp.clip(ratio, 1 - s.clip_eps, 1 + s.clip_eps) * advantages).mean()
        value_loss = 0.5 * ((values - targets) ** 2).mean()
        probabilities = jnp.exp(log_probs)
        entropy = -(jnp.where(masks, probabilities * log_probs, 0.0)).sum(axis=1).mean()
        return policy_loss + s.vf_coef * value_loss - s.ent_coef * entropy, (value_loss, entropy)

    def update(runner, _):
        params, opt_state, state, key = runner
        state, key, records = rollout(params, state, key)
        targets, advantages = returns(params, state, records)
        observations, masks, actions, log_probs = records[:4]
        data = tuple(x.reshape((batch,) + x.shape[2:]) for x in
                     (observations, masks, actions, log_probs, targets, advantages))

        def epoch(carry, _):
            params, opt_state, key = carry
            key, shuffle = jax.random.split(key)
            order = jax.random.permutation(shuffle, batch)
            shuffled = tuple(x[order].reshape((s.num_minibatches, minibatch) + x.shape[1:]) for x in data)

            def minibatch_step(carry, mini):
                params, opt_state = carry
                (total, (value_loss, entropy)), grads = jax.value_and_grad(loss, has_aux=True)(params, mini)
                changes, opt_state = optimizer.update(grads, opt_state)
                return (optax.apply_updates(params, changes), opt_state), (total, value_loss, entropy)

            (params, opt_state), losses = jax.lax.scan(minibatch_step, (params, opt_state), shuffled)
            return (params, opt_state, key), losses

        (params, opt_state, key), losses = jax.lax.scan(epoch, (params, opt_state, key), None,
                                                        length=s.update_epochs)
        hands = records[-1].sum()
        return (params, opt_state, state, key), (jnp.mean(losses[0]), jnp.mean(losses[1]), jnp.mean(losses[2]), hands)

    @jax.jit
    def run(runner, chunk):
        return jax.lax.scan(update, runner, None, length=chunk.shape[0])

    return jax.jit(start), run, batch


def train(config: GameConfig, steps: int, seed: int, settings: Settings) -> tuple[dict[str, Any], int]:
    """Train for at least `steps` decisions (whole chunks of updates); the network's parameters
    (numpy) and the decisions trained on."""
    updates = max(1, -(-steps // (settings.num_envs * settings.num_steps)))
    chunk = min(updates, 10)  # updates per call of the compiled program: every call the same, one compile
    updates = -(-updates // chunk) * chunk
    start, run, batch = make_train(config, settings)
    runner = start(jax.random.PRNGKey(seed))
    done, last = 0, time.perf_counter()
    while done < updates:
        runner, (total, value_loss, entropy, hands) = run(runner, jnp.zeros(chunk))
        jax.block_until_ready(total)
        done += chunk
        now = time.perf_counter()
        rate, last = chunk * batch / (now - last), now  # this chunk's rate alone (the first pays the compile)
        print(f"{done * batch:,} steps ({done}/{updates} updates), {int(hands.sum()):,} hands: loss "
              f"{float(total[-1]):.3f}, value loss {float(value_loss[-1]):.3f}, entropy {float(entropy[-1]):.3f} "
              f"({rate:,.0f} steps/s over these {chunk} updates on {jax.devices()[0].platform})",
              flush=True)
    return jax.tree_util.tree_map(np.asarray, runner[0]), updates * batch


def save(params: dict[str, Any], config: GameConfig, settings: Settings, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"trunk{k}_{name}": layer[name] for k, layer in enumerate(params["trunk"]) for name in ("w", "b")}
    arrays |= {f"{head}_{name}": params[head][name] for head in ("policy", "value") for name in ("w", "b")}
    table = np.array(repr(sorted(config.options().items())))
    with path.open("wb") as file:
        np.savez(file, table=table, **arrays)


def load(path: Path, config: GameConfig) -> FunctionPolicy:
    """The saved network as a policy of the harness, in numpy: its most probable legal move."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["table"]) != repr(sorted(config.options().items())):
                raise ValueError(f"it was trained at another table ({saved['table']})")
            layers = sum(1 for name in saved.files if name.startswith("trunk") and name.endswith("_w"))
            params = {"trunk": [{"w": saved[f"trunk{k}_w"], "b": saved[f"trunk{k}_b"]} for k in range(layers)],
                      "policy": {"w": saved["policy_w"], "b": saved["policy_b"]},
                      "value": {"w": saved["value_w"], "b": saved["value_b"]}}
    except (OSError, KeyError, ValueError) as error:
        raise ValueError(f"{path} is not a network saved by jax_ppo.py: {error}") from None

    def predict(observation: np.ndarray, mask: np.ndarray) -> int:
        logits, _ = forward(params, observation[None], xp=np)
        return int(np.where(mask.astype(bool), logits[0], -np.inf).argmax())

    return FunctionPolicy(config, predict=predict, label=f"jax_ppo({path.name})", one_hand=True)


def main(argv: Sequence[str] | None = None) -> SavedRun:
    """Train, save the network, load it back into numpy and rate it."""
    _, args = parse_run(argv, __doc__.split("\n")[0], DEFAULT_STEPS, Path("runs/jax_ppo/network.npz"), Settings)
    settings: Settings = args.settings
    if settings.num_envs * settings.num_steps % settings.num_minibatches:
        raise SystemExit(f"jax_ppo.py: --num-envs x --num-steps ({settings.num_envs * settings.num_steps}) must "
                         f"split into --num-minibatches ({settings.num_minibatches}) equal minibatches")
    print(f"PPO in JAX at {describe_table(args.table)}: {asdict(settings)}", flush=True)
    started = time.perf_counter()
    params, steps = train(args.table, args.steps, args.seed, settings)
    seconds = time.perf_counter() - started
    save(params, args.table, settings, args.out)
    print(f"trained {steps:,} steps at {describe_table(args.table)} in {seconds:.0f} s; saved {args.out}",
          flush=True)
    policy = load(args.out, args.table)
    rating = rate(policy, args.eval_hands, args.rating_seed, table=args.table, bench_mode=args.bench)
    return SavedRun(args.out, steps, seconds, rating)


if __name__ == "__main__":
    main()
