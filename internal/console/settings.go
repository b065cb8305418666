package console

import (
	"sort"
	"strings"

	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/store"
)

// settingRow is one setting as --json prints it.
type settingRow struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	From    string `json:"from"`
}

// Settings prints the effective settings s and where each came from, the
// settings file at path (file, as read) first: whether the key pair is
// set, never its values.
func Settings(out Printer, s config.Settings, file *config.File, path string) {
	fileState := "not found"
	if file.Path != "" {
		fileState = "read"
	}
	isSet := func(v string) string {
		if v == "" {
			return "not set"
		}
		return "set"
	}
	var names []string
	for n := range file.Accounts {
		names = append(names, n)
	}
	sort.Strings(names)
	list := []settingRow{
		{"config-file", path, fileState},
		{"account", s.Account, s.From["account"]},
		{"base-url", s.BaseURL, s.From["base-url"]},
		{"env", string(s.Env), s.From["env"]},
		{"auth", s.Auth, s.From["auth"]},
		{"db", store.Redact(s.DB), s.From["db"]}, // a Postgres URL without its password
		{"locate-budget", s.Budget, s.From["locate-budget"]},
		{"key-id", isSet(s.KeyID), "env " + s.KeyVars[0]},
		{"secret", isSet(s.Secret), "env " + s.KeyVars[1]},
		{"named accounts", strings.Join(names, ","), file.Path},
	}
	var rows [][]string
	var objs []any
	for _, r := range list {
		rows = append(rows, []string{r.Setting, r.Value, r.From})
		objs = append(objs, r)
	}
	out.Table([]string{"SETTING", "VALUE", "FROM"}, rows, objs)
}
