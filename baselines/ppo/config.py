"""The PPO run's configuration: one frozen dataclass, the one source of its defaults.

Every field carries its ``dominoes train ppo`` option (:mod:`baselines.learning.options`) and is
checked on construction, so a configuration that exists is valid, whether typed on the command
line or read back from a weights file (which stores it as JSON, :meth:`PPOConfig.to_dict`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from baselines.learning import options
from baselines.learning.config import TABLE_FIELDS, table_from_fields
from baselines.learning.options import bounded, option
from baselines.ppo.features import FEATURES, features_size
from baselines.ppo.history import HISTORY, history_size
from dominoes_env.core import validation
from dominoes_env.core.config import TABLE_RULE_NAMES, GameConfig, make_config
from dominoes_env.core.observation import observation_layout
from dominoes_env.core.rewards import REWARD_MODES

SELF_PLAY = "self"  #: the opponents' name for self-play: one network in every seat
ACTIVATIONS = ("tanh", "relu")
POLICY_HEADS = ("actions", "afterstates")
POOL_SAMPLING = ("uniform", "latest", "prioritised")
DEVICES = ("auto", "cpu", "cuda")
MAX_STEPS = 10**12  #: learner steps of one run
MAX_WIDTH = 4096  #: units of one hidden layer
MAX_LAYERS = 8
MAX_BATCH_ROWS = 2**24  #: games x rollout steps of one update (its memory: rows x observation bytes)
NUM_ENVS = 1024  #: the default games stepped side by side
ROLLOUT_STEPS = 32  #: the default steps of every game in one rollout
#: fields a file written before them lacks (they take their default)
ADDED_LATER = ("history", "features", "value_warmup")


def _opponents(name: str, value: Any) -> tuple[str, ...]:
    """"self", or the pool's first members: policy specs (checked against the registry when the run starts)."""
    if isinstance(value, str):
        value = options.names(value)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= options.MAX_EVAL_OPPONENTS:
        raise ValueError(f"{name} must be 'self' or 1 to {options.MAX_EVAL_OPPONENTS} policy specs, got {value!r}")
    names = tuple(options.opponent(f"{name} entry", who) for who in value)
    if SELF_PLAY in names and len(names) > 1:
        raise ValueError(f"{name}: 'self' is the whole choice (self-play), or leave it out to train one seat against "
                         f"a pool of the specs listed")
    return names


def _hidden(name: str, value: Any) -> tuple[int, ...]:
    if isinstance(value, int):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= MAX_LAYERS:
        raise ValueError(f"{name} must be 1 to {MAX_LAYERS} layer widths, got {value!r}")
    return tuple(validation.integer(f"{name} (each)", width, 1, MAX_WIDTH) for width in value)


def _choice(choices: tuple[str, ...]) -> Any:
    return lambda name, value: validation.choice(name, value, choices)


def _widths(text: Any) -> Any:
    return tuple(options.number(part) for part in text.split(",")) if isinstance(text, str) else text


@dataclass(frozen=True)
class PPOConfig:
    """A PPO self-play run (stored in its weights file's metadata). A value out of bounds is a
    ValueError on construction that names the field, the value and what is allowed."""

    game: GameConfig = field(default_factory=lambda: make_config(4, 9))
    """The table it learns (``--players``, ``--highest``, ``--rules`` and the table rules)."""
    steps: int = field(default=10_000_000, metadata=bounded(
        "learner steps: decisions the network learns from; the run stops at the first whole rollout at or past "
        f"this, so it rounds up (a rollout: --num-envs x --rollout-steps decisions, "
        f"{NUM_ENVS * ROLLOUT_STEPS:,} by default in self-play; with a pool only the learner's seat counts, "
        "about 1/--players of that)", 0, MAX_STEPS))
    """Learner steps: every decision of the learner in every game is one (all seats in self-play)."""
    seed: int = field(default=0, metadata=option("--seed", "seed of the whole run", options.seed, options.number))
    """Seeds the initial weights, the deals, the sampled moves and the opponents' draws."""
    opponents: tuple[str, ...] = field(default=(SELF_PLAY,), metadata=option(
        "--opponents", "'self' (one network in every seat) or the pool's first members, comma-separated (the "
        "learner then plays one seat, the others drawn from the pool at every game)", _opponents, options.names,
        options.show_names))
    """"self": one network plays every seat and every decision is a sample. Otherwise the learner
    plays one seat of each game (rotating), the other seats drawn at every new game from an
    :class:`~baselines.selfplay.pool.OpponentPool` that starts with these specs."""
    snapshot_every: int = field(default=0, metadata=bounded(
        "learner steps between frozen copies of the learner joining the pool (0: none; pool runs only)", 0, MAX_STEPS))
    """With a pool: every this many steps a frozen copy of the learner joins it (0: never)."""
    pool_sampling: str = field(default="uniform", metadata=option(
        "--pool-sampling", f"how a pool draws: {', '.join(POOL_SAMPLING)}", _choice(POOL_SAMPLING), str))
    """How the pool draws its members (:data:`baselines.selfplay.pool.SAMPLING`)."""
    num_envs: int = field(default=NUM_ENVS, metadata=bounded("games stepped side by side", 1, 1_000_000))
    """Games on the batched engine (:class:`dominoes_env.VectorDominoes`), stepped in lockstep."""
    rollout_steps: int = field(default=ROLLOUT_STEPS, metadata=bounded("steps of every game in one rollout",
                                                                       1, 100_000))
    """Global steps of every game per rollout: an update learns from num_envs x rollout_steps decisions."""
    hidden: tuple[int, ...] = field(default=(128, 128), metadata=option(
        "--hidden", f"hidden layer widths, comma-separated (1-{MAX_LAYERS} layers of 1-{MAX_WIDTH})", _hidden, _widths,
        lambda value: ",".join(map(str, value))))
    """Widths of the shared trunk's hidden layers (the policy and value heads sit on the last)."""
    activation: str = field(default="tanh", metadata=option(
        "--activation", f"the trunk's activation: {', '.join(ACTIVATIONS)}", _choice(ACTIVATIONS), str))
    policy_head: str = field(default="afterstates", metadata=option(
        "--policy-head", "how the policy weighs the legal moves: actions (a logit per action of the table) or "
        "afterstates (a score per legal move, from the position it leads to)", _choice(POLICY_HEADS), str))
    """:mod:`baselines.ppo.heads`: "actions", masked logits over the action table (one pass a
    decision), or "afterstates", the network's score of each legal move's after-state."""
    history: str = field(default="none", metadata=option(
        "--history", "what the network reads of the hand so far besides the observation: none, or passes (for "
        "every other seat and pip value, whether its passes proved it holds no such tile)", _choice(HISTORY), str))
    """:mod:`baselines.ppo.history`: "none", the observation alone; "passes", also the facts the
    hand's passes proved (a player with it keeps them through the hand: ``ppo_history``)."""
    features: str = field(default="none", metadata=option(
        "--features", "what the network reads besides the observation that it computes from it: none, or "
        "best_chain (td_lambda's best chain of the own hand, beside every position)", _choice(FEATURES), str))
    """:mod:`baselines.ppo.features`: "none", the observation alone; "best_chain", also the numbers of
    the own hand's best chain that td_lambda reads, after each vector the network is given."""
    learning_rate: float = field(default=1e-3, metadata=bounded("Adam's step size", 1e-7, 1.0))
    anneal: bool = field(default=True, metadata=option(
        "--anneal", "decay the learning rate linearly to 0 over the run (true/false)", options.flag, options.switch))
    """The learning rate falls linearly to 0 at `steps` (CleanRL's default)."""
    epochs: int = field(default=4, metadata=bounded("passes over each rollout", 1, 100))
    minibatches: int = field(default=8, metadata=bounded("minibatches per pass", 1, 4096))
    gamma: float = field(default=1.0, metadata=bounded("discount per decision of a seat (1: a hand pays once, at its "
                                                       "end)", 0.0, 1.0))
    gae_lambda: float = field(default=0.95, metadata=bounded("GAE's lambda, per decision of a seat", 0.0, 1.0))
    """GAE's lambda between one decision of a seat and its next (:func:`baselines.ppo.trainer.seat_advantages`)."""
    clip: float = field(default=0.2, metadata=bounded("PPO's clipping of the probability ratio", 0.0, 10.0))
    entropy: float = field(default=0.01, metadata=bounded("weight of the entropy bonus", 0.0, 10.0))
    value_weight: float = field(default=0.5, metadata=bounded("weight of the value loss", 0.0, 100.0))
    max_grad_norm: float = field(default=0.5, metadata=bounded("gradients clipped to this norm", 0.0, 1e6))
    value_warmup: int = field(default=0, metadata=bounded(
        "learner steps at the run's start in which only the value layer learns, the rest frozen (0: none): a critic "
        "for weights that came without one (dominoes train dagger's) before the policy moves", 0, MAX_STEPS))
    """PPO's first updates follow advantages from the critic; weights whose value layer never learned
    (DAgger fits the policy alone) would take steps of noise and lose what they were taught. For the
    run's first `value_warmup` learner steps the update fits the value layer alone, on the trunk's
    features as they are: the policy is exactly the initial one until then."""
    reward: str = field(default="zero_sum", metadata=option(
        "--reward", f"what a hand pays each seat: {', '.join(REWARD_MODES)}", _choice(REWARD_MODES), str))
    """The env's reward mode: "zero_sum" pays the others' mean pips minus one's own, the margin
    the evaluations report; "score" pays minus one's own pips."""
    reward_scale: float = field(default=0.05, metadata=bounded("rewards are multiplied by this for the critic",
                                                               1e-6, 1e6))
    hands_per_game: int = field(default=1, metadata=bounded("hands per game (the rewards of every hand add up)",
                                                            1, 100))
    """Hands in one episode. The network sees the one-hand part of the observation (as the shipped
    players do), so it plays games of any length."""
    eval_every: int = field(default=2_000_000, metadata=bounded(
        "learner steps between evaluations and checkpoints (0: only at the end)", 0, MAX_STEPS))
    """Steps between evaluations; also the run's segments: at each one the games are dealt anew
    from the seed and the latest weights and the resume state are saved, so a run killed in
    between resumes there and repeats what followed exactly."""
    eval_hands: int = field(default=400, metadata=option(
        "--eval-hands", "hands per evaluation and opponent (at least --players)", options.eval_hands, options.number))
    eval_opponents: tuple[str, ...] = field(default=("persistent_line", "td_lambda"), metadata=option(
        "--eval-opponents", "fixed evaluation opponents, comma-separated (those that cannot play the table are "
        "left out)", options.eval_opponents, options.names, options.show_names))
    """Copies in every other seat, seats rotated, on the same held-out deals every time."""

    def __post_init__(self) -> None:
        if not isinstance(self.game, GameConfig):
            raise ValueError(f"game must be a GameConfig (dominoes_env.make_config(...)), got {self.game!r}")
        for spec in fields(self):
            if "option" in spec.metadata:
                object.__setattr__(self, spec.name, spec.metadata["option"].check(spec.name, getattr(self, spec.name)))
        if self.history != "none" and self.policy_head != "afterstates":
            raise ValueError(f"history={self.history!r} is read with the after-state head only (policy_head="
                             f"'afterstates'), got policy_head={self.policy_head!r}")
        if self.eval_hands < self.num_players:
            raise ValueError(f"eval_hands must be at least num_players ({self.num_players}), got {self.eval_hands}")
        if self.num_envs * self.rollout_steps > MAX_BATCH_ROWS:
            raise ValueError(f"num_envs x rollout_steps must be at most {MAX_BATCH_ROWS:,}, got "
                             f"{self.num_envs * self.rollout_steps:,}")
        if self.minibatches > self.num_envs * self.rollout_steps:
            raise ValueError(f"minibatches must be at most num_envs x rollout_steps "
                             f"({self.num_envs * self.rollout_steps}), got {self.minibatches}")

    @property
    def num_players(self) -> int:
        return self.game.num_players

    @property
    def self_play(self) -> bool:
        return self.opponents == (SELF_PLAY,)

    @property
    def observation_size(self) -> int:
        """The network's input: the one-hand observation of the table, the hand-made feature's numbers
        and the history feature's facts (in that order)."""
        return (observation_layout(self.game).size + features_size(self.game, self.features)
                + history_size(self.game, self.history))

    @property
    def rollout_rows(self) -> int:
        """Decisions of the games in one rollout (the learner's share of them, without self-play)."""
        return self.num_envs * self.rollout_steps

    def to_dict(self) -> dict[str, Any]:
        """As a file holds it: the table as flat fields, then every other field (tuples as lists); a field
        newer than the format at its default is left out, so a run's identity and files read as before."""
        rest = {spec.name: list(value) if isinstance(value := getattr(self, spec.name), tuple) else value
                for spec in fields(self) if spec.name != "game"
                and not (spec.name in ADDED_LATER and getattr(self, spec.name) == spec.default)}
        return {**self.game.options(), **rest}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, values: Any) -> PPOConfig:
        """The configuration a file holds (exactly the known fields, each within its bounds).

        Raises:
            ValueError: not a JSON object of the known fields, or a value out of bounds.
        """
        if not isinstance(values, dict):
            raise ValueError(f"the configuration must be a JSON object, got {type(values).__name__}")
        names = {spec.name for spec in fields(cls) if spec.name != "game"} | set(TABLE_FIELDS)
        unknown = sorted(set(values) - names)
        # a rule newer than the file: the rule book's; a field newer than the file: its default
        missing = sorted(names - set(values) - set(TABLE_RULE_NAMES) - set(ADDED_LATER))
        if unknown or missing:
            raise ValueError(f"unknown configuration field(s) {unknown}, missing {missing}" if unknown and missing
                             else f"unknown configuration field(s) {unknown}" if unknown
                             else f"missing configuration field(s) {missing}")
        game, rest = table_from_fields(values)
        return cls(game=game, **rest)

    @classmethod
    def from_json(cls, text: str) -> PPOConfig:
        return cls.from_dict(json.loads(text))
