// Package answerlink holds the signed links that answer an offer from
// wherever a person reads its notification (a phone): one to approve, one
// to decline, each bound to its account, workflow and offer (the leg's
// quoteReqID and price, as account.AnswerRequest binds an answer) and valid
// until the offer's answer deadline.
//
// A link is its own credential, so the dashboard serves it outside its
// token check (but inside its transport rule: TLS beyond loopback). Its
// token is the link's claims and an HMAC-SHA256 of them under a key derived
// from a secret the daemon reads from the environment (Config.SecretEnv);
// any changed character, an expired deadline or a key of another secret is
// refused, compared in constant time, before anything is asked of the
// account. The key lives in the environment, not in the process, so a link
// survives the owner's restart or a handover to another daemon started
// with the same secret, and a new secret revokes every link out there.
//
// Opening a link (GET) only shows what it would do and a button: link
// previewers and chat unfurlers fetch what they see. The button's POST
// carries the page's form token (an HMAC of the link's token under the
// links' key), so a form another page makes a browser post to the link is
// refused; it answers through the account API like `locator approve`
// (Answer with ByLink), and the owner records the use of the offer's links
// before it answers, so they answer once between them, even across a
// restart.
// Neither a token nor a link's address reaches a log line or an error.
package answerlink
