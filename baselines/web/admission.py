"""What a request may seat at a web game: the server trusts nothing it was not started with.

A spec typed in a web page is text from whoever reaches the server, so ``dominoes serve``
reads it under stricter rules than the command line does (where the spec's author runs the
command):

- **Names**: the shipped players (:data:`SHIPPED`), by name. An import path or an installed
  package's entry point runs code, so it is taken only when the server was started with
  ``--allow-imports`` (and only on a local address).
- **Weights files**: only by a file name listed in ``--players-dir DIR`` (regular files
  directly inside it; no path, no link). Whatever is asked for, the refusal's words depend on
  the request and the listing alone, never on what exists elsewhere on disk.
- **Cost**: the parameters that make a decision slower are capped (:data:`PARAMETER_CAPS`,
  each measured below a second a decision at the largest table its weights ship for), and
  the champion's search, which stops on a clock, is given ``--max-decision-ms`` as its
  ceiling; the hints run under the same ceiling.

Each refusal is one ValueError line that names the field, what was asked and what is allowed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baselines.advice import chosen_specs
from baselines.policies import registry, specs
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig

#: The players a page may name: the hand-crafted ones and every learned player that ships.
SHIPPED = ("champion", "td_lambda", "lookahead", "linear_sarsa", "persistent_line", "best_line", "double", "greedy",
           "random")
#: Parameters whose value sets the cost of a decision, with the most a request may ask for.
#: Measured by the decision's time (docs/serve.md has the command): the lookahead at these caps
#: took a median of 18-39 ms a decision at 8 players with double-12 (Mexican Train), at 2 players
#: and at 4 players with double-9, at most 0.15 s except at 2 players, where long hands took up to
#: 2.6 s (the same order as the champion's clock: a page can ask no more of one decision than that);
#: the champion's 256 worlds are sampled in well under its clock (its simulations stop on the clock).
PARAMETER_CAPS: dict[str, dict[str, int]] = {
    "champion": {"simulations": 10_000, "worlds": 256},
    "lookahead": {"samples": 256, "depth": 8},
}
#: Policies whose search stops on a clock: their ``milliseconds`` parameter is the server's ceiling.
CLOCKED = ("champion",)
#: The default ceiling of one decision of an opponent or a hint, in milliseconds.
MAX_DECISION_MS = 1000.0
#: A file name in --players-dir: no path, no hidden file, printable ASCII.
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")


@dataclass(frozen=True)
class WebOpponent:
    """An opponent of a web game: its label as the page and the record show it (weights by
    their file name), and the spec that is built (the file's full path, the clock's ceiling)."""

    label: str
    spec: specs.PolicySpec


@dataclass(frozen=True)
class Admission:
    """What requests may seat, as the server was started.

    Attributes:
        players_dir: the directory whose weights files a spec may name by file name (None: none).
        allow_imports: import paths and entry points are taken (they run code on the server).
        max_decision_ms: the ceiling of one decision of a clocked search (the champion's).
    """

    players_dir: Path | None = None
    allow_imports: bool = False
    max_decision_ms: float = MAX_DECISION_MS

    def __post_init__(self) -> None:
        validation.real("max_decision_ms", self.max_decision_ms, 10.0, 60_000.0)

    def weights_files(self) -> list[str]:
        """The file names a spec may give as weights: regular files directly in `players_dir`
        (links are not followed), sorted."""
        if self.players_dir is None:
            return []
        with os.scandir(self.players_dir) as entries:
            return sorted(entry.name for entry in entries
                          if entry.is_file(follow_symlinks=False) and _FILE_NAME.fullmatch(entry.name))

    def opponents(self, texts: Sequence[str] | None, config: GameConfig) -> list[WebOpponent]:
        """One opponent per other seat from a request's ``opponents`` (as ``dominoes play``
        reads them: none is the default opponent, one fills every seat), each admitted and
        built once here.

        Raises:
            ValueError: one line naming ``opponents``: a spec that is not admitted, or cannot
                play the table.
        """
        chosen = chosen_specs(texts, config, what="opponents")
        admitted = {spec: self.admit(spec) for spec in chosen}
        for opponent in admitted.values():
            try:
                registry.check(opponent.spec, config, shown_as=opponent.label)
            except ValueError as error:  # a file of the players directory by its name, as it was asked for
                reason = str(error).splitlines()[0]
                if self.players_dir is not None:
                    reason = reason.replace(str(self.players_dir) + os.sep, "")
                raise ValueError(f"opponents: {reason}") from None
        return [admitted[spec] for spec in chosen]

    def admit(self, spec: specs.PolicySpec) -> WebOpponent:
        """The opponent a spec stands for on this server, or a ValueError saying why it is refused."""
        shipped = spec.name in SHIPPED
        if not shipped and not self.allow_imports:
            raise ValueError(f"opponents: this server seats the shipped players ({', '.join(SHIPPED)}), got "
                             f"{spec.name!r} (import paths are taken only by a server started with --allow-imports)")
        params = dict(spec.params)
        if "checkpoint" in params:
            params["checkpoint"] = self._weights_path(params["checkpoint"])
        if shipped:
            for name, cap in PARAMETER_CAPS.get(spec.name, {}).items():
                if name in params:
                    validation.integer(f"opponents: {spec.name}'s {name}", params[name], 1, cap,
                                       allowed="on this server")
            if spec.name in CLOCKED:
                params["milliseconds"] = self._clock(spec.name, params.get("milliseconds"))
        return WebOpponent(spec.label, specs.PolicySpec.of(spec.name, params))

    def hint_parameters(self) -> dict[str, dict[str, Any]]:
        """The parameters of the hint players on this server: the clocked searches under the ceiling."""
        return {name: {"milliseconds": self.max_decision_ms} for name in CLOCKED}

    def _clock(self, name: str, asked: Any) -> float:
        if asked is None:
            return self.max_decision_ms
        return validation.real(f"opponents: {name}'s milliseconds", asked, 0.1, self.max_decision_ms,
                               allowed="the server's --max-decision-ms")

    def _weights_path(self, asked: Any) -> str:
        """The full path of a weights file named in a spec: a name the listing holds. The message
        is the same for every name the listing lacks, whatever exists on disk."""
        if self.players_dir is None:
            raise ValueError("opponents: this server takes no weights files (start it with --players-dir DIR to "
                             "offer the files in DIR by name)")
        listed = self.weights_files()
        if not isinstance(asked, str) or asked not in listed:
            shown = ", ".join(listed[:20]) + (", ..." if len(listed) > 20 else "") if listed else "none"
            raise ValueError(f"opponents: weights are named by a file of the players directory ({shown}), got "
                             f"{validation.shown(asked)}")
        assert self.players_dir is not None
        return str(self.players_dir / asked)

