"""Ensure located shares, then sell short: what an execution helper does.

Run beside the account's owner (`locator serve`), with the same LOCATOR_*
variables as the CLI:

    python3 ensure_located_then_short.py HTBY 500 8.40 0.05

locates 500 HTBY under a cap of 0.05 a share (quoting only what inventory
lacks), then sells 500 short at 8.40. Exit 0 when the order is working or
filled, 3 when the locate or the order did not go through, 2 on bad input.
"""

import sys
from decimal import Decimal

from locator_client import Client, LocatorError


def main(symbol: str, shares: int, limit: Decimal, max_price: Decimal) -> int:
    client = Client.from_env()
    located = client.locate(symbol, shares, max_price=max_price)
    print(f"locate {located.symbol} {located.id}: {located.state}, {located.shares} shares at {located.price_per_share}")
    if not located.located:
        print(f"not located ({located.reason or located.cause}): no short sent")
        return 3
    # The short ensures the locate again (the shares are there: nothing is
    # quoted) and checks the sizing before its one order leaves. The limit
    # is the helper's market price too: the fat-finger guard's reference
    # when the broker shows none (no position, fill or close of the symbol).
    short = client.short(symbol, shares, limit, max_price=max_price, ref_price=limit)
    if short.order is None:
        print(f"no order sent: {short.reason}")
        return 3
    o = short.order
    print(f"order {o.client_order_id} {o.symbol}: {o.state} ({o.order_status}), {o.executed} of {o.quantity} at {o.price_avg}")
    return 0 if o.state in ("working", "filled") else 3


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1], int(sys.argv[2]), Decimal(sys.argv[3]), Decimal(sys.argv[4])))
    except LocatorError as e:
        print(f"{e.kind}: {e}", file=sys.stderr)
        sys.exit(2 if e.kind in ("input", "refused") else 1)
