"""Options models at the boundary: a dict (Python callers) or the flags given (the command line)
checked into a dataset's PromptOptions or ScoreOptions, with one line naming the flag at fault."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, TypeVar

from ctxrobust.errors import CtxRobustError

if TYPE_CHECKING:
    from pydantic import BaseModel

OptionsT = TypeVar("OptionsT", bound="BaseModel")


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def parse_options(model: type[OptionsT], given: OptionsT | Mapping[str, Any] | None, what: str = "") -> OptionsT:
    """`given` as `model`; an unknown key, a missing one or a bad value is a CtxRobustError naming its flag."""
    from pydantic import ValidationError  # here, not at the top: `flag` serves the command line's parser

    if isinstance(given, model):
        return given
    given = dict(given or {})
    unknown = sorted(set(given) - set(model.model_fields))
    if unknown:
        takes = ", ".join(flag(n) for n in sorted(model.model_fields)) or "none"
        raise CtxRobustError(f"{', '.join(flag(n) for n in unknown)}: not an option{' for ' + what if what else ''} (it takes: {takes})")
    try:
        return model(**given)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        where = flag(name) if name else "options"
        if error["type"] == "missing":
            raise CtxRobustError(f"{what or 'this command'} needs {where}") from None
        shown = f" {given[name]!r}" if name in given else ""
        message = error["msg"][:1].lower() + error["msg"][1:]
        raise CtxRobustError(f"{where}{shown}: {message}") from None
