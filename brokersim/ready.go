package brokersim

// Ready is the line `locator sim` prints once when it serves (the
// contract of docs/design.md): its addresses, key pairs and partner
// program.
type Ready struct {
	BaseURL string        `json:"baseURL"`
	WSURL   string        `json:"wsURL"`
	Keys    []ReadyKey    `json:"keys"`
	Partner *ReadyPartner `json:"partner,omitempty"`
}

// ReadyPartner is the scenario's partner program as a user configures it
// (LOCATOR_LOGIN_URL, LOCATOR_CLIENT_ID, LOCATOR_CLIENT_SECRET,
// LOCATOR_REDIRECT_URI); its users are in --print-scenario.
type ReadyPartner struct {
	LoginURL     string `json:"loginURL"`
	DemoClientID string `json:"demoClientId"`
	LiveClientID string `json:"liveClientId"`
	ClientSecret string `json:"clientSecret"`
	RedirectURI  string `json:"redirectUri"`
}

// ReadyKey is a key pair of the scenario and the accounts it reaches.
type ReadyKey struct {
	KeyID    string   `json:"keyId"`
	Secret   string   `json:"secret"`
	Env      string   `json:"env"`
	Accounts []string `json:"accounts"`
}

// ReadyAt is the ready line of a simulator of sc serving at addr
// (host:port).
func ReadyAt(sc Scenario, addr string) Ready {
	ready := Ready{BaseURL: "http://" + addr, WSURL: "ws://" + addr}
	for _, k := range sc.Keys {
		ready.Keys = append(ready.Keys, ReadyKey{KeyID: k.KeyID, Secret: k.Secret, Env: k.Env, Accounts: k.Accounts})
	}
	if p := sc.Partner; p != nil {
		ready.Partner = &ReadyPartner{LoginURL: ready.BaseURL + p.LoginPath, DemoClientID: p.DemoClientID,
			LiveClientID: p.LiveClientID, ClientSecret: p.ClientSecret, RedirectURI: p.RedirectURI}
	}
	return ready
}
