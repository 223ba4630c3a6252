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
"""

from __future__ import annotations

import errno
import ipaddress
from collections.abc import Iterator

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
