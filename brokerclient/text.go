package brokerclient

import (
	"bytes"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText is s without what a terminal, a log or a page could take for
// a command or a layout: C0 control characters, DEL, C1 control
// characters, whole escape sequences (CSI such as colours and cursor
// moves, and OSC, DCS, APC, PM and SOS strings such as a window title, up
// to their terminator) and format characters (Unicode Cf: the bidi
// embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the
// marks U+200E, U+200F and U+061C, zero-width characters); a tab, a line
// break (\n, \r, U+2028, U+2029) becomes a space (none after a space), so
// a text stays on its own line and row. Bytes that are not UTF-8 become
// U+FFFD. Every
// string the client decodes from the broker passes through it, so a
// rejection's text, a message or a problem's details reach a terminal, the
// database or a page as plain text on one line.
func CleanText(s string) string {
	if !needsCleaning(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == 0x1b: // ESC: a sequence of its own kind follows
			if i >= len(s) {
				continue
			}
			next, m := utf8.DecodeRuneInString(s[i:])
			i += m
			switch next {
			case '[':
				i = skipCSI(s, i)
			case ']', 'P', 'X', '^', '_':
				i = skipString(s, i)
			}
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i)
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // C1 DCS, SOS, OSC, PM, APC
			i = skipString(s, i)
		case isBreak(r):
			if b.Len() == 0 || b.String()[b.Len()-1] != ' ' {
				b.WriteByte(' ')
			}
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Cf, r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsCleaning reports whether s holds anything CleanText changes.
func needsCleaning(s string) bool {
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == utf8.RuneError || isBreak(r) || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

// isBreak reports whether r moves to another column or line: tab and the
// line and paragraph breaks. CleanText writes a space for it.
func isBreak(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029'
}

// skipCSI skips a control sequence's parameters and intermediates up to
// and including its final byte (0x40 to 0x7e).
func skipCSI(s string, i int) int {
	for ; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
	}
	return i
}

// skipString skips a control string up to and including its terminator:
// BEL, ST (U+009C) or ESC \.
func skipString(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x07 || r == 0x9c:
			return i + n
		case r == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		}
		i += n
	}
	return i
}

// cleanDecoded runs CleanText over every string reachable from v, a
// pointer to something decoded from the broker, in place.
func cleanDecoded(v any) { cleanValue(reflect.ValueOf(v), CleanText) }

// secretMask stands in broker text for a secret the client sent.
const secretMask = "[REDACTED]"

// minMaskedSecret is the shortest secret masked: a shorter one (only
// tests use such) would mask ordinary words of the broker's text.
const minMaskedSecret = 8

// secrets are the values the client sent that only it may know (the key
// secret, the partner client secret, the bearer token). A broker answer
// that echoes one keeps secretMask in its place, so an error quoting the
// answer cannot print the secret.
type secrets []string

// mask is text with every secret in it replaced by secretMask.
func (s secrets) mask(text string) string {
	for _, x := range s {
		if len(x) >= minMaskedSecret {
			text = strings.ReplaceAll(text, x, secretMask)
		}
	}
	return text
}

// maskBody is mask over a raw body, before it is decoded or cut: a secret
// is masked whole wherever the body is later quoted. It copies b only when
// b holds a secret.
func (s secrets) maskBody(b []byte) []byte {
	for _, x := range s {
		if len(x) >= minMaskedSecret && bytes.Contains(b, []byte(x)) {
			b = bytes.ReplaceAll(b, []byte(x), []byte(secretMask))
		}
	}
	return b
}

// cleanMasked runs CleanText, then mask, over every string reachable from
// v in place: a secret split by characters CleanText drops is masked too.
func (s secrets) cleanMasked(v any) {
	cleanValue(reflect.ValueOf(v), func(t string) string { return s.mask(CleanText(t)) })
}

// cleanValue sets every string reachable from v to f of it: fields of any
// depth, slices, map keys and values, and what interfaces hold.
func cleanValue(v reflect.Value, f func(string) string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			cleanValue(v.Elem(), f)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// What an interface holds cannot be set in place: clean a copy.
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		cleanValue(c, f)
		if v.CanSet() {
			v.Set(c)
		}
	case reflect.String:
		if s := v.String(); v.CanSet() {
			if t := f(s); t != s {
				v.SetString(t)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				cleanValue(v.Field(i), f)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return // raw bytes (json.RawMessage), decoded later
		}
		for i := range v.Len() {
			cleanValue(v.Index(i), f)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			ck := reflect.New(k.Type()).Elem()
			ck.Set(k)
			cleanValue(ck, f)
			cv := reflect.New(v.Type().Elem()).Elem()
			cv.Set(v.MapIndex(k))
			cleanValue(cv, f)
			v.SetMapIndex(k, reflect.Value{})
			v.SetMapIndex(ck, cv)
		}
	}
}
