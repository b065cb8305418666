package brokersim

import "net/http"

// routes is every endpoint of the spec's "Endpoints" part, with its
// rate-limit bucket and its authentication behaviour; with a partner program
// in the scenario, also its login page and token endpoint.
func (s *Sim) routes() []route {
	const acct = "/v1/api/accounts/{accountId}"
	status := func(r reply) func(*call) reply { return func(*call) reply { return r } }
	options := reply{status: http.StatusOK, header: http.Header{"Allow": {"GET"}}}
	rts := []route{
		// Accounts and profit and loss, with the HTTP semantics of the
		// account endpoints: HEAD 405 on all three, POST 405 on list and
		// detail and 404 on /pnl, OPTIONS on the list 200 with Allow: GET.
		{"GET /v1/api/accounts", "accounts.list", authRead, s.handleAccounts},
		{"HEAD /v1/api/accounts", "", authNone, status(methodNotAllowed())},
		{"POST /v1/api/accounts", "", authNone, status(methodNotAllowed())},
		{"OPTIONS /v1/api/accounts", "", authNone, status(options)},
		{"GET /v1/api/account/{accountId}", "accounts.detail", authRead, s.handleAccountDetail},
		{"HEAD /v1/api/account/{accountId}", "", authNone, status(methodNotAllowed())},
		{"POST /v1/api/account/{accountId}", "", authNone, status(methodNotAllowed())},
		{"GET " + acct + "/pnl", "pnl", authRead, s.handlePnL},
		{"HEAD " + acct + "/pnl", "", authNone, status(reply{status: http.StatusMethodNotAllowed, noBody: true})},
		{"POST " + acct + "/pnl", "", authNone, status(pageNotFound())},

		// Orders.
		{"POST " + acct + "/order", "order.place", authWrite, s.handlePlaceOrder},
		{"GET " + acct + "/order/{clientOrderId}", "order.get", authRead, s.handleGetOrder},
		{"GET " + acct + "/orders", "orders.book", authRead, s.handleOrderBook},
		{"GET " + acct + "/orders/start-date/{date}", "orders.archive", authRead, s.handleFillArchive},
		{"GET " + acct + "/orders-with-pagination/start-date/{date}", "orders.paginated", authRead, s.handleOrderHistory},
		{"DELETE " + acct + "/orders/{clientOrderId}", "order.cancel", authCancelOrder, s.handleCancelOrder},
		{"DELETE /v1/api/accounts/orders", "orders.cancelAll", authWrite, s.handleCancelAll},
		{"GET " + acct + "/routes", "routes", authRead, s.handleRoutes},
		{"GET " + acct + "/is-easy-to-borrow/symbol/{symbol}", "etb", authRead, s.handleEasyToBorrow},

		// Positions.
		{"GET " + acct + "/positions", "positions", authRead, s.handlePositions},
		{"GET " + acct + "/positions/closed", "positions.closed", authRead, s.handleClosedPositions},
		{"GET " + acct + "/positions/historical", "positions.historical", authRead, s.handleHistoricalPositions},

		// Short locates.
		{"POST /v1/api/accounts/locates/quote", "locates.quote", authWrite, s.handleQuote},
		{"POST /v1/api/accounts/locates/accept", "locates.accept", authWrite, s.handleAccept},
		{"POST /v1/api/accounts/locates/sell", "locates.sell", authWrite, s.handleSell},
		{"DELETE /v1/api/accounts/locates/cancel/accounts/{accountId}/quoteReqID/{quoteReqID}", "locates.cancel", authWrite, s.handleLocateCancel},
		{"GET " + acct + "/locates/inventory", "locates.inventory", authRead, s.handleInventory},
		{"GET " + acct + "/locates/history", "locates.history", authRead, s.handleHistory},

		// Cash ledger.
		{"GET " + acct + "/cash-transactions/start-date/{startDate}", "ledger", authLedger, s.handleCashLedger},
	}
	if p := s.sc.Partner; p != nil {
		rts = append(rts,
			route{"GET " + p.LoginPath, "", authPartner, s.handleLogin},
			route{"POST " + p.LoginPath, "", authPartner, s.handleLogin},
			route{"POST " + TokenPath, "", authPartner, s.handleToken},
		)
	}
	return rts
}

// routeJSON is a route record (spec: "Route record"; reference envelope).
type routeJSON struct {
	RouteName     string   `json:"routeName"`
	SecurityTypes []string `json:"securityTypes"`
	OrderTypes    []string `json:"orderTypes"`
	TimesInForce  []string `json:"timesInForce"`
	UseDisplayQty bool     `json:"useDisplayQty"`
}

// routeCatalog describes the route names the spec lists; placement checks
// security type, order type and time in force against it.
var routeCatalog = map[string]routeJSON{
	"PAPER": {"PAPER", []string{"Stock", "Option"}, []string{"Market", "Limit", "Stop", "StopLimit"},
		[]string{"Day", "GoodTillCancel", "GoodTillCrossing"}, false},
	"PAPERM": {"PAPERM", []string{"MLEG"}, []string{"Market", "Limit"}, []string{"Day"}, false},
	"SMART": {"SMART", []string{"Stock"},
		[]string{"Market", "Limit", "Stop", "StopLimit", "RangeOrder", "MarketOnOpen", "LimitOnOpen", "TrailStop", "MarketOnClose", "LimitOnClose", "Pegged"},
		[]string{"Day", "Day_Plus", "GoodTillCancel", "GTC_Plus", "GoodTillCrossing", "AtTheOpening"}, true},
	"CTDL": {"CTDL", []string{"Stock"}, []string{"Market", "Limit", "Stop", "StopLimit"},
		[]string{"Day", "Day_Plus", "GoodTillCancel", "GTC_Plus"}, true},
	"SMARTO": {"SMARTO", []string{"Option"}, []string{"Market", "Limit", "Stop", "StopLimit"},
		[]string{"Day", "GoodTillCancel"}, false},
	"SMARTM": {"SMARTM", []string{"MLEG"}, []string{"Market", "Limit"}, []string{"Day", "GoodTillCancel"}, false},
	"ARCA": {"ARCA", []string{"Stock"}, []string{"Market", "Limit", "Stop", "StopLimit", "Pegged"},
		[]string{"Day", "Day_Plus", "GoodTillCancel", "GTC_Plus", "IOC", "FOK"}, true},
}

// routeSecType maps a placement securityType to its spelling in routes.
func routeSecType(secType string) string {
	if secType == "Mleg" {
		return "MLEG"
	}
	return secType
}

// handleRoutes serves GET .../routes: {"routes":[...]} for the account's routes.
func (s *Sim) handleRoutes(c *call) reply {
	out := struct {
		Routes []routeJSON `json:"routes"`
	}{Routes: []routeJSON{}}
	for _, name := range c.acct.routes {
		rt, ok := routeCatalog[name]
		if !ok {
			rt = routeJSON{name, []string{"Stock"}, []string{"Market", "Limit"}, []string{"Day"}, false}
		}
		out.Routes = append(out.Routes, rt)
	}
	return jsonReply(http.StatusOK, out)
}
