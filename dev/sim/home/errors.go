package home

import "fmt"

// The error kinds a service call can fail with. package hass maps them to
// HA's REST statuses and WS error codes.

// ServiceNotFoundError is HA's ServiceNotFound.
type ServiceNotFoundError struct{ Domain, Service string }

func (e *ServiceNotFoundError) Error() string {
	return fmt.Sprintf("Action %s.%s not found.", e.Domain, e.Service)
}

// InvalidError is a voluptuous schema failure (vol.Invalid); Msg is its
// humanized text, e.g. "extra keys not allowed @ data['foo']".
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// ServiceValidationError is HA's ServiceValidationError: the call was well
// formed but the entity or the arguments refuse it.
type ServiceValidationError struct {
	Msg          string
	Key          string // translation_key
	Domain       string // translation_domain
	Placeholders map[string]string
}

func (e *ServiceValidationError) Error() string { return e.Msg }

// HAError is a plain HomeAssistantError raised while running a service.
type HAError struct{ Msg string }

func (e *HAError) Error() string { return e.Msg }

// NotFoundError reports a missing registry item, calendar event, config key...
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// NotSupportedError is a feature the entity does not offer (WS code not_supported).
type NotSupportedError struct{ Msg string }

func (e *NotSupportedError) Error() string { return e.Msg }
