// Placement bodies: the broker's schema validation of POST .../order and
// the defaults of the fields a placement may leave out.

package brokersim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// orderRequest is a structurally valid placement body.
type orderRequest struct {
	clientOrderID                                    string
	symbol, side, openClose, orderType, secType, tif string
	route                                            string
	qty                                              int64
	limit, stop                                      decimal.Decimal
	hasLimit, hasStop                                bool
	legs                                             []orderLeg
}

var (
	symbolPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	sides         = []string{"Buy", "Sell"}
	openCloses    = []string{"Open", "Close"}
	orderTypes    = []string{"Market", "Limit", "Stop", "StopLimit"}
	securityTypes = []string{"Stock", "Option", "Mleg"}
	timesInForce  = []string{"Day", "Day_Plus", "GoodTillCancel", "GTC_Plus", "GoodTillCrossing", "IOC", "FOK", "AtTheOpening"}
	priceMax      = decimal.RequireFromString("9999.99")
)

// jsonType names a decoded JSON value the way the broker's schema validator
// does in its messages; integral numbers are "integer".
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if d, ok := sizedNumber(x); ok && d.IsInteger() {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// sizedNumber parses a JSON number whose digits and exponent stay within
// reason: arithmetic on something like 1e-999999999 would take the lock for
// minutes, so such numbers are reported as out of range instead.
func sizedNumber(n json.Number) (decimal.Decimal, bool) {
	if len(n) > 64 {
		return decimal.Zero, false
	}
	d, err := decimal.NewFromString(n.String())
	if err != nil || d.Exponent() > 30 || d.Exponent() < -30 {
		return decimal.Zero, false
	}
	return d, true
}

func typeLine(field, want string, v any) string {
	return fmt.Sprintf("- %s: Invalid type. Expected: %s, given: %s.", field, want, jsonType(v))
}

func enumLine(field string, allowed []string) string {
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = strconv.Quote(a)
	}
	return fmt.Sprintf("- %s: %s must be one of the following: %s", field, field, strings.Join(q, ", "))
}

// parseOrderRequest checks a placement body the way the broker's schema
// validator does (spec: "Order schema or parse failure", rule 4 of
// "Orders"): enumerations case-sensitive, quantity an integer, at most four
// price decimals. It returns the "- field: message" lines of every problem.
func parseOrderRequest(body []byte) (orderRequest, []string) {
	var req orderRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return req, []string{"- (root): Invalid type. Expected: object, given: null."}
		}
		return req, []string{"- (root): " + err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return req, []string{typeLine("(root)", "object", v)}
	}
	// Required are only the fields without which there is no order to
	// speak of. The spec marks none required; openClose, securityType and
	// timeInForce have safe readings when absent (see defaultOrder), and
	// published clients place stock orders without openClose.
	var missing []string
	for _, f := range []string{"symbol", "side", "orderType", "orderQuantity"} {
		if _, ok := m[f]; !ok {
			missing = append(missing, "- (root): "+f+" is required")
		}
	}
	c := &schemaCheck{}
	if id, ok := c.str(m, "clientOrderId", "clientOrderId", true); ok {
		if len(id) > 375 {
			c.add("- clientOrderId: String length must be less than or equal to 375")
		}
		req.clientOrderID = id
	}
	req.symbol = c.symbol(m, "symbol")
	req.side = c.enum(m, "side", "side", sides)
	req.orderType = c.enum(m, "orderType", "orderType", orderTypes)
	if v, ok := m["orderQuantity"]; ok {
		req.qty = c.quantity(v)
	}
	req.tif = c.enum(m, "timeInForce", "timeInForce", timesInForce)
	req.openClose = c.enum(m, "openClose", "openClose", openCloses)
	req.secType = c.enum(m, "securityType", "securityType", securityTypes)
	req.limit, req.hasLimit = c.price(m, "limitPrice")
	req.stop, req.hasStop = c.price(m, "stopPrice")
	req.route, _ = c.str(m, "route", "route", true)
	if v, ok := m["legs"]; ok && v != nil {
		req.legs = c.legs(v)
	}
	if (req.orderType == "Limit" || req.orderType == "StopLimit") && !req.hasLimit {
		if _, sent := m["limitPrice"]; !sent || m["limitPrice"] == nil {
			missing = append(missing, "- (root): limitPrice is required")
		}
	}
	defaultOrder(&req)
	if req.secType == "Mleg" && len(req.legs) < 2 {
		c.add("- legs: Array must have at least 2 items")
	}
	return req, append(missing, c.lines...)
}

// schemaCheck gathers the "- field: message" lines of one placement body's
// field checks; each check reads one field and records what is wrong with it.
type schemaCheck struct{ lines []string }

func (c *schemaCheck) add(line string) { c.lines = append(c.lines, line) }

// str reads a string field; an absent one (or a null optional one) is not
// there, anything else not a string is a type problem.
func (c *schemaCheck) str(obj map[string]any, path, name string, optional bool) (string, bool) {
	v, ok := obj[name]
	if !ok || (v == nil && optional) {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		c.add(typeLine(path, "string", v))
		return "", false
	}
	return s, true
}

// enum reads a string field that must be one of allowed (case-sensitive).
func (c *schemaCheck) enum(obj map[string]any, path, name string, allowed []string) string {
	s, ok := c.str(obj, path, name, false)
	if ok && !slices.Contains(allowed, s) {
		c.add(enumLine(path, allowed))
	}
	return s
}

// symbol reads a symbol field (1 to 30 characters of symbolPattern) and
// returns it upper-cased.
func (c *schemaCheck) symbol(obj map[string]any, path string) string {
	s, ok := c.str(obj, path, "symbol", false)
	switch {
	case !ok:
	case s == "":
		c.add("- " + path + ": String length must be greater than or equal to 1")
	case len(s) > 30:
		c.add("- " + path + ": String length must be less than or equal to 30")
	case !symbolPattern.MatchString(s):
		c.add("- " + path + ": Does not match pattern '^[A-Za-z0-9._-]+$'")
	}
	return strings.ToUpper(s)
}

// price reads a price field: a number of at most four decimals, at most
// priceMax. It reports whether a number was there.
func (c *schemaCheck) price(m map[string]any, name string) (decimal.Decimal, bool) {
	v, ok := m[name]
	if !ok || v == nil {
		return decimal.Zero, false
	}
	n, ok := v.(json.Number)
	if !ok {
		c.add(typeLine(name, "number", v))
		return decimal.Zero, false
	}
	d, ok := sizedNumber(n)
	if !ok {
		c.add("- " + name + ": Must be less than or equal to 9999.99")
		return decimal.Zero, false
	}
	switch {
	case !d.Shift(4).IsInteger():
		c.add("- " + name + ": Must be a multiple of 0.0001")
	case d.GreaterThan(priceMax):
		c.add("- " + name + ": Must be less than or equal to 9999.99")
	}
	return d, true
}

// quantity reads orderQuantity: an integer from 1 to 1,000,000 (0 when it
// is not one).
func (c *schemaCheck) quantity(v any) int64 {
	n, isNum := v.(json.Number)
	d, sized := sizedNumber(n)
	switch {
	case isNum && !sized:
		c.add("- orderQuantity: Must be less than or equal to 1000000")
	case !isNum || !d.IsInteger():
		c.add(typeLine("orderQuantity", "integer", v))
	case d.LessThan(decimal.NewFromInt(1)):
		c.add("- orderQuantity: Must be greater than or equal to 1")
	case d.GreaterThan(decimal.NewFromInt(1000000)):
		c.add("- orderQuantity: Must be less than or equal to 1000000")
	default:
		return d.IntPart()
	}
	return 0
}

// legs reads the legs array of a multi-leg order: objects with a symbol, a
// side and an optional positive ratio (1 when absent or not one).
func (c *schemaCheck) legs(v any) []orderLeg {
	arr, ok := v.([]any)
	if !ok {
		c.add(typeLine("legs", "array", v))
	}
	var legs []orderLeg
	for i, e := range arr {
		path := "legs." + strconv.Itoa(i)
		leg, ok := e.(map[string]any)
		if !ok {
			c.add(typeLine(path, "object", e))
			continue
		}
		for _, f := range []string{"symbol", "side"} {
			if _, ok := leg[f]; !ok {
				c.add("- " + path + ": " + f + " is required")
			}
		}
		l := orderLeg{symbol: c.symbol(leg, path+".symbol"), side: c.enum(leg, path+".side", "side", sides), ratio: 1}
		if r, ok := leg["ratio"].(json.Number); ok {
			if n, err := r.Int64(); err == nil && n > 0 {
				l.ratio = n
			}
		}
		legs = append(legs, l)
	}
	return legs
}

// defaultOrder fills the optional fields a placement left out: a security
// type read from the request (legs make Mleg, an OCC symbol Option, else
// Stock) and a Day time in force. A missing openClose stays empty until
// place infers it from the position.
func defaultOrder(req *orderRequest) {
	if req.secType == "" {
		_, occ := parseOCC(req.symbol)
		switch {
		case len(req.legs) > 0:
			req.secType = "Mleg"
		case occ:
			req.secType = "Option"
		default:
			req.secType = "Stock"
		}
	}
	if req.tif == "" {
		req.tif = "Day"
	}
}
