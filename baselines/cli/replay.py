"""``dominoes replay FILE``: step through a game record, or write its positions as pictures.

The record is read and checked first (:func:`dominoes_env.records.read_record`: a damaged
one is a one-line error naming the file and the move). Then, by default, the positions are
shown one at a time in the terminal, every hand open (Enter or ``n``: next, ``p``: previous,
``q`` or Ctrl-D: quit). With ``--png-dir DIR`` and/or ``--gif OUT`` the positions are
written as pictures instead (the ``image`` extra): one frame for each hand's deal and one
after every move, each captioned with the move.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TextIO

import numpy as np

from baselines.cli.play import ReadLine, paint_ansi, supports_colour
from dominoes_env import files
from dominoes_env.core import validation
from dominoes_env.core.render import Paint, plain, render_table
from dominoes_env.records import RecordedGame, RecordedPosition, read_record, replay

MIN_FPS, MAX_FPS = 0.1, 50.0
STEP_PROMPT = "[Enter] next, p previous, q quit: "


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a game record (dominoes play --record, dominoes league --record-games)")
    parser.add_argument("--gif", metavar="OUT", help="write the positions as an animated GIF")
    parser.add_argument("--png-dir", metavar="DIR", help="write the positions as PNG files into DIR")
    parser.add_argument("--fps", type=validation.number_argument, default=2.0,
                        help=f"frames per second of the GIF ({MIN_FPS:g}-{MAX_FPS:g}, default 2)")
    parser.add_argument("--colour", "--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the table in the terminal: auto, always, never")


def run(args: argparse.Namespace) -> int:
    fps = validation.real("--fps", args.fps, MIN_FPS, MAX_FPS)
    if args.gif is not None:
        files.check_output_file("--gif", args.gif)  # refused before the record is read and drawn, not after
    if args.png_dir is not None:
        files.check_output_directory("--png-dir", args.png_dir)
    recorded = read_record(args.file)
    if args.gif is None and args.png_dir is None:
        colour = args.colour == "always" or (args.colour == "auto" and supports_colour(sys.stdout))
        step_through(recorded, read_line=input, out=sys.stdout, paint=paint_ansi if colour else plain)
        return 0
    try:
        written = write_pictures(recorded, args.png_dir, args.gif, fps)
    except ImportError as error:  # no pillow: the message names the extra
        print(f"dominoes replay: error: {error}", file=sys.stderr)
        return 2
    print("wrote " + ", ".join(written))
    return 0


def caption(recorded: RecordedGame, position: RecordedPosition) -> str:
    """What a position shows under the heading: the move that led to it, or the deal."""
    hand = recorded.hands[position.hand_number]
    if position.move is None:
        return f"hand {position.hand_number + 1} of {len(recorded.hands)} recorded: the deal ({len(hand.moves)} moves)"
    who = f"player_{position.move.seat}"
    if recorded.players is not None:
        who += f" ({recorded.players[position.move.seat]})"
    return f"move {position.move_number}/{len(hand.moves)}: {who}: {position.move.text}"


def write_pictures(recorded: RecordedGame, png_dir: str | None, gif: str | None, fps: float) -> list[str]:
    """Write every position as a PNG into `png_dir` and/or as frames of the GIF `gif`; what was written.

    Raises:
        ImportError: pillow is not installed (the message names the extra).
    """
    from dominoes_env.image import TablePainter, save_gif, save_png

    painter = TablePainter(recorded.config, recorded.num_hands, "all", captions=True)
    positions = list(replay(recorded))
    directory = None if png_dir is None else files.check_output_directory("--png-dir", png_dir)
    digits = len(str(len(positions)))

    def frames() -> Iterator[np.ndarray]:
        """Each position drawn once: saved as a PNG when asked, handed on to the GIF."""
        for k, position in enumerate(positions, start=1):
            frame = painter.draw(position.hand, position.hand_index, np.array(position.game_scores),
                                 caption(recorded, position))
            if directory is not None:
                save_png(frame, directory / f"position_{k:0{digits}d}.png")
            yield frame

    count = save_gif(frames(), gif, fps) if gif is not None else sum(1 for _ in frames())
    written = []
    if directory is not None:
        written.append(f"{count} PNG files into {directory}")
    if gif is not None:
        written.append(f"{gif} ({count} frames, {count / fps:.0f} s at {fps:g} frames per second)")
    return written


def step_through(recorded: RecordedGame, *, read_line: ReadLine, out: TextIO, paint: Paint = plain) -> int:
    """Show the positions one at a time, every hand open; returns the last position shown (0-based)."""
    positions = list(replay(recorded))
    index, shown = 0, -1
    while True:
        if index != shown:
            position = positions[index]
            scores = np.array(position.game_scores) if recorded.num_hands > 1 else None
            print("\n" + render_table(position.hand, position.hand_index, recorded.num_hands, scores, "all", paint),
                  file=out)
            print(paint("heading", f"[{index + 1}/{len(positions)}] {caption(recorded, position)}"), file=out)
            shown = index
        answer = _answer(read_line)
        if answer == "q":
            return index
        if answer is None:
            print("type Enter (or n) for the next position, p for the previous one, q to quit", file=out)
        elif not 0 <= index + (1 if answer == "n" else -1) < len(positions):
            print("(this is the first position)" if answer == "p" else "(this is the last position; q quits)",
                  file=out)
        else:
            index += 1 if answer == "n" else -1


def _answer(read_line: ReadLine) -> str | None:
    """"n" (next), "p" (previous), "q" (quit, also at the end of the input), or None for anything else."""
    try:
        answer = read_line(STEP_PROMPT).strip().lower()
    except EOFError:
        return "q"
    words = {"": "n", "n": "n", "next": "n", "p": "p", "prev": "p", "previous": "p", "q": "q", "quit": "q",
             "exit": "q"}
    return words.get(answer)
