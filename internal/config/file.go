// Package config holds the settings of a run: the settings file (its
// default account, named accounts, address, environment, database), serve's
// file of accounts to own, and their resolution with the flags and the
// environment by precedence (flag > environment > file > default). Secrets
// are never in a file: they come from the environment only.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/locatorhq/locator/internal/fileperm"
)

// File is the settings file (config.json in the user's config
// directory): what a person would otherwise export in every shell. It holds
// no secret: keys come from the environment, and a named
// account says only which environment variables hold its pair.
type File struct {
	// Account is the default account: a broker account id, or the name of
	// one of Accounts.
	Account string `json:"account,omitempty"`
	BaseURL string `json:"baseURL,omitempty"`
	Env     string `json:"env,omitempty"`
	DB      string `json:"db,omitempty"`
	Auth    string `json:"auth,omitempty"`
	// LocateBudget is the default account's locate budget per trading
	// day, as LOCATOR_LOCATE_BUDGET gives it ("20", "20,HTBX=10").
	LocateBudget string                  `json:"locateBudget,omitempty"`
	Accounts     map[string]NamedAccount `json:"accounts,omitempty"`
	// Path is where it was read; "" when there is none.
	Path string `json:"-"`
}

// NamedAccount is an account a person calls by name (--account paper): its
// broker id, where it lives, and the names of the variables of its keys.
type NamedAccount struct {
	Account   string `json:"account"` // the broker's id; default: the name
	BaseURL   string `json:"baseURL,omitempty"`
	Env       string `json:"env,omitempty"`
	KeyIDEnv  string `json:"keyIdEnv,omitempty"`  // default LOCATOR_KEY_ID
	SecretEnv string `json:"secretEnv,omitempty"` // default LOCATOR_SECRET
	// LocateBudget is the account's locate budget per trading day, kept
	// by its owner, as LOCATOR_LOCATE_BUDGET gives it ("20,HTBX=10").
	LocateBudget string `json:"locateBudget,omitempty"`
}

// Hint is where the settings file is looked for, as help says it.
const Hint = "$XDG_CONFIG_HOME/locator/config.json"

// PathOf is the settings file to read and whether a person named it (a
// named file must exist; the default one may not): flag (--config-file),
// else LOCATOR_CONFIG, else the user's config folder.
func PathOf(flag string, getenv func(string) string) (string, bool) {
	if flag != "" {
		return flag, true
	}
	if p := getenv("LOCATOR_CONFIG"); p != "" {
		return p, true
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", false // no home: no settings file
		}
	}
	return filepath.Join(dir, "locator", "config.json"), false
}

// Load reads the settings file at path (named: a person named it). A
// missing default file is no settings; anything wrong with a file that is
// there (another user could change it, see fileperm.Check; bad JSON; a
// secret in it) is an error naming it.
func Load(path string, named bool) (*File, error) {
	if path == "" {
		return &File{}, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !named {
		return &File{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settings file: %w", err)
	}
	if err := fileperm.Check(path); err != nil {
		return nil, fmt.Errorf("settings file %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("settings file %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse checks a settings file strictly: a secret in it is refused first
// (naming the key, never the value), then bad JSON (with its line) and
// keys it does not know (a misspelt key would silently do nothing).
func Parse(data []byte) (*File, error) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("line %d: %v", 1+bytes.Count(data[:se.Offset], []byte("\n")), err)
		}
		return nil, err
	}
	if key := secretKey(raw, ""); key != "" {
		return nil, fmt.Errorf("%q: a key ID, secret or token is never read from this file, only from the environment: name the variable that holds it instead (keyIdEnv, secretEnv)", key)
	}
	if err := unknownKeys(raw); err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	for name, a := range f.Accounts {
		if err := a.CheckVars(); err != nil {
			return nil, fmt.Errorf("accounts.%s.%v", name, err)
		}
	}
	return &f, nil
}

// varName is the shape of an environment variable's name.
var varName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// CheckVars refuses a keyIdEnv or secretEnv that is not a variable's name:
// most likely a key pasted where its variable's name goes, which must not
// be echoed back (the error names the field, never the value).
func (a NamedAccount) CheckVars() error {
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
	if err := knownKeys(top, "", File{}); err != nil {
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
		if err := knownKeys(acct, "accounts."+name+".", NamedAccount{}); err != nil {
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
