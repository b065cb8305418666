"""The account API's errors, one class per kind (api/openapi.yaml, Error):
catch LocatorError for all of them, a subclass for one kind, or branch on
``kind``; the message is the owner's, for people."""

from __future__ import annotations


class LocatorError(Exception):
    """An error of the account API, with its kind: input, refused, not_open,
    sizing, changed, used, owner_gone or failed (a kind a newer owner adds
    comes as a LocatorError of that kind)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return self.message


class _OfKind(LocatorError):
    """A LocatorError whose class names its kind."""

    KIND = ""

    def __init__(self, message: str) -> None:
        super().__init__(self.KIND, message)


class InputError(_OfKind):
    """The request is malformed (a bad argument, refused here or by the
    owner); nothing was recorded or sent."""

    KIND = "input"


class RefusedError(_OfKind):
    """Well formed but refused before anything was sent: the account is the
    other environment, the caller may not act for it, the owner did not
    prove the key pair or showed another certificate."""

    KIND = "refused"


class NotOpenError(_OfKind):
    """The workflow or order has ended, or is unknown."""

    KIND = "not_open"


class SizingError(_OfKind):
    """The short cannot be placed now (buying power, located shares, the
    account's status); nothing was sent."""

    KIND = "sizing"


class ChangedError(_OfKind):
    """The answer was for an offer that is no longer the one waiting;
    nothing was sent."""

    KIND = "changed"


class UsedError(_OfKind):
    """The answer came by a signed link already used; nothing was sent."""

    KIND = "used"


class FailedError(_OfKind):
    """Anything else: a store or broker failure at the owner."""

    KIND = "failed"


class OwnerGoneError(_OfKind):
    """The account's owner went away mid-request: whether it was carried out
    is unknown (look with Client.status)."""

    KIND = "owner_gone"


class OwnerNotRunning(OwnerGoneError):
    """No owner of the account answers where the client looks (no socket,
    nobody listening, no TLS port): nothing was sent."""


class TransportError(OwnerGoneError):
    """The connection to the owner failed after it was made (reset, timed
    out, a TLS handshake that failed): what was sent is unknown."""


_KINDS = {c.KIND: c for c in (InputError, RefusedError, NotOpenError, SizingError, ChangedError, UsedError,
                               FailedError, OwnerGoneError)}


def error_of(kind: str, message: str) -> LocatorError:
    """The exception of an error the owner answered: its kind's class, or
    a LocatorError of a kind this client does not know."""
    cls = _KINDS.get(kind)
    return cls(message) if cls else LocatorError(kind, message)
