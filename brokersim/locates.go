package brokersim

import "net/http"

// locateBook holds quotes, sells, history rows, pools and inventory.
type locateBook struct{}

func newLocateBook(sc Scenario) locateBook { return locateBook{} }

func (s *Sim) handleQuote(c *call) reply        { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleAccept(c *call) reply       { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleSell(c *call) reply         { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleLocateCancel(c *call) reply { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleInventory(c *call) reply    { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleHistory(c *call) reply      { return textReply(http.StatusNotImplemented, "todo") }
func (s *Sim) handleEasyToBorrow(c *call) reply { return textReply(http.StatusNotImplemented, "todo") }

// reserveForShort ties shares of the account's located inventory for symbol
// to a short being opened; it reports false when too few are available.
func (b *locateBook) reserveForShort(s *Sim, account, symbol string, shares int64) bool { return true }

// releaseShort unties shares when a short is covered.
func (b *locateBook) releaseShort(s *Sim, account, symbol string, shares int64) {}
