"""Addresses no request of fanout may reach, in whatever form they are written.

A cloud metadata endpoint hands out the machine's credentials to anyone who
can send it a GET, and a model (or a page it read) chooses web_fetch's URLs.
So these ranges are refused in every mode, `--allow-private-urls` included,
and they are checked on the address a connection actually goes to: the URL
guard checks literal and resolved addresses, and the run's transport checks
the names it resolves itself (see fanout.http.transport).

An IPv4 address can hide inside an IPv6 one (IPv4-mapped `::ffff:a.b.c.d`,
the deprecated IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d` and its
local-use `64:ff9b:1::/48`, 6to4, Teredo); `unwrapped` yields every form a
connection may end up at.

Which addresses are public is IANA's to say, not Python's: SPECIAL_PURPOSE
is the IPv4 and IPv6 Special-Purpose Address Registries entry by entry
(iana-ipv4-special-registry and iana-ipv6-special-registry), each with its
"Globally Reachable" column, plus the blocks the registries leave to other
registries (multicast, IPv6 site-local, the IPv6 space outside global
unicast). tests/test_iana_registry.py checks it against every row of the
CSV files IANA publishes (a 2025 edition, kept in tests/fixtures/iana/ with
where it came from): replace those files when the registries change.
`ipaddress.is_global` called 192.0.0.8 (the IPv4 dummy address) and fec0::1
(site-local) global, and web_fetch fetched them. The most specific entry an
address falls in decides (192.0.0.9/32 is reachable inside 192.0.0.0/24,
which is not).
"""

from __future__ import annotations

import errno
import ipaddress
from collections.abc import Iterator
from typing import NamedTuple

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_NETWORKS: tuple[Network, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "169.254.169.0/24",  # AWS, GCP, Azure, Oracle, OpenStack (.254), AWS DNS and time (.253, .123)
        "169.254.170.0/24",  # AWS container credentials (ECS .2, EKS Pod Identity .23)
        "fd00:ec2::/32",  # the same AWS endpoints over IPv6
        "100.100.100.200/32",  # Alibaba Cloud
        "168.63.129.16/32",  # Azure WireServer
    )
)
"""Read at call time, so a test can stand a loopback range in for them."""
NAT64 = ipaddress.ip_network("64:ff9b::/96")
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
"""RFC 8215: NAT64 inside one network; what it reaches is that network's business, never the public web."""


class Special(NamedTuple):
    """One entry of IANA's special-purpose address registries (or a block they leave to another registry)."""

    block: Network
    name: str
    rfc: str
    reachable: bool | None
    """The registry's "Globally Reachable": True, False, or None where it says N/A (6to4, Teredo) or leaves
    it empty (the terminated 6to4 relay anycast and ORCHID blocks). Only True is reachable."""


def _entry(cidr: str, name: str, rfc: str, reachable: bool | None) -> Special:
    return Special(ipaddress.ip_network(cidr), name, rfc, reachable)


SPECIAL_PURPOSE: tuple[Special, ...] = (
    # IANA IPv4 Special-Purpose Address Registry
    _entry("0.0.0.0/8", '"This network"', "RFC 791", False),
    _entry("0.0.0.0/32", '"This host on this network"', "RFC 1122", False),
    _entry("10.0.0.0/8", "Private-Use", "RFC 1918", False),
    _entry("100.64.0.0/10", "Shared Address Space", "RFC 6598", False),
    _entry("127.0.0.0/8", "Loopback", "RFC 1122", False),
    _entry("169.254.0.0/16", "Link Local", "RFC 3927", False),
    _entry("172.16.0.0/12", "Private-Use", "RFC 1918", False),
    _entry("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890", False),
    _entry("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", False),
    _entry("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", False),
    _entry("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", True),
    _entry("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
    _entry("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880", False),
    _entry("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880", False),
    _entry("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", False),
    _entry("192.31.196.0/24", "AS112-v4", "RFC 7535", True),
    _entry("192.52.193.0/24", "AMT", "RFC 7450", True),
    _entry("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", None),
    _entry("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", False),  # IANA's 2025-10 edition
    _entry("192.168.0.0/16", "Private-Use", "RFC 1918", False),
    _entry("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", True),
    _entry("198.18.0.0/15", "Benchmarking", "RFC 2544", False),
    _entry("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", False),
    _entry("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", False),
    _entry("240.0.0.0/4", "Reserved", "RFC 1112", False),
    _entry("255.255.255.255/32", "Limited Broadcast", "RFC 8190", False),
    # IANA IPv6 Special-Purpose Address Registry
    _entry("::1/128", "Loopback Address", "RFC 4291", False),
    _entry("::/128", "Unspecified Address", "RFC 4291", False),
    _entry("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", False),
    _entry("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", True),
    _entry("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", False),
    _entry("100::/64", "Discard-Only Address Block", "RFC 6666", False),
    _entry("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", False),
    _entry("2001::/23", "IETF Protocol Assignments", "RFC 2928", False),
    _entry("2001::/32", "TEREDO", "RFC 4380", None),
    _entry("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", True),
    _entry("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
    _entry("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", True),
    _entry("2001:2::/48", "Benchmarking", "RFC 5180", False),
    _entry("2001:3::/32", "AMT", "RFC 7450", True),
    _entry("2001:4:112::/48", "AS112-v6", "RFC 7535", True),
    _entry("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", None),
    _entry("2001:20::/28", "ORCHIDv2", "RFC 7343", True),
    _entry("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", True),
    _entry("2001:db8::/32", "Documentation", "RFC 3849", False),
    _entry("2002::/16", "6to4", "RFC 3056", None),
    _entry("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", True),
    _entry("3fff::/20", "Documentation", "RFC 9637", False),
    _entry("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", False),
    _entry("fc00::/7", "Unique-Local", "RFC 4193", False),
    _entry("fe80::/10", "Link-Local Unicast", "RFC 4291", False),
    # Blocks the special-purpose registries leave to others, refused all the same
    _entry("224.0.0.0/4", "Multicast", "RFC 5771", False),
    _entry("ff00::/8", "Multicast", "RFC 4291", False),
    _entry("fec0::/10", "Site-Local (deprecated)", "RFC 3879", False),
)
"""IANA's special-purpose address registries, entry by entry, and the multicast and site-local blocks."""
GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
"""The IPv6 space IANA allocates for global unicast (RFC 4291, RFC 3587): an IPv6 address outside it, and in no
reachable entry above (64:ff9b::/96 is), is in space the IETF keeps reserved."""
_BY_LENGTH = sorted(SPECIAL_PURPOSE, key=lambda entry: entry.block.prefixlen, reverse=True)


def special_purpose(address: IPAddress) -> Special | None:
    """The most specific registry entry `address` falls in, or None for an address no entry names."""
    return next((entry for entry in _BY_LENGTH if address.version == entry.block.version
                 and address in entry.block), None)


def unreachable(address: IPAddress) -> Special | None:
    """The entry that makes `address` not globally reachable, or None when it is (this form only: see unwrapped)."""
    entry = special_purpose(address)
    if entry is not None:
        return None if entry.reachable else entry
    if isinstance(address, ipaddress.IPv6Address) and address not in GLOBAL_UNICAST:
        return Special(ipaddress.ip_network("::/0"), "Reserved by IETF (outside global unicast 2000::/3)",
                       "RFC 4291", False)
    return None


class AddressRefused(httpx.ConnectError):
    """A connection refused before it was opened, because of where it would go."""


def unwrapped(address: IPAddress) -> Iterator[IPAddress]:
    """Any IPv4 address embedded in `address` (first), then `address` itself."""
    if isinstance(address, ipaddress.IPv6Address):
        value = int(address)
        if address.ipv4_mapped is not None:
            yield address.ipv4_mapped
        if 1 < value < 1 << 32:  # IPv4-compatible; :: and ::1 are themselves
            yield ipaddress.IPv4Address(value)
        if address.sixtofour is not None:
            yield address.sixtofour
        if address.teredo is not None:
            yield from address.teredo
        if address in NAT64:
            yield ipaddress.IPv4Address(value & 0xFFFFFFFF)
        if address in LOCAL_NAT64:
            yield _rfc6052_slash48(address)
    yield address


def is_metadata(address: IPAddress) -> bool:
    """True when `address`, or an IPv4 address inside it, is a cloud metadata endpoint."""
    return any(form in network for form in unwrapped(address) for network in METADATA_NETWORKS)


def _rfc6052_slash48(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    """RFC 6052 with a /48 prefix: the IPv4 address sits in bytes 6-7 and 9-10 (byte 8 is reserved)."""
    packed = address.packed
    return ipaddress.IPv4Address(packed[6:8] + packed[9:11])


class ResolvedToMetadata(OSError):
    """Raised by the transport's resolver: an OSError, as a failed resolution is, so aiohttp passes it on."""

    def __init__(self, host: str, address: str) -> None:
        super().__init__(errno.EACCES, f"refused_address: {host} resolves to {address}, which is a cloud metadata endpoint")
