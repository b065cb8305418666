// Locate endpoints: decoding of the locate request bodies (the broker's
// schema checks) and the handlers of quote, accept, sell, cancel,
// inventory, history and easy-to-borrow.

package brokersim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// locObject decodes a request body into its top-level fields, so handlers
// can tell a missing field from a wrongly typed one as the broker's schema
// validation does; anything but a JSON object is the 400 text line.
func locObject(body []byte) (map[string]json.RawMessage, *reply) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		r := validationLines("- (root): The request body is not a valid JSON object.")
		return nil, &r
	}
	return m, nil
}

// locJSONKind names the JSON type of a raw value for "Invalid type" lines.
func locJSONKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "number"
	}
	return "integer"
}

// locPresent reports whether the field is there and not null.
func locPresent(m map[string]json.RawMessage, name string) bool {
	raw, ok := m[name]
	return ok && locJSONKind(raw) != "null"
}

// locString reads a string field; ok is false when it is absent, null or
// not a string, and line is then the validation line for a wrong type.
func locString(m map[string]json.RawMessage, name string) (v string, ok bool, line string) {
	if !locPresent(m, name) {
		return "", false, ""
	}
	raw := m[name]
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false, fmt.Sprintf("- %s: Invalid type. Expected: string, given: %s.", name, locJSONKind(raw))
	}
	return v, true, ""
}

// locQuantity is the ASP.NET-style 400 of a quantity that is not an
// integer in 100..2147483647 (spec: "Locate errors", synchronous). A missing
// quantity binds as 0 there, so it fails the range check too.
func locQuantity(raw json.RawMessage, now time.Time) (int64, *reply) {
	msg := fmt.Sprintf("The field Quantity must be between 100 and %d.", maxLocateQty)
	if k := locJSONKind(raw); k != "integer" && k != "null" {
		msg = "The JSON value could not be converted to System.Int32."
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil || n < 100 || n > maxLocateQty {
		r := problemDetails("Quantity", msg, now)
		return 0, &r
	}
	return n, nil
}

// locAck is the string-valued acknowledgement of a locate write.
func locAck(key string) reply { return jsonReply(http.StatusOK, map[string]string{key: "true"}) }

// handleQuote serves POST /v1/api/accounts/locates/quote (spec: "Short
// locates", "Locate errors"): synchronous checks answer 400; anything else is
// acknowledged and appears at once in history as Quoting, settling later.
func (s *Sim) handleQuote(c *call) reply {
	m, bad := locObject(c.body)
	if bad != nil {
		return *bad
	}
	qty, bad := locQuantity(m["quantity"], c.now)
	if bad != nil {
		return *bad
	}
	id, _, _ := locString(m, "account")
	a := s.ownedAccount(c.key, id)
	if a == nil {
		return accountMismatch()
	}
	var lines []string
	reqID, ok, line := locString(m, "quoteReqID")
	if line != "" {
		lines = append(lines, line)
	} else if !ok || reqID == "" {
		lines = append(lines, "- (root): quoteReqID is required")
	}
	symbol, _, line := locString(m, "symbol")
	if line != "" {
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		return validationLines(lines...)
	}
	s.loc.quote(s, a, symbol, qty, reqID, c.now)
	return locAck("locateQuoteSent")
}

// handleAccept serves POST /v1/api/accounts/locates/accept: always 200 once
// the body names an owned account and an id; only an Offered row inside its
// window fills, so repeating an accept is harmless (spec: "Short locates"
// rule 3).
func (s *Sim) handleAccept(c *call) reply {
	m, bad := locObject(c.body)
	if bad != nil {
		return *bad
	}
	var lines []string
	acct, okAcct, line := locString(m, "accountId")
	if line != "" {
		lines = append(lines, line)
	} else if !okAcct {
		lines = append(lines, "- (root): accountId is required")
	}
	reqID, okID, line := locString(m, "quoteReqID")
	if line != "" {
		lines = append(lines, line)
	} else if !okID {
		lines = append(lines, "- (root): quoteReqID is required")
	}
	if len(lines) > 0 {
		return validationLines(lines...)
	}
	a := s.ownedAccount(c.key, acct)
	if a == nil {
		return accountMismatch()
	}
	s.loc.accept(s, a, reqID, c.now)
	return locAck("locateAcceptSent")
}

// handleSell serves POST /v1/api/accounts/locates/sell, the credit-back
// (spec: "Short locates", "Locate types", "Locate errors").
func (s *Sim) handleSell(c *call) reply {
	m, bad := locObject(c.body)
	if bad != nil {
		return *bad
	}
	var lines []string
	str := func(name string) string {
		v, ok, line := locString(m, name)
		switch {
		case line != "":
			lines = append(lines, line)
		case !ok || (name == "quoteReqID" && v == ""):
			lines = append(lines, "- (root): "+name+" is required")
		}
		return v
	}
	acct := str("account")
	symbol := str("symbol")
	if !locPresent(m, "quantity") {
		lines = append(lines, "- (root): quantity is required")
	}
	var typ string
	if !locPresent(m, "locateType") {
		lines = append(lines, "- (root): locateType is required")
	} else if v, _, _ := locString(m, "locateType"); !knownSellType(v) {
		// A wrong JSON type fails the same enum check as an unknown string.
		lines = append(lines, `- locateType: locateType must be one of the following: "Unknown", "Locate", "IntraDay", "PreBorrow", "SingleUse"`)
	} else {
		typ = v
	}
	reqID := str("quoteReqID")
	if len(lines) > 0 {
		return validationLines(lines...)
	}
	qty, bad := locQuantity(m["quantity"], c.now)
	if bad != nil {
		return *bad
	}
	a := s.ownedAccount(c.key, acct)
	if a == nil {
		return accountMismatch()
	}
	s.loc.sell(s, a, symbol, qty, typ, reqID, c.now)
	return locAck("locateSellbackSent")
}

// handleLocateCancel serves DELETE .../locates/cancel/accounts/{accountId}/
// quoteReqID/{quoteReqID}: acknowledged without checking the id (spec:
// "Short locates" rule 6).
func (s *Sim) handleLocateCancel(c *call) reply {
	a := s.ownedAccount(c.key, c.r.PathValue("accountId"))
	if a == nil {
		return accountMismatch()
	}
	s.loc.cancel(s, a, c.r.PathValue("quoteReqID"), c.now)
	return locAck("locateCancelSent")
}

// invRowJSON is the spec's "Locate inventory row": exactly seven fields.
type invRowJSON struct {
	AccountID   string `json:"accountId"`
	Symbol      string `json:"symbol"`
	Available   int64  `json:"available"`
	Sold        int64  `json:"sold"`
	ToBeSold    int64  `json:"toBeSold"`
	Unavailable int64  `json:"unavailable"`
	LocateType  int    `json:"locateType"`
}

// handleInventory serves GET .../locates/inventory; paper accounts get the
// bare empty array the spec describes ("Paper versus live").
func (s *Sim) handleInventory(c *call) reply {
	if c.acct.paper {
		return jsonReply(http.StatusOK, []invRowJSON{})
	}
	out := []invRowJSON{}
	for _, r := range s.loc.inv {
		if r.account != c.acct.id {
			continue
		}
		out = append(out, invRowJSON{
			AccountID: r.account, Symbol: r.symbol, Available: r.available, Sold: r.sold,
			ToBeSold: r.toBeSold, Unavailable: r.unavailable(), LocateType: r.typ,
		})
	}
	return jsonReply(http.StatusOK, map[string]any{"locateInventory": out})
}

// historyRowJSON is the spec's "Locate history row".
type historyRowJSON struct {
	AccountID    string      `json:"accountId"`
	Symbol       string      `json:"symbol"`
	QuoteReqID   string      `json:"quoteReqID"`
	LocateShares int64       `json:"locateShares"`
	FilledShares int64       `json:"filledShares"`
	LocateStatus int         `json:"locateStatus"`
	LocateType   int         `json:"locateType"`
	LocatePrice  json.Number `json:"locatePrice"`
	PreBorrow    bool        `json:"preBorrow"`
	LocateError  int         `json:"locateError"`
	Text         *string     `json:"text"`
	CreatedDate  string      `json:"createdDate"`
	UpdatedDate  string      `json:"updatedDate"`
}

// handleHistory serves GET .../locates/history: the account's rows created
// on the current trading day (sessionDay), oldest first.
func (s *Sim) handleHistory(c *call) reply {
	today := sessionDay(c.now)
	out := []historyRowJSON{}
	for _, r := range s.loc.rows {
		if r.account != c.acct.id || !sessionDay(r.created).Equal(today) {
			continue
		}
		out = append(out, historyRowJSON{
			AccountID: r.account, Symbol: r.symbol, QuoteReqID: r.id,
			LocateShares: r.shares, FilledShares: r.filled,
			LocateStatus: r.status, LocateType: r.typ, LocatePrice: r.wirePrice(),
			PreBorrow: r.typ == typePreBorrow, LocateError: r.errCode, Text: r.text,
			// The spec says precision varies (3 to 7 digits): both appear.
			CreatedDate: fmt7(r.created), UpdatedDate: fmt3(r.updated),
		})
	}
	return jsonReply(http.StatusOK, map[string]any{"locateHistory": out})
}

// handleEasyToBorrow serves GET .../is-easy-to-borrow/symbol/{symbol}: an
// exact, case-sensitive match; always true on paper (spec: "Orders" rule 6,
// "Paper versus live").
func (s *Sim) handleEasyToBorrow(c *call) reply {
	etb := c.acct.paper || s.etb[c.r.PathValue("symbol")]
	return jsonReply(http.StatusOK, map[string]bool{"isEasyToBorrow": etb})
}
