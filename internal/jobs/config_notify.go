// The config's notify block: webhooks and the answer links their offers carry.

package jobs

import (
	"encoding/json"
	"fmt"

	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/notify"
)

// notify parses "notify": {"webhooks": [...], "links": {...}}: a webhook
// that asks for offers needs the links they carry.
func (p *parser) notify(nf field, cfg *Config) error {
	top, err := p.object(nf.value, nf.voff, `"notify"`)
	if err != nil {
		return err
	}
	var list, links *field
	for i, f := range top {
		switch f.key {
		case "webhooks":
			list = &top[i]
		case "links":
			links = &top[i]
		default:
			return p.errAt(f.off, "unknown field %q in \"notify\" (want \"webhooks\", \"links\")", f.key)
		}
	}
	if list == nil {
		return p.errAt(nf.voff, `"notify" has no "webhooks" list`)
	}
	if cfg.Webhooks, err = p.webhooks(*list); err != nil {
		return err
	}
	if links != nil {
		if cfg.Links, err = p.links(*links); err != nil {
			return err
		}
	}
	for _, w := range cfg.Webhooks {
		if w.Wants(notify.OfferWaiting) && cfg.Links == nil {
			return p.errAt(list.voff, "webhook %s asks for %s, which carry answer links: add \"links\": {\"baseURL\": ..., \"secretEnv\": ...} to \"notify\"", w.URLEnv, notify.OfferWaiting)
		}
	}
	return nil
}

// links parses "links": {"baseURL": "https://...", "secretEnv": "NAME"}:
// the dashboard's address as a phone reaches it, and the variable holding
// the secret the links are signed with (never the secret).
func (p *parser) links(f field) (*answerlink.Config, error) {
	fields, err := p.object(f.value, f.voff, `"links"`)
	if err != nil {
		return nil, err
	}
	c := &answerlink.Config{}
	for _, k := range fields {
		var dst *string
		switch k.key {
		case "baseURL":
			dst = &c.BaseURL
		case "secretEnv":
			dst = &c.SecretEnv
		case "secret":
			return nil, p.errAt(k.off, "links: a secret does not belong in the config: put it in an environment variable and name that in \"secretEnv\"")
		default:
			return nil, p.errAt(k.off, "unknown links field %q (want baseURL, secretEnv)", k.key)
		}
		if json.Unmarshal(k.value, dst) != nil {
			return nil, p.errAt(k.voff, "links %s must be a string", k.key)
		}
	}
	if err := c.Check(); err != nil {
		return nil, p.errAt(f.voff, "%v", err)
	}
	return c, nil
}

// webhooks parses "webhooks": [{"urlEnv": "NAME", "format":
// "json"|"slack"|"ntfy", "events": [...]}, ...]. A "url" field is refused
// with the reason, and no message quotes a value that could be the URL.
func (p *parser) webhooks(list field) ([]notify.Webhook, error) {
	elems, err := p.array(list.value, list.voff, `"webhooks"`)
	if err != nil {
		return nil, err
	}
	var out []notify.Webhook
	for _, el := range elems {
		fields, err := p.object(el.value, el.off, fmt.Sprintf("the webhook on line %d", p.line(el.off)))
		if err != nil {
			return nil, err
		}
		w := notify.Webhook{Format: notify.FormatJSON}
		envOff, formatOff, eventsOff := -1, -1, -1
		for _, f := range fields {
			switch f.key {
			case "urlEnv":
				envOff = f.voff
				if json.Unmarshal(f.value, &w.URLEnv) != nil {
					return nil, p.errAt(f.voff, "webhook urlEnv must be a string: the name of an environment variable")
				}
			case "format":
				formatOff = f.voff
				var s string
				if err := p.decodeField("webhook", f, &s, "a string"); err != nil {
					return nil, err
				}
				w.Format = notify.Format(s)
			case "events":
				eventsOff = f.voff
				if err := p.decodeField("webhook", f, &w.Events, "a list of event kinds"); err != nil {
					return nil, err
				}
			case "url":
				return nil, p.errAt(f.off, "webhook: a URL does not belong in the config (a webhook URL is a secret): put it in an environment variable and name that in \"urlEnv\"")
			default:
				return nil, p.errAt(f.off, "unknown webhook field %q (want urlEnv, format, events)", f.key)
			}
		}
		if envOff < 0 {
			return nil, p.errAt(el.off, "webhook has no \"urlEnv\" (the environment variable holding its URL)")
		}
		if err := (notify.Webhook{URLEnv: w.URLEnv, Format: notify.FormatJSON}).Check(); err != nil {
			return nil, p.errAt(envOff, "webhook: %v", err)
		}
		if err := (notify.Webhook{URLEnv: w.URLEnv, Format: w.Format}).Check(); err != nil {
			return nil, p.errAt(formatOff, "webhook: %v", err)
		}
		if err := w.Check(); err != nil {
			return nil, p.errAt(eventsOff, "webhook: %v", err)
		}
		out = append(out, w)
	}
	return out, nil
}
