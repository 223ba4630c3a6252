"""Which URLs web_fetch may open: model output is untrusted input.

A model (or a page it read) can ask for http://169.254.169.254/ or for a
name that resolves to 10.0.0.1. So every URL, and every redirect hop, is
parsed and checked here:

1. only http and https, with a host;
2. not a blocked domain (see blocklist.py);
3. never a cloud metadata endpoint, whatever the settings say, in any form
   (a name, `2852039166`, `0xa9fea9fe`, `[::ffff:169.254.169.254]`, NAT64;
   see fanout.http.addresses);
4. the host is resolved and EVERY address must be globally reachable by
   IANA's special-purpose address registries (fanout.http.addresses:
   loopback, private, link-local, unique-local, site-local, multicast,
   shared, benchmarking, documentation and reserved blocks refused, also when
   embedded in an IPv6 address), unless `allow_private_urls` or an
   `allowed_networks` CIDR says otherwise;
5. the request is then pinned to the checked address (Host header and TLS
   SNI keep the name), so a second DNS answer cannot swap in another address
   between the check and the connection (DNS rebinding).

With `allow_private_urls` (the local simulator) steps 4 and 5 are skipped for
names: the guard resolves nothing, and the run's transport, which resolves
them when it connects, refuses metadata addresses there (step 3 still holds
on the connected address). Behind an HTTP proxy the proxy connects to the
pinned address, so the check still holds.
"""

from __future__ import annotations

import ipaddress
import socket
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import NamedTuple

import anyio
import httpx

from fanout.base.errors import ConfigError, ToolFailure
from fanout.http.addresses import IPAddress, is_metadata, unreachable, unwrapped
from fanout.tools.blocklist import blocked_by, normalise_host

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""(host, port) -> the addresses the host resolves to, as strings."""

ALLOWED_SCHEMES = frozenset({"http", "https"})
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata"})
_LEGACY_IPV4 = re.compile(r"(?=.*[0-9])[0-9a-fx.]+", re.ASCII)
"""What inet_aton may read as an IPv4 address: `2130706433`, `0x7f000001`, `127.1`."""


class Target(NamedTuple):
    """A URL that passed the static checks, with its host in the form we compare."""

    url: httpx.URL
    host: str
    """ASCII (IDNA) and lower-case; IPv6 without brackets."""
    port: int


class PinnedRequest(NamedTuple):
    """Where to connect and what to tell the server, after the address check."""

    url: httpx.URL
    headers: dict[str, str]
    extensions: dict[str, str]


async def resolve_host(host: str, port: int) -> list[str]:
    """The system resolver, off the event loop (anyio runs getaddrinfo in a thread)."""
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ToolFailure(f"dns_error: could not resolve {host} ({exc})") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_networks(cidrs: Iterable[str]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    try:
        return tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)
    except ValueError as exc:
        raise ConfigError(f"allowed_networks: {exc}") from exc


class UrlGuard:
    """Parses, checks and pins URLs; one per ToolBox."""

    def __init__(
        self,
        blocked: frozenset[str],
        *,
        allow_private: bool = False,
        allowed_networks: Iterable[str] = (),
        resolver: Resolver | None = None,
    ) -> None:
        self._blocked = blocked
        self._allow_private = allow_private
        self._allowed_networks = parse_networks(allowed_networks)
        self._resolve = resolver or resolve_host

    def parse(self, url: str | httpx.URL) -> Target:
        """The static checks (scheme, host, blocked domain, metadata name); no I/O."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise ToolFailure(f"invalid_url: {str(url)[:200]!r} is not a valid URL ({exc})") from exc
        if parsed.scheme not in ALLOWED_SCHEMES:
            raise ToolFailure(
                f"unsupported_scheme: web_fetch reads only http and https URLs, not {parsed.scheme or 'none'!r}"
            )
        host = normalise_host(parsed.raw_host.decode("ascii"))
        if not host:
            raise ToolFailure(f"invalid_url: {str(url)[:200]!r} has no host")
        domain = blocked_by(host, self._blocked)
        if domain is not None:
            raise ToolFailure(
                f"blocked_domain: {host} is blocked ({domain} hosts or mirrors the edit under review, "
                "so it cannot be evidence for it); find an independent source"
            )
        if host in METADATA_HOSTS:
            raise ToolFailure(f"refused_address: {host} is a cloud metadata endpoint")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        return Target(parsed, host, port)

    async def pin(self, target: Target) -> PinnedRequest:
        """Resolve, refuse any non-public address, and pin the request to a checked one."""
        literal = _literal_address(target.host)
        legacy = literal is not None and _ip_or_none(target.host) is None
        shown = f"{target.host} ({literal})" if legacy else target.host
        if literal is not None and is_metadata(literal):
            raise ToolFailure(f"refused_address: {shown} is a cloud metadata endpoint")
        if self._allow_private:
            return _private_allowed(target, literal if legacy else None)
        addresses = [literal] if literal is not None else await self._resolved(target)
        for address in addresses:
            self._refuse_non_public(address, shown if literal is not None else None, target.host)
        return _pinned(target, addresses[0])

    def _refuse_non_public(self, address: IPAddress, shown: str | None, host: str) -> None:
        """ToolFailure when `address` may not be reached: named as the URL wrote it (`shown`), else as resolved."""
        refusal = self.refusal(address)
        if refusal is not None:
            where = shown if shown is not None else f"{host} resolves to {address}, which"
            raise ToolFailure(f"refused_address: {where} is a {refusal} address; web_fetch reads only public web pages")

    def endpoint_refusal(self, url: str) -> str | None:
        """Why a configured API address (a search endpoint) may not be used, judged without DNS, or None.

        A metadata host is always refused; a literal non-public address (any
        form inet_aton reads) or `localhost` only without allow_private_urls or
        a matching allowed_networks CIDR.
        """
        try:
            host = normalise_host(httpx.URL(url).raw_host.decode("ascii"))
        except (httpx.InvalidURL, TypeError):
            return "not a valid URL"
        literal = _literal_address(host)
        if host in METADATA_HOSTS or (literal is not None and is_metadata(literal)):
            return f"{host} is a cloud metadata endpoint"
        if self._allow_private:
            return None
        if host == "localhost" or host.endswith(".localhost"):
            literal = ipaddress.ip_address("127.0.0.1")
        kind = self.refusal(literal) if literal is not None else None
        if kind is None:
            return None
        return f"{host} is a {kind} address; pass --allow-private-urls (local testing only)"

    def refusal(self, address: IPAddress) -> str | None:
        """Why `address` may not be reached (e.g. "loopback"), or None if it may."""
        if is_metadata(address):
            return "cloud metadata"
        if any(address in network for network in self._allowed_networks):
            return None
        for candidate in unwrapped(address):
            kind = _non_public_kind(candidate)
            if kind is not None:
                return kind
        return None

    async def _resolved(self, target: Target) -> list[IPAddress]:
        try:
            found = await self._resolve(target.host, target.port)
        except OSError as exc:
            raise ToolFailure(f"dns_error: could not resolve {target.host} ({exc})") from exc
        addresses = [a for a in (_ip_or_none(text) for text in found) if a is not None]
        if not addresses:
            raise ToolFailure(f"dns_error: {target.host} has no address")
        return addresses


def _private_allowed(target: Target, legacy: IPAddress | None) -> PinnedRequest:
    """With private URLs allowed nothing is resolved here, but a legacy form (2130706433) is sent as the address
    it stands for, the one just checked."""
    return _pinned(target, legacy) if legacy is not None else PinnedRequest(target.url, {}, {})


def _pinned(target: Target, address: IPAddress) -> PinnedRequest:
    """Connect to `address`, but speak to the server (Host, SNI, certificate) as the name."""
    extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
    headers = {"Host": target.url.netloc.decode("ascii")}
    return PinnedRequest(target.url.copy_with(host=str(address)), headers, extensions)


def _ip_or_none(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _literal_address(host: str) -> IPAddress | None:
    """The address a host names literally: an IP address, or a legacy IPv4 form the system resolver reads as one."""
    address = _ip_or_none(host)
    if address is not None or not _LEGACY_IPV4.fullmatch(host):
        return address
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


SHORT_KINDS = {"Loopback": "loopback", "Loopback Address": "loopback", "Private-Use": "private",
               "Link Local": "link-local", "Link-Local Unicast": "link-local", "Unique-Local": "unique-local",
               "Multicast": "multicast", "Unspecified Address": "unspecified", '"This host on this network"': "unspecified"}
"""The registry's names that a user knows by a short word; every other entry is named with its RFC."""


def _non_public_kind(address: IPAddress) -> str | None:
    """What IANA's registries make `address` (fanout.http.addresses.unreachable), in the words of a refusal."""
    entry = unreachable(address)
    if entry is None:
        return None
    return SHORT_KINDS.get(entry.name) or f"non-public ({entry.name}, {entry.rfc})"
