package brokerclient_test

import (
	"errors"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/simtest"
)

// TestEnvironmentGuard: spec "API keys" rule 5: read accountType after
// authenticating and block writes when it does not match the selected
// environment; and "Account": gate writes on accountStatus Active.
func TestEnvironmentGuard(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	tests := []struct {
		name        string
		key         simtest.Key
		account     string
		want        brokerclient.Env
		guard       bool // GuardWrites instead of CheckEnvironment
		wantErr     error
		wantGot     brokerclient.Env
		wantAccount bool
	}{
		{name: "paper account, paper selected", key: b.Paper, account: "PP200001", want: brokerclient.EnvPaper, wantAccount: true},
		{name: "paper key and account, live selected", key: b.Paper, account: "PP200001", want: brokerclient.EnvLive,
			wantErr: brokerclient.ErrEnvMismatch, wantGot: brokerclient.EnvPaper, wantAccount: true},
		{name: "live margin account, live selected", key: b.Live, account: "LV100001", want: brokerclient.EnvLive, guard: true, wantAccount: true},
		{name: "live account, paper selected", key: b.Live, account: "LV100001", want: brokerclient.EnvPaper, guard: true,
			wantErr: brokerclient.ErrEnvMismatch, wantGot: brokerclient.EnvLive, wantAccount: true},
		{name: "cash account is live", key: b.Live2, account: "LV300001", want: brokerclient.EnvLive, guard: true, wantAccount: true},
		{name: "not Active: environment fine, writes refused", key: b.Live, account: "LV100002", want: brokerclient.EnvLive, guard: true,
			wantErr: brokerclient.ErrAccountNotActive, wantAccount: true},
		{name: "not Active passes the environment check alone", key: b.Live, account: "LV100002", want: brokerclient.EnvLive, wantAccount: true},
		{name: "account of another key", key: b.Live, account: "PP200001", want: brokerclient.EnvPaper, guard: true, wantErr: brokerclient.ErrNotFound},
		{name: "unknown environment", key: b.Live, account: "LV100001", want: "prod", wantErr: brokercode.ErrInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := b.Client(t, tt.key)
			check := c.CheckEnvironment
			if tt.guard {
				check = c.GuardWrites
			}
			acct, err := check(t.Context(), tt.account, tt.want)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if (acct != nil) != tt.wantAccount {
				t.Errorf("account %+v, want returned: %v", acct, tt.wantAccount)
			}
			var me *brokerclient.EnvMismatchError
			if errors.As(err, &me) && (me.Got != tt.wantGot || me.Want != tt.want || me.AccountID != tt.account) {
				t.Errorf("mismatch %+v", me)
			}
			var ne *brokerclient.AccountNotActiveError
			if errors.As(err, &ne) && (ne.Status != "Restricted" || ne.AccountID != tt.account) {
				t.Errorf("not active %+v", ne)
			}
		})
	}

	t.Run("the guard reads the account detail once and writes nothing", func(t *testing.T) {
		t.Parallel()
		s := acctSetup(t, false)
		if _, err := s.live.GuardWrites(t.Context(), "LV100001", brokerclient.EnvLive); err != nil {
			t.Fatal(err)
		}
		reqs := s.Sim.Requests()
		if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/v1/api/account/LV100001" {
			t.Errorf("requests %+v", reqs)
		}
	})
}

// TestEnvOf: spec "Account": accountType Paper is paper, anything else live.
func TestEnvOf(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]brokerclient.Env{
		"Paper": brokerclient.EnvPaper, "Live": brokerclient.EnvLive, "Margin": brokerclient.EnvLive,
		"Cash": brokerclient.EnvLive, "paper": brokerclient.EnvLive, "": brokerclient.EnvLive,
	} {
		if got := brokerclient.EnvOf(typ); got != want {
			t.Errorf("EnvOf(%q) = %s, want %s", typ, got, want)
		}
	}
}
