// Package brokerclient is a typed client of the broker's whole REST interface
// (the broker's interface specification, "the spec" in comments, section
// "Endpoints"; docs/broker.md summarizes what locator relies on). It paces every
// route with a token bucket matching the spec's "Rate limits" table, recovers
// 429s on the spec's schedule, retries only what is safe to repeat, reports a
// lost answer to a quote, sell or order as OutcomeUnknownError carrying the
// client id, and decodes every shape the spec warns about without losing data.
// Every address it is given passes CheckAddress (TLS beyond loopback), it
// follows no redirect (RedirectError), and every string it decodes from
// the broker is CleanText. No answer is read past 64 MiB, nor a row of
// one past 1 MiB (AnswerTooLargeError), nor past its endpoint's cap of
// rows (array elements, at any depth: from 1,000 for the accounts to
// 50,000 for the locate history; SECURITY.md lists them) and of fields
// (object members: 32 for each row of the cap), counted as it is read and
// before any of it is decoded (TooManyRowsError); a list is decoded row by
// row.
//
// Services are grouped by area, after go-github: Client.Accounts,
// Client.Orders, Client.Positions, Client.Locates, Client.Ledger, and
// Client.Partner, which signs a user in through the partner OAuth flow
// (WithPartner) and renews the user's tokens before they expire
// (WithPartnerToken, on the client's clock), and Client.Streams for the two
// WebSocket streams: WatchPnL keeps a P&L model in sync, FollowOrders learns
// order states from the portfolio stream and falls back to the order book
// only while the stream is down.
package brokerclient
