// Package notify tells a person when the daemon needs one: it POSTs an
// event (a job run that failed, fees that do not reconcile, an offer that
// waits on a person's answer) to webhooks, as generic JSON, as a
// Slack-compatible {"text": ...} message, or as an ntfy-style push (plain
// text, with its title, priority, tags and buttons as headers).
//
// A webhook URL is a secret (a Slack incoming-webhook URL is its own
// credential, an ntfy topic's name is its password), so the config names
// only the environment variable that holds it, and logs and errors name
// that variable, never the URL or its host. An offer's event carries the
// signed links that answer it (package answerlink), so a webhook is told of
// offers only when its config asks for them, and no log line holds a link.
//
// Delivery never holds up or fails the job that raised the event: Notify
// queues and returns, and one worker per webhook posts with a per-attempt
// timeout and a few retries with backoff (on the injected clock) on
// network errors, 429 and 5xx. A Notifier is safe for concurrent use.
package notify
