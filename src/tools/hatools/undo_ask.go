package hatools

import (
	"context"

	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// ServiceCall is one service call hamcp makes on the user's behalf (an undo from the panel).
type ServiceCall struct {
	Domain, Service, EntityID string
	Data                      map[string]any
}

// CallsAsk is what the service calls reach, decided the way ha_call_service decides (design §5b):
// the entity itself, and the scripts and automations its change runs or starts. An undo that turns
// input_boolean.away off is asked about when one of the user's automations unlocks the door on it.
// An empty Ask means nothing sensitive is reached; Digest binds a yes to what was read.
func CallsAsk(ctx context.Context, d Deps, prefix string, calls []ServiceCall) (toolkit.Ask, error) {
	w := newWalk(d)
	for _, c := range calls {
		w.service(ctx, c.Domain+"."+c.Service, sensitive.Target{EntityIDs: []string{c.EntityID}}, c.Data)
	}
	return w.ask(prefix)
}
