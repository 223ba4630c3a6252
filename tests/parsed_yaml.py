"""YAML files the tests read at import, parsed once per process with libyaml (fanout.base.yamlio.SAFE_LOADER).

Every pytest-xdist worker imports every test module to collect it: seven modules parsing the sample
snapshot with PyYAML's pure-Python loader at import cost each worker about a second of CPU. libyaml gives
the same data some ten times faster, and the cache parses a file once however many modules ask for it.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from fanout.base.validate import package_data
from fanout.base.yamlio import SAFE_LOADER


@functools.cache
def _parsed(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)


def parsed_yaml(path: Path) -> Any:
    """The file's data, a copy of its own for each caller: a module may change what it was given."""
    return copy.deepcopy(_parsed(path.resolve()))


def package_yaml(name: str) -> Any:
    """One of fanout's data files (fanout/data: sample_snapshot.yaml, sample_truth.yaml, ...)."""
    return parsed_yaml(package_data(name))
