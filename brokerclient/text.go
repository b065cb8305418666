package brokerclient

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// CleanText is s without what a terminal, a log or a page could take for
// a command: C0 control characters but tab and newline, DEL, C1 control
// characters, and whole escape sequences (CSI such as colours and cursor
// moves, and OSC, DCS, APC, PM and SOS strings such as a window title, up
// to their terminator); bytes that are not UTF-8 become U+FFFD. Every
// string the client decodes from the broker passes through it, so a
// rejection's text, a message or a problem's details reach a terminal, the
// database or a page as plain text.
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
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsCleaning reports whether s holds anything CleanText changes.
func needsCleaning(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f) || r == utf8.RuneError {
			return true
		}
	}
	return false
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
// pointer to something decoded from the broker, in place: fields of any
// depth, slices, map keys and values, and what interfaces hold.
func cleanDecoded(v any) { cleanValue(reflect.ValueOf(v)) }

func cleanValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			cleanValue(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// What an interface holds cannot be set in place: clean a copy.
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		cleanValue(c)
		if v.CanSet() {
			v.Set(c)
		}
	case reflect.String:
		if s := v.String(); v.CanSet() && needsCleaning(s) {
			v.SetString(CleanText(s))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				cleanValue(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return // raw bytes (json.RawMessage), decoded later
		}
		for i := range v.Len() {
			cleanValue(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			ck := reflect.New(k.Type()).Elem()
			ck.Set(k)
			cleanValue(ck)
			cv := reflect.New(v.Type().Elem()).Elem()
			cv.Set(v.MapIndex(k))
			cleanValue(cv)
			v.SetMapIndex(k, reflect.Value{})
			v.SetMapIndex(ck, cv)
		}
	}
}
