package workflow

// BookOrder is what the one definition of available shares needs of an
// order in today's order book.
type BookOrder struct {
	Symbol    string
	Side      string // Buy or Sell
	OpenClose string // Open, Close, or empty (a stock order that did not say)
	Status    string // the broker's orderStatus
	Quantity  int64
	Executed  int64
	Canceled  int64
	Leaves    int64 // leavesQuantity when the broker gives it
}

// Remaining is the order's unfilled quantity.
func (o BookOrder) Remaining() int64 {
	if o.Leaves > 0 {
		return o.Leaves
	}
	return max(o.Quantity-o.Executed-o.Canceled, 0)
}

// WorkingShortSell reports whether the order is a short sale that can still
// fill today and so will take located shares that still show as available:
// a Sell that opens (or does not say, which on a stock order with no long
// position opens a short) and is neither terminal nor done for the day.
func (o BookOrder) WorkingShortSell() bool {
	if o.Side != "Sell" || (o.OpenClose != "Open" && o.OpenClose != "") {
		return false
	}
	switch o.Status {
	case "Filled", "Canceled", "Expired", "Rejected", "DoneForDay":
		return false
	}
	return true
}

// WorkingShortSells sums the unfilled shares of symbol's working short sells.
func WorkingShortSells(book []BookOrder, symbol string) int64 {
	var n int64
	for _, o := range book {
		if o.Symbol == symbol && o.WorkingShortSell() {
			n += o.Remaining()
		}
	}
	return n
}

// Available is the one definition of shares available to short: located
// inventory still available (the sum of `available` over the symbol's rows,
// spec "Size shorts from available only"), less the shares working short
// sells will take. Locate coverage, short sizing and credit-back all use it.
func Available(located int64, book []BookOrder, symbol string) int64 {
	return max(located-WorkingShortSells(book, symbol), 0)
}
