"""Which games exist: the table size, the table rules, validation, and the derived counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypedDict

from dominoes_env.core import validation
from dominoes_env.core.tiles import TileSet, tile_set

if TYPE_CHECKING:
    from typing_extensions import Unpack

MIN_PLAYERS, MAX_PLAYERS = 2, 8
MIN_HIGHEST, MAX_HIGHEST = 6, 18
MAX_HANDS_PER_GAME = 1000  # a full game is N+1 hands; longer games wrap around the engines
MAX_HAND_INDEX = MAX_HANDS_PER_GAME - 1  #: a hand's number in its game: 0 to this, wherever one is taken

#: Named rule sets: presets of the table rules, by the names players use. "mexican_train" is the
#: game most people play (with a double-twelve set): a boneyard, and doubles that must be covered.
RULE_SETS: dict[str, dict[str, Any]] = {
    "rule_book": {"boneyard": False, "cover_doubles": False},
    "mexican_train": {"boneyard": True, "cover_doubles": True},
}

#: Tiles each player is dealt when the game has a boneyard, for the double-12 set (91 tiles):
#: the common Mexican Train rule (2-4 players 15, 5-6 players 12, 7-8 players 10).
DOUBLE_TWELVE_DEAL = {2: 15, 3: 15, 4: 15, 5: 12, 6: 12, 7: 10, 8: 10}


def boneyard_deal_size(num_players: int, highest_double: int) -> int:
    """Tiles each player is dealt with a boneyard: the double-12 count scaled to the set's size.

    ``round(DOUBLE_TWELVE_DEAL[n] * T / 91)``, at least one tile, so that every set leaves
    about the same share of its tiles face down as double-12 does (34% at 4 players, 21% at
    6, 12% at 8): 15 for 4 players with double-12, 9 with double-nine, 5 with double-six;
    :func:`boneyard_table` prints every case.
    """
    num_tiles = (highest_double + 1) * (highest_double + 2) // 2
    return max(1, int(DOUBLE_TWELVE_DEAL[num_players] * num_tiles / 91 + 0.5))


def boneyard_table() -> str:
    """The deal sizes with a boneyard, as a Markdown table (players x set)."""
    sets = range(MIN_HIGHEST, MAX_HIGHEST + 1, 3)
    rows = ["| players | " + " | ".join(f"double-{n} ({(n + 1) * (n + 2) // 2} tiles)" for n in sets) + " |",
            "|---|" + "---:|" * len(sets)]
    for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        cells = []
        for highest in sets:
            total, each = (highest + 1) * (highest + 2) // 2, boneyard_deal_size(players, highest)
            cells.append(f"{each} (boneyard {total - players * each})")
        rows.append(f"| {players} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


@dataclass(frozen=True)
class TableRule:
    """One table rule, declared once in :data:`TABLE_RULES`: its keyword, its option on the command
    line, its values, its help and its words are read from here by the config, the command line,
    OpenSpiel's parameters and the docs' option table.

    ``values`` holds the rule book's value first, then the other one: the compiled engine keeps
    each table rule as one bit of its ``RULES`` header slot, the constant ``engine_flag`` names in
    :mod:`dominoes_env.core.rules`, set when the rule is not at the rule book's value.
    """

    name: str  #: the keyword of make_config, the envs and the files, e.g. "cover_doubles"
    values: tuple[Any, Any]  #: (the rule book's value, the other one)
    help: str  #: one line, for ``--help`` and the docs
    words: str  #: how a table with the rule on is described, e.g. "doubles covered"
    engine_flag: str  #: the bit's constant in dominoes_env.core.rules

    @property
    def default(self) -> Any:
        return self.values[0]

    @property
    def is_switch(self) -> bool:
        """A rule that is on or off (a command-line flag) rather than a choice between two names."""
        return self.values == (False, True)

    @property
    def option(self) -> str:
        """The command line's spelling, e.g. "--cover-doubles"."""
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> Any:
        """The value if it is one of the rule's, else a ValueError that lists them."""
        if self.is_switch:
            return validation.flag(self.name, value)
        return validation.choice(self.name, value, self.values)


#: The table rules, each in one row: a new rule is a row here, its field in :class:`GameConfig`
#: and :class:`TableRuleOptions` (typed copies for mypy; tests/test_table_rule_list.py checks they
#: agree), and its engine code. Everything else (validation, words, command-line options,
#: OpenSpiel's parameters, the docs' table) is derived from this list.
TABLE_RULES: tuple[TableRule, ...] = (
    TableRule("boneyard", (False, True),
              "deal part of the set, keep the rest face down; a player who cannot play draws one tile",
              "boneyard", "BONEYARD_RULE"),
    TableRule("cover_doubles", (False, True), "a double must be covered before any other move",
              "doubles covered", "COVER_DOUBLES_RULE"),
    TableRule("first_player", ("engine_holder", "left_of_engine"),
              "who moves first: the engine's holder (default) or the player after it",
              "left of the engine starts", "LEFT_OF_ENGINE_RULE"),
)
TABLE_RULE_NAMES = tuple(rule.name for rule in TABLE_RULES)


def table_rule_options() -> str:
    """The table rules as a Markdown table (keyword, command-line option, values, meaning), as
    docs/table_rules.md prints it: derived from :data:`TABLE_RULES`, so the docs cannot drift."""
    rows = ["| keyword | command line | values (the rule book's first) | the rule |", "|---|---|---|---|"]
    for rule in TABLE_RULES:
        values = ", ".join(f"`{value!r}`" for value in rule.values)
        option = f"`{rule.option}`" if rule.is_switch else f"`{rule.option} {rule.values[1]}`"
        rows.append(f"| `{rule.name}` | {option} | {values} | {rule.help} |")
    return "\n".join(rows)


class TableRuleOptions(TypedDict, total=False):
    """The table rules as keywords (``**table_rules`` of make_config and every view), each optional:
    the typed copy of :data:`TABLE_RULES` that the signatures name. ``rules`` names a preset
    (:data:`RULE_SETS`), e.g. ``rules="mexican_train"``."""

    rules: str
    boneyard: bool
    cover_doubles: bool
    first_player: str


@dataclass(frozen=True)
class GameConfig:
    """A game: the number of seats, the highest pip value, and the table rules.

    The default rules are the rule book's (docs/RULES.md). The options are the table rules
    most people play (rule book, "Table rules"):

    - ``boneyard``: deal :func:`boneyard_deal_size` tiles each and keep the rest face down; a
      player with no legal move draws one tile (the draw action) and may play it at once.
    - ``cover_doubles``: a double must be covered (the next tile goes on it) before any other
      move is allowed.
    - ``first_player``: "engine_holder" (the player who holds the engine moves first) or
      "left_of_engine" (the player after it).

    Construct through :func:`make_config`, which refuses combinations the rules do not
    allow with a ValueError that says what is possible. The rule fields are the typed copy of
    :data:`TABLE_RULES` (same names, same order, the rule book's values as defaults).
    """

    num_players: int
    highest_double: int
    boneyard: bool = False
    cover_doubles: bool = False
    first_player: str = "engine_holder"

    @cached_property
    def tiles(self) -> TileSet:
        return tile_set(self.highest_double)

    @property
    def num_tiles(self) -> int:
        return self.tiles.num_tiles

    @property
    def num_lines(self) -> int:
        """Seat lines plus the dummy line."""
        return self.num_players + 1

    @property
    def pass_action(self) -> int:
        return self.num_lines * self.num_tiles

    @property
    def draw_action(self) -> int | None:
        """The draw from the boneyard (right after the pass), or None without a boneyard."""
        return self.pass_action + 1 if self.boneyard else None

    @property
    def num_actions(self) -> int:
        return self.pass_action + (2 if self.boneyard else 1)

    @property
    def is_default(self) -> bool:
        """Whether the table rules are the rule book's own (no option set)."""
        return not self.rules_set()

    @property
    def deal_size(self) -> int:
        """Tiles each seat is dealt with a boneyard (without one every tile is dealt: floor(T/n),
        one more for T mod n seats)."""
        return boneyard_deal_size(self.num_players, self.highest_double) if self.boneyard else \
            self.num_tiles // self.num_players

    @property
    def boneyard_at_deal(self) -> int:
        """Tiles left face down after the deal (0 without a boneyard)."""
        return self.num_tiles - self.num_players * self.deal_size if self.boneyard else 0

    @property
    def max_hand_size(self) -> int:
        """Largest hand a seat can hold: the largest deal (before the engine is taken out),
        plus the whole boneyard when there is one."""
        if self.boneyard:
            return self.deal_size + self.boneyard_at_deal
        return -(-self.num_tiles // self.num_players)

    @property
    def rule_flags(self) -> int:
        """The table rules as the compiled engine's flags (its ``RULES`` header slot)."""
        from dominoes_env.core import rules  # numba kernels: imported when first needed

        flags = 0
        for rule, _ in self.rules_set():
            flags |= getattr(rules, rule.engine_flag)
        return flags

    @property
    def rule_set(self) -> str | None:
        """The name of the preset these table rules are (:data:`RULE_SETS`, the engine's holder
        moving first), or None."""
        mine = self.rules()
        return next((name for name, preset in RULE_SETS.items()
                     if all(mine[rule.name] == preset.get(rule.name, rule.default)  # type: ignore[literal-required]
                            for rule in TABLE_RULES)), None)

    @property
    def shared_line(self) -> str:
        """The shared line's name in the table's rule set: "Mexican train" under the Mexican Train
        rules, "dummy line" in the rule book's game."""
        return "Mexican train" if self.rule_set == "mexican_train" else "dummy line"

    def rules_text(self) -> str:
        """The table rules in words, e.g. "boneyard, doubles covered" or "rule book"."""
        return ", ".join(rule.words for rule, _ in self.rules_set()) or "rule book"

    def rules(self) -> TableRuleOptions:
        """The table rules as keyword arguments of :func:`make_config` (for files and records), every
        rule of :data:`TABLE_RULES` in its order."""
        return {rule.name: getattr(self, rule.name) for rule in TABLE_RULES}  # type: ignore[return-value]

    def rules_set(self) -> list[tuple[TableRule, Any]]:
        """(rule, value) for each table rule off the rule book's value, in :data:`TABLE_RULES`' order:
        what the words, the engine's flags and the command line name."""
        return [(rule, getattr(self, rule.name)) for rule in TABLE_RULES if getattr(self, rule.name) != rule.default]

    def options(self) -> dict[str, Any]:
        """The whole table as keyword arguments of :func:`make_config` and of every env
        (``num_players``, ``highest_double`` and the table rules): how files and configs hold it."""
        return {"num_players": self.num_players, "highest_double": self.highest_double, **self.rules()}

    @property
    def default_num_hands(self) -> int:
        """A full game: engines N, N-1, ..., 0."""
        return self.highest_double + 1

    @property
    def max_hand_pips(self) -> int:
        """The most pips one hand can hold: the heaviest :attr:`max_hand_size` tiles of the set."""
        heaviest = sorted(self.tiles.pips.tolist(), reverse=True)
        return int(sum(heaviest[:self.max_hand_size]))

    @property
    def total_pips(self) -> int:
        """Pip sum of the whole set: an upper bound on any hand score."""
        n = self.highest_double
        return n * (n + 1) * (n + 2) // 2


def _known_keywords(table_rules: Mapping[str, Any]) -> Mapping[str, Any]:
    """The keywords as given, or a TypeError that names those that are no table rule."""
    unknown = sorted(set(table_rules) - set(TableRuleOptions.__annotations__))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {unknown}; the table rules are "
                        f"{sorted(TableRuleOptions.__annotations__)}")
    return table_rules


def make_config(num_players: int = 4, highest_double: int = 9, **table_rules: Unpack[TableRuleOptions]) -> GameConfig:
    """Validate a table size and its table rules and return the GameConfig.

    The table rules are keywords (:data:`TABLE_RULES`: ``boneyard``, ``cover_doubles``,
    ``first_player``; None or absent is the rule book's value). ``rules`` names a preset of them
    (:data:`RULE_SETS`: "rule_book", the default, or "mexican_train": boneyard and covered
    doubles); a rule given beside it must agree with it, so
    ``make_config(6, 12, rules="mexican_train", first_player="left_of_engine")`` is fine and
    ``boneyard=False`` beside "mexican_train" is refused.

    Raises:
        TypeError: a keyword that is no table rule (the message lists them).
        ValueError: if the number of players is outside 2..8, the set is outside
            double-6..double-18, the set cannot give each player a tile besides the engine,
            a rule is not one of its values, or a rule contradicts the named rule set.
    """
    given: dict[str, Any] = dict(_known_keywords(table_rules))
    named = given.pop("rules", None)
    preset = RULE_SETS[validation.choice("rules", named, RULE_SETS)] if named is not None else {}
    values = {}
    for rule in TABLE_RULES:
        value = given.get(rule.name)
        if value is not None and rule.name in preset and value != preset[rule.name]:
            raise ValueError(f"rules={named!r} sets {rule.name}={preset[rule.name]!r}; leave {rule.name} out or "
                             f"choose other rules (the rule sets: {sorted(RULE_SETS)})")
        values[rule.name] = rule.check(preset.get(rule.name, rule.default) if value is None else value)
    num_players = validation.integer("num_players", num_players, MIN_PLAYERS, MAX_PLAYERS, "players at the table")
    highest_double = validation.integer("highest_double", highest_double, MIN_HIGHEST, MAX_HIGHEST,
                                        f"the double-{MIN_HIGHEST} to double-{MAX_HIGHEST} sets")
    num_tiles = (highest_double + 1) * (highest_double + 2) // 2
    # The engine holder loses one tile from the smallest possible hand.
    if num_tiles // num_players - 1 < 1:
        raise ValueError(
            f"a double-{highest_double} set ({num_tiles} tiles) cannot give each of "
            f"{num_players} players a tile besides the engine; use at most "
            f"{num_tiles // 2} players or a larger set"
        )
    return GameConfig(num_players, highest_double, **values)


def table_of(num_players: int | GameConfig, highest_double: int = 9,
             table_rules: Mapping[str, Any] | None = None) -> GameConfig:
    """The table a view's arguments give: a GameConfig as it is (its rules included), or
    :func:`make_config` of the size and the `table_rules` keywords the view received.

    Raises:
        TypeError: a keyword that is no table rule (the message lists the rules), or rules given
            both in a GameConfig and as keywords.
        ValueError: a bad size or rule value.
    """
    rules: dict[str, Any] = dict(_known_keywords(table_rules or {}))
    if isinstance(num_players, GameConfig):
        if rules:
            raise TypeError("give the table rules in the GameConfig or as keywords, not both")
        return num_players
    return make_config(num_players, highest_double, **rules)


class PlaysAtTable:
    """``num_players`` and ``highest_double`` for a class that holds its table as ``game`` (a league,
    a learner's run): the size read where it is kept, never stored twice."""

    game: GameConfig

    @property
    def num_players(self) -> int:
        return self.game.num_players

    @property
    def highest_double(self) -> int:
        return self.game.highest_double


def describe_table(config: GameConfig) -> str:
    """E.g. "4 players, double-9" or "6 players, double-12 (mexican_train: boneyard, doubles covered)"."""
    named = f"{config.rule_set}: " if config.rule_set not in (None, "rule_book") else ""
    rules = "" if config.is_default else f" ({named}{config.rules_text()})"
    return f"{config.num_players} players, double-{config.highest_double}{rules}"


def table_arguments(config: GameConfig, size: bool = True) -> str:
    """The table as the ``dominoes`` commands' options (``--players``, ``--highest`` when `size`,
    then the rules: ``--rules mexican_train``, or one option per rule; nothing for the rule book),
    e.g. " --players 6 --highest 12 --rules mexican_train": what a report or an error message
    prints so that a run can be repeated."""
    sized = f" --players {config.num_players} --highest {config.highest_double}" if size else ""
    if config.rule_set == "mexican_train":
        return sized + " --rules mexican_train"
    options = [rule.option if rule.is_switch else f"{rule.option} {value}" for rule, value in config.rules_set()]
    return sized + "".join(" " + option for option in options)


def config_of(table: int | GameConfig, highest_double: int = 9) -> GameConfig:
    """A GameConfig from a table size, or the given GameConfig itself.

    Functions that take ``(num_players, highest_double)`` also take a whole GameConfig in
    place of `num_players` (with its table rules); this is where that is decided.
    """
    if isinstance(table, GameConfig):
        return table
    return make_config(table, highest_double)
