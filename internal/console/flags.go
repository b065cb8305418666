package console

import (
	"errors"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/pflag"
)

// PlainBools makes fs's boolean flags show in help as --json rather than
// pflag's --json[=true|false]: pflag adds the suffix to a value that says
// it is a bool flag, and parses any flag with a NoOptDefVal the same way,
// so the value is wrapped to stop saying so.
func PlainBools(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = plainBool{f.Value}
		}
	})
}

// plainBool is a bool flag's value without IsBoolFlag (see PlainBools).
type plainBool struct{ v pflag.Value }

func (b plainBool) String() string     { return b.v.String() }
func (b plainBool) Set(s string) error { return b.v.Set(s) }
func (b plainBool) Type() string       { return b.v.Type() }

// SuggestFlag is fs's flag nearest the mistyped one err names (at most two
// edits away), as cobra suggests commands, or "".
func SuggestFlag(fs *pflag.FlagSet, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedName() == "" {
		return ""
	}
	typed := ne.GetSpecifiedName()
	best, bestDist := "", 3
	fs.VisitAll(func(f *pflag.Flag) {
		if d := levenshtein.ComputeDistance(typed, f.Name); !f.Hidden && d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// NegativeNumber is the argument err says is an unknown shorthand flag
// when it is a negative number ("-500" for `locate HTBX -500`), or "": the
// parser reads a leading dash as flags, but the person typed a quantity
// or a price.
func NegativeNumber(err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedShortnames() == "" {
		return ""
	}
	n := "-" + ne.GetSpecifiedShortnames()
	if _, err := strconv.ParseFloat(n, 64); err != nil {
		return ""
	}
	return n
}

// Examples reads a file of commands' examples: a command's name and a
// colon, then its examples indented, one a line; # starts a comment.
func Examples(text string) map[string][]string {
	out := map[string][]string{}
	name := ""
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "  "):
			out[name] = append(out[name], strings.TrimSpace(line))
		default:
			name = strings.TrimSuffix(line, ":")
		}
	}
	return out
}
