"""A client of locator's account API (api/openapi.yaml) for Python helpers.

It reaches the account's owner (``locator serve``, or the command that owns
the account) on its unix socket, proving it holds the account's key pair
(api/README.md), or from another host on the owner's TLS port with a
bearer credential, and carries calls: every rule (caps, the live/paper
guard, Reg SHO sides, the paced quote queue, the crash-safe record) is the
owner's. Standard library only; money is decimal.Decimal (or a decimal
string); every error is a LocatorError, a subclass per kind.
"""

from .client import Client, Money, Order, Outcome, QuoteResult, ShortResult, Update, Updates
from .errors import (
    ChangedError,
    FailedError,
    InputError,
    LocatorError,
    NotOpenError,
    OwnerGoneError,
    OwnerNotRunning,
    RefusedError,
    SizingError,
    TransportError,
    UsedError,
)
from .transport import pin_of, same_broker, socket_path

__all__ = [
    "ChangedError",
    "Client",
    "FailedError",
    "InputError",
    "LocatorError",
    "Money",
    "NotOpenError",
    "Order",
    "Outcome",
    "OwnerGoneError",
    "OwnerNotRunning",
    "QuoteResult",
    "RefusedError",
    "ShortResult",
    "SizingError",
    "TransportError",
    "Update",
    "Updates",
    "UsedError",
    "pin_of",
    "same_broker",
    "socket_path",
]
