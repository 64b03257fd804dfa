package hubitattools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// maxBatchEffects caps one hubitat_send_commands call: each device × command is one effect.
const maxBatchEffects = 100

type batchCommand struct {
	DeviceIDs  []string `json:"deviceIds" jsonschema:"from hubitat_list_devices" validate:"required,min=1,max=100,dive,max=18"`
	Command    string   `json:"command" jsonschema:"e.g. \"off\"" validate:"required,max=64"`
	Parameters []string `json:"parameters,omitempty" jsonschema:"e.g. [\"30\"]" validate:"omitempty,max=10,dive,max=1000"`
}

type sendCommandsArgs struct {
	Commands []batchCommand `json:"commands" jsonschema:"run in order" validate:"required,min=1,max=20,dive"`
}

// Outcomes of one device × command.
const (
	outcomeSent          = "sent"
	outcomeFailed        = "failed"
	outcomeUnknownDevice = "unknown_device"
	outcomeUnsupported   = "unsupported_command"
)

type commandOutcome struct {
	DeviceID string `json:"deviceId"`
	Device   string `json:"device,omitempty"`
	Command  string `json:"command"`
	Outcome  string `json:"outcome"`
	Error    string `json:"error,omitempty"`
}

type sendCommandsResult struct {
	Sent     int              `json:"sent"`
	NotSent  int              `json:"notSent"`
	Outcomes []commandOutcome `json:"outcomes"`
}

func sendCommands(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[sendCommandsArgs, sendCommandsResult]{
		Name: "hubitat_send_commands", Toolset: SetDevices, Title: "Send a command to many Hubitat devices at once",
		Description: "Turn many Hubitat devices on or off at once (all the lights), or run several commands in order; an outcome per " +
			"device: sent, failed, unknown_device, unsupported_command (nothing similar is substituted). Unlocking, opening a " +
			"garage door or gate, a valve, a siren, lock codes: the user confirms, seeing each. One device: hubitat_send_command. " +
			"At most 100.",
		Confirm: &toolkit.Confirm[sendCommandsArgs]{
			When: "any effect hubitat_send_command confirms (unlock, open a garage door or gate, open a valve, siren, lock codes), all listed",
			Check: func(ctx context.Context, _ *toolkit.Call, a sendCommandsArgs) (toolkit.Ask, error) {
				return d.batchAsk(ctx, a)
			}},
		Summary: func(a sendCommandsArgs) string {
			parts := make([]string, len(a.Commands))
			for i, c := range a.Commands {
				parts[i] = fmt.Sprintf("%s×%d", c.Command, len(c.DeviceIDs))
			}
			return strings.Join(parts, " ")
		},
		Handler: func(ctx context.Context, _ *toolkit.Call, a sendCommandsArgs) (sendCommandsResult, error) {
			if err := checkBatch(a); err != nil {
				return sendCommandsResult{}, err
			}
			out := sendCommandsResult{Outcomes: []commandOutcome{}}
			for _, c := range a.Commands {
				wire := wireParams(c.Parameters)
				for _, id := range c.DeviceIDs {
					o := d.sendOne(ctx, id, c.Command, wire)
					if o.Outcome == outcomeSent {
						out.Sent++
					} else {
						out.NotSent++
					}
					out.Outcomes = append(out.Outcomes, o)
				}
			}
			return out, nil
		},
	})
}

// checkBatch refuses what could never be sent, before the user is asked about any of it.
func checkBatch(a sendCommandsArgs) error {
	n := 0
	for i, c := range a.Commands {
		n += len(c.DeviceIDs)
		for j, p := range c.Parameters {
			if strings.Contains(p, ",") {
				return toolkit.InvalidArg(fmt.Sprintf("commands[%d].parameters[%d]", i, j), "must not contain a comma (Maker API would split it into two arguments)", `["50"]`)
			}
		}
	}
	if n > maxBatchEffects {
		return toolkit.InvalidArg("commands", fmt.Sprintf("has %d device commands; at most %d a call", n, maxBatchEffects), `[{"deviceIds": ["1", "2"], "command": "off"}]`)
	}
	return nil
}

func wireParams(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = paramString(upstreamParam(p))
	}
	return out
}

// batchDevice reads a device with its command list (the hub's, when the cache has none).
func (d Deps) batchDevice(ctx context.Context, id string) (hubitat.Device, error) {
	dev, err := d.Hub.Device(ctx, id)
	if err == nil && !dev.Detailed {
		dev, err = d.Hub.FetchDevice(ctx, id)
	}
	return dev, err
}

// batchAsk lists every sensitive effect of the batch in one question; the digest binds the
// user's yes to exactly those effects.
func (d Deps) batchAsk(ctx context.Context, a sendCommandsArgs) (toolkit.Ask, error) {
	if err := checkBatch(a); err != nil {
		return toolkit.Ask{}, err
	}
	var hits []string
	var effects []string
	var all []toolkit.Ask
	for _, c := range a.Commands {
		for _, id := range c.DeviceIDs {
			dev, err := d.batchDevice(ctx, id)
			if err != nil {
				continue // it will be reported as unknown and not sent
			}
			ask := commandAsk(dev, c.Command)
			if len(ask.Classes) == 0 {
				continue
			}
			all = append(all, ask)
			effects = append(effects, fmt.Sprintf("%q on %s (%s)", c.Command, dev.ID, dev.DisplayName()))
			hits = append(hits, dev.ID+":"+c.Command)
		}
	}
	if len(all) == 0 {
		return toolkit.Ask{}, nil
	}
	out := toolkit.Ask{Question: fmt.Sprintf("Run on Hubitat devices: %s?", strings.Join(effects, ", ")), Digest: strings.Join(hits, ";")}
	for _, x := range all {
		for _, c := range x.Classes {
			if !containsString(out.Classes, c) {
				out.Classes = append(out.Classes, c)
			}
		}
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d Deps) sendOne(ctx context.Context, id, command string, params []string) commandOutcome {
	o := commandOutcome{DeviceID: id, Command: command}
	dev, err := d.batchDevice(ctx, id)
	if errors.Is(err, hubitat.ErrDeviceNotFound) {
		o.Outcome, o.Error = outcomeUnknownDevice, "not a device hamcp may use (hubitat_list_devices lists them)"
		return o
	}
	if err != nil {
		o.Outcome, o.Error = outcomeFailed, "could not read the device: "+toolkit.AsError(hubError(err, false, "")).Message
		return o
	}
	o.Device = dev.DisplayName()
	if !dev.HasCommand(command) {
		o.Outcome, o.Error = outcomeUnsupported, "it supports: "+strings.Join(commandNames(dev), ", ")
		return o
	}
	if err := d.Hub.SendCommand(ctx, dev.ID, command, params...); err != nil {
		o.Outcome, o.Error = outcomeFailed, toolkit.AsError(hubError(err, true, "")).Message
		return o
	}
	o.Outcome = outcomeSent
	return o
}
