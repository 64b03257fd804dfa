// Package rules is hamcp's Hubitat rule engine: the rule model of the Hubitat MCP Rule Server
// (6 trigger types, 14 condition types, 29 action types, variables and %placeholders%), run by
// hamcp itself from the hub's live events and its own scheduler, with rules, pending delays and
// counters in hamcp's store. It knows the hub client and the store, and nothing of MCP.
//
// The parts, one file group each:
//   - model.go, scalar.go: the rule as stored and exchanged (JSON field names are upstream's).
//   - normalize.go, validate.go: upstream's alternative spellings folded into one form; every
//     problem reported with its path inside the rule ("actions[2].thenActions[0].deviceId").
//   - export.go: export, import with device-id remapping, clone.
//   - conditions.go, actions.go: evaluating one condition and running one action list against an
//     Env (a dry run records what it would do and never acts).
//   - engine.go, triggers.go, schedule.go, sun.go, clock.go: subscriptions to hub events,
//     duration triggers, the time/sun/periodic scheduler on a Clock.
//   - run.go, env.go: the run queue (one run of a rule at a time), delays that survive a
//     restart, and the live Env the runs act through.
//   - store.go: rules, the trash and pending delays in hamcp's SQLite store (the Hubitat tables,
//     src/integrations/hubitat/hubstore).
package rules

import (
	"context"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
)

// Rule is one rule. Runtime fields (ID, timestamps, counters) are set by the engine; export
// leaves them out.
type Rule struct {
	ID             string         `json:"id,omitempty"`
	Name           string         `json:"name"`
	Description    string         `json:"description,omitempty"`
	Enabled        bool           `json:"enabled"`
	ConditionLogic string         `json:"conditionLogic,omitempty"` // all (default) or any
	Triggers       []Trigger      `json:"triggers"`
	Conditions     []Condition    `json:"conditions,omitempty"`
	Actions        []Action       `json:"actions"`
	LocalVariables map[string]any `json:"localVariables,omitempty"`

	CreatedAt      time.Time  `json:"createdAt,omitzero"`
	UpdatedAt      time.Time  `json:"updatedAt,omitzero"`
	LastTriggered  *time.Time `json:"lastTriggered,omitempty"`
	ExecutionCount int        `json:"executionCount"`
	ErrorCount     int        `json:"errorCount"`
	LastError      string     `json:"lastError,omitempty"`
	// DisabledReason says why hamcp stopped and disabled the rule (a runaway: too many runs or
	// commands a minute, or a loop of rules triggering each other) and DisabledAt when; both
	// are cleared when the rule is enabled again.
	DisabledReason string     `json:"disabledReason,omitempty"`
	DisabledAt     *time.Time `json:"disabledAt,omitempty"`
}

// Trigger is one trigger; Type says which fields apply (validate.go lists them per type).
type Trigger struct {
	Type string `json:"type"` // device_event, button_event, time, periodic, mode_change, hsm_change

	// device_event, button_event
	DeviceID  string   `json:"deviceId,omitempty"`
	DeviceIDs []string `json:"deviceIds,omitempty"`
	Attribute string   `json:"attribute,omitempty"`
	Value     *Scalar  `json:"value,omitempty"`    // absent: any change fires
	Operator  string   `json:"operator,omitempty"` // equals (default), not_equals, >, <, >=, <=
	Duration  int      `json:"duration,omitempty"` // seconds the state must hold, 0–7200
	MatchMode string   `json:"matchMode,omitempty"`
	// button_event
	Action       string `json:"action,omitempty"` // pushed, held, doubleTapped, released
	ButtonNumber *int   `json:"buttonNumber,omitempty"`

	// time: Time "HH:mm", or Sunrise/Sunset with Offset minutes (−180…180)
	Time    string `json:"time,omitempty"`
	Sunrise bool   `json:"sunrise,omitempty"`
	Sunset  bool   `json:"sunset,omitempty"`
	Offset  int    `json:"offset,omitempty"`

	// periodic
	Interval int    `json:"interval,omitempty"`
	Unit     string `json:"unit,omitempty"` // minutes (default), hours, days

	// mode_change
	FromMode string `json:"fromMode,omitempty"`
	ToMode   string `json:"toMode,omitempty"`
	// hsm_change
	Status string `json:"status,omitempty"`

	// Condition gates this trigger alone; false (or an error) ignores the event.
	Condition *Condition `json:"condition,omitempty"`
}

// Condition is one condition; Type says which fields apply.
type Condition struct {
	Type string `json:"type"` // device_state, device_was, time_range, mode, variable, days_of_week,
	// sun_position, hsm_status, presence, lock, thermostat_mode, thermostat_state, illuminance, power

	DeviceID   string  `json:"deviceId,omitempty"`
	Attribute  string  `json:"attribute,omitempty"`
	Operator   string  `json:"operator,omitempty"`
	Value      *Scalar `json:"value,omitempty"`
	ForSeconds int     `json:"forSeconds,omitempty"` // device_was

	// time_range: "HH:mm", or "sunrise"/"sunset" with an optional offset ("sunset-30", "sunrise+15")
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`

	Mode  string   `json:"mode,omitempty"`  // mode; thermostat_mode
	Modes []string `json:"modes,omitempty"` // mode (operator in / not_in)

	VariableName string   `json:"variableName,omitempty"`
	Days         []string `json:"days,omitempty"`     // Sunday … Saturday
	Position     string   `json:"position,omitempty"` // sun_position: up, down
	Status       string   `json:"status,omitempty"`   // hsm_status, presence, lock
	State        string   `json:"state,omitempty"`    // thermostat_state
}

// Action is one action; Type says which fields apply. if_then_else and repeat nest actions.
type Action struct {
	Type string `json:"type"`

	DeviceID      string   `json:"deviceId,omitempty"`
	DeviceIDs     []string `json:"deviceIds,omitempty"`     // capture_state
	SceneDeviceID string   `json:"sceneDeviceId,omitempty"` // activate_scene
	Command       string   `json:"command,omitempty"`       // device_command; set_valve, set_shade: open/close
	Parameters    []string `json:"parameters,omitempty"`

	Level           *Scalar  `json:"level,omitempty"`    // set_level, set_color… (a number); log (info, warn, debug)
	Duration        *float64 `json:"duration,omitempty"` // set_level fade seconds
	Hue             *float64 `json:"hue,omitempty"`
	Saturation      *float64 `json:"saturation,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"` // set_color_temperature (K)
	Position        *float64 `json:"position,omitempty"`    // set_shade 0–100
	Speed           string   `json:"speed,omitempty"`       // set_fan_speed
	ThermostatMode  string   `json:"thermostatMode,omitempty"`
	HeatingSetpoint *float64 `json:"heatingSetpoint,omitempty"`
	CoolingSetpoint *float64 `json:"coolingSetpoint,omitempty"`
	FanMode         string   `json:"fanMode,omitempty"`
	Volume          *float64 `json:"volume,omitempty"`

	VariableName string  `json:"variableName,omitempty"`
	Value        *Scalar `json:"value,omitempty"`
	Operation    string  `json:"operation,omitempty"` // variable_math
	Operand      *Scalar `json:"operand,omitempty"`
	Scope        string  `json:"scope,omitempty"` // local (default), global

	Mode   string `json:"mode,omitempty"`   // set_mode
	Status string `json:"status,omitempty"` // set_hsm

	Seconds int    `json:"seconds,omitempty"` // delay: 1 s – 24 h
	DelayID string `json:"delayId,omitempty"` // delay, cancel_delayed ("all")

	Condition   *Condition `json:"condition,omitempty"` // if_then_else
	ThenActions []Action   `json:"thenActions,omitempty"`
	ElseActions []Action   `json:"elseActions,omitempty"`
	Times       int        `json:"times,omitempty"` // repeat, 1–100
	Actions     []Action   `json:"actions,omitempty"`

	Message     string `json:"message,omitempty"` // log, send_notification, speak
	StateID     string `json:"stateId,omitempty"` // capture_state, restore_state
	URL         string `json:"url,omitempty"`     // http_request
	Method      string `json:"method,omitempty"`
	Body        string `json:"body,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Text        string `json:"text,omitempty"` // comment
}

// Context is what a run knows about why it runs: the triggering event (nil for time, periodic
// and manual runs) and when. It is kept across a delay, unlike upstream v0.4.1.
type Context struct {
	RuleID  string         `json:"ruleId"`
	Event   *hubitat.Event `json:"event,omitempty"`
	Trigger string         `json:"trigger"` // the trigger type that fired, or "manual"
	At      time.Time      `json:"at"`
	// Cause is the chain of rule runs whose commands caused the event, oldest first (limits.go).
	Cause []Hop `json:"cause,omitempty"`
}

// Env is what evaluating conditions and running actions needs from the world: the hub (through
// hamcp's Hubitat client and its cache), variables, captured states, the clock and the sun. The
// engine implements it against the live hub; a dry run wraps it so that nothing acts.
type Env interface {
	Now() time.Time
	Location() *time.Location
	// Sun returns today's sunrise and sunset (in Location) for the hub's coordinates.
	Sun(day time.Time) (sunrise, sunset time.Time, err error)

	Device(ctx context.Context, id string) (hubitat.Device, error)
	DeviceEvents(ctx context.Context, id string, limit int) ([]hubitat.Event, error)
	SendCommand(ctx context.Context, id, command string, args ...string) error
	Mode(ctx context.Context) (string, error)
	SetMode(ctx context.Context, name string) error
	HSM(ctx context.Context) (string, error)
	SetHSM(ctx context.Context, value string) error

	// Variable reads a variable by name: the rule's local variables first, then the hub's
	// connector variables, then the rule-engine store (upstream's lookup order). The locals are
	// rule.LocalVariables: variable_math with scope global passes a Rule without them to read
	// only the hub's and the store's.
	Variable(ctx context.Context, rule *Rule, name string) (string, bool, error)
	SetRuleVariable(ctx context.Context, name, value string) error // the rule-engine store
	SetHubVariable(ctx context.Context, name, value string) error  // the hub's variable
	// SetLocalVariable sets one of the rule's local variables (set_local_variable, variable_math
	// scope local): the live engine updates rule.LocalVariables and stores the rule; a dry run
	// only records it. (Added by RB: a dry run must not touch the rule.)
	SetLocalVariable(ctx context.Context, rule *Rule, name, value string) error

	CaptureState(ctx context.Context, stateID string, deviceIDs []string) error
	RestoreState(ctx context.Context, stateID string) error
	// CancelDelayed cancels the rule's pending delays: delayID "all" or one delay's id
	// (cancel_delayed). (Added by RB: the engine owns the pending delays.)
	CancelDelayed(ctx context.Context, rule *Rule, delayID string) error

	Notify(ctx context.Context, deviceID, message string) error
	HTTPRequest(ctx context.Context, method, url, contentType, body string) (status int, err error)
	Log(ctx context.Context, rule *Rule, level, message string)
}
