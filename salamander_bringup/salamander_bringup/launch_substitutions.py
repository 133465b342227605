"""The substitutions of launch_xml that the runner understands, evaluated as launch evaluates them.

``$(var NAME)``, ``$(find-pkg-share PKG)``, ``$(dirname)``, ``$(if COND A [B])``, ``$(not-equals A B)``
and ``$(command CMD [fail|warn|ignore])``, nested or not; an argument with spaces is quoted ('...' or
"..."), substitutions inside the quotes are still evaluated. Anything else is a `LaunchFileError` naming
what is supported. ``$(command)`` runs like launch's CommandSubstitution: split with shlex, no shell, its
standard output is the value. Used by `launch_plan` (which owns the elements, the scoping and the plan);
the conventions it follows are in that module's docstring.
"""

from __future__ import annotations

import math
import shlex
import subprocess
import sys
from collections.abc import Callable

SUPPORTED_SUBSTITUTIONS = ("var", "find-pkg-share", "dirname", "if", "not-equals", "command")
COMMAND_TIMEOUT_S = 30.0  # a $(command) that takes longer is an error, not a hung runner


class LaunchFileError(ValueError):
    """The launch file (or an argument) cannot be turned into a plan; the message says where and why."""


def _closing_paren(text: str, start: int) -> int:
    """Index of the ')' closing the '$(' whose body starts at `start`, honouring nesting."""
    depth, i = 1, start
    while i < len(text):
        if text.startswith("$(", i):
            depth, i = depth + 1, i + 2
            continue
        if text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise LaunchFileError(f"unterminated substitution in {text!r}")


def _split_arguments(body: str, where: str) -> list[str]:
    """A substitution's body as its words (the kind, then the arguments), nested ``$(...)`` kept whole.

    A word may be quoted ('...' or "...", as launch's grammar allows) to hold spaces; the quotes are
    removed, substitutions inside them are kept for evaluation.
    """
    words, current, i, quote, started = [], [], 0, "", False
    while i < len(body):
        if body.startswith("$(", i):
            end = _closing_paren(body, i + 2)
            current.append(body[i : end + 1])
            i, started = end + 1, True
        elif quote and body[i] == quote:
            quote, i = "", i + 1
        elif not quote and body[i] in "'\"":
            quote, i, started = body[i], i + 1, True
        elif body[i].isspace() and not quote:
            if started:
                words.append("".join(current))
                current, started = [], False
            i += 1
        else:
            current.append(body[i])
            i, started = i + 1, True
    if quote:
        raise LaunchFileError(f"{where}: unterminated quote in $({body})")
    if started:
        words.append("".join(current))
    return words


def _is_bool_text(text: str) -> bool:
    return text.lower() in ("true", "false", "1", "0")


def _is_float_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _equals(left: str, right: str) -> bool:
    """Compare as launch's EqualsSubstitution: booleans by truth, numbers by closeness, else as text."""
    if _is_bool_text(left) and _is_bool_text(right):
        return (left.lower() in ("true", "1")) == (right.lower() in ("true", "1"))
    if _is_float_text(left) and _is_float_text(right):
        return math.isclose(float(left), float(right))
    return left == right


class Resolver:
    """Evaluates substitutions for one launch file with the launch configurations known so far."""

    def __init__(self, launch_dir: str, values: dict[str, str], find_share: Callable[[str], str]) -> None:
        self._dir = launch_dir
        self.values = values
        self._find_share = find_share

    def __call__(self, text: str, where: str) -> str:
        """`text` with every ``$(...)`` evaluated; `where` names the place in the file for errors."""
        out, i = [], 0
        while True:
            j = text.find("$(", i)
            if j < 0:
                out.append(text[i:])
                return "".join(out)
            out.append(text[i:j])
            end = _closing_paren(text, j + 2)
            out.append(self._evaluate(text[j + 2 : end], where))
            i = end + 1

    def _evaluate(self, body: str, where: str) -> str:
        kind, *raw = _split_arguments(body, where) or [""]
        args = [lambda a=a: self(a, where) for a in raw]  # evaluated when used: $(if) takes one branch
        if kind == "var" and len(args) == 1:
            name = args[0]()
            if name not in self.values:
                raise LaunchFileError(f"{where}: $(var {name}) names no declared argument")
            return self.values[name]
        if kind == "find-pkg-share" and len(args) == 1:
            return self._find_share(args[0]())
        if kind == "dirname" and not args:
            return self._dir
        if kind == "if" and len(args) in (2, 3):
            chosen = 1 if condition(args[0](), f"{where} $({body})") else 2
            return args[chosen]() if chosen < len(args) else ""
        if kind == "not-equals" and len(args) == 2:
            return "false" if _equals(args[0](), args[1]()) else "true"
        if kind == "command" and len(args) in (1, 2):
            on_stderr = args[1]() if len(args) == 2 else "fail"
            if on_stderr not in ("fail", "warn", "ignore"):
                raise LaunchFileError(f"{where}: $(command) takes fail, warn or ignore, not {on_stderr!r}")
            return run_command(args[0](), on_stderr, where)
        if kind in SUPPORTED_SUBSTITUTIONS:
            raise LaunchFileError(f"{where}: wrong arguments in $({body})")
        raise LaunchFileError(
            f"{where}: unsupported substitution $({body}); the runner supports "
            + ", ".join(f"$({s} ...)" for s in SUPPORTED_SUBSTITUTIONS)
        )


def run_command(command: str, on_stderr: str = "fail", where: str = "$(command)") -> str:
    """``$(command COMMAND)`` as launch's CommandSubstitution: shlex-split, no shell, stdout is the value.

    Args:
        command: the command line.
        on_stderr: ``fail`` (output on stderr is an error, launch's default), ``warn`` (printed to this
            process's stderr) or ``ignore``.
        where: the place in the launch file, for the error message.

    Raises:
        LaunchFileError: the command is empty, cannot start, times out, exits non-zero, or writes to
            stderr with `on_stderr` ``fail``; the message names the command.
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise LaunchFileError(f"{where}: cannot split the command {command!r}: {exc}") from exc
    if not argv:
        raise LaunchFileError(f"{where}: $(command) with an empty command")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaunchFileError(f"{where}: the command {command!r} failed to run: {exc}") from exc
    stderr = done.stderr.strip()
    if done.returncode != 0:
        raise LaunchFileError(
            f"{where}: the command {command!r} exited with code {done.returncode}"
            + (f": {stderr}" if stderr else "")
        )
    if stderr and on_stderr == "fail":
        raise LaunchFileError(f"{where}: the command {command!r} wrote to stderr: {stderr}")
    if stderr and on_stderr == "warn":
        print(f"warning: the command {command!r} wrote to stderr: {stderr}", file=sys.stderr)
    return done.stdout


def condition(value: str, where: str) -> bool:
    """Evaluate like launch's IfCondition: 'true'/'1' or 'false'/'0' (any case); anything else is an error."""
    lowered = value.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise LaunchFileError(f"{where}: condition {value!r} is neither true/1 nor false/0")
