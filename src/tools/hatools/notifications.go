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
	Service        string         `json:"service" jsonschema:"e.g. mobile_app_alex_phone, notify (all) or persistent_notification (HA's panel)" validate:"required,max=255" example:"persistent_notification"`
	Message        string         `json:"message" validate:"required,min=1,max=4000" example:"The washing machine has finished."`
	Title          string         `json:"title,omitempty" validate:"omitempty,max=255"`
	Target         []string       `json:"target,omitempty" jsonschema:"service-specific recipients" validate:"omitempty,max=20,dive,max=255"`
	Data           map[string]any `json:"data,omitempty" jsonschema:"service-specific extras"`
	NotificationID string         `json:"notification_id,omitempty" jsonschema:"persistent_notification: replaces the one with this id" validate:"omitempty,max=255"`
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

// notificationTools are the notification tools, in the order tools/list shows them.
func notificationTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{sendNotification(d)} }

// sendNotification is ha_send_notification.
func sendNotification(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[notifyArgs, notifyResult]{
		Name: "ha_send_notification", Toolset: SetNotifications, Title: "Send a notification",
		Description: "Send a notification to a notify service or HA's notification panel; an unknown service is answered with the valid ones. It reaches people: send only what the user asked for.",
		OpenWorld:   true,
		Confirm:     notifyConfirm(d),
		Summary:     func(a notifyArgs) string { return a.Service },
		Handler: func(ctx context.Context, c *toolkit.Call, a notifyArgs) (notifyResult, error) {
			return d.notify(ctx, a)
		},
	})
}

// notify sends through a notify service or the notification panel; a refusal is explained
// with the list of services this home has.
func (d Deps) notify(ctx context.Context, a notifyArgs) (notifyResult, error) {
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
}
