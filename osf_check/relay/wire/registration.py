"""Registration of a socket at the relay, and the protocol version gate.

A registration payload holds ``deviceId`` and ``relayProtocolVersion``; optionally
``deviceName``, ``sessionId``, ``resumeToken`` and ``targetDesktopDeviceId``.  The
device must be a row the account registered over HTTP, not forgotten, of the
connection's role, with relay permission.  The required version is the higher of
1.7 and the highest ``minimum_relay_protocol_version`` among the compatibility
rules, which are read at most every 60 s.  The desktop's HTTP pre-check before it
connects, which fails open, is :mod:`.precheck`.

>>> gate = VersionGate(lambda: ["1.6"])
>>> devices = {EXAMPLE_DEVICE: Device(EXAMPLE_DEVICE, "desktop")}
>>> register({"deviceId": EXAMPLE_DEVICE, "relayProtocolVersion": "1.7"}, "desktop", devices, gate, 0.0)
Registration(device='6f1c2a7e-0000-4000-8000-000000000001', role='desktop', target=None, session_id=None)
>>> register({"deviceId": EXAMPLE_DEVICE, "relayProtocolVersion": "1.6"}, "desktop", devices, gate, 0.0)
Traceback (most recent call last):
...
osf_check.relay.wire.registration.RegistrationError: protocolUpdateRequired: Update the app: it speaks relay protocol 1.6, and 1.7 is required.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from .. import constants

EXAMPLE_DEVICE = "6f1c2a7e-0000-4000-8000-000000000001"
CURRENT = MINIMUM = (1, 7)
RULES_TTL = float(constants.RULES_TTL)
REQUIRED = frozenset({"deviceId", "relayProtocolVersion"})
OPTIONAL = frozenset({"deviceName", "sessionId", "resumeToken", "targetDesktopDeviceId"})
VERSION = re.compile(r"^(\d+)\.(\d+)$")


class RegistrationError(Exception):
    """The registration is refused; ``reason`` is the code the socket is closed with."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def parse_version(v: Any) -> tuple[int, int] | None:
    m = VERSION.match(v) if isinstance(v, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def show(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


@dataclass(frozen=True)
class Device:
    """A device row the account registered over HTTP."""

    device_id: str
    role: str  # desktop or mobile
    relay_permission: bool = True
    forgotten: bool = False


@dataclass(frozen=True)
class Registration:
    device: str
    role: str
    target: str | None
    session_id: str | None


class VersionGate:
    """The required protocol version, from the compatibility rules (cached 60 s)."""

    def __init__(self, load_rules: Callable[[], list[Any]], ttl: float = RULES_TTL):
        self.load_rules, self.ttl = load_rules, ttl
        self._cached: tuple[float, tuple[int, int]] | None = None

    def required(self, now: float) -> tuple[int, int]:
        if self._cached is not None and now < self._cached[0] + self.ttl:
            return self._cached[1]
        try:
            rules = list(self.load_rules())
        except Exception as e:  # the rules are unreadable: nobody registers
            raise RegistrationError("relayProtocolPolicyUnavailable",
                                    f"compatibility rules unreadable ({e})") from None
        need = MINIMUM
        for r in rules:
            v = parse_version(r)
            if v is None:
                raise RegistrationError("relayProtocolPolicyUnavailable",
                                        f"a compatibility rule holds the version {r!r}")
            need = max(need, v)
        self._cached = (now, need)  # only a successful read is cached
        return need


def _uuid(v: Any) -> bool:
    try:
        return isinstance(v, str) and str(uuid.UUID(v)) == v.lower()
    except ValueError:
        return False


def register(payload: Any, role: str, devices: dict[str, Device], gate: VersionGate,
             now: float) -> Registration:
    """Validate a registration; raises :class:`RegistrationError` with the reason."""
    if not isinstance(payload, dict):
        raise RegistrationError("invalidRegistration", "the payload is not an object")
    extra = sorted(set(payload) - REQUIRED - OPTIONAL)
    if extra:
        raise RegistrationError("invalidRegistration", f"unknown field {extra[0]}")
    if "relayProtocolVersion" not in payload:
        raise RegistrationError("protocolUpdateRequired", "Update the app: it does not say "
                                "which relay protocol it speaks.")
    version = parse_version(payload["relayProtocolVersion"])
    if version is None:
        raise RegistrationError("invalidRelayProtocolVersion",
                                f"cannot parse {payload['relayProtocolVersion']!r}")
    need = gate.required(now)
    if version < need:
        # 004: "Die Meldung fordert den Benutzer auf, die App zu aktualisieren"
        raise RegistrationError("protocolUpdateRequired",
                                f"Update the app: it speaks relay protocol {show(version)}, and "
                                f"{show(need)} is required.")
    dev = payload.get("deviceId")
    if not _uuid(dev):
        raise RegistrationError("invalidRegistration", "deviceId is not a UUID")
    row = devices.get(dev.lower())
    if row is None or row.forgotten:
        raise RegistrationError("unknownDevice", "no such device for this account")
    if row.role != role or not row.relay_permission:
        raise RegistrationError("forbidden", "the device may not open this connection")
    target = payload.get("targetDesktopDeviceId")
    if role == "mobile" and target is not None and not _uuid(target):
        raise RegistrationError("invalidRegistration", "targetDesktopDeviceId is not a UUID")
    return Registration(row.device_id, role, target.lower() if target else None,
                        payload.get("sessionId"))
