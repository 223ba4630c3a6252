"""The claims workload's two prompts: the judges' (SIFT for one claim) and the extractor's.

Both are files in the package (src/fanout/data/), so a reviewer reads and
edits them without touching code; the judges' sha256 goes into the manifest
as every workload's prompt does, the extractor's into its `preparation` pin.
The verdict phase's fixed messages are every workload's
(fanout.research.messages); this workload's word in them is `claim`.
"""

from __future__ import annotations

import hashlib

from fanout.base.errors import ConfigError
from fanout.base.item import Prompt
from fanout.base.reading import read_bounded
from fanout.base.validate import package_data

PROMPT_FILE = "claims_prompt.md"
EXTRACTION_PROMPT_FILE = "claims_extraction_prompt.md"
ITEM_NOUN = "claim"
METHOD = "SIFT-claim"
EXTRACTION_METHOD = "claim extraction"


def _load(name: str, method: str) -> Prompt:
    source = package_data(name)
    raw = read_bounded(source, f"the prompt file {source}", fix="reinstall fanout")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the prompt file {source} is not UTF-8 text (byte {exc.start})") from None
    return Prompt(text=text, sha256=hashlib.sha256(raw).hexdigest(), item_noun=ITEM_NOUN, method=method)


def load_prompt() -> Prompt:
    """What every judge of a claim is told (SIFT adapted to a claim)."""
    return _load(PROMPT_FILE, METHOD)


def load_extraction_prompt() -> Prompt:
    """What the extractor is told: split a text into atomic, self-contained claims."""
    return _load(EXTRACTION_PROMPT_FILE, EXTRACTION_METHOD)
