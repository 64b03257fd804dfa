package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/redact"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetEvents is the toolset of Home Assistant's event bus.
const SetEvents = "events"

// Limits of live subscriptions: per MCP session, and the notification rate it may receive
// (events beyond it are counted as dropped, never queued without bound).
const (
	maxSubsPerSession = 10
	liveRate          = 10 // events per second per session
	liveBurst         = 20
	liveQueue         = 100 // undelivered events per subscription
	liveRecent        = 10  // events kept per subscription for polling
	maxEventData      = 2 << 10
	liveLogger        = "hamcp/events"
)

// validEventType accepts what HA's event names look like: no spaces or control characters,
// at most 64 characters (the recorder's column size).
func validEventType(t string) bool {
	if t == "" || len(t) > 64 {
		return false
	}
	for _, r := range t {
		if r <= ' ' || r == 0x7f || r == '/' || r == '?' || r == '#' {
			return false
		}
	}
	return true
}

type fireArgs struct {
	EventType string         `json:"event_type" validate:"required,max=64" example:"my_custom_event"`
	EventData map[string]any `json:"event_data,omitempty" jsonschema:"read as trigger.event.data"`
}

type fireResult struct {
	Fired string `json:"fired"`
}

type listenersArgs struct {
	Search string `json:"search,omitempty"`
	toolkit.Page
}

type listenerView struct {
	Event     string `json:"event"`
	Listeners int    `json:"listener_count"`
}

type subscribeArgs struct {
	EventType string `json:"event_type" validate:"required,max=64" example:"state_changed"`
	EntityID  string `json:"entity_id,omitempty" jsonschema:"only events about matching entities (* wildcards)" validate:"omitempty,max=255" example:"light.*"`
}

type subscribeResult struct {
	SubscriptionID string `json:"subscription_id"`
	EventType      string `json:"event_type"`
	EntityID       string `json:"entity_id,omitempty"`
	Delivery       string `json:"delivery"`
}

type unsubscribeArgs struct {
	SubscriptionID string `json:"subscription_id" validate:"required,max=32" example:"sub_1"`
}

type subStatsArgs struct {
	IncludeEvents bool `json:"include_events,omitempty" jsonschema:"up to 10 each"`
}

type subView struct {
	SubscriptionID string            `json:"subscription_id"`
	EventType      string            `json:"event_type"`
	EntityID       string            `json:"entity_id,omitempty"`
	Since          string            `json:"since"`
	Matched        int64             `json:"matched"`
	Delivered      int64             `json:"delivered"`
	Dropped        int64             `json:"dropped"`
	Recent         []json.RawMessage `json:"recent,omitempty"`
}

type subStatsResult struct {
	Subscriptions []subView `json:"subscriptions"`
	Limit         int       `json:"limit"`
	RatePerSecond int       `json:"rate_per_second"`
}

// liveHub keeps every MCP session's event subscriptions.
type liveHub struct {
	ha       *homeassistant.Client
	scope    *Scope // expose_scope=assist: only events about exposed entities
	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*liveSession
	next     int
}

type liveSession struct {
	ss      *mcp.ServerSession
	subs    map[string]*liveSub
	limiter *rate.Limiter
	ctx     context.Context
	cancel  context.CancelFunc
}

type liveSub struct {
	seq                   int
	id, eventType, filter string
	since                 time.Time
	matched, delivered    atomic.Int64
	dropped               atomic.Int64
	queue                 chan json.RawMessage
	scope                 *Scope
	stopOnce              sync.Once
	stop                  chan struct{}

	mu     sync.Mutex
	unsub  func(context.Context) error
	recent []json.RawMessage
}

// eventEntities lists the entity ids an event is about: data.entity_id, or for service calls
// service_data.entity_id (a string or a list).
func eventEntities(data map[string]any) []string {
	var out []string
	add := func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	add(data["entity_id"])
	if sd, ok := data["service_data"].(map[string]any); ok {
		add(sd["entity_id"])
	}
	return out
}

// matchesFilter reports whether an event passes an entity glob ("" passes everything).
func matchesFilter(filter string, data map[string]any) bool {
	if filter == "" {
		return true
	}
	for _, id := range eventEntities(data) {
		if ok, _ := path.Match(filter, id); ok {
			return true
		}
	}
	return false
}

// compactEvent is the notification a session receives: state changes as old → new, other
// events with their data, cut down when large. The data is redacted first: a call_service event
// carries the service_data of whoever called, an alarm code when the user disarms from the UI.
func compactEvent(subID string, ev homeassistant.Event) json.RawMessage {
	ev.Data = redact.Map(ev.Data)
	out := map[string]any{"subscription_id": subID, "event_type": ev.EventType}
	if !ev.TimeFired.IsZero() {
		out["time_fired"] = ev.TimeFired.UTC().Format(time.RFC3339)
	}
	if ev.EventType == "state_changed" {
		out["entity_id"] = clipState(ev.Data["entity_id"])
		for _, k := range []string{"old_state", "new_state"} {
			if st, ok := ev.Data[k].(map[string]any); ok {
				out[k] = clipState(st["state"])
			}
		}
	} else if b, err := json.Marshal(ev.Data); err == nil && len(b) <= maxEventData {
		out["data"] = json.RawMessage(b)
	} else {
		keys := make([]string, 0, len(ev.Data))
		for k := range ev.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out["data_truncated"] = true
		out["data_keys"] = keys
	}
	b, _ := json.Marshal(out)
	return b
}

// clipState keeps a string value within HA's 255-character limit for ids and states; anything else
// is not a state and is dropped.
func clipState(v any) any {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if len(s) > 255 {
		return strings.ToValidUTF8(s[:255], "") + "…"
	}
	return s
}

func newLiveHub(ha *homeassistant.Client) *liveHub {
	return &liveHub{ha: ha, sessions: map[*mcp.ServerSession]*liveSession{}}
}

// session returns the session's state, creating it (and its cleanup on session end) first time.
func (h *liveHub) session(ss *mcp.ServerSession) *liveSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ls := h.sessions[ss]; ls != nil {
		return ls
	}
	ctx, cancel := context.WithCancel(context.Background())
	ls := &liveSession{ss: ss, subs: map[string]*liveSub{}, limiter: rate.NewLimiter(liveRate, liveBurst), ctx: ctx, cancel: cancel}
	h.sessions[ss] = ls
	go func() {
		_ = ss.Wait()
		h.endSession(ss)
	}()
	return ls
}

func (h *liveHub) endSession(ss *mcp.ServerSession) {
	h.mu.Lock()
	ls := h.sessions[ss]
	delete(h.sessions, ss)
	var subs []*liveSub
	if ls != nil {
		for _, sub := range ls.subs {
			subs = append(subs, sub)
		}
		ls.subs = map[string]*liveSub{}
	}
	h.mu.Unlock()
	if ls == nil {
		return
	}
	ls.cancel()
	for _, sub := range subs {
		sub.close()
	}
}

// setUnsubscribe records how to end the HA subscription; false when the subscription was
// closed meanwhile, and the caller must end it itself.
func (s *liveSub) setUnsubscribe(fn func(context.Context) error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stop:
		return false
	default:
		s.unsub = fn
		return true
	}
}

func (s *liveSub) close() {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		close(s.stop)
		fn := s.unsub
		s.mu.Unlock()
		if fn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = fn(ctx)
		}
	})
}

// handle runs on the HA client's delivery goroutine for this subscription: filter, rate-limit,
// then hand over to the sender without ever blocking HA's stream.
func (s *liveSub) handle(ls *liveSession, ev homeassistant.Event) {
	if !matchesFilter(s.filter, ev.Data) {
		return
	}
	msg := compactEvent(s.id, ev)
	if !s.scope.admits(ev.Data, msg) {
		return
	}
	s.matched.Add(1)
	s.mu.Lock()
	s.recent = append(s.recent, msg)
	if len(s.recent) > liveRecent {
		s.recent = s.recent[len(s.recent)-liveRecent:]
	}
	s.mu.Unlock()
	if !ls.limiter.Allow() {
		s.dropped.Add(1)
		return
	}
	select {
	case s.queue <- msg:
	default:
		s.dropped.Add(1)
	}
}

// send delivers queued events to the session as log notifications until the subscription ends.
func (s *liveSub) send(ls *liveSession) {
	for {
		select {
		case <-s.stop:
			return
		case msg := <-s.queue:
			ctx, cancel := context.WithTimeout(ls.ctx, 10*time.Second)
			//lint:ignore SA1019 live events ride on MCP log notifications; SEP-2577 keeps them working for at least a year.
			err := ls.ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: liveLogger, Data: msg})
			cancel()
			if err != nil {
				s.dropped.Add(1)
				continue
			}
			s.delivered.Add(1)
		}
	}
}

// eventTools are the event bus tools, in the order tools/list shows them. The live ones share
// one hub of per-session subscriptions.
func eventTools(d Deps) []*toolkit.Tool {
	hub := newLiveHub(d.HA)
	hub.scope = d.Scope
	return []*toolkit.Tool{fireEvent(d), listEventListeners(d), subscribeEvents(hub), unsubscribeEvents(hub), getSubscriptionStats(hub)}
}

// fireEvent is ha_fire_event.
func fireEvent(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[fireArgs, fireResult]{
		Name: "ha_fire_event", Toolset: SetEvents, Title: "Fire an event",
		Confirm: fireEventConfirm(d),
		Description: "Fire a custom event, e.g. for automations with an event trigger. " +
			"Events Home Assistant fires itself (state_changed, call_service, homeassistant_*, automation_*, *_registry_updated) are refused; " +
			"an event that starts an automation which unlocks, disarms or opens is confirmed by the user. To control devices use ha_call_service.",
		Summary: func(a fireArgs) string { return a.EventType },
		Handler: func(ctx context.Context, c *toolkit.Call, a fireArgs) (fireResult, error) {
			if !validEventType(a.EventType) {
				return fireResult{}, toolkit.InvalidArg("event_type", "must be 1-64 characters without spaces, slashes, ? or #", `{"event_type": "my_custom_event"}`)
			}
			if err := d.HA.FireEvent(ctx, a.EventType, a.EventData); err != nil {
				return fireResult{}, haError(err, false, "")
			}
			return fireResult{Fired: a.EventType}, nil
		},
	})
}

// listEventListeners is ha_list_event_listeners.
func listEventListeners(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listenersArgs, toolkit.List[listenerView]]{
		Name: "ha_list_event_listeners", Toolset: SetEvents, Title: "List event types",
		Description: "Event types with listeners and their count (\"*\" = all events): names for ha_subscribe_events or triggers. Paged.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listenersArgs) (toolkit.List[listenerView], error) {
			evs, err := d.HA.Events(ctx)
			if err != nil {
				return toolkit.List[listenerView]{}, haError(err, false, "")
			}
			var out []listenerView
			for _, e := range evs {
				if a.Search == "" || hasFold(e.Event, a.Search) {
					out = append(out, listenerView{Event: e.Event, Listeners: e.ListenerCount})
				}
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Event < out[j].Event })
			return toolkit.Paginate(out, a.Page), nil
		},
	})
}

// subscribeEvents is ha_subscribe_events.
func subscribeEvents(hub *liveHub) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[subscribeArgs, subscribeResult]{
		Name: "ha_subscribe_events", Toolset: SetEvents, Title: "Follow events live",
		Description: fmt.Sprintf("Follow events live in this session as notifications/message (logger %s); state changes as old → new. "+
			"Max %d per session, %d events/s; they end with the session or ha_unsubscribe_events. "+
			"ha_get_subscription_stats shows counts and recent events.", liveLogger, maxSubsPerSession, liveRate),
		Summary: func(a subscribeArgs) string { return a.EventType + " " + a.EntityID },
		Handler: hub.subscribe,
	})
}

// subscribe starts one live subscription for the calling session.
func (h *liveHub) subscribe(ctx context.Context, c *toolkit.Call, a subscribeArgs) (subscribeResult, error) {
	ss := c.Session()
	if ss == nil {
		return subscribeResult{}, &toolkit.Error{Code: "session_required", Message: "live events need a session that stays open; this request has none",
			Hint: "connect with a stateful MCP client (stdio, SSH or HTTP with a session) to follow events"}
	}
	if !validEventType(a.EventType) || a.EventType == "*" {
		return subscribeResult{}, toolkit.InvalidArg("event_type", "must be one event type (no spaces, not *); ha_list_event_listeners shows them", `{"event_type": "state_changed"}`)
	}
	if _, err := path.Match(a.EntityID, ""); err != nil {
		return subscribeResult{}, toolkit.InvalidArg("entity_id", "is not a valid pattern: "+err.Error(), `{"entity_id": "light.*"}`)
	}
	ls := h.session(ss)
	h.mu.Lock()
	if h.sessions[ss] != ls {
		h.mu.Unlock()
		return subscribeResult{}, &toolkit.Error{Code: "session_closed", Message: "the session ended while subscribing"}
	}
	if len(ls.subs) >= maxSubsPerSession {
		h.mu.Unlock()
		return subscribeResult{}, &toolkit.Error{Code: "limit_reached", Message: fmt.Sprintf("this session already follows %d subscriptions, the most allowed", maxSubsPerSession),
			Hint: "end one with ha_unsubscribe_events (ha_get_subscription_stats lists them)"}
	}
	h.next++
	sub := &liveSub{seq: h.next, id: fmt.Sprintf("sub_%d", h.next), eventType: a.EventType, filter: a.EntityID, since: time.Now().UTC(),
		queue: make(chan json.RawMessage, liveQueue), stop: make(chan struct{}), scope: h.scope}
	ls.subs[sub.id] = sub
	h.mu.Unlock()
	unsub, err := h.ha.SubscribeEvents(ctx, a.EventType, func(ev homeassistant.Event) { sub.handle(ls, ev) })
	if err != nil {
		h.mu.Lock()
		delete(ls.subs, sub.id)
		h.mu.Unlock()
		var api *homeassistant.APIError
		if errors.As(err, &api) && api.Code == "unauthorized" {
			return subscribeResult{}, &toolkit.Error{Code: "backend_refused", Message: "Home Assistant does not let hamcp's user follow " + a.EventType + " (only administrators may follow every event type)",
				Hint: "follow state_changed, call_service or a registry event instead, or give hamcp an administrator's token"}
		}
		return subscribeResult{}, haError(err, false, "")
	}
	if !sub.setUnsubscribe(unsub) {
		// The session ended while Home Assistant was answering.
		_ = unsub(context.WithoutCancel(ctx))
		return subscribeResult{}, &toolkit.Error{Code: "session_closed", Message: "the session ended while subscribing"}
	}
	go sub.send(ls)
	return subscribeResult{SubscriptionID: sub.id, EventType: a.EventType, EntityID: a.EntityID,
		Delivery: "notifications/message from logger " + liveLogger + " at level info; clients show them only after logging/setLevel (info or lower). " +
			"The last events are also kept for ha_get_subscription_stats include_events=true."}, nil
}

// unsubscribeEvents is ha_unsubscribe_events.
func unsubscribeEvents(hub *liveHub) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[unsubscribeArgs, subView]{
		Name: "ha_unsubscribe_events", Toolset: SetEvents, Title: "Stop following events",
		Description: "End a live event subscription and return its final counts.",
		Idempotent:  true,
		Handler: func(ctx context.Context, c *toolkit.Call, a unsubscribeArgs) (subView, error) {
			ss := c.Session()
			hub.mu.Lock()
			var sub *liveSub
			if ls := hub.sessions[ss]; ss != nil && ls != nil {
				sub = ls.subs[a.SubscriptionID]
				delete(ls.subs, a.SubscriptionID)
			}
			hub.mu.Unlock()
			if sub == nil {
				return subView{}, toolkit.NotFound("this session has no subscription "+a.SubscriptionID, "ha_get_subscription_stats lists the session's subscriptions")
			}
			sub.close()
			return sub.view(false), nil
		},
	})
}

// getSubscriptionStats is ha_get_subscription_stats.
func getSubscriptionStats(hub *liveHub) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[subStatsArgs, subStatsResult]{
		Name: "ha_get_subscription_stats", Toolset: SetEvents, Title: "Live subscription stats",
		Description: "This session's live subscriptions: events matched, delivered and dropped; " +
			"include_events=true adds the last events, for clients that do not show notifications.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a subStatsArgs) (subStatsResult, error) {
			out := subStatsResult{Subscriptions: []subView{}, Limit: maxSubsPerSession, RatePerSecond: liveRate}
			ss := c.Session()
			hub.mu.Lock()
			var subs []*liveSub
			if ls := hub.sessions[ss]; ss != nil && ls != nil {
				for _, s := range ls.subs {
					subs = append(subs, s)
				}
			}
			hub.mu.Unlock()
			sort.Slice(subs, func(i, j int) bool { return subs[i].seq < subs[j].seq })
			for _, s := range subs {
				out.Subscriptions = append(out.Subscriptions, s.view(a.IncludeEvents))
			}
			return out, nil
		},
	})
}

func (s *liveSub) view(withEvents bool) subView {
	v := subView{SubscriptionID: s.id, EventType: s.eventType, EntityID: s.filter, Since: s.since.Format(time.RFC3339),
		Matched: s.matched.Load(), Delivered: s.delivered.Load(), Dropped: s.dropped.Load()}
	if withEvents {
		s.mu.Lock()
		v.Recent = append([]json.RawMessage(nil), s.recent...)
		s.mu.Unlock()
	}
	return v
}
