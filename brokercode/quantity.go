package brokercode

// Locate quantity bounds (spec: Limits, "Locate limits"): quote, sell and
// credit-back quantities run from 100 to 2147483647 shares, in lots of
// 100.
const (
	MinLocateQuantity = 100
	MaxLocateQuantity = 2147483647
	LocateLot         = 100
)

// ValidateLocateQuantity checks a quote, sell or credit-back quantity
// against the spec's "Locate limits". Out-of-range values would come back
// as a 400 ProblemDetails, and a quantity that is not a whole lot as an
// asynchronous R67 rejection; both are refused here instead, before
// anything is sent.
func ValidateLocateQuantity(qty int64) error {
	if qty < MinLocateQuantity || qty > MaxLocateQuantity || qty%LocateLot != 0 {
		return Invalid("quantity", "%d: want a multiple of %d from %d to %d", qty, LocateLot, MinLocateQuantity, MaxLocateQuantity)
	}
	return nil
}
