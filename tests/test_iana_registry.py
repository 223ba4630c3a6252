"""fanout's address rule against every row of IANA's special-purpose address registries, as IANA publishes them.

fanout.http.addresses was written by hand; here the expected answers come from
the registries' own CSV files (tests/fixtures/iana/, see its README) and from
nothing in fanout. The rule: an address is refused unless the most specific
registry row it falls in says "Globally Reachable: True", or it falls in no row
and is global unicast (IPv4 outside multicast 224.0.0.0/4, RFC 5771; IPv6
inside 2000::/3, RFC 4291). "False [1]" is False, and "N/A" (6to4, Teredo) and
the empty cells of a terminated row are not True. One RFC adds to a True row:
a NAT64 address in 64:ff9b::/96 reaches the IPv4 address in its last 32 bits
(RFC 6052), so it is reachable only if that address is.

For every row the first, middle and last address of each prefix, and the
addresses just before and after it, go through each way fanout checks an address: the
rule itself, web_fetch on the literal address (and on each redirect hop, the
same check), web_fetch on a name resolving to it, and a search endpoint.
"""

from __future__ import annotations

import csv
import ipaddress
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from fanout.base.errors import ToolFailure
from fanout.http.addresses import SPECIAL_PURPOSE
from fanout.tools.urlguard import UrlGuard

FIXTURES = Path(__file__).parent / "fixtures" / "iana"
HEADER = ["Address Block", "Name", "RFC", "Allocation Date", "Termination Date", "Source", "Destination",
          "Forwardable", "Globally Reachable", "Reserved-by-Protocol"]
FOOTNOTE = re.compile(r"\s*\[\d+\]")
MULTICAST_V4 = ipaddress.ip_network("224.0.0.0/4")
GLOBAL_UNICAST_V6 = ipaddress.ip_network("2000::/3")
NAT64 = ipaddress.ip_network("64:ff9b::/96")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Row(NamedTuple):
    """One prefix of a registry row (a row may name two), its flags with the footnote marks taken off."""

    block: Network
    name: str
    forwardable: str
    reachable: str
    """"True", "False", "N/A", or "" (a terminated row)."""


def _read(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as handle:
        records = list(csv.reader(handle))
    assert records[0] == HEADER, path
    rows = []
    for record in records[1:]:
        flags = {column: FOOTNOTE.sub("", value).strip() for column, value in zip(HEADER, record)}
        for block in FOOTNOTE.sub("", record[0]).split(","):
            rows.append(Row(ipaddress.ip_network(block.strip()), flags["Name"], flags["Forwardable"],
                            flags["Globally Reachable"]))
    return rows


IPV4_ROWS = _read(FIXTURES / "iana-ipv4-special-registry-1.csv")
IPV6_ROWS = _read(FIXTURES / "iana-ipv6-special-registry-1.csv")
ROWS = IPV4_ROWS + IPV6_ROWS


def registry_says(address: Address) -> bool:
    """Whether the registries (and RFC 5771, RFC 4291, RFC 6052 as the module docstring says) let `address` be reached."""
    rows = [row for row in ROWS if row.block.version == address.version and address in row.block]
    if not rows:
        return address not in MULTICAST_V4 if address.version == 4 else address in GLOBAL_UNICAST_V6
    if max(rows, key=lambda row: row.block.prefixlen).reachable != "True":
        return False
    if address in NAT64:
        return registry_says(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return True


class Probe(NamedTuple):
    address: Address
    where: str
    """Which row's edge it is, for the test's id."""


def _probes() -> list[Probe]:
    """First, middle, last, just before and just after every prefix, each address once."""
    probes: dict[Address, Probe] = {}
    for row in ROWS:
        first, last = row.block.network_address, row.block.broadcast_address
        edges = [(first, "first of"), (first + row.block.num_addresses // 2, "middle of"), (last, "last of")]
        if int(first) > 0:
            edges.append((first - 1, "before"))
        if int(last) < 2 ** row.block.max_prefixlen - 1:
            edges.append((last + 1, "after"))
        for address, edge in edges:
            probes.setdefault(address, Probe(address, f"{edge} {row.block}"))
    return list(probes.values())


PROBES = _probes()


def test_the_fixtures_are_both_registries_whole() -> None:
    assert (len(IPV4_ROWS), len(IPV6_ROWS)) == (25, 25)
    assert {row.reachable for row in ROWS} == {"True", "False", "N/A", ""}
    assert [str(row.block) for row in ROWS if row.reachable == "N/A"] == ["2001::/32", "2002::/16"]
    assert [str(row.block) for row in ROWS if row.reachable == ""] == ["192.88.99.0/24", "2001:10::/28"]


def test_no_row_is_globally_reachable_without_being_forwardable() -> None:
    """So "Forwardable" never changes the answer: the rule need only read "Globally Reachable"."""
    assert [row.block for row in ROWS if row.reachable == "True" and row.forwardable != "True"] == []


def test_fanout_s_table_holds_every_row_with_the_registry_s_answer() -> None:
    ours = {entry.block: entry for entry in SPECIAL_PURPOSE}
    assert {row.block: ours[row.block].reachable is True for row in ROWS if row.block in ours} == {
        row.block: row.reachable == "True" for row in ROWS}
    extra = sorted(str(block) for block in ours.keys() - {row.block for row in ROWS})
    # A later edition's 6a44 row (tests/fixtures/iana/README.md), and the multicast and site-local blocks
    # that other registries hold.
    assert extra == ["192.88.99.2/32", "224.0.0.0/4", "fec0::/10", "ff00::/8"]


def _url(address: Address) -> str:
    return f"http://{address}/" if address.version == 4 else f"http://[{address}]/"


async def _web_fetch_allows(guard: UrlGuard, url: str) -> bool:
    """Whether web_fetch's check (UrlGuard.pin, run on the URL and on every redirect hop) lets `url` through."""
    try:
        await guard.pin(guard.parse(url))
    except ToolFailure as refused:
        assert str(refused).startswith("refused_address: "), refused
        return False
    return True


@pytest.mark.parametrize("probe", PROBES, ids=lambda probe: f"{probe.address} ({probe.where})")
async def test_every_way_fanout_checks_an_address_answers_as_the_registry_does(probe: Probe) -> None:
    async def resolve(host: str, port: int) -> list[str]:
        assert host == "probe.example"
        return [str(probe.address)]

    guard = UrlGuard(frozenset(), resolver=resolve)
    expected = registry_says(probe.address)

    assert (guard.refusal(probe.address) is None) is expected
    assert await _web_fetch_allows(guard, _url(probe.address)) is expected
    assert await _web_fetch_allows(guard, "http://probe.example/") is expected
    assert (guard.endpoint_refusal(_url(probe.address)) is None) is expected


def test_the_probes_reach_both_answers_in_both_families() -> None:
    """The edges are not all refusals: a broken oracle that refused everything would not pass."""
    answers = {(probe.address.version, registry_says(probe.address)) for probe in PROBES}
    assert answers == {(4, True), (4, False), (6, True), (6, False)}
    assert len(PROBES) == 194
