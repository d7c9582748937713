"""Who may send HL7 v2 to the MLLP listener (issue 21, item 7): the rules only, pure.

MLLP has no authentication of its own. Two allow-lists narrow who is heard:

* **peers**: the connecting address, one of a list of addresses or CIDR networks
  (``10.1.2.3``, ``10.1.2.0/24``, ``::1``). Checked when the connection is accepted,
  before one byte is read.
* **senders**: MSH-3 (sending application) and MSH-4 (sending facility), the first
  component of each (the HD namespace id), as ``APP^FACILITY``; ``*`` stands for any
  value of one of the two (``LAB^*``), never of both. Compared exactly (case and
  spaces count): these are codes an interface engine is configured with, and a looser
  match would let a near-miss through. A sender names itself, so this list is a
  routing guard, not authentication: the peer list and a tunnel are.

Either list is written as ``a,b,c`` or as a JSON array of strings. An empty list means
"no restriction", which ``listener_access`` allows only on a loopback address.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _items(text: str, what: str) -> list[str]:
    text = (text or "").strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(f"{what} is not a valid JSON array") from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{what} must be a JSON array of strings")
        items = value
    else:
        items = text.split(",")
    return [item.strip() for item in items if item.strip()]


@dataclass(frozen=True)
class AllowedSenders:
    """MSH-3^MSH-4 pairs allowed to send; empty: anyone."""

    pairs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> "AllowedSenders":
        pairs = []
        for item in _items(text, "WORKBENCH_MLLP_ALLOWED_SENDERS"):
            app, sep, facility = item.partition("^")
            app, facility = app.strip(), facility.strip()
            if not sep or not app or not facility or "^" in facility:
                raise ValueError(f"WORKBENCH_MLLP_ALLOWED_SENDERS: {item[:60]!r} is not APP^FACILITY "
                                 "(MSH-3^MSH-4; '*' for any one of the two)")
            if app == facility == "*":
                raise ValueError("WORKBENCH_MLLP_ALLOWED_SENDERS: '*^*' allows every sender; leave the list "
                                 "empty instead (allowed only on a loopback address)")
            pairs.append((app, facility))
        return cls(tuple(pairs))

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def allows(self, application: str, facility: str) -> bool:
        if not self.pairs:
            return True
        return any(app in ("*", application) and fac in ("*", facility) for app, fac in self.pairs)


@dataclass(frozen=True)
class AllowedPeers:
    """Addresses and networks allowed to connect; empty: any."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "AllowedPeers":
        networks = []
        for item in _items(text, "WORKBENCH_MLLP_ALLOWED_PEERS"):
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(f"WORKBENCH_MLLP_ALLOWED_PEERS: {item[:60]!r} is not an IP address or "
                                 "CIDR network (e.g. 10.1.2.3 or 10.1.2.0/24)") from None
        return cls(tuple(networks))

    def __bool__(self) -> bool:
        return bool(self.networks)

    def allows(self, address: str) -> bool:
        if not self.networks:
            return True
        ip = peer_ip(address)
        return ip is not None and any(ip.version == net.version and ip in net for net in self.networks)


def peer_ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The peer's address, an IPv4-mapped IPv6 address as its IPv4 one; None if unreadable."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_loopback(addresses: list[str]) -> bool:
    """True when every address the listener would bind is a loopback one (127.0.0.0/8,
    ::1). The wildcard addresses (0.0.0.0, ::) and anything unreadable are not."""
    ips = [peer_ip(a) for a in addresses]
    return bool(ips) and all(ip is not None and ip.is_loopback for ip in ips)


@dataclass(frozen=True)
class ListenerAccess:
    senders: AllowedSenders
    peers: AllowedPeers


def listener_access(host: str, bound: list[str], senders_text: str, peers_text: str) -> ListenerAccess:
    """The allow-lists for a listener on ``host`` (``bound``: the addresses it resolves
    to). Raises ValueError with a one-line reason when a list cannot be read, or when the
    host is not loopback and either list is empty: off loopback, anyone who can reach
    the port could otherwise put results on a chart."""
    access = ListenerAccess(AllowedSenders.parse(senders_text), AllowedPeers.parse(peers_text))
    if not is_loopback(bound):
        missing = [name for name, given in (("WORKBENCH_MLLP_ALLOWED_PEERS", access.peers),
                                            ("WORKBENCH_MLLP_ALLOWED_SENDERS", access.senders)) if not given]
        if missing:
            raise ValueError(f"MLLP on {host[:60]} (not a loopback address) needs {' and '.join(missing)}: "
                             "MLLP has no authentication of its own; list the interface engines' addresses "
                             "and MSH-3^MSH-4, and reach it through a VPN or TLS tunnel (README)")
    return access
