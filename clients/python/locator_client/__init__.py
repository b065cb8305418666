"""A client of locator's account API (api/openapi.yaml) for Python helpers.

It reaches the account's owner (``locator serve``, or the command that owns
the account) on its unix socket, proves it holds the account's key pair
(api/README.md) and carries calls: every rule (caps, the live/paper guard,
Reg SHO sides, the paced quote queue, the crash-safe record) is the
owner's. Standard library only; money is decimal.Decimal.
"""

from .client import (
    Client,
    LocatorError,
    Order,
    Outcome,
    OwnerNotRunning,
    QuoteResult,
    ShortResult,
    Update,
)

__all__ = [
    "Client",
    "LocatorError",
    "Order",
    "Outcome",
    "OwnerNotRunning",
    "QuoteResult",
    "ShortResult",
    "Update",
]
