package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/fileperm"
)

// settingsFile is the settings file (config.json in the user's config
// directory): what a person would otherwise export in every shell. It holds
// no secret: keys come from the environment (or the keyring), and a named
// account says only which environment variables hold its pair.
type settingsFile struct {
	// Account is the default account: a broker account id, or the name of
	// one of Accounts.
	Account  string                  `json:"account,omitempty"`
	BaseURL  string                  `json:"baseURL,omitempty"`
	Env      string                  `json:"env,omitempty"`
	DB       string                  `json:"db,omitempty"`
	Auth     string                  `json:"auth,omitempty"`
	Accounts map[string]namedAccount `json:"accounts,omitempty"`
	path     string                  // where it was read; "" when there is none
}

// namedAccount is an account a person calls by name (--account paper): its
// broker id, where it lives, and the names of the variables of its keys.
type namedAccount struct {
	Account   string `json:"account"` // the broker's id; default: the name
	BaseURL   string `json:"baseURL,omitempty"`
	Env       string `json:"env,omitempty"`
	KeyIDEnv  string `json:"keyIdEnv,omitempty"`  // default LOCATOR_KEY_ID
	SecretEnv string `json:"secretEnv,omitempty"` // default LOCATOR_SECRET
}

// settingsHint is where the settings file is looked for, as help says it.
const settingsHint = "$XDG_CONFIG_HOME/locator/config.json"

// settingsPath is the settings file to read and whether a person named it
// (a named file must exist; the default one may not).
func (m *Main) settingsPath() (string, bool) {
	if m.settingsFlag != "" {
		return m.settingsFlag, true
	}
	if p := m.Getenv("LOCATOR_CONFIG"); p != "" {
		return p, true
	}
	dir := m.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", false // no home: no settings file
		}
	}
	return filepath.Join(dir, "locator", "config.json"), false
}

// loadSettings reads the settings file once per run. A missing default file
// is no settings; anything wrong with a file that is there (another user
// could change it, see fileperm.Check; bad JSON; a secret in it) is a
// usage error naming it, before anything is sent.
func (m *Main) loadSettings() (*settingsFile, error) {
	m.settingsOnce.Do(func() { m.settings, m.settingsErr = m.readSettings() })
	return m.settings, m.settingsErr
}

func (m *Main) readSettings() (*settingsFile, error) {
	path, named := m.settingsPath()
	if path == "" {
		return &settingsFile{}, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !named {
		return &settingsFile{}, nil
	}
	if err != nil {
		return nil, usagef("settings file: %v", err)
	}
	if err := fileperm.Check(path); err != nil {
		return nil, usagef("settings file %v", err)
	}
	f, err := parseSettings(data)
	if err != nil {
		return nil, usagef("settings file %s: %v", path, err)
	}
	f.path = path
	return f, nil
}

// parseSettings checks the file strictly: a secret in it is refused first
// (naming the key, never the value), then bad JSON (with its line) and
// keys it does not know (a misspelt key would silently do nothing).
func parseSettings(data []byte) (*settingsFile, error) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("line %d: %v", 1+bytes.Count(data[:se.Offset], []byte("\n")), err)
		}
		return nil, err
	}
	if key := secretKey(raw, ""); key != "" {
		return nil, fmt.Errorf("%s looks like a secret: secrets come only from the environment (or the keyring); name the variable that holds it instead (keyIdEnv, secretEnv)", key)
	}
	if err := unknownKeys(raw); err != nil {
		return nil, err
	}
	var f settingsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	for name, a := range f.Accounts {
		if err := a.checkVars(); err != nil {
			return nil, fmt.Errorf("accounts.%s.%v", name, err)
		}
	}
	return &f, nil
}

// varName is the shape of an environment variable's name.
var varName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// checkVars refuses a keyIdEnv or secretEnv that is not a variable's name:
// most likely a key pasted where its variable's name goes, which must not
// be echoed back (the error names the field, never the value).
func (a namedAccount) checkVars() error {
	for field, v := range map[string]string{"keyIdEnv": a.KeyIDEnv, "secretEnv": a.SecretEnv} {
		if v != "" && !varName.MatchString(v) {
			return fmt.Errorf("%s is not an environment variable's name (A-Z, 0-9 and _): name the variable that holds the key, never the key", field)
		}
	}
	return nil
}

// unknownKeys refuses a key the file does not define, down to its case:
// encoding/json would take "baseUrl" for baseURL, or ignore "acount",
// and a person would not learn why the setting does nothing.
func unknownKeys(raw any) error {
	top, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("want a JSON object")
	}
	if err := knownKeys(top, "", settingsFile{}); err != nil {
		return err
	}
	accounts, ok := top["accounts"].(map[string]any)
	if top["accounts"] != nil && !ok {
		return fmt.Errorf("accounts: want an object of named accounts")
	}
	for name, a := range accounts {
		acct, ok := a.(map[string]any)
		if !ok {
			return fmt.Errorf("accounts.%s: want an object", name)
		}
		if err := knownKeys(acct, "accounts."+name+".", namedAccount{}); err != nil {
			return err
		}
	}
	return nil
}

// knownKeys checks obj's keys against the JSON names of the struct's fields.
func knownKeys(obj map[string]any, at string, of any) error {
	names := map[string]bool{}
	t := reflect.TypeOf(of)
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		}
	}
	for k := range obj {
		if names[k] {
			continue
		}
		for n := range names {
			if strings.EqualFold(n, k) {
				return fmt.Errorf("unknown key %q: did you mean %q?", at+k, n)
			}
		}
		return fmt.Errorf("unknown key %q", at+k)
	}
	return nil
}

// secretKey is the path of the first key of v that looks like it holds a
// secret (secret, keySecret, clientSecret, token, password...), or "". A
// key naming the variable that holds one (secretEnv) is fine.
func secretKey(v any, at string) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			path := k
			if at != "" {
				path = at + "." + k
			}
			l := strings.ToLower(k)
			if !strings.HasSuffix(l, "env") && (strings.Contains(l, "secret") || strings.Contains(l, "token") ||
				strings.Contains(l, "password") || strings.Contains(l, "apikey") || strings.Contains(l, "privatekey")) {
				return path
			}
			if p := secretKey(v[k], path); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range v {
			if p := secretKey(e, fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// configCommand shows the effective settings and where each came from, so
// a person can tell why a command talks to the broker it does. It shows
// whether the key pair is set, never its values.
type configCommand struct{ conn connFlags }

func (c *configCommand) synopsis() string {
	return "show the effective settings and where each comes from (flag, environment, settings file, default)"
}

func (c *configCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

// configRow is one setting as --json prints it.
type configRow struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	From    string `json:"from"`
}

func (c *configCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	file, err := c.conn.m.loadSettings()
	if err != nil {
		return err
	}
	s := c.conn.layer(file)
	if s.baseURL != "" {
		// Never printed when refused: it may carry a password.
		if err := s.checkBaseURL(); err != nil {
			return err
		}
	}
	path, _ := c.conn.m.settingsPath()
	fileState := "not found"
	if file.path != "" {
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
	list := []configRow{
		{"config-file", path, fileState},
		{"account", s.account, s.from["account"]},
		{"base-url", s.baseURL, s.from["base-url"]},
		{"env", string(s.env), s.from["env"]},
		{"auth", s.auth, s.from["auth"]},
		{"db", s.db, s.from["db"]},
		{"key-id", isSet(s.keyID), "env " + s.keyVars[0]},
		{"secret", isSet(s.secret), "env " + s.keyVars[1]},
		{"named accounts", strings.Join(names, ","), file.path},
	}
	var rows [][]string
	var objs []any
	for _, r := range list {
		rows = append(rows, []string{r.Setting, r.Value, r.From})
		objs = append(objs, r)
	}
	c.conn.out().Table([]string{"SETTING", "VALUE", "FROM"}, rows, objs)
	return nil
}
