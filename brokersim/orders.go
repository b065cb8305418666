package brokersim

import "net/http"

// orderBook holds orders, fills, lots and positions.
type orderBook struct{}

func newOrderBook(s *Sim, sc Scenario) orderBook { return orderBook{} }

func (o *orderBook) priceChanged(s *Sim, symbol string) {}

func (s *Sim) handlePlaceOrder(c *call) reply   { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleGetOrder(c *call) reply     { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleOrderBook(c *call) reply    { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleFillArchive(c *call) reply  { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleOrderHistory(c *call) reply { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleCancelOrder(c *call) reply  { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleCancelAll(c *call) reply    { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleRoutes(c *call) reply       { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handlePositions(c *call) reply    { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleClosedPositions(c *call) reply {
	return textReply(http.StatusNotImplemented, "todo")
}
func (s *Sim) handleHistoricalPositions(c *call) reply {
	return textReply(http.StatusNotImplemented, "todo")
}
func (s *Sim) handleAccounts(c *call) reply      { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleAccountDetail(c *call) reply { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handlePnL(c *call) reply           { return textReply(http.StatusNotImplemented, "todo") }
