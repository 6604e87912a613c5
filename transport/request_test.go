package transport

import (
	"encoding/json"
	"testing"
)

// TestDefaultSubscriptionRequest: the recorder claims reply support (so a
// producer does not withhold the prompts, §5.3.1.4) and asks for no
// verbosity, so the specification's default applies and check does not
// judge producers against a verbosity the recorder asked for.
func TestDefaultSubscriptionRequest(t *testing.T) {
	b, err := SubscriptionRequest(nil, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Type         string
		AAEPVersion  string `json:"aaep_version"`
		SubscriberID string `json:"subscriber_id"`
		Capabilities map[string]any
	}
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if req.Type != "subscription.request" || req.AAEPVersion != "1.0.0" || req.SubscriberID != "aaep-capture" {
		t.Errorf("request %s", b)
	}
	if _, ok := req.Capabilities["preferred_verbosity"]; ok {
		t.Errorf("the default request asks for a verbosity: %s", b)
	}
	if req.Capabilities["supports_confirmation_reply"] != true || req.Capabilities["supports_clarification_reply"] != true || len(req.Capabilities) != 2 {
		t.Errorf("capabilities %v, want exactly both reply supports", req.Capabilities)
	}
}
