"""Which stream events a patroller would look at: a pure decision over one typed event.

The same choices `fetch-edits` offers, read from what an event carries:

- namespaces: items, properties, lexemes (fanout.wikidata.recentchanges.NAMESPACES);
- kinds of edit: the operation groups of `--operations` (statements, terms,
  sitelinks, forms-senses), from the edit summary (fanout.wikidata.autocomment);
  log actions and category changes are never edits to judge;
- unpatrolled only: an event that says `patrolled: true` is left out; one that
  says nothing (a wiki without patrolling, a backfilled row read without the
  patrol right) is kept, since nothing shows it was checked;
- editors: anonymous (an IP address, or a temporary account `~2025-...`) and
  new ones. A recentchange event does not say how new an account is; the
  revision-tags-change event of the same revision does (AbuseFilter's
  newcomer tags, the performer's edit count), and the reader joins it when it
  came first. An editor it cannot place is not a newcomer;
- languages of changed terms (labels, descriptions, aliases, sitelinks): other
  edits are not held to them;
- bots are left out unless asked for; users and tags can be allowed or denied.

`skip_reason` says why an event is left out (None: keep it), so a watch can
count what it skipped and why.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from fanout.base.declare import flag, setting
from fanout.base.errors import ConfigError
from fanout.base.validate import require_count
from fanout.wikidata.recentchanges import NAMESPACES, NEWCOMER_TAGS, OPERATION_GROUPS, parse_namespaces, parse_operations
from fanout.wikidata.stream_events import RecentChangeEvent

EDITORS = ("anyone", "anonymous", "newcomers", "anonymous-or-newcomers")
TERM_FAMILIES_WITH_LANGUAGE = frozenset({"label", "description", "alias", "sitelink"})
EDIT_TYPES = frozenset({"edit", "new"})
FILTERS = "which edits a patroller looks at"
"""The --help section of the filter's options."""


def _names(value: str, label: str) -> frozenset[str]:
    """`en,de` -> {"en", "de"}: a comma-separated list of names (languages, users, tags)."""
    return frozenset(part.strip() for part in str(value).split(",") if part.strip())


def _editors(value: str, label: str) -> None:
    if value not in EDITORS:
        raise ConfigError(f"{label} {value!r}: choose from {', '.join(EDITORS)}")


@dataclass(frozen=True)
class PatrolFilter:
    """The filter's choices; each field is declared once with its flag (`fanout watch`'s options)."""

    namespaces: tuple[str, ...] = setting(("items",), flag(
        "--namespaces", metavar="KINDS", group=FILTERS,
        help=f"entity kinds to watch, comma-separated from {','.join(NAMESPACES)} (default {{default}})"),
        convert=lambda value, label: parse_namespaces(str(value)), recorded=True)
    operations: tuple[str, ...] = setting(("statements",), flag(
        "--operations", metavar="GROUPS", group=FILTERS,
        help=f"kinds of edit, comma-separated from {','.join(OPERATION_GROUPS)}, as fetch-edits knows them "
             "(default {default})"),
        convert=lambda value, label: parse_operations(str(value)), recorded=True)
    unpatrolled_only: bool = setting(False, flag(
        "--unpatrolled-only", action="store_true", group=FILTERS,
        help="leave out edits the stream says are patrolled already"), recorded=True)
    editors: str = setting("anyone", flag(
        "--editors", metavar="|".join(EDITORS), check=_editors, group=FILTERS,
        help="whose edits: anyone (default), anonymous (IP or temporary accounts), newcomers, or "
             "anonymous-or-newcomers"), recorded=True)
    """anyone, anonymous, newcomers, or anonymous-or-newcomers."""
    newcomer_max_edits: int = setting(50, flag(
        "--newcomer-max-edits", type=int, metavar="N", check=require_count, group=FILTERS,
        help="an account with at most N edits (where the stream tells) is a newcomer (default {default})"),
        recorded=True)
    """An account with at most this many edits (where an event tells) is new."""
    languages: frozenset[str] = setting(frozenset(), flag(
        "--languages", metavar="CODES", group=FILTERS,
        help="term edits (labels, descriptions, aliases, sitelinks) in these languages only, comma-separated "
             "(default: any)"), convert=_names, recorded=True)
    """Term edits in these languages only; empty: any language."""
    include_bots: bool = setting(False, flag(
        "--include-bots", action="store_true", group=FILTERS, help="watch bots' edits too (left out by default)"),
        recorded=True)
    allow_users: frozenset[str] = setting(frozenset(), flag(
        "--allow-users", metavar="NAMES", group=FILTERS, help="only these users' edits, comma-separated"),
        convert=_names, recorded=True)
    """Only these users, when not empty."""
    deny_users: frozenset[str] = setting(frozenset(), flag(
        "--deny-users", metavar="NAMES", group=FILTERS, help="never these users' edits, comma-separated"),
        convert=_names, recorded=True)
    allow_tags: frozenset[str] = setting(frozenset(), flag(
        "--allow-tags", metavar="TAGS", group=FILTERS, help="only edits carrying one of these change tags"),
        convert=_names, recorded=True)
    """Only edits carrying one of these tags, when not empty."""
    deny_tags: frozenset[str] = setting(frozenset(), flag(
        "--deny-tags", metavar="TAGS", group=FILTERS, help="never edits carrying one of these change tags"),
        convert=_names, recorded=True)
    wiki: str = "wikidatawiki"

    def __post_init__(self) -> None:
        if self.editors not in EDITORS:
            raise ConfigError(f"editors {self.editors!r}: choose from {', '.join(EDITORS)}")
        unknown = [n for n in self.namespaces if n not in NAMESPACES] + [
            o for o in self.operations if o not in OPERATION_GROUPS]
        if unknown:
            raise ConfigError(f"unknown namespace or operation group: {', '.join(unknown)}")

    @property
    def namespace_ids(self) -> frozenset[int]:
        return frozenset(NAMESPACES[name] for name in self.namespaces)

    @property
    def families(self) -> frozenset[str]:
        return frozenset().union(*(OPERATION_GROUPS[name] for name in self.operations))


def keeps(rules: PatrolFilter, event: RecentChangeEvent) -> bool:
    return skip_reason(rules, event) is None


def skip_reason(rules: PatrolFilter, event: RecentChangeEvent) -> str | None:
    """Why a patroller with these rules would not look at `event`; None if they would."""
    for check in (_where, _what, _who, _marks):
        reason = check(rules, event)
        if reason is not None:
            return reason
    return None


def _where(rules: PatrolFilter, event: RecentChangeEvent) -> str | None:
    if event.wiki != rules.wiki:
        return "other wiki"
    if event.type not in EDIT_TYPES:
        return f"not an edit ({event.type})"
    if event.namespace not in rules.namespace_ids:
        return f"namespace {event.namespace}"
    return None


def _what(rules: PatrolFilter, event: RecentChangeEvent) -> str | None:
    family = event.summary.family
    if family not in rules.families:
        return f"kind of edit ({family or 'no autocomment'})"
    language = event.summary.language
    if rules.languages and family in TERM_FAMILIES_WITH_LANGUAGE and language not in rules.languages:
        return f"language {language}"
    return None


def _who(rules: PatrolFilter, event: RecentChangeEvent) -> str | None:
    if event.bot and not rules.include_bots:
        return "bot"
    if rules.allow_users and (event.user or "") not in rules.allow_users:
        return "user not allowed"
    if (event.user or "") in rules.deny_users:
        return "user denied"
    if rules.editors == "anyone":
        return None
    anonymous, newcomer = is_anonymous(event.user), is_newcomer(event, rules.newcomer_max_edits)
    wanted = {"anonymous": anonymous, "newcomers": newcomer, "anonymous-or-newcomers": anonymous or newcomer}
    return None if wanted[rules.editors] else "established editor"


def _marks(rules: PatrolFilter, event: RecentChangeEvent) -> str | None:
    if rules.unpatrolled_only and event.patrolled is True:
        return "patrolled"
    tags = set(event.tags)
    if rules.allow_tags and not tags & rules.allow_tags:
        return "no allowed tag"
    denied = sorted(tags & rules.deny_tags)
    return f"tag {denied[0]}" if denied else None


def is_anonymous(user: str | None) -> bool:
    """An IP address, or a temporary account (`~2025-12345-67`), which is what logged-out editing makes now."""
    if not user:
        return False
    if user.startswith("~"):
        return True
    try:
        ipaddress.ip_address(user)
    except ValueError:
        return False
    return True


def is_newcomer(event: RecentChangeEvent, max_edits: int) -> bool:
    """A newcomer tag on the edit, or an edit count at most `max_edits` (where the joined tag event says)."""
    if set(event.tags) & set(NEWCOMER_TAGS):
        return True
    performer = event.performer
    return performer is not None and performer.user_edit_count is not None and performer.user_edit_count <= max_edits
