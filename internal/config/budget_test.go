package config_test

import (
	"testing"

	"github.com/locatorhq/locator/internal/config"
)

// An account's locate budget lives with its other settings: a
// named account's locateBudget, else the settings file's, and for serve
// each account of its file has its own; LOCATOR_LOCATE_BUDGET goes before
// them all (flag > environment > file), and one account's budget is never
// another's.
func TestLocateBudgetPerAccount(t *testing.T) {
	file, err := config.Parse([]byte(`{"locateBudget": "50", "accounts": {"desk": {"account": "LV100001", "locateBudget": "20,HTBX=10"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	file.Path = "config.json"
	env := func(vars map[string]string) config.Env {
		get := func(k string) string { return vars[k] }
		return config.Env{Lookup: get, Secret: get}
	}
	for _, tc := range []struct {
		account, envBudget, want, from string
	}{
		{"desk", "", "20,HTBX=10", `config.json (account "desk")`},
		{"LV100002", "", "50", "config.json"},
		{"desk", "30", "30", "env LOCATOR_LOCATE_BUDGET"},
	} {
		s := config.Layer(config.Flags{Account: tc.account}, file, env(map[string]string{config.BudgetEnv: tc.envBudget}))
		if s.Budget != tc.want || s.From["locate-budget"] != tc.from {
			t.Errorf("account %s, env %q: budget %q from %q, want %q from %q", tc.account, tc.envBudget, s.Budget, s.From["locate-budget"], tc.want, tc.from)
		}
	}

	// serve's file: each account its own, not the settings file's default
	// account's, the base's untouched.
	base := config.Layer(config.Flags{Account: "desk"}, file, env(map[string]string{"K": "key", "S": "secret"}))
	a, err := base.For(config.NamedAccount{Account: "LV100001", KeyIDEnv: "K", SecretEnv: "S", LocateBudget: "20"}, func(k string) string { return map[string]string{"K": "key", "S": "secret"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	b, err := base.For(config.NamedAccount{Account: "LV100002", KeyIDEnv: "K", SecretEnv: "S"}, func(k string) string { return map[string]string{"K": "key", "S": "secret"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if a.Budget != "20" || b.Budget != "" || b.From["locate-budget"] != config.FromDefault {
		t.Errorf("serve's accounts: budgets %q (want 20) and %q from %q (want none, from the default)", a.Budget, b.Budget, b.From["locate-budget"])
	}
}
