// Package notify tells a person when the daemon needs one: it POSTs an
// event (a job run that failed, fees that do not reconcile) to webhooks, as
// generic JSON or as a Slack-compatible {"text": ...} message.
//
// A webhook URL is a secret (a Slack incoming-webhook URL is its own
// credential), so the config names only the environment variable that holds
// it, and logs and errors name that variable, never the URL or its host.
//
// Delivery never holds up or fails the job that raised the event: Notify
// queues and returns, and one worker per webhook posts with a per-attempt
// timeout and a few retries with backoff (on the injected clock) on
// network errors, 429 and 5xx. A Notifier is safe for concurrent use.
package notify
