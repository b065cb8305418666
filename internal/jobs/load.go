package jobs

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/fileperm"
	"github.com/locatorhq/locator/internal/notify"
)

// LoadConfig reads and checks the jobs file at path; any fault (another
// user could change it, see fileperm.Check; bad content) is an error
// naming the file and line.
func LoadConfig(path string) (*Config, error) { return load(path, ParseConfig) }

// LoadNotify reads and checks the "notify" block of the file at path (see
// ParseNotify), as LoadConfig does the whole.
func LoadNotify(path string) (*Config, error) { return load(path, ParseNotify) }

func load(path string, parse func([]byte) (*Config, error)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := fileperm.Check(path); err != nil {
		return nil, fmt.Errorf("config %w", err)
	}
	cfg, err := parse(data)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("config %s:%d: %s", path, ce.Line, ce.Msg)
		}
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	return cfg, nil
}

// OpenNotify is the notifier and the answer links of the "notify" block
// of the file at path (see LoadNotify); with no path, a notifier that
// tells nobody and no links.
func OpenNotify(path string, secret func(string) string, clk clock.Clock, log *slog.Logger) (*notify.Notifier, *answerlink.Links, error) {
	cfg := &Config{}
	if path != "" {
		var err error
		if cfg, err = LoadNotify(path); err != nil {
			return nil, nil, err
		}
	}
	n, links, err := cfg.Notifications(secret, clk, log)
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	return n, links, nil
}
