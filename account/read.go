package account

import (
	"time"

	"github.com/locatorhq/locator/brokerclient"
)

// ReadKind names the broker's records a Read asks for.
type ReadKind string

// The records Read reads (spec sections "Accounts and profit and loss",
// "Positions", "Orders", "Route record", "Short locates").
const (
	// ReadAccounts: the accounts the owner's keys reach.
	ReadAccounts ReadKind = "accounts"
	// ReadAccount: the account's own record.
	ReadAccount ReadKind = "account"
	// ReadPnL: the account's profit and loss.
	ReadPnL ReadKind = "pnl"
	// ReadPositions: the open positions.
	ReadPositions ReadKind = "positions"
	// ReadClosedPositions: the closed-lot lifecycle rows.
	ReadClosedPositions ReadKind = "closedPositions"
	// ReadHistoricalPositions: the lots held at the end of Date.
	ReadHistoricalPositions ReadKind = "historicalPositions"
	// ReadOrders: today's order book.
	ReadOrders ReadKind = "orders"
	// ReadFills: the fills since Date, through today.
	ReadFills ReadKind = "fills"
	// ReadRoutes: the routes the account may send orders to.
	ReadRoutes ReadKind = "routes"
	// ReadInventory: the located inventory.
	ReadInventory ReadKind = "inventory"
	// ReadLocateHistory: today's locate history rows.
	ReadLocateHistory ReadKind = "locateHistory"
)

// ReadRequest asks for one kind of the broker's records.
type ReadRequest struct {
	What ReadKind `json:"what"`
	// Date is the trade date of ReadHistoricalPositions (required) and
	// the first of ReadFills (required); no other kind takes one.
	Date time.Time `json:"date,omitzero"`
}

// ReadResult holds the records a Read asked for, as the broker gave them:
// the field of its kind is set, the others are empty.
type ReadResult struct {
	// Skew is the broker's clock less the reader's, as the answer's Date
	// header told it (brokerclient.Client.ClockSkew): what a report dated
	// on the broker's calendar adds to the host's time.
	Skew       time.Duration                     `json:"skew"`
	Accounts   []brokerclient.Account            `json:"accounts,omitempty"`
	Account    *brokerclient.Account             `json:"account,omitempty"`
	PnL        *brokerclient.PnL                 `json:"pnl,omitempty"`
	Positions  []brokerclient.Position           `json:"positions,omitempty"`
	Closed     []brokerclient.ClosedPosition     `json:"closed,omitempty"`
	Historical []brokerclient.HistoricalPosition `json:"historical,omitempty"`
	Orders     []brokerclient.Order              `json:"orders,omitempty"`
	Fills      []brokerclient.Fill               `json:"fills,omitempty"`
	Routes     []brokerclient.Route              `json:"routes,omitempty"`
	Inventory  []brokerclient.InventoryRow       `json:"inventory,omitempty"`
	History    []brokerclient.HistoryRow         `json:"history,omitempty"`
}
