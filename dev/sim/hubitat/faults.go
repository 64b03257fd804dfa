package hubitat

import (
	"net/http"
	"sync/atomic"
)

// Fault knobs for the tests of hamcp's reconnect paths. Reboot takes the whole hub away; these
// break only the eventsocket, the way a Wi-Fi drop, a NAT table flush or a proxy restart does,
// while the Maker API keeps answering.

// faults is the hub's injected trouble; the zero value is a healthy hub.
type faults struct {
	refuseSockets atomic.Bool // /eventsocket answers 503 instead of upgrading
	refused       atomic.Int64
}

// CutEventSockets drops every open eventsocket at once, mid-stream and without a close
// handshake, and reports how many it cut. The hub stays up: clients reconnect at will (unless
// RefuseEventSockets holds them off). Events emitted before a client is back reach nobody, as
// on the real hub, which keeps no backlog for the socket.
func (h *Hub) CutEventSockets() int {
	h.sockMu.Lock()
	n := len(h.sockets)
	h.sockMu.Unlock()
	h.dropSockets()
	return n
}

// RefuseEventSockets makes /eventsocket answer 503 Service Unavailable (on) or upgrade again
// (off). Together with CutEventSockets it opens an outage window of the test's choosing.
func (h *Hub) RefuseEventSockets(on bool) { h.faults.refuseSockets.Store(on) }

// RefusedEventSockets counts the upgrades refused by RefuseEventSockets.
func (h *Hub) RefusedEventSockets() int { return int(h.faults.refused.Load()) }

// refuseSocket answers an upgrade RefuseEventSockets holds off; false lets it through.
func (h *Hub) refuseSocket(w http.ResponseWriter) bool {
	if !h.faults.refuseSockets.Load() {
		return false
	}
	h.faults.refused.Add(1)
	http.Error(w, "eventsocket unavailable", http.StatusServiceUnavailable)
	return true
}
