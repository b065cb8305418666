package brokerclient

// AccountsService reads accounts and profit and loss.
type AccountsService service

// OrdersService places, reads and cancels orders, and reads routes and the
// easy-to-borrow list.
type OrdersService service

// PositionsService reads open, closed and historical positions.
type PositionsService service

// LocatesService runs the short-locate workflow endpoints.
type LocatesService service

// LedgerService reads the cash ledger.
type LedgerService service

// PartnerService signs a user in through the partner OAuth flow and renews
// the user's tokens (spec: Authentication, "Partner OAuth 2.0 (direct
// program)").
type PartnerService service
