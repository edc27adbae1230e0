"""The occupancy picture: a kernel's answers as two small maps, block sizes across and dynamic shared memory down.

A table of 32 block sizes x 6 shared memory sizes is 32 rows a kernel; the picture is one character a cell, so the
same grid fits in a dozen lines: the occupancy map (`0`-`9` tens of percent of the SM's warps, `*` all of them,
`.` no block fits) above the limiter map (the table's one-letter codes).  Plain ASCII, so that it survives any
terminal, log or paste; the exact numbers are in the table (`--block`/`--smem` with fewer sizes) and `--json`.
"""
from __future__ import annotations

FEW = 16            # up to this many block sizes, the table is short enough: no picture
WIDEST = 64         # more block sizes than this would not fit a terminal: the table instead
LABEL_EVERY = 8     # an axis label on the first column and every this many (256, 512, ... on the default grid)
NONE_FIT = "."
ALL_WARPS = "*"


def legend(letters: str) -> str:
    return (f"maps: occupancy 0-9 tens of percent of the SM's warps (3: 30-39%), {ALL_WARPS} 100%, {NONE_FIT} no block "
            f"fits; limiter {letters}; exact numbers: --json, or at most {FEW} --block sizes for the table")


def wants_map(block_sizes: int) -> bool:
    """Whether a grid with this many block sizes reads better as the picture than as the table."""
    return FEW < block_sizes <= WIDEST


def occupancy_cell(percent: float, blocks: int) -> str:
    """One character for an answer's occupancy: tens of percent, `*` at 100%, `.` when no block fits."""
    if blocks == 0:
        return NONE_FIT
    return ALL_WARPS if percent >= 100 else str(min(9, int(percent // 10)))


def axis(values: list[int], indent: int) -> list[str]:
    """Two lines over a map: the first block size and every LABEL_EVERY-th written above a `|` at its column;
    a label that would run past the map ends at its column instead, one that would touch the last is left out."""
    labels, ticks = [" "] * (len(values) + 8), [" "] * len(values)
    end = -1                                   # where the last label placed ends
    for column, value in enumerate(values):
        if column and (column + 1) % LABEL_EVERY:
            continue
        text = str(value)
        start = column if column + len(text) <= len(values) else column - len(text) + 1
        if start <= end:
            continue
        labels[start:start + len(text)] = text
        ticks[column] = "|"
        end = start + len(text)
    pad = " " * indent
    return [(pad + "".join(labels)).rstrip(), (pad + "".join(ticks)).rstrip()]


def map_lines(answers, codes: dict[str, str]) -> list[str]:
    """The picture of one kernel's answers (OccupancyAnswer, block sizes first), indented like the table."""
    blocks = sorted({a.block_size for a in answers})
    smem = sorted({a.dynamic_smem for a in answers})
    cells = {(a.block_size, a.dynamic_smem): a for a in answers}
    width = max(len("limiter"), len("occupancy"), *(len(str(s)) for s in smem))
    lines = [f"    block size across ({blocks[0]} to {blocks[-1]}), dynamic shared memory per block down (bytes)"]
    lines += axis(blocks, 4 + width + 2)
    for title, cell in (("occupancy", lambda a: occupancy_cell(a.occupancy_percent, a.blocks)),
                        ("limiter", lambda a: codes[a.limiter])):
        lines.append(f"    {title}")
        lines += [f"    {s:>{width}}  " + "".join(cell(cells[b, s]) for b in blocks) for s in smem]
    return lines
