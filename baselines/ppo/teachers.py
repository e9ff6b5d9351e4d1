"""DAgger's teacher (:mod:`baselines.ppo.dagger`): a player that labels many positions at once.

Torch-free, so that ``dominoes train dagger`` refuses a teacher it cannot use before torch is
imported or anything is written, and so that every ``dominoes train`` command builds its options
without torch.
"""

from __future__ import annotations

from baselines.policies import registry, specs
from baselines.policies.policy import BatchPolicy, SeedLike
from dominoes_env.core.config import GameConfig, describe_table

#: The teacher when none is named: the strongest player that acts on many games at once.
DEFAULT_TEACHER = "td_lambda"


def make_teacher(spec_text: str, table: GameConfig, seed: SeedLike = None) -> BatchPolicy:
    """The teacher player of `spec_text` at `table`.

    Raises:
        ValueError: an unknown or malformed player, copies (one teacher labels every seat), a player
            that remembers within a hand or does not act on many games at once, or one that cannot
            play the table (one line).
    """
    spec, copies = specs.parse(spec_text)
    if copies != 1:
        raise ValueError(f"--teacher {spec_text!r}: one teacher labels every seat; give it without :COPIES")
    if not issubclass(registry.policy_class(spec.name), BatchPolicy):
        raise ValueError(f"--teacher {spec_text!r}: the teacher must be a player that keeps nothing between moves "
                         f"and acts on many games at once (td_lambda, ppo, linear_sarsa, ...)")
    try:
        teacher = registry.build(spec, table, seed=seed)
    except Exception as error:  # a bad parameter, a damaged or missing checkpoint, a failing import
        raise ValueError(f"--teacher {spec_text!r} cannot play {describe_table(table)}: {error}") from None
    assert isinstance(teacher, BatchPolicy)
    return teacher
