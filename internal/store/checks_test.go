package store_test

import (
	"testing"
)

// An account's check is read back only with the key pair it was made
// with, and the latest check wins.
func TestEnvChecked(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if env, err := b.store.EnvChecked(ctx, "A", "K"); err != nil || env != "" {
			t.Fatalf("none recorded: %q, %v; want \"\"", env, err)
		}
		for _, c := range []struct{ key, env string }{{"K", "paper"}, {"K", "paper"}, {"K2", "live"}} {
			if err := b.store.NoteEnvChecked(ctx, "A", c.key, c.env); err != nil {
				t.Fatal(err)
			}
		}
		if env, err := b.store.EnvChecked(ctx, "A", "K2"); err != nil || env != "live" {
			t.Fatalf("with K2: %q, %v; want live, the latest check", env, err)
		}
		if env, err := b.store.EnvChecked(ctx, "A", "K"); err != nil || env != "" {
			t.Fatalf("with K, after a check with K2: %q, %v; want \"\"", env, err)
		}
		if env, err := b.store.EnvChecked(ctx, "B", "K2"); err != nil || env != "" {
			t.Fatalf("another account: %q, %v; want \"\"", env, err)
		}
	})
}
