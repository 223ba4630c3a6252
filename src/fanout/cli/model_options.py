"""The model options `fanout run` and `fanout check` share, as users know them from other tools.

`-m/--model` is repeatable and takes comma-separated lists (`-m a -m b`,
`--model a,b`), as simonw/llm's `-m` and Inspect's `--model a,b` do.
`--models a b` stays for scripts written against earlier versions; it reads
words up to the next option, so a positional right after it would be taken
for a model: `trailing_positional` gives such a word back.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from fanout.llm.models import DEFAULT_MODELS

LIST_OPTION = "--models"
DEFAULT_NAMES = ", ".join(m.name for m in DEFAULT_MODELS)


class ModelList(argparse.Action):
    """Collects model names across repeats, splitting commas; remembers the last word --models read."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        words = [values] if isinstance(values, str) else [str(v) for v in values or ()]
        names = list(getattr(namespace, self.dest) or [])
        for word in words:
            names.extend(word.split(","))
        setattr(namespace, self.dest, names)
        namespace.models_last_word = words[-1] if option_string == LIST_OPTION and words else None


def add_model_options(parser: argparse.ArgumentParser, what: str) -> None:
    """-m/--model, and --models as its several-at-once alias; both fill `args.models` (None: the defaults)."""
    parser.set_defaults(models=None, models_last_word=None)
    parser.add_argument("-m", "--model", dest="models", action=ModelList, metavar="MODEL",
                        help=f"a model {what}; repeat it (-m a -m b) or give a comma-separated list (-m a,b). "
                             f"Default: the four default models, {DEFAULT_NAMES}")
    parser.add_argument(LIST_OPTION, dest="models", action=ModelList, nargs="+", metavar="MODEL",
                        help="several models at once, as earlier versions took them; reads every word up to "
                             "the next option")


def trailing_positional(args: argparse.Namespace, looks_like: Callable[[str], bool]) -> str | None:
    """The last word --models read, when it `looks_like` the positional that is missing: taken from the models
    and returned, so that `--models a b SNAPSHOT` means what it says."""
    word = args.models_last_word
    if word is None or len(args.models) < 2 or not looks_like(word):  # a model must be left
        return None
    args.models.pop()
    args.models_last_word = None
    return str(word)
