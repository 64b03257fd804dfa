package hubitat

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// eventRecord is one event as the hub keeps and sends it.
type eventRecord struct {
	deviceID    int // 0 for location events
	authorised  bool
	name        string
	value       string
	unit        string
	displayName string
	desc        string
	typ         string
	stateChange bool
	date        time.Time
}

const maxHistory = 100

// applyLocked sets the changed attributes and returns the events; unchanged values make no
// event unless forced (a button pressed twice). Call with h.mu held, then publish.
func (h *Hub) applyLocked(d *device, changes []change, typ string) []eventRecord {
	var out []eventRecord
	for _, c := range changes {
		a := d.attr(c.name)
		if a == nil {
			continue
		}
		same := valueString(a.value) == valueString(c.value)
		if same && !c.forced {
			continue
		}
		a.value = c.value
		desc := c.desc
		if desc == "" {
			desc = d.label + " " + c.name + " is " + valueString(c.value)
			if a.unit != "" {
				desc += a.unit
			}
		}
		rec := eventRecord{deviceID: d.id, authorised: d.authorised, name: c.name, value: valueString(c.value), unit: a.unit,
			displayName: d.label, desc: desc, typ: typ, stateChange: !same || c.forced, date: time.Now().UTC()}
		hist := append(h.history[d.id], rec)
		if len(hist) > maxHistory {
			hist = hist[len(hist)-maxHistory:]
		}
		h.history[d.id] = hist
		out = append(out, rec)
	}
	return out
}

func (h *Hub) emitLocation(name, value, desc string) {
	if desc == "" {
		desc = name + " is " + value
	}
	at := time.Now().UTC()
	h.keepLocationEvent(name, value, desc, at) // for /logs/eventsJson (hubvars.go)
	h.publish([]eventRecord{{name: name, value: value, displayName: "Home", desc: desc, stateChange: true, date: at}})
}

// socketFrame is an eventsocket message: every event on the hub, authorised in Maker API or not.
type socketFrame struct {
	Source          string  `json:"source"`
	Name            string  `json:"name"`
	DisplayName     string  `json:"displayName"`
	Value           string  `json:"value"`
	Type            *string `json:"type"`
	Unit            *string `json:"unit"`
	DeviceID        int     `json:"deviceId"`
	HubID           int     `json:"hubId"`
	InstalledAppID  int     `json:"installedAppId"`
	DescriptionText string  `json:"descriptionText"`
}

// pushContent is the body of a postURL push: the event in a "content" wrapper, deviceId a
// string (null for location events).
type pushContent struct {
	Name            string  `json:"name"`
	Value           string  `json:"value"`
	DisplayName     string  `json:"displayName"`
	DeviceID        *string `json:"deviceId"`
	DescriptionText string  `json:"descriptionText"`
	Unit            *string `json:"unit"`
	Type            *string `json:"type"`
	Data            *string `json:"data"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// publish sends events to every eventsocket and, for authorised devices and the location, to
// the postURL.
func (h *Hub) publish(recs []eventRecord) {
	for _, r := range recs {
		source := "DEVICE"
		if r.deviceID == 0 {
			source = "LOCATION"
		}
		frame, _ := json.Marshal(socketFrame{Source: source, Name: r.name, DisplayName: r.displayName, Value: r.value,
			Type: optional(r.typ), Unit: optional(r.unit), DeviceID: r.deviceID, DescriptionText: r.desc})
		h.broadcast(frame)
		if r.deviceID != 0 && !r.authorised {
			continue
		}
		c := pushContent{Name: r.name, Value: r.value, DisplayName: r.displayName, DescriptionText: r.desc,
			Unit: optional(r.unit), Type: optional(r.typ)}
		if r.deviceID != 0 {
			c.DeviceID = optional(strconv.Itoa(r.deviceID))
		}
		body, _ := json.Marshal(map[string]any{"content": c})
		h.mu.Lock()
		target := h.postURL
		h.mu.Unlock()
		if target == "" {
			continue
		}
		h.pushMu.RLock()
		if !h.pushDone {
			select {
			case h.pushQ <- append([]byte(target+"\n"), body...):
			default:
				h.log.Warn("postURL queue full; event dropped")
			}
		}
		h.pushMu.RUnlock()
	}
}

// pushLoop POSTs events one at a time, in order, as the hub does.
func (h *Hub) pushLoop() {
	defer h.pushWG.Done()
	for msg := range h.pushQ {
		target, body, _ := bytes.Cut(msg, []byte("\n"))
		if h.Down() {
			continue
		}
		resp, err := h.pushHTTP.Post(string(target), "application/json", bytes.NewReader(body))
		if err != nil {
			h.log.Debug("postURL push failed", "error", err)
			continue
		}
		resp.Body.Close()
	}
}

type socket struct {
	out  chan []byte
	stop context.CancelFunc
}

func (h *Hub) broadcast(frame []byte) {
	h.sockMu.Lock()
	defer h.sockMu.Unlock()
	for s := range h.sockets {
		select {
		case s.out <- frame:
		default: // a client that cannot keep up is dropped, as a real server would
			s.stop()
			delete(h.sockets, s)
		}
	}
}

func (h *Hub) dropSockets() {
	h.sockMu.Lock()
	defer h.sockMu.Unlock()
	for s := range h.sockets {
		s.stop()
		delete(h.sockets, s)
	}
}

// serveSocket is ws://<hub>/eventsocket: no token, one JSON event per text frame.
func (h *Hub) serveSocket(w http.ResponseWriter, r *http.Request) {
	if h.o.NoEventSocket {
		http.NotFound(w, r)
		return
	}
	if h.refuseSocket(w) {
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &socket{out: make(chan []byte, 512), stop: cancel}
	h.sockMu.Lock()
	h.sockets[s] = struct{}{}
	h.sockMu.Unlock()
	defer func() {
		h.sockMu.Lock()
		delete(h.sockets, s)
		h.sockMu.Unlock()
		cancel()
		c.CloseNow()
	}()
	rctx := c.CloseRead(ctx) // answers pings; ends when the client goes
	for {
		select {
		case <-rctx.Done():
			return
		case frame := <-s.out:
			wctx, wcancel := context.WithTimeout(rctx, 5*time.Second)
			err := c.Write(wctx, websocket.MessageText, frame)
			wcancel()
			if err != nil {
				return
			}
		}
	}
}

// Sockets is the number of connected eventsocket clients.
func (h *Hub) Sockets() int {
	h.sockMu.Lock()
	defer h.sockMu.Unlock()
	return len(h.sockets)
}
