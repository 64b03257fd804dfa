package hatools

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetNotifications is the toolset of notifications.
const SetNotifications = "notifications"


// persistentTarget is the notification panel inside Home Assistant rather than a notify service.
const persistentTarget = "persistent_notification"

type notifyArgs struct {
	Service        string         `json:"service" jsonschema:"where to send: a notify service such as mobile_app_alex_phone or notify (all), or persistent_notification for Home Assistant's own notification panel; notify.<name> is accepted too" validate:"required,max=255" example:"persistent_notification"`
	Message        string         `json:"message" jsonschema:"the notification text" validate:"required,min=1,max=4000" example:"The washing machine has finished."`
	Title          string         `json:"title,omitempty" jsonschema:"optional title" validate:"omitempty,max=255"`
	Target         []string       `json:"target,omitempty" jsonschema:"service-specific recipients (some notify integrations need them)" validate:"omitempty,max=20,dive,max=255"`
	Data           map[string]any `json:"data,omitempty" jsonschema:"service-specific extras, e.g. {\"push\": {\"sound\": \"default\"}} for the mobile app"`
	NotificationID string         `json:"notification_id,omitempty" jsonschema:"persistent_notification only: replaces an earlier notification with the same id" validate:"omitempty,max=255"`
}

type notifyResult struct {
	Sent string `json:"sent"`
}

// notifyTargets lists where notifications can go: the notify domain's services and the panel.
func notifyTargets(ctx context.Context, ha *homeassistant.Client) ([]string, error) {
	domains, err := ha.Services(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range domains {
		if d.Domain == "notify" {
			for name := range d.Services {
				if name != "send_message" {
					out = append(out, name)
				}
			}
		}
		if d.Domain == persistentTarget {
			if _, ok := d.Services["create"]; ok {
				out = append(out, persistentTarget)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func notificationTools(d Deps) []*toolkit.Tool {
	send := toolkit.Define(toolkit.Spec[notifyArgs, notifyResult]{
		Name: "ha_send_notification", Toolset: SetNotifications, Title: "Send a notification",
		Description: "Send a notification: to a phone or other notify service (e.g. mobile_app_alex_phone, notify for all), " +
			"or to Home Assistant's notification panel (persistent_notification). An unknown service is answered with the list of valid ones. " +
			"Send only what the user asked for; notifications reach people.",
		OpenWorld: true,
		Summary:   func(a notifyArgs) string { return a.Service },
		Handler: func(ctx context.Context, c *toolkit.Call, a notifyArgs) (notifyResult, error) {
			svc := strings.TrimPrefix(strings.TrimSpace(a.Service), "notify.")
			if svc == persistentTarget+".create" {
				svc = persistentTarget
			}
			domain, service, data := "notify", svc, map[string]any{"message": a.Message}
			if a.Title != "" {
				data["title"] = a.Title
			}
			if svc == persistentTarget {
				domain, service = persistentTarget, "create"
				if a.NotificationID != "" {
					data["notification_id"] = a.NotificationID
				}
			} else {
				if len(a.Target) > 0 {
					data["target"] = a.Target
				}
				if len(a.Data) > 0 {
					data["data"] = a.Data
				}
			}
			_, _, err := d.HA.CallService(ctx, domain, service, data, false)
			if err == nil {
				return notifyResult{Sent: domain + "." + service}, nil
			}
			var api *homeassistant.APIError
			if errors.Is(err, homeassistant.ErrUnavailable) || errors.Is(err, homeassistant.ErrUnauthorized) ||
				errors.As(err, &api) && api.Status != http.StatusBadRequest {
				return notifyResult{}, haError(err, false, "")
			}
			// HA answers a bare 400 both for an unknown service and for data it refuses; the list
			// of services tells the two apart.
			targets, lerr := notifyTargets(ctx, d.HA)
			if lerr != nil {
				return notifyResult{}, haError(err, false, "")
			}
			for _, t := range targets {
				if t == svc {
					return notifyResult{}, toolkit.InvalidArg("data", "was refused by "+domain+"."+service+" (Home Assistant answered 400); check target and data for this service", `{"message": "Hello"}`)
				}
			}
			return notifyResult{}, toolkit.InvalidArg("service", "is not a notify service of this home (got "+a.Service+"); valid: "+strings.Join(targets, ", "), `{"service": "persistent_notification"}`)
		},
	})
	return []*toolkit.Tool{send}
}
