package brokercode

import "strconv"

// LocateStatus is a locate history row's locateStatus code (spec: States,
// "Locate statuses").
type LocateStatus int

// The locate status codes of the spec.
const (
	// LocateStatusNew is a credit-back row just queued.
	LocateStatusNew LocateStatus = 48
	// LocateStatusFilled is an accepted quote or a cleared credit-back.
	LocateStatusFilled LocateStatus = 50
	// LocateStatusCanceled is an offer or pending credit-back cancelled.
	LocateStatusCanceled LocateStatus = 52
	// LocateStatusPending is a quote waiting for inventory to appear.
	LocateStatusPending LocateStatus = 54
	// LocateStatusRejected carries its reason in locateError and text.
	LocateStatusRejected LocateStatus = 56
	// LocateStatusOffered is priced and acceptable for 30 seconds.
	LocateStatusOffered LocateStatus = 65
	// LocateStatusExpired is an offer or pending quote whose window ended.
	LocateStatusExpired LocateStatus = 67
	// LocateStatusQuoting is a quote still being priced.
	LocateStatusQuoting LocateStatus = 81
)

// Name returns the spec's name for the status ("Canceled"), or "" for a
// code the spec does not list.
func (s LocateStatus) Name() string {
	switch s {
	case LocateStatusNew:
		return "New"
	case LocateStatusFilled:
		return "Filled"
	case LocateStatusCanceled:
		return "Canceled"
	case LocateStatusPending:
		return "Pending"
	case LocateStatusRejected:
		return "Rejected"
	case LocateStatusOffered:
		return "Offered"
	case LocateStatusExpired:
		return "Expired"
	case LocateStatusQuoting:
		return "Quoting"
	}
	return ""
}

// String names the status as people read it, code then name: "52 Canceled";
// a code the spec does not list is the bare number.
func (s LocateStatus) String() string {
	code := strconv.Itoa(int(s))
	if name := s.Name(); name != "" {
		return code + " " + name
	}
	return code
}

// IsTerminal reports whether the row can no longer change: Filled,
// Canceled, Rejected or Expired. New, Pending, Offered and Quoting still move.
func (s LocateStatus) IsTerminal() bool {
	switch s {
	case LocateStatusFilled, LocateStatusCanceled, LocateStatusRejected, LocateStatusExpired:
		return true
	}
	return false
}

// The locateType codes history and inventory rows carry (spec: "Locate
// types"). 0, on rejected rows where no pool was chosen, names none.
const (
	// TypeCodeLocate is the reusable Locate product.
	TypeCodeLocate = 1
	// TypeCodeIntraDay is the same product as TypeCodeLocate under its
	// older code; it sells as Locate.
	TypeCodeIntraDay = 2
	// TypeCodePreBorrow is the reusable Reg SHO pool.
	TypeCodePreBorrow = 3
	// TypeCodeSingleUse is the one-shot Reg SHO pool.
	TypeCodeSingleUse = 4
)

// LocateType is the string the sell endpoint takes for a locate pool (spec:
// "Locate types", Versioning rule 4). History and inventory rows carry the
// numeric code instead; LocateTypeForCode maps one to the other.
type LocateType string

// The five strings the sell endpoint accepts.
const (
	// LocateTypeUnknown names no pool (code 0); a sell with it cannot match
	// any inventory row.
	LocateTypeUnknown LocateType = "Unknown"
	// LocateTypeLocate is the reusable Locate product, codes 1 and 2.
	LocateTypeLocate LocateType = "Locate"
	// LocateTypeIntraDay is a deprecated alias of Locate; the client sends
	// Locate in its place.
	LocateTypeIntraDay LocateType = "IntraDay"
	// LocateTypePreBorrow is the reusable Reg SHO pool, code 3.
	LocateTypePreBorrow LocateType = "PreBorrow"
	// LocateTypeSingleUse is the one-shot Reg SHO pool, code 4.
	LocateTypeSingleUse LocateType = "SingleUse"
)

// LocateTypeForCode maps a row's numeric locateType to the string a sell of
// that row must send: 1 and 2 are the same product and both sell as Locate
// (the spec: "send Locate for codes 1 and 2"), 3 is PreBorrow, 4 SingleUse.
// Anything else, including 0 on rejected rows, is Unknown.
func LocateTypeForCode(code int) LocateType {
	switch code {
	case TypeCodeLocate, TypeCodeIntraDay:
		return LocateTypeLocate
	case TypeCodePreBorrow:
		return LocateTypePreBorrow
	case TypeCodeSingleUse:
		return LocateTypeSingleUse
	}
	return LocateTypeUnknown
}

// Valid reports whether t is one of the five strings the sell endpoint accepts.
func (t LocateType) Valid() bool {
	switch t {
	case LocateTypeUnknown, LocateTypeLocate, LocateTypeIntraDay, LocateTypePreBorrow, LocateTypeSingleUse:
		return true
	}
	return false
}
