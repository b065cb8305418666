package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
)

// settingsFixture is a settings file with a default named account, and a
// plain one.
const settingsFixture = `{
  "baseURL": "http://file.example:8700",
  "account": "LV100001",
  "env": "live",
  "db": "/file/locator.db",
  "accounts": {
    "paper": {"account": "PP200001", "baseURL": "http://paper.example:8700", "env": "paper",
              "keyIdEnv": "PAPER_KEY_ID", "secretEnv": "PAPER_SECRET"}
  }
}`

// Flags over the environment over the file over the
// defaults, setting by setting; a named account brings its own address,
// environment and key variables.
func TestSettingsPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "locator", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(settingsFixture), 0o600); err != nil {
		t.Fatal(err)
	}
	type want struct{ account, baseURL, env, db, keyVar, from string }
	for _, tc := range []struct {
		name  string
		env   map[string]string
		flags connFlags
		want  want
	}{
		{"file", nil, connFlags{},
			want{"LV100001", "http://file.example:8700", "live", "/file/locator.db", "LOCATOR_KEY_ID", path}},
		{"environment over file", map[string]string{"LOCATOR_BASE_URL": "http://env.example", "LOCATOR_DB": "/env.db"}, connFlags{},
			want{"LV100001", "http://env.example", "live", "/env.db", "LOCATOR_KEY_ID", "env LOCATOR_BASE_URL"}},
		{"flag over environment", map[string]string{"LOCATOR_BASE_URL": "http://env.example"}, connFlags{baseURL: "http://flag.example", db: "/flag.db"},
			want{"LV100001", "http://flag.example", "live", "/flag.db", "LOCATOR_KEY_ID", "flag --base-url"}},
		{"named account by flag", nil, connFlags{account: "paper"},
			want{"PP200001", "http://paper.example:8700", "paper", "/file/locator.db", "PAPER_KEY_ID", path + ` (account "paper")`}},
		{"named account by environment, address from the environment", map[string]string{"LOCATOR_ACCOUNT": "paper", "LOCATOR_BASE_URL": "http://env.example"}, connFlags{},
			want{"PP200001", "http://env.example", "paper", "/file/locator.db", "PAPER_KEY_ID", "env LOCATOR_BASE_URL"}},
		{"no file: defaults", map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": "/state"}, connFlags{account: "lv100001"},
			want{"LV100001", "", "live", "/state/locator/locator.db", "LOCATOR_KEY_ID", config.FromDefault}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"XDG_CONFIG_HOME": dir, "PAPER_KEY_ID": "PK", "PAPER_SECRET": "ps", "LOCATOR_KEY_ID": "LK", "LOCATOR_SECRET": "ls"}
			for k, v := range tc.env {
				env[k] = v
			}
			m := &Main{Getenv: func(k string) string { return env[k] }}
			c := tc.flags
			c.m = m
			file, err := m.loadSettings()
			if err != nil {
				t.Fatal(err)
			}
			s := config.Layer(c.flags(), file, m.env())
			got := want{s.Account, s.BaseURL, string(s.Env), s.DB, s.KeyVars[0], s.From["base-url"]}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if s.KeyID != env[s.KeyVars[0]] || s.Secret != env[s.KeyVars[1]] {
				t.Errorf("keys %q %q from %v", s.KeyID, s.Secret, s.KeyVars)
			}
		})
	}
}

// A file holding a secret is refused, naming the key and never the value;
// bad JSON and unknown keys are refused with the path; all exit 2 before
// anything is sent.
func TestSettingsFileRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"secret", `{"account": "LV100001", "secret": "hunter2"}`, []string{`"secret": a key ID, secret or token is never read from this file`, "environment"}},
		{"key secret of a named account", `{"accounts": {"live": {"account": "LV100001", "keySecret": "hunter2"}}}`, []string{`"accounts.live.keySecret": a key ID`}},
		{"client secret", `{"clientSecret": "hunter2"}`, []string{`"clientSecret": a key ID`}},
		{"token", `{"token": "hunter2"}`, []string{`"token": a key ID`}},
		{"syntax", "{\n  \"account\": \"LV100001\",\n  \"db\" \"x\"\n}", []string{"line 3", "invalid character"}},
		{"unknown key", `{"baseUrl": "http://x"}`, []string{`unknown key "baseUrl": did you mean "baseURL"?`}},
		{"unknown key of a named account", `{"accounts": {"live": {"acount": "LV100001"}}}`, []string{`unknown key "accounts.live.acount"`}},
		{"a key pasted for its variable's name", `{"accounts": {"live": {"account": "LV100001", "secretEnv": "hunter2-Xy9"}}}`, []string{"accounts.live.secretEnv is not an environment variable's name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "config.json", tc.body)
			before := len(b.writes())
			code, out, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_CONFIG": path}, "locate", "HTBX", "100", "--yes")
			if code != console.ExitUsage || out != "" || !strings.Contains(errOut, path) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 naming %s", code, out, errOut, path)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if strings.Contains(errOut, "hunter2") {
				t.Errorf("the secret was printed: %q", errOut)
			}
			if len(b.writes()) != before {
				t.Errorf("writes sent")
			}
		})
	}
	// A file named on the command line must be there.
	missing := filepath.Join(t.TempDir(), "nope.json")
	code, _, errOut := b.MustRunMain(t, nil, "--config-file", missing, "inventory")
	if code != console.ExitUsage || !strings.Contains(errOut, missing) {
		t.Errorf("missing --config-file: exit %d %q", code, errOut)
	}
}

// The settings file stands in for the exported variables, and 'locator
// config' says where each setting came from without showing a secret.
func TestSettingsFileDrivesCommands(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "locator"), 0o700); err != nil {
		t.Fatal(err)
	}
	body := `{"baseURL": "` + b.env["LOCATOR_BASE_URL"] + `", "account": "main",
  "accounts": {"main": {"account": "LV100001", "keyIdEnv": "MAIN_KEY", "secretEnv": "MAIN_SECRET", "locateBudget": "20,HTBX=10"}}}`
	if err := os.WriteFile(filepath.Join(dir, "locator", "config.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": dir, "LOCATOR_BASE_URL": "", "LOCATOR_ACCOUNT": "", "LOCATOR_KEY_ID": "", "LOCATOR_SECRET": "",
		"MAIN_KEY": b.env["LOCATOR_KEY_ID"], "MAIN_SECRET": b.env["LOCATOR_SECRET"]}
	code, out, errOut := b.MustRunMain(t, env, "locate", "HTBX", "300", "--max-price", "0.02")
	if code != console.ExitOK || !strings.Contains(out, "filled") {
		t.Fatalf("locate from the settings file: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = b.MustRunMain(t, env, "config", "--json")
	if code != console.ExitOK {
		t.Fatalf("config: exit %d %s", code, errOut)
	}
	got := map[string]map[string]any{}
	for _, o := range jsonLines(t, out) {
		got[o["setting"].(string)] = o
	}
	file := filepath.Join(dir, "locator", "config.json")
	for setting, want := range map[string][2]string{
		"config-file": {file, "read"},
		"account":     {"LV100001", file + ` (named account "main")`},
		"base-url":    {b.env["LOCATOR_BASE_URL"], file},
		"db":          {b.env["LOCATOR_DB"], "env LOCATOR_DB"},
		"env":         {"live", config.FromDefault},
		"secret":      {"set", "env MAIN_SECRET"},
		// The account's locate budget, from its named account.
		"locate-budget": {"20,HTBX=10", file + ` (account "main")`},
	} {
		if got[setting]["value"] != want[0] || got[setting]["from"] != want[1] {
			t.Errorf("%s: %v, want %v", setting, got[setting], want)
		}
	}
	if bytes.Contains([]byte(out), []byte(b.env["LOCATOR_SECRET"])) {
		t.Error("config printed the secret")
	}
}

// The sample settings file of docs/operations.md is one the CLI accepts.
func TestREADMESettingsSample(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(raw), "```json\n")[1:] {
		sample, _, _ := strings.Cut(block, "```")
		if !strings.Contains(sample, `"keyIdEnv"`) || strings.Contains(sample, `"jobs"`) {
			continue
		}
		f, err := config.Parse([]byte(sample))
		if err != nil {
			t.Fatalf("docs/operations.md settings sample: %v\n%s", err, sample)
		}
		if f.Accounts["paper"].Account != "PP200001" {
			t.Errorf("docs/operations.md settings sample read as %+v", f)
		}
		return
	}
	t.Error("no settings sample in docs/operations.md")
}

// serve --config lists accounts in the settings file's shape; a bad list is
// refused before anything is sent, and a key pasted where its variable's
// name goes is never echoed.
func TestServeConfigRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, tc := range []struct {
		name, body, want string
		env              map[string]string
	}{
		{"key for a variable", `{"accounts": [{"account": "LV100001", "secretEnv": "hunter2-Xy9"}]}`, "secretEnv is not an environment variable's name", nil},
		{"bad address", `{"accounts": [{"account": "LV100001", "baseURL": "ftp://x"}]}`, "broker address refused: want https://host[:port]", nil},
		{"twice", `{"accounts": [{"account": "LV100001"}, {"account": "lv100001"}]}`, "LV100001 listed twice", nil},
		{"unknown key", `{"accounts": [{"acount": "LV100001"}]}`, "unknown field", nil},
		{"empty", `{"accounts": []}`, "no accounts", nil},
		{"bad environment", `{"accounts": [{"account": "LV100001"}]}`, `--env "demo": want live or paper`, map[string]string{"LOCATOR_ENV": "demo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "serve.json", tc.body)
			before := len(b.sim.Requests())
			code, _, errOut := b.MustRunMain(t, tc.env, "serve", "--config", path, "--listen", "")
			if code != console.ExitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "hunter2") {
				t.Errorf("exit %d, stderr %q; want 2 with %q", code, errOut, tc.want)
			}
			if n := len(b.sim.Requests()); n != before {
				t.Errorf("%d requests sent", n-before)
			}
		})
	}
}
