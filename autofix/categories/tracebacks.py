"""Reads a Python traceback printed as text (the child's stderr, a saved example).

The probe normally reports exceptions structurally; this reader is the fallback for a
child that died before the probe could write (and for the category examples, which are
real tracebacks saved as text). It understands CPython's format: ``Traceback (most recent
call last):``, ``File "...", line N, in name`` frames with their source line, chained
sections, ``SyntaxError`` blocks, and a final ``Type: message`` that may span lines.
"""

from __future__ import annotations

import re

from autofix.types import ExceptionInfo, Frame

_HEADER = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_EXC_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning"
                       r"|Iteration|Assert\w*|error))(?::\s?(?P<msg>.*))?$")
_CHAIN_MARKERS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)


def _parse_block(lines: list[str]) -> ExceptionInfo | None:
    frames: list[Frame] = []
    i = 0
    while i < len(lines):
        m = _FRAME.match(lines[i])
        if m:
            text = ""
            if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]) and lines[i + 1].startswith(
                "    "
            ):
                text = lines[i + 1].strip()
                i += 1
            frames.append(Frame(m["file"], int(m["line"]), m["func"] or "<module>", text))
            i += 1
            continue
        if not lines[i].startswith(" "):
            em = _EXC_LINE.match(lines[i].rstrip())
            if em:
                message = "\n".join([em["msg"] or "", *[ln for ln in lines[i + 1:]]]).strip()
                return ExceptionInfo(em["type"], message, tuple(frames))
        i += 1
    return None


def parse_traceback(text: str) -> ExceptionInfo | None:
    """Parse the last traceback in ``text``; returns ``None`` when there is none.

    A ``SyntaxError`` printed without a ``Traceback`` header (compile-time) is parsed too;
    its location becomes the only frame. Chained exceptions printed before the last one
    become ``chain`` (outermost cause first).
    """
    lines = text.replace("\r\n", "\n").split("\n")
    sections: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        if line.strip() == _HEADER:
            current = []
            sections.append(current)
        elif line.strip() in _CHAIN_MARKERS:
            current = None
        elif current is not None:
            current.append(line)
    parsed = [p for p in (_parse_block(s) for s in sections) if p is not None]
    if parsed:
        last = parsed[-1]
        return ExceptionInfo(last.type, last.message, last.frames, tuple(reversed(parsed[:-1])))
    return _parse_bare_syntax_error(lines)


def _parse_bare_syntax_error(lines: list[str]) -> ExceptionInfo | None:
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        if not m:
            continue
        for j in range(i + 1, min(i + 6, len(lines))):
            em = _EXC_LINE.match(lines[j].strip())
            if em and em["type"].endswith(("SyntaxError", "IndentationError", "TabError")):
                text = lines[i + 1].strip() if i + 1 < j else ""
                frame = Frame(m["file"], int(m["line"]), "<module>", text)
                return ExceptionInfo(em["type"], em["msg"] or "", (frame,))
    return None


_MESSAGE_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)[ *]*$')
#: TensorFlow graph-mode errors carry the real stack (and error) inside their message.
_GRAPH_HEADERS = ("in user code:", "defined at (most recent call last):")


def message_frames(message: str) -> tuple[Frame, ...]:
    """The frames TensorFlow lists inside a graph-mode error's message (``in user code:``,
    ``Detected at node ... defined at (most recent call last):``), outermost first, each
    with the source line that follows it when there is one; empty for other messages."""
    if not any(h in message for h in _GRAPH_HEADERS):
        return ()
    frames: list[Frame] = []
    lines = message.splitlines()
    for i, line in enumerate(lines):
        found = _MESSAGE_FRAME.match(line)
        if found:
            after = lines[i + 1].strip() if i + 1 < len(lines) else ""
            text = "" if _MESSAGE_FRAME.match(after) else after
            frames.append(Frame(found[1], int(found[2]), found[3], text))
    return tuple(frames)


def inner_message(message: str) -> str:
    """The real error of a TensorFlow graph-mode message (the first line after the last
    frame it lists, e.g. ``ValueError: Could not find label column(s) ...`` under ``in
    user code:``); "" for other messages or when there is none."""
    if not message_frames(message):
        return ""
    lines = message.splitlines()
    last = max(i for i, line in enumerate(lines) if _MESSAGE_FRAME.match(line))
    rest = [line.strip() for line in lines[last + 1:] if line.strip()]
    if rest and lines[last + 1].strip() == rest[0] and len(rest) > 1 \
            and lines[last + 1].startswith("        "):
        rest = rest[1:]  # the source line of the last frame
    return rest[0] if rest else ""
