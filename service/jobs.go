package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// JobRequest hands one run of a job to the owner (`locator run --once` in a
// process that does not own the account): the jobs file as the follower read
// it and the job's name, so the owner checks and runs exactly what the
// follower's config says, on the engine, pacer and poller every job of the
// account shares.
type JobRequest struct {
	Config []byte `json:"config"` // the file as read (any bytes: the owner checks them)
	Job    string `json:"job"`
	// Grace is how long the run may finish its step in flight once it is
	// stopped.
	Grace time.Duration `json:"grace"`
	// Ref names the run for /job/stop; the follower makes it up.
	Ref string `json:"ref"`
}

// JobResponse is how the run went: its record, and why it failed.
type JobResponse struct {
	Run     *store.JobRun `json:"run"`
	Failure *jobs.Failure `json:"failure,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// JobStop drains the run named Ref: it starts nothing new and has its grace
// to finish the step in flight.
type JobStop struct {
	Ref string `json:"ref"`
}

// handleJob runs a job now and answers when the run has ended. The run is
// stopped gently when the follower asks (/job/stop) or goes away.
func (o *Owner) handleJob(w http.ResponseWriter, r *http.Request) {
	var req JobRequest
	if !decode(w, r, &req) {
		return
	}
	cfg, err := jobs.ParseConfig(req.Config)
	if err != nil {
		replyErr(w, &workflow.InputError{Message: "config: " + err.Error()})
		return
	}
	j, ok := cfg.Job(req.Job)
	if !ok {
		replyErr(w, &workflow.InputError{Message: fmt.Sprintf("no job %q in the config", req.Job)})
		return
	}
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	if req.Ref != "" {
		o.mu.Lock()
		o.jobs[req.Ref] = stop
		o.mu.Unlock()
		defer func() {
			o.mu.Lock()
			delete(o.jobs, req.Ref)
			o.mu.Unlock()
		}()
	}
	runner := &jobs.Runner{Engine: o.eng, Client: o.client, Store: o.st, Clock: o.clk, Account: o.lease.Account, Logger: o.log}
	run, err := runner.RunOnce(ctx, j, req.Grace)
	if run == nil {
		replyErr(w, err)
		return
	}
	resp := JobResponse{Run: run}
	var f *jobs.Failure
	switch {
	case errors.As(err, &f):
		resp.Failure = f
	case err != nil:
		resp.Error = err.Error()
	}
	reply(w, http.StatusOK, resp)
}

func (o *Owner) handleJobStop(w http.ResponseWriter, r *http.Request) {
	var req JobStop
	if !decode(w, r, &req) {
		return
	}
	o.mu.Lock()
	stop := o.jobs[req.Ref]
	o.mu.Unlock()
	if stop != nil {
		stop()
	}
	reply(w, http.StatusOK, struct{}{})
}

// RunJob runs one run of a job on the owner and returns its record and
// outcome (a *jobs.Failure when it did not reach its goal). ctx's end stops
// the run gently; RunJob still waits for its record.
func (r *Remote) RunJob(ctx context.Context, req JobRequest) (*store.JobRun, error) {
	req.Ref = uuid.NewString()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			r.post(sctx, "/job/stop", JobStop{Ref: req.Ref}, nil)
		case <-finished:
		}
	}()
	var out JobResponse
	if err := r.post(context.WithoutCancel(ctx), "/job", req, &out); err != nil {
		return nil, err
	}
	switch {
	case out.Failure != nil:
		return out.Run, out.Failure
	case out.Error != "":
		return out.Run, errors.New(out.Error)
	}
	return out.Run, nil
}
