package jobs

import (
	"log/slog"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/notify"
)

// Notifications makes what the config's "notify" block asks for: the
// notifier of its webhooks and the offers' answer links (nil when none).
// Webhook URLs and the links' secret are secrets: the config names only
// the variables holding them, read with secret (which may remove them from
// the environment); an unset one is an error naming the variable, never
// its value. Every post is signed with notify.SecretEnv's secret when it is
// set (unsigned, with a warning, when not).
func (c *Config) Notifications(secret func(string) string, clk clock.Clock, log *slog.Logger) (*notify.Notifier, *answerlink.Links, error) {
	links, err := answerlink.Open(c.Links, secret, clk, log)
	if err != nil {
		return nil, nil, err
	}
	lookup := func(k string) (string, bool) { v := secret(k); return v, v != "" }
	var sign []byte
	if v := secret(notify.SecretEnv); v != "" {
		sign = []byte(v)
	} else if len(c.Webhooks) > 0 && log != nil {
		log.Warn("webhook posts unsigned: set " + notify.SecretEnv + " so receivers can tell them from forged ones")
	}
	n, err := notify.New(notify.Config{Webhooks: c.Webhooks, LookupEnv: lookup, Clock: clk, Logger: log, Secret: sign})
	return n, links, err
}
