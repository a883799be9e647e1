"""What is wrong with a params file, and how it is said: :class:`Problem` (file, line, key,
message, fix), :class:`ConfigError` carrying all of them, and the :data:`Issue` a model's own
validator raises through :func:`fail` for the loader to place on a line."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic_core import PydanticCustomError

from pipeline.names import did_you_mean


Loc = tuple[str | int, ...]
Issue = tuple[Loc, str, str]  # (location relative to the failing model, message, fix)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the project: where it is, what is wrong, how to fix it."""

    file: str
    line: int | None
    key: str
    message: str
    fix: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = ": ".join(part for part in (where, self.key, self.message) if part)
        return f"{text} — fix: {self.fix}" if self.fix else text


def render_problems(problems: Iterable[Problem]) -> str:
    """One line per problem and a count, ready for the CLI to print."""
    problems = list(problems)
    if not problems:
        return "no problems found"
    noun = "problem" if len(problems) == 1 else "problems"
    return "\n".join([*(str(p) for p in problems), f"{len(problems)} {noun} found"])


class ConfigError(ValueError):
    """params.yaml is not valid; ``problems`` lists every reason, ``str()`` renders them."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(render_problems(self.problems))


def known(word: str, choices: Iterable[str], label: str = "Known") -> str:
    """Fix text: ``"did you mean 'y'? Known: a, b, c"``."""
    choices = list(choices)
    hint = did_you_mean(word, choices)
    listing = f"{label}: {', '.join(choices)}"
    return f"{hint} {listing}" if hint else listing


def fail(issues: list[Issue]) -> None:
    """Raise all ``issues`` as one pydantic error; :func:`_translate` splits them again."""
    summary = "; ".join(message for _, message, _ in issues)
    raise PydanticCustomError("qpipe_issues", "{summary}", {"summary": summary, "issues": issues})
