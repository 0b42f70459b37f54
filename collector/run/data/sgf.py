"""Go game records (SGF) replayed into MiniGo training positions.

For every move of every game whose board size matches: 17 feature planes (8 steps of history of
the side to move's and the opponent's stones, plus a side-to-move plane), the move played
(``y * size + x``, or ``size * size`` for a pass) and the game result from the mover's view.
Captures are applied while replaying; games without a result (RE) are skipped.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import torch

from collector.run.types import PLANES

PROP = re.compile(r";\s*([BW])\[([a-z]{0,2})\]")


def parse_sgf(text: str) -> tuple[int, str, list[tuple[int, int | None]]]:
    """(board size, result, moves as (colour +1 black / -1 white, point or None for pass))."""
    size_m = re.search(r"SZ\[(\d+)\]", text)
    res_m = re.search(r"RE\[([^\]]*)\]", text)
    size = int(size_m.group(1)) if size_m else 19
    moves: list[tuple[int, int | None]] = []
    for colour, coord in PROP.findall(text):
        c = 1 if colour == "B" else -1
        if len(coord) != 2 or coord == "tt" and size <= 19:
            moves.append((c, None))
        else:
            x, y = ord(coord[0]) - 97, ord(coord[1]) - 97
            moves.append((c, y * size + x))
    return size, res_m.group(1) if res_m else "", moves


@cache  # asked for every stone of every group at every move of every game
def _neighbours(p: int, size: int) -> tuple[int, ...]:
    y, x = divmod(p, size)
    near = ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1))
    return tuple(ny * size + nx for ny, nx in near if 0 <= ny < size and 0 <= nx < size)


def _group(board: list[int], p: int, size: int) -> tuple[set[int], bool]:
    colour, stack, seen, free = board[p], [p], {p}, False
    while stack:
        for n in _neighbours(stack.pop(), size):
            if board[n] == 0:
                free = True
            elif board[n] == colour and n not in seen:
                seen.add(n)
                stack.append(n)
    return seen, free


def play(board: list[int], p: int, colour: int, size: int) -> None:
    """Place a stone and remove captured opponent groups (then the mover's, if suicide)."""
    board[p] = colour
    for q in [*(n for n in _neighbours(p, size) if board[n] == -colour), p]:
        stones, free = _group(board, q, size)
        if not free and board[q] != 0:
            for s in stones:
                board[s] = 0


def load_games(root: Path, size: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """All positions from ``root/**/*.sgf`` of the given board size."""
    feats, moves, values = [], [], []
    for path in sorted(root.rglob("*.sgf")):
        n, result, game = parse_sgf(path.read_text(encoding="utf-8", errors="replace"))
        if n != size or not result or result[0] not in "BW":
            continue
        winner = 1 if result[0] == "B" else -1
        board = [0] * (size * size)
        history: list[torch.Tensor] = []
        for colour, point in game:
            history.insert(0, torch.tensor(board, dtype=torch.float32).view(size, size))
            planes = torch.zeros(PLANES, size, size)
            for t, b in enumerate(history[:8]):
                planes[2 * t] = (b == colour).float()
                planes[2 * t + 1] = (b == -colour).float()
            planes[16] = float(colour == 1)
            feats.append(planes)
            moves.append(size * size if point is None else point)
            values.append(float(winner == colour) * 2 - 1)
            if point is not None:
                play(board, point, colour, size)
    if not feats:
        raise FileNotFoundError(f"no {size}x{size} SGF games with results under {root}")
    return torch.stack(feats), torch.tensor(moves), torch.tensor(values)
