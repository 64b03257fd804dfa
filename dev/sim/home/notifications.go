package home

import (
	"sort"
	"sync"
	"time"
)

// Notification is a persistent notification as the WS subscription sends it.
type Notification struct {
	NotificationID string  `json:"notification_id"`
	Message        string  `json:"message"`
	Title          *string `json:"title"`
	CreatedAt      string  `json:"created_at"`
}

// NotificationUpdate is one persistent_notification/subscribe push.
type NotificationUpdate struct {
	Type          string                  `json:"type"` // current | added | removed | updated
	Notifications map[string]Notification `json:"notifications"`
}

// SentNotification records a notify.* call: the simulator's stand-in for a
// push message reaching a phone.
type SentNotification struct {
	Service string         `json:"service"`
	Message string         `json:"message"`
	Title   string         `json:"title,omitempty"`
	Target  []string       `json:"target,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
	Time    time.Time      `json:"time"`
}

type notifications struct {
	items map[string]Notification
	seq   int
	subMu sync.Mutex
	subs  map[int]func(NotificationUpdate)
	next  int
	// pending updates are delivered after the home lock is released.
	pending []NotificationUpdate
}

// Notifications lists current persistent notifications by creation order.
func (h *Home) Notifications() []Notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Notification, 0, len(h.notes.items))
	for _, n := range h.notes.items {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].NotificationID < out[j].NotificationID
	})
	return out
}

// SubscribeNotifications sends the "current" set now and every change later.
func (h *Home) SubscribeNotifications(fn func(NotificationUpdate)) (cancel func()) {
	h.mu.Lock()
	cur := map[string]Notification{}
	for k, v := range h.notes.items {
		cur[k] = v
	}
	h.notes.subMu.Lock()
	if h.notes.subs == nil {
		h.notes.subs = map[int]func(NotificationUpdate){}
	}
	h.notes.next++
	id := h.notes.next
	h.notes.subs[id] = fn
	h.notes.subMu.Unlock()
	h.mu.Unlock()
	fn(NotificationUpdate{Type: "current", Notifications: cur})
	return func() {
		h.notes.subMu.Lock()
		delete(h.notes.subs, id)
		h.notes.subMu.Unlock()
	}
}

// CreateNotification adds or replaces a persistent notification (the
// persistent_notification.create service without a service call).
func (h *Home) CreateNotification(id, title, message string) string {
	h.mu.Lock()
	id = h.createNotificationLocked(id, title, message)
	h.mu.Unlock()
	h.flushNotes()
	h.bus.flush()
	return id
}

// Sent returns what notify.* services have sent so far.
func (h *Home) Sent() []SentNotification {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]SentNotification(nil), h.sent...)
}

func (h *Home) createNotificationLocked(id, title, message string) string {
	if h.notes.items == nil {
		h.notes.items = map[string]Notification{}
	}
	if id == "" {
		h.notes.seq++
		id = h.ulid()
	}
	n := Notification{NotificationID: id, Message: message, CreatedAt: ISOTime(h.now())}
	if title != "" {
		n.Title = strp(title)
	}
	kind := "added"
	if _, ok := h.notes.items[id]; ok {
		kind = "updated"
	}
	h.notes.items[id] = n
	h.notes.pending = append(h.notes.pending, NotificationUpdate{Type: kind, Notifications: map[string]Notification{id: n}})
	return id
}

func (h *Home) dismissNotificationLocked(id string) {
	n, ok := h.notes.items[id]
	if !ok {
		return
	}
	delete(h.notes.items, id)
	h.notes.pending = append(h.notes.pending, NotificationUpdate{Type: "removed", Notifications: map[string]Notification{id: n}})
}

// flushNotes delivers pending notification updates outside the home lock.
func (h *Home) flushNotes() {
	h.mu.Lock()
	pending := h.notes.pending
	h.notes.pending = nil
	h.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	h.notes.subMu.Lock()
	ids := make([]int, 0, len(h.notes.subs))
	for id := range h.notes.subs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	fns := make([]func(NotificationUpdate), 0, len(ids))
	for _, id := range ids {
		fns = append(fns, h.notes.subs[id])
	}
	h.notes.subMu.Unlock()
	for _, u := range pending {
		for _, fn := range fns {
			fn(u)
		}
	}
}
