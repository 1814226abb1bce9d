"""A text with its named entities highlighted, one colour per entity type."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

# Characters per line before the text wraps, and the height of one line in inches.
LINE_CHARACTERS = 70
LINE_HEIGHT = 0.45
FONT_SIZE = 11
# DejaVu Sans Mono's advance is 0.602 of the font size: one x unit is one character.
CHARACTER_INCHES = 0.602 * FONT_SIZE / 72
PALETTE = ("#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5")


def plot_entities(
    text: str, entities: Sequence[dict], types: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:  # fmt: skip
    """Draw ``text`` with each entity in a box coloured by its type, the type beside it.

    Args:
        text: The tagged text.
        entities: Dicts with ``start``, ``end`` (character offsets) and ``type``, as
            `SequenceTagger.tag` and ``kerasformer tag --json`` give them.
        types: Every type, in the order their colours are given (so that two pictures
            agree); by default the types of ``entities``, sorted.
        title: Title over the text; None (the default) for none.

    Returns:
        A matplotlib ``Figure`` (built without pyplot) with one axes, the text wrapped at
        about 70 characters a line; an entity is never broken across lines.

    Examples:
        >>> text = "Angela Merkel visited Paris."
        >>> entities = [{"start": 0, "end": 13, "type": "PER"},
        ...             {"start": 22, "end": 27, "type": "LOC"}]
        >>> figure = plot_entities(text, entities, types=["PER", "LOC", "ORG", "MISC"])
        >>> len(figure.axes)
        1
    """
    types = list(types) if types is not None else sorted({e["type"] for e in entities})
    colour = {kind: PALETTE[i % len(PALETTE)] for i, kind in enumerate(types)}
    pieces, at = [], 0
    for entity in sorted(entities, key=lambda e: e["start"]):
        pieces.append((text[at : entity["start"]], None))
        pieces.append((text[entity["start"] : entity["end"]], entity["type"]))
        at = entity["end"]
    pieces.append((text[at:], None))
    lines = wrapped(pieces)
    columns = LINE_CHARACTERS + 12
    height = 0.3 + LINE_HEIGHT * (len(lines) + 0.5)
    title_room = 0.4 if title else 0.0
    figure = Figure(figsize=(columns * CHARACTER_INCHES + 0.4, height + title_room))
    ax = figure.add_axes((0.2 / (columns * CHARACTER_INCHES + 0.4), 0.0,
                          1 - 0.4 / (columns * CHARACTER_INCHES + 0.4),
                          height / (height + title_room)))  # fmt: skip
    ax.set_axis_off()
    ax.set_xlim(0, columns)
    ax.set_ylim(len(lines) + 0.5, 0)
    for row, line in enumerate(lines, start=1):
        column = 0.0
        for piece, kind in line:
            if kind is None:
                ax.text(column, row, piece, family="DejaVu Sans Mono", va="center",
                        fontsize=FONT_SIZE)  # fmt: skip
                column += len(piece)
                continue
            box = dict(boxstyle="round,pad=0.25", facecolor=colour.get(kind, "#dddddd"),
                       edgecolor="none")  # fmt: skip
            ax.text(column, row, f"{piece} {kind}", family="DejaVu Sans Mono", va="center",
                    fontsize=FONT_SIZE, bbox=box)  # fmt: skip
            column += len(piece) + len(kind) + 2
    if title:
        ax.set_title(title)
    return figure


def wrapped(pieces: list[tuple[str, str | None]]) -> list[list[tuple[str, str | None]]]:
    """The pieces in lines of about `LINE_CHARACTERS`; plain text breaks at spaces, an
    entity is never broken."""
    lines: list[list] = [[]]
    width = 0
    for piece, kind in pieces:
        words = [piece] if kind is not None else piece.split(" ")
        for index, word in enumerate(words):
            part = word if kind is not None or index == len(words) - 1 else word + " "
            size = len(part) + (len(kind) + 2 if kind else 0)
            if width + size > LINE_CHARACTERS and lines[-1]:
                lines.append([])
                width = 0
            if part:
                lines[-1].append((part, kind))
                width += size
    return lines
