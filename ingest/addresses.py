"""Where the harvesters may connect: public addresses only (judged through the IPv6 forms that carry an IPv4
address), and then to the very address that was checked, never to a second DNS answer."""

from __future__ import annotations

import ipaddress
import socket

import httpcore
import httpx


def default_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


NAT64 = ipaddress.ip_network("64:ff9b::/96")


def address_is_public(address: str) -> bool:
    """False for loopback, private, link-local (cloud metadata), multicast, reserved and unspecified addresses,
    also when an IPv6 address carries one of them: IPv4-mapped, 6to4 (2002::/16), Teredo (its client) or NAT64."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = [ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None]
        if ip in NAT64:
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if any(e is not None and not address_is_public(str(e)) for e in embedded):
            return False
        if ip.ipv4_mapped:
            ip = ip.ipv4_mapped
    return not (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or (isinstance(ip, ipaddress.IPv4Address) and ip in ipaddress.ip_network("100.64.0.0/10"))
    )


class _PinnedBackend(httpcore.NetworkBackend):
    """httpcore's network backend that connects each (host, port) to the address `check_url` checked for it, and
    to nothing else."""

    def __init__(self, pins: dict[tuple[str, int], str]) -> None:
        self.pins = pins
        self.inner = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        address = self.pins.get((host.lower().rstrip("."), port))
        if address is None:
            raise httpcore.ConnectError(f"{host}:{port} was not checked before connecting")
        return self.inner.connect_tcp(address, port, timeout, local_address, socket_options)

    def connect_unix_socket(self, *args, **kwargs):
        raise httpcore.ConnectError("no unix sockets")

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def pinned_transport(pins: dict[tuple[str, int], str]) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                                    trust_env=False)  # fmt: skip
    if not hasattr(transport._pool, "_network_backend"):  # httpx/httpcore moved: read this again
        raise RuntimeError("httpcore's ConnectionPool has no _network_backend: cannot pin checked addresses")
    transport._pool._network_backend = _PinnedBackend(pins)
    return transport
