// Command webhook-receiver receives locator's webhook posts and checks
// their signature: a post is accepted (204) only when its
// Locator-Signature header signs its body with LOCATOR_WEBHOOK_SECRET at a
// time within five minutes of this machine's clock; anything else is
// refused (401) and never handled.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// tolerance is how far a signature's time may be from now: an older post
// is a replay.
const tolerance = 5 * time.Minute

// verify reports whether header ("t=UNIX,v1=HEX") signs body with secret:
// HEX is the HMAC-SHA256 of UNIX, ".", and the body.
func verify(secret []byte, header string, body []byte, now time.Time) bool {
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if age := now.Sub(time.Unix(unix, 0)); age > tolerance || age < -tolerance {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return true
		}
	}
	return false
}

// receiver hands each post whose signature holds to handle.
func receiver(secret []byte, now func() time.Time, handle func(body []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil || !verify(secret, r.Header.Get("Locator-Signature"), body, now()) {
			http.Error(w, "signature refused", http.StatusUnauthorized)
			return
		}
		handle(body)
		w.WriteHeader(http.StatusNoContent)
	})
}

func main() {
	secret := os.Getenv("LOCATOR_WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("set LOCATOR_WEBHOOK_SECRET to the secret locator signs its posts with")
	}
	h := receiver([]byte(secret), time.Now, func(body []byte) { log.Printf("event: %s", body) })
	log.Fatal(http.ListenAndServe("127.0.0.1:8799", h))
}
