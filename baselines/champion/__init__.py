"""The champion: information-set search over the hidden hands, guided by a value network (docs/champion.md)."""

from baselines.champion.oracle import OraclePolicy
from baselines.champion.policy import ChampionPolicy

__all__ = ["ChampionPolicy", "OraclePolicy"]
