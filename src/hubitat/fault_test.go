package hubitat

// Fault tests of the live link, so that an outage neither hangs calls nor loses the cache: the
// eventsocket cut while the hub stays up, and refused for a while (a proxy or firmware trouble),
// unlike TestRebootMidSession where the whole hub goes away.

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
)

// Cut mid-stream: a dropped socket alone does not fail calls (the hub still answers), the client
// reconnects, each event it received went to the listeners once, and the cache ends as the hub
// is, events lost in the cut included.
func TestEventsocketCutMidStream(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, nil)
	var seen valueCounter
	c.Cache().OnEvent(func(e Event) {
		if e.DeviceID == "14" && e.Name == "humidity" {
			seen.add(e.Value.String())
		}
	})
	c.Start(t.Context())
	testkit.Eventually(t, "live cache", c.Cache().Live)

	for i := range 40 {
		if i == 20 {
			if n := h.CutEventSockets(); n != 1 {
				t.Fatalf("cut %d sockets", n)
			}
		}
		if err := h.SetAttribute(14, "humidity", strconv.Itoa(40+i), false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Device(t.Context(), "14"); err != nil {
		t.Fatalf("a call right after the cut: %v", err)
	}
	testkit.Eventually(t, "reconnect", func() bool { return c.Status().Reconnects == 1 && c.Cache().Live() && h.Sockets() == 1 })
	testkit.Eventually(t, "the cache to catch up", func() bool {
		d, _ := c.Cache().Get("14")
		a, _ := d.Attribute("humidity")
		return a.Value.String() == "79"
	})
	if dup := seen.duplicates(); len(dup) > 0 {
		t.Fatalf("events delivered twice: %v", dup)
	}
	// Live again: the next event arrives once.
	if err := h.SetAttribute(14, "humidity", "99", false); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the event after the reconnect", func() bool { return seen.count("99") == 1 })
	if dup := seen.duplicates(); len(dup) > 0 {
		t.Fatalf("events delivered twice: %v", dup)
	}
}

// Refused upgrades with the hub up: the link is down and calls fail fast naming the hub's answer;
// once the hub accepts again the link recovers by itself, the cache has what changed meanwhile
// and calls work.
func TestEventsocketRefused(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, nil)
	c.Start(t.Context())
	testkit.Eventually(t, "live cache", c.Cache().Live)

	h.RefuseEventSockets(true)
	h.CutEventSockets()
	testkit.Eventually(t, "the link to be down", func() bool { return c.Status().Link == "down" && h.RefusedEventSockets() > 0 })
	_, err := c.Device(t.Context(), "15")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("a call while the eventsocket is refused: %v", err)
	}
	h.SetAttribute(15, "humidity", "66", false) // nobody hears it

	h.RefuseEventSockets(false)
	testkit.Eventually(t, "the link to recover", func() bool { return c.Status().Link == "connected" && c.Cache().Live() })
	d, err := c.Device(t.Context(), "15")
	if a, _ := d.Attribute("humidity"); err != nil || a.Value.String() != "66" {
		t.Fatalf("after the outage: %v %+v", err, a)
	}
}

// valueCounter counts the values a listener saw.
type valueCounter struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *valueCounter) add(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	c.seen[v]++
}

func (c *valueCounter) count(v string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[v]
}

func (c *valueCounter) duplicates() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for v, n := range c.seen {
		if n > 1 {
			out = append(out, v)
		}
	}
	return out
}
