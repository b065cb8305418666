package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
)

// configCommand shows the effective settings and where each came from, so
// a person can tell why a command talks to the broker it does. It shows
// whether the key pair is set, never its values.
type configCommand struct{ conn connFlags }

func (c *configCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *configCommand) run(ctx context.Context, args []string) error {
	file, err := c.conn.m.loadSettings()
	if err != nil {
		return err
	}
	s := config.Layer(c.conn.flags(), file, c.conn.m.env())
	if s.BaseURL != "" {
		// Never printed when refused: it may carry a password.
		if err := s.CheckBaseURL(); err != nil {
			return console.Usagef("%v", err)
		}
	}
	path, _ := config.PathOf(c.conn.m.settingsFlag, c.conn.m.Getenv)
	console.Settings(c.conn.out(), s, file, path)
	return nil
}

// loadSettings reads the settings file once per run; anything wrong with it
// is a usage error naming it, before anything is sent.
func (m *Main) loadSettings() (*config.File, error) {
	m.settingsOnce.Do(func() {
		m.settings, m.settingsErr = config.Load(config.PathOf(m.settingsFlag, m.Getenv))
		if m.settingsErr != nil {
			m.settingsErr = console.Usagef("%v", m.settingsErr)
		}
	})
	return m.settings, m.settingsErr
}

// env is how config reads this run's environment: secrets through
// secretEnv, which takes them out of the process's environment.
func (m *Main) env() config.Env { return config.Env{Lookup: m.Getenv, Secret: m.secretEnv} }
