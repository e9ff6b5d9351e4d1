"""A picture of the table as an RGB image: the envs' ``render_mode="rgb_array"`` and ``dominoes replay``.

Drawn with Pillow, an optional extra (``pip install 'dominoes-env[image]'``); the rules and
the envs import this module only when a picture is asked for. One row per line: whose line
it is, its marker (a red flag while it is up), the tiles its owner holds, then its tiles with
their pips from the engine outwards (each tile turned so that its matching ends touch,
doubles crosswise, the last tile played outlined in yellow, a double waiting to be covered in
red) and its open value at the end (ringed in red where everyone may play). Above: the
hand, the engine, the table, whose turn, the boneyard. Below: the hands
:func:`~dominoes_env.core.render.shown_seats` shows.

Speed: Pillow draws each tile, text and mark once, on the background it will sit on, and
caches it; a frame is a copy of the background and slice assignments in numpy (well under a
millisecond for a 4-player double-nine table; ``python benchmarks/render_speed.py``).
Every frame of a :class:`TablePainter` has the same size (video recorders and GIFs need
that), fixed by the table, not by the position: a line longer than its row shows its newest
tiles after a "+k" count, and a hand wraps over as many rows as the largest hand of the
game can need.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from dominoes_env import files
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.render import HandsShown, check_hands_shown, oriented_line, shown_seats
from dominoes_env.core.state import HandState

MISSING_PILLOW = "pictures of the table need pillow: pip install 'dominoes-env[image]'"

try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError as error:  # one line that says what to install, wherever the picture was asked for
    raise ImportError(MISSING_PILLOW, name="PIL") from error

Colour = tuple[int, int, int]
FELT, ROW, MOVER_ROW = (24, 82, 56), (30, 96, 66), (44, 124, 86)
TEXT, DIM, WARNING, HIGHLIGHT = (247, 250, 252), (178, 200, 188), (255, 120, 110), (255, 214, 64)
IVORY, EDGE, STATION, FLAG = (247, 243, 227), (40, 40, 40), (200, 200, 190), (229, 62, 62)
#: Pip colour of each value, as commercial double-12 and larger sets colour them.
PIP_COLOURS = ((0, 0, 0), (43, 108, 176), (47, 133, 90), (197, 48, 48), (107, 70, 193), (183, 121, 31),
               (44, 122, 123), (151, 38, 109), (26, 32, 44), (192, 86, 33), (39, 103, 73), (42, 67, 101),
               (116, 42, 42), (85, 60, 154), (151, 90, 22), (40, 94, 97), (112, 36, 89), (74, 85, 104),
               (155, 44, 44))
LINE_SLOTS = 15  # tiles a line's row shows; a longer line shows its newest tiles
MARGIN, GAP, FONT_SIZE = 12, 4, 14
TEXT_LINE = FONT_SIZE + 8
SUPERSAMPLE = 4  # shapes are drawn this much larger and scaled down: smooth pips at any size


def cell_size(highest_double: int) -> int:
    """The side of a tile's half, in pixels: more room for the pips of larger sets."""
    return 24 if highest_double <= 9 else 28 if highest_double <= 12 else 32


def pip_positions(value: int) -> list[tuple[float, float]]:
    """Where the pips of `value` sit in a unit square: the usual faces up to 9, then rows of up to
    ceil(sqrt(value)) pips, the last row centred."""
    classic = {0: "", 1: "4", 2: "08", 3: "048", 4: "0268", 5: "02468", 6: "023568", 7: "0234568",
               8: "01235678", 9: "012345678"}
    if value in classic:
        return [(0.22 + 0.28 * (int(k) % 3), 0.22 + 0.28 * (int(k) // 3)) for k in classic[value]]
    columns = math.ceil(math.sqrt(value))
    rows = math.ceil(value / columns)
    step = 0.8 / max(rows, columns)
    positions = []
    for row in range(rows):
        in_row = min(columns, value - row * columns)
        left = 0.5 - step * (in_row - 1) / 2
        positions += [(left + step * k, 0.5 - step * (rows - 1) / 2 + step * row) for k in range(in_row)]
    return positions


# ---------------------------------------------------------------------- sprites (drawn once, cached)
@cache
def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=FONT_SIZE)  # a scalable font (Pillow 10.1 and later)
    except TypeError:
        return ImageFont.load_default()  # older Pillow: its fixed bitmap font


def _scaled(big: Image.Image, width: int, height: int) -> np.ndarray:
    return np.asarray(big.resize((width, height), Image.Resampling.LANCZOS))


@cache
def _tile(first: int, second: int, cell: int, vertical: bool, outline: Colour | None, background: Colour
          ) -> np.ndarray:
    """A tile, `first` on the left (on top when `vertical`), on `background`."""
    s = SUPERSAMPLE
    width, height = (cell, 2 * cell) if vertical else (2 * cell, cell)
    big = Image.new("RGB", (width * s, height * s), background)
    draw = ImageDraw.Draw(big)
    draw.rounded_rectangle((0, 0, width * s - 1, height * s - 1), radius=cell * s // 6, fill=IVORY,
                           outline=outline or EDGE, width=(3 if outline else 1) * s)
    middle = cell * s
    divider = (middle // 5, middle, middle * 4 // 5, middle) if vertical else (middle, middle // 5, middle,
                                                                              middle * 4 // 5)
    draw.line(divider, fill=EDGE, width=s)
    for half, value in enumerate((first, second)):
        _pips(draw, value, (0, half * middle) if vertical else (half * middle, 0), middle)
    return _scaled(big, width, height)


def _pips(draw: ImageDraw.ImageDraw, value: int, corner: tuple[int, int], side: int) -> None:
    radius = side * (0.09 if value <= 9 else 0.36 / math.ceil(math.sqrt(value)))
    for x, y in pip_positions(value):
        cx, cy = corner[0] + x * side, corner[1] + y * side
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=PIP_COLOURS[value])


@cache
def _station(value: int, cell: int, background: Colour) -> np.ndarray:
    """The engine's end that every line starts from: its pips on a grey square."""
    s = SUPERSAMPLE
    big = Image.new("RGB", (cell * s, cell * s), background)
    draw = ImageDraw.Draw(big)
    draw.rounded_rectangle((0, 0, cell * s - 1, cell * s - 1), radius=cell * s // 6, fill=STATION, outline=EDGE,
                           width=s)
    _pips(draw, value, (0, 0), cell * s)
    return _scaled(big, cell, cell)


@lru_cache(maxsize=4096)
def _text(text: str, colour: Colour, background: Colour) -> np.ndarray:
    font = _font()
    width, height = max(1, math.ceil(font.getlength(text))), FONT_SIZE + 4
    image = Image.new("RGB", (width, height), background)
    ImageDraw.Draw(image).text((0, 0), text, fill=colour, font=font)
    return np.asarray(image)


@cache
def _open_value(value: int, open_to_all: bool, background: Colour) -> np.ndarray:
    """A line's open value in a disc, ringed in red where anyone may play on it."""
    s, side = SUPERSAMPLE, 2 * FONT_SIZE
    big = Image.new("RGB", (side * s, side * s), background)
    draw = ImageDraw.Draw(big)
    draw.ellipse((s, s, side * s - s, side * s - s), fill=IVORY if open_to_all else STATION,
                 outline=FLAG if open_to_all else EDGE, width=2 * s)
    disc = Image.fromarray(_scaled(big, side, side))
    font, text = _font(), str(value)
    ImageDraw.Draw(disc).text(((side - font.getlength(text)) / 2, (side - FONT_SIZE) / 2 - 2), text, fill=EDGE,
                              font=font)
    return np.asarray(disc)


@cache
def _mark(kind: str, background: Colour) -> np.ndarray:
    """The arrow at the player to move, or the flag of a marker that is up."""
    s, side = SUPERSAMPLE, FONT_SIZE
    big = Image.new("RGB", (side * s, side * s), background)
    draw = ImageDraw.Draw(big)
    if kind == "arrow":
        draw.polygon(((2 * s, 2 * s), (11 * s, 7 * s), (2 * s, 12 * s)), fill=HIGHLIGHT)
    else:
        draw.line((3 * s, s, 3 * s, 13 * s), fill=TEXT, width=2 * s)
        draw.polygon(((4 * s, s), (13 * s, 4 * s), (4 * s, 7 * s)), fill=FLAG)
    return _scaled(big, side, side)


# ---------------------------------------------------------------------- the layout of one table
@dataclass(frozen=True)
class _Layout:
    """Pixel sizes of one table's picture (the same for every frame)."""

    cell: int
    label_width: int
    width: int
    header: int
    row: int
    hand_slots: int
    hand_rows: int
    height: int

    @property
    def rows_top(self) -> int:
        return MARGIN + self.header

    @property
    def station_left(self) -> int:
        return MARGIN + self.label_width

    @property
    def tiles_left(self) -> int:
        return self.station_left + self.cell + GAP


def _layout(config: GameConfig, num_hands: int, show: HandsShown, captions: bool) -> _Layout:
    cell = cell_size(config.highest_double)
    font = _font()
    most = config.max_hand_pips
    widest = (f"player_{config.num_players - 1}", f"{most} pips left, game {most * num_hands}")
    label_width = int(max(font.getlength(text) for text in widest)) + 30
    width = MARGIN + label_width + cell + GAP + LINE_SLOTS * (2 * cell + GAP) + 3 * FONT_SIZE + MARGIN
    header = TEXT_LINE * (3 if captions else 2) + GAP
    row = 2 * cell + 2 * GAP
    hand_slots = (width - 2 * MARGIN) // (2 * cell + GAP)
    hand_rows = -(-config.max_hand_size // hand_slots)
    blocks = config.num_players if show == "all" else 1
    height = (MARGIN + header + config.num_lines * row + GAP
              + blocks * (TEXT_LINE + hand_rows * (cell + GAP)) + MARGIN)
    return _Layout(cell, label_width, width, header, row, hand_slots, hand_rows, height)


class _Frame:
    """A frame being composed: pastes of cached sprites into one numpy array."""

    def __init__(self, background: np.ndarray) -> None:
        self.pixels = background.copy()

    def paste(self, sprite: np.ndarray, x: int, y: int) -> int:
        """Put `sprite` with its top-left corner at (x, y), cut at the frame's edges; the x where it ends."""
        height, width = sprite.shape[:2]
        visible = self.pixels[y:y + height, x:x + width]  # a long caption or name is cut at the edge
        visible[:] = sprite[:visible.shape[0], :visible.shape[1]]
        return x + width

    def text(self, text: str, x: int, y: int, colour: Colour, background: Colour) -> int:
        return self.paste(_text(text, colour, background), x, y)

    def fill(self, box: tuple[int, int, int, int], colour: Colour) -> None:
        left, top, right, bottom = box
        self.pixels[top:bottom, left:right] = np.asarray(colour, dtype=np.uint8)


class TablePainter:
    """Draws positions of one table as RGB images, every frame the same size.

    Args:
        config: the table (players, set, table rules).
        num_hands: hands in the game (shown in the heading).
        show_hands: whose tiles are shown below the table: "mover" (the player to move),
            "all" (spectators, replays) or a seat number.
        captions: keep a line under the heading for a caption (a replay's move).
    """

    def __init__(self, config: GameConfig, num_hands: int = 1, show_hands: HandsShown = "mover",
                 captions: bool = False) -> None:
        self.config = config
        self.num_hands = num_hands
        self.show_hands = check_hands_shown("show_hands", show_hands, config.num_players)
        self.captions = captions
        self.layout = _layout(config, num_hands, self.show_hands, captions)
        self._background = self._empty_table()

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of every frame, in pixels."""
        return self.layout.width, self.layout.height

    def _empty_table(self) -> np.ndarray:
        layout = self.layout
        frame = _Frame(np.full((layout.height, layout.width, 3), FELT, dtype=np.uint8))
        for line in range(self.config.num_lines):
            frame.fill(self._row_box(line), ROW)
        return frame.pixels

    def blank(self) -> np.ndarray:
        """The table with nothing on it (before the first deal)."""
        return self._background.copy()

    def _row_box(self, line: int) -> tuple[int, int, int, int]:
        top = self.layout.rows_top + line * self.layout.row
        return MARGIN // 2, top + 1, self.layout.width - MARGIN // 2, top + self.layout.row - 1

    def draw(self, hand: HandState, hand_index: int = 0, game_scores: Sequence[int] | np.ndarray | None = None,
             caption: str = "") -> np.ndarray:
        """The position as a (height, width, 3) uint8 array.

        Args:
            hand: the position (a hand of this painter's table).
            hand_index: its number in the game (0 for the first).
            game_scores: scores by seat before this hand, shown beside each player (multi-hand games);
                once the hand is over they are shown with it counted, and the last hand of the game
                says who won it.
            caption: a line under the heading, if the painter keeps one (``captions=True``).
        """
        if hand.config != self.config:
            raise ValueError(f"this painter draws {describe_table(self.config)}, not {describe_table(hand.config)}")
        frame = _Frame(self._background)
        self._heading(frame, hand, hand_index, caption, game_scores)
        last = _last_played(hand)
        for line in range(self.config.num_lines):
            self._line(frame, hand, line, last, game_scores)
        self._hands(frame, hand)
        return frame.pixels

    def image(self, hand: HandState, hand_index: int = 0, game_scores: Sequence[int] | np.ndarray | None = None,
              caption: str = "") -> Image.Image:
        """:meth:`draw` as a Pillow image (for PNG and GIF files)."""
        return Image.fromarray(self.draw(hand, hand_index, game_scores, caption))

    # ------------------------------------------------------------------ parts
    def _heading(self, frame: _Frame, hand: HandState, hand_index: int, caption: str,
                 game_scores: Sequence[int] | np.ndarray | None) -> None:
        config, tiles = self.config, self.config.tiles
        engine = tiles.name(tiles.double(hand.engine_value))
        frame.text(f"Hand {hand_index + 1}/{self.num_hands}   engine {engine}   {describe_table(config)}",
                   MARGIN, MARGIN, TEXT, FELT)
        y = MARGIN + TEXT_LINE
        if hand.is_over:
            how = f"player_{hand.went_out} went out" if hand.went_out is not None else "blocked"
            x = frame.text(f"Hand over: {how}", MARGIN, y, HIGHLIGHT, FELT)
            if hand_index == self.num_hands - 1:  # the last hand: the game's result too
                x = frame.text(_result(_after_hand(hand, game_scores)), x + 24, y, HIGHLIGHT, FELT)
        else:
            drew = " (has drawn)" if hand.drew else ""
            x = frame.text(f"player_{hand.current_player} to move{drew}", MARGIN, y, HIGHLIGHT, FELT)
        if config.boneyard:
            x = frame.text(f"boneyard: {len(hand.boneyard)} face down", x + 24, y, DIM, FELT)
        if hand.double_to_cover is not None:
            frame.text(f"cover the double on {_line_name(config, hand.double_to_cover)}", x + 24, y, WARNING, FELT)
        if self.captions and caption:
            frame.text(caption, MARGIN, y + TEXT_LINE, DIM, FELT)

    def _line(self, frame: _Frame, hand: HandState, line: int, last: int | None,
              game_scores: Sequence[int] | np.ndarray | None) -> None:
        layout = self.layout
        top = layout.rows_top + line * layout.row
        moving = line == hand.current_player and not hand.is_over
        background = MOVER_ROW if moving else ROW
        if moving:
            frame.fill(self._row_box(line), MOVER_ROW)
        self._label(frame, hand, line, top + GAP, moving, background, game_scores)
        middle = top + layout.row // 2
        frame.paste(_station(hand.engine_value, layout.cell, background), layout.station_left,
                    middle - layout.cell // 2)
        played = oriented_line(hand, line)
        x = layout.tiles_left
        if len(played) > LINE_SLOTS:
            x = frame.text(f"+{len(played) - LINE_SLOTS + 1}", x, middle - TEXT_LINE // 2, DIM, background) + GAP
            played = played[-(LINE_SLOTS - 1):]
        to_cover = hand.double_to_cover == line
        for k, (tile, first, second) in enumerate(played):
            outline = WARNING if to_cover and k == len(played) - 1 else HIGHLIGHT if tile == last else None
            sprite = _tile(first, second, layout.cell, first == second, outline, background)
            x = frame.paste(sprite, x, middle - sprite.shape[0] // 2) + GAP
        frame.paste(_open_value(int(hand.open_values[line]), _open_to_all(hand, line), background), x,
                    middle - FONT_SIZE)

    def _label(self, frame: _Frame, hand: HandState, line: int, y: int, moving: bool, background: Colour,
               game_scores: Sequence[int] | np.ndarray | None) -> None:
        x, below = MARGIN + 14, y + TEXT_LINE - 2
        if moving:
            frame.paste(_mark("arrow", background), MARGIN - 4, y + 1)
        if line == self.config.num_players:
            frame.text("dummy", x, y, TEXT, background)
            frame.text("open" if hand.dummy_open else "closed", x, below, DIM, background)
            return
        end = frame.text(f"player_{line}", x, y, TEXT, background)
        if hand.marker_up[line]:
            frame.paste(_mark("flag", background), end + 6, y + 1)
        details = f"{int(hand.scores()[line])} pips left" if hand.is_over else f"{int(hand.hand_sizes[line])} tiles"
        if game_scores is not None:
            details += f", game {int(_after_hand(hand, game_scores)[line])}"
        frame.text(details, x, below, DIM, background)

    def _hands(self, frame: _Frame, hand: HandState) -> None:
        layout, tiles = self.layout, self.config.tiles
        y = layout.rows_top + self.config.num_lines * layout.row + GAP
        seats = shown_seats(hand, self.show_hands)
        if not seats:
            scores = ", ".join(f"player_{s} {int(p)}" for s, p in enumerate(hand.scores()))
            frame.text(f"Pips left: {scores}", MARGIN, y, HIGHLIGHT, FELT)
            return
        step = 2 * layout.cell + GAP
        for seat in seats:
            mover = " (to move)" if seat == hand.current_player and not hand.is_over else ""
            frame.text(f"player_{seat}'s hand{mover}", MARGIN, y, DIM, FELT)
            top = y + TEXT_LINE
            for k, tile in enumerate(hand.hand(seat)):
                row, column = divmod(k, layout.hand_slots)
                low, high = tiles.ends(tile)
                frame.paste(_tile(low, high, layout.cell, False, None, FELT), MARGIN + column * step,
                            top + row * (layout.cell + GAP))
            y = top + layout.hand_rows * (layout.cell + GAP)


def _open_to_all(hand: HandState, line: int) -> bool:
    """Whether the line's open value gets the ring that means anyone may play there: the dummy
    once it is open, a seat's line while its marker is up."""
    return bool(hand.dummy_open) if line == hand.config.num_players else bool(hand.marker_up[line])


def _after_hand(hand: HandState, game_scores: Sequence[int] | np.ndarray | None) -> np.ndarray:
    """The game scores to show: those before the hand, with the hand counted once it is over."""
    before = np.zeros(hand.config.num_players, dtype=np.int64) if game_scores is None else np.asarray(game_scores)
    return before + hand.scores() if hand.is_over else before


def _result(totals: np.ndarray) -> str:
    """"Game over: player_2 wins with 14" (lowest total), or who tie."""
    best = int(totals.min())
    winners = [f"player_{seat}" for seat in np.flatnonzero(totals == best).tolist()]
    if len(winners) == 1:
        return f"Game over: {winners[0]} wins with {best}"
    return f"Game over: {', '.join(winners[:-1])} and {winners[-1]} tie with {best}"


def _line_name(config: GameConfig, line: int) -> str:
    return f"the {config.shared_line}" if line == config.num_players else f"player_{line}'s line"


def _last_played(hand: HandState) -> int | None:
    """The tile played last in the hand, if any."""
    order = hand.play_order
    return int(np.argmax(order)) if order.max() >= 0 else None


def save_png(frame: np.ndarray, path: str | os.PathLike[str]) -> None:
    """Write one frame (:meth:`TablePainter.draw`) as a PNG file (whole, and never over anything but
    a regular file: :func:`dominoes_env.files.write_atomically`)."""
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG")
    files.write_atomically(path, buffer.getvalue())


def save_gif(frames: Iterable[np.ndarray], path: str | os.PathLike[str], fps: float) -> int:
    """Write frames as an animated GIF (looping, `fps` frames per second); return how many.

    Each frame gets its own palette (the table has few colours; no dithering), and no two
    frames are merged: one frame per position, even when a position repeats.
    """
    images = [Image.fromarray(frame).quantize(colors=64, method=Image.Quantize.FASTOCTREE,
                                              dither=Image.Dither.NONE) for frame in frames]
    if not images:
        raise ValueError("a GIF needs at least one frame")
    buffer = io.BytesIO()
    images[0].save(buffer, format="GIF", save_all=True, append_images=images[1:], duration=round(1000 / fps),
                   loop=0)
    files.write_atomically(path, buffer.getvalue())
    return len(images)
