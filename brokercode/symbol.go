package brokercode

import "strings"

// MaxSymbolLength is the longest symbol the broker takes (the public
// reference's placement limit: at most 30 characters).
const MaxSymbolLength = 30

// ValidateSymbol is the one symbol rule, applied before a symbol is recorded
// or sent in a body or a path. From the spec and the reference: not empty,
// at most MaxSymbolLength characters, uppercase (the broker matches symbols
// exactly and case-sensitively, spec: Orders rule 6), and only letters,
// digits, '.', '-' and '_'. Where they are silent, the stricter shape of a
// ticker: ASCII only, a letter first, and each '.', '-' or '_' between two
// letters or digits (BRK.B, BRK-B), so neither "." nor ".." (which the
// router answers with a bare 404) nor anything that would change a URL's
// meaning gets through. OCC option symbols fit the same rule.
//
// It checks and never rewrites: lowercase is refused, not upper-cased
// (Symbol is the rewrite, for what a person typed).
func ValidateSymbol(symbol string) error {
	switch {
	case symbol == "":
		return Invalid("symbol", "is empty")
	case len(symbol) > MaxSymbolLength:
		return Invalid("symbol", "%q is longer than %d characters", symbol, MaxSymbolLength)
	case symbol != strings.ToUpper(symbol):
		return Invalid("symbol", "%q must be uppercase (the broker matches symbols exactly)", symbol)
	}
	prev := byte('.')
	for i := 0; i < len(symbol); i++ {
		c := symbol[i]
		switch {
		case c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		case isSeparator(c) && !isSeparator(prev) && i < len(symbol)-1:
		default:
			return Invalid("symbol", "%q is not a ticker (uppercase letters and digits, a letter first, '.', '-' or '_' only between them)", symbol)
		}
		prev = c
	}
	return nil
}

// Symbol is a symbol as a person typed it (on a command line, in a
// watchlist or a jobs file), its ASCII letters upper-cased and then checked
// by ValidateSymbol: `htbx` means HTBX. Only ASCII is rewritten, so that no
// other letter turns into one of a ticker's ("ſpy" stays refused). Library
// callers send symbols as the broker writes them and are held to
// ValidateSymbol alone.
func Symbol(typed string) (string, error) {
	s := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, typed)
	return s, ValidateSymbol(s)
}

// Symbols is Symbol of each symbol a person typed, in order; the first
// one refused refuses them all.
func Symbols(typed []string) ([]string, error) {
	out := make([]string, len(typed))
	for i, t := range typed {
		var err error
		if out[i], err = Symbol(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isSeparator(c byte) bool { return c == '.' || c == '-' || c == '_' }
