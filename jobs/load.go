package jobs

import (
	"errors"
	"fmt"
	"os"

	"github.com/locatorhq/locator/fileperm"
)

// LoadConfig reads and checks the jobs file at path; any fault (another
// user could change it, see fileperm.Check; bad content) is an error
// naming the file and line.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := fileperm.Check(path); err != nil {
		return nil, fmt.Errorf("config %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("config %s:%d: %s", path, ce.Line, ce.Msg)
		}
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	return cfg, nil
}
