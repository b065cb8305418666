package brokercode

// OrderStatus is an order's orderStatus (spec: States, "Order statuses").
type OrderStatus string

// Values seen in orderStatus.
const (
	OrderStatusNew             OrderStatus = "New"
	OrderStatusPendingNew      OrderStatus = "PendingNew"
	OrderStatusAccepted        OrderStatus = "Accepted"
	OrderStatusPartiallyFilled OrderStatus = "PartiallyFilled"
	OrderStatusFilled          OrderStatus = "Filled"
	OrderStatusCanceled        OrderStatus = "Canceled"
	OrderStatusRejected        OrderStatus = "Rejected"
	OrderStatusDoneForDay      OrderStatus = "DoneForDay"
	OrderStatusExpired         OrderStatus = "Expired"
)

// Terminal reports whether the status is one the spec's rules call
// terminal: Filled, Canceled, Expired or Rejected.
func (st OrderStatus) Terminal() bool {
	switch st {
	case OrderStatusFilled, OrderStatusCanceled, OrderStatusExpired, OrderStatusRejected:
		return true
	}
	return false
}
