package console

import (
	"io"
	"log/slog"
	"sync"
)

// Log is the log of the client, the engine and the jobs on w. A command's
// is silent unless verbose: it prints its own outcome and the error that
// ends it (a retried 429 or a reconnect is noise to the person waiting);
// verbosity 1 shows what the engine does, 2 also the client's retries and
// reconnects. A daemon's (serve, run) is on from level, since nobody
// watches its outcome at a terminal and its log is how it is watched
// (debug when verbose), as JSON lines with json.
func Log(w io.Writer, verbosity int, daemon bool, level slog.Level, json bool) *slog.Logger {
	switch {
	case daemon:
		opts := &slog.HandlerOptions{Level: level}
		if verbosity > 0 {
			opts.Level = slog.LevelDebug
		}
		if json {
			return slog.New(slog.NewJSONHandler(w, opts))
		}
		return slog.New(slog.NewTextHandler(w, opts))
	case verbosity >= 2:
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	case verbosity == 1:
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

// SyncWriter serialises the writes of several slog handlers (and the
// progress lines) sharing one writer: os.Stderr is safe, a test's buffer
// is not. W is the writer behind the lock (a terminal, say).
type SyncWriter struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *SyncWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
