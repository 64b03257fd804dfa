package hatools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/toolkit"
)

// prompt is one reusable conversation starter; toolsets are those of the tools its text names.
type prompt struct {
	name, title, description string
	toolsets                 []string
	args                     []*mcp.PromptArgument
	text                     func(args map[string]string) string
}

var prompts = []prompt{
	{
		name: "create_automation", title: "Create an automation",
		toolsets:    []string{SetStates, SetAutomations},
		description: "Design a Home Assistant automation from a plain-language goal, check the entities it needs, and create it.",
		args:        []*mcp.PromptArgument{{Name: "goal", Description: "what the automation should do, e.g. 'turn on the porch light at sunset'", Required: true}},
		text: func(a map[string]string) string {
			return fmt.Sprintf("I want an automation that does this: %s\n\n"+
				"1. Find the entities involved with ha_get_states (use search/domain filters) and read their details.\n"+
				"2. Propose the automation (triggers, conditions, actions) in YAML and explain it in two sentences.\n"+
				"3. Wait for my OK before creating it.", a["goal"])
		},
	},
	{
		name: "troubleshoot_entity", title: "Troubleshoot an entity",
		toolsets:    []string{SetStates},
		description: "Find out why an entity misbehaves: its state, attributes, recent history and what changed it.",
		args:        []*mcp.PromptArgument{{Name: "entity_id", Description: "the entity, e.g. light.kitchen", Required: true}},
		text: func(a map[string]string) string {
			return fmt.Sprintf("Something is wrong with %s. Read its details (ha_get_entity_details), its history over the last 24 hours (ha_get_history), "+
				"and look for unavailable periods, unexpected changes and what triggered them. Summarise what you found and suggest fixes; change nothing without asking.", a["entity_id"])
		},
	},
	{
		name: "morning_routine", title: "Morning routine",
		toolsets:    []string{SetStates},
		description: "Review the home in the morning: overnight events, open doors and windows, climate and today's calendar.",
		args:        []*mcp.PromptArgument{{Name: "wake_time", Description: "when the day starts, e.g. 07:00"}},
		text: func(a map[string]string) string {
			when := a["wake_time"]
			if when == "" {
				when = "now"
			}
			return "Good morning. Starting " + when + ": tell me briefly what happened overnight (doors, motion, alarms), which doors, windows and locks are open or unlocked, " +
				"indoor temperatures against the climate targets, and what is on the calendars today. Then suggest a few things to switch on or adjust, and wait for my OK."
		},
	},
	{
		name: "energy_saving_review", title: "Energy saving review",
		toolsets:    []string{SetStates},
		description: "Look for energy waste: lights and devices left on, power-hungry sensors, heating and cooling settings.",
		args: []*mcp.PromptArgument{
			{Name: "days", Description: "how many days of history to consider (default 7)"},
			{Name: "area", Description: "review only this area (an area id such as living_room; default the whole home)"},
		},
		text: func(a map[string]string) string {
			days := a["days"]
			if days == "" {
				days = "7"
			}
			where := ""
			if a["area"] != "" {
				where = " in the area " + a["area"] + " (filter by area)"
			}
			return "Review the last " + days + " days" + where + " for energy waste: lights and switches on in empty rooms, the biggest power and energy sensors, " +
				"climate set points and schedules. Use ha_get_states with domain and device_class filters and ha_get_history for the top consumers. " +
				"List concrete savings with an estimate, most valuable first."
		},
	},
	{
		name: "automation_health_check", title: "Automation health check",
		toolsets:    []string{SetStates},
		description: "Check every automation: which are off, which never or too often trigger, which reference missing entities.",
		text: func(map[string]string) string {
			return "Check the health of my automations: list them with ha_get_states (domain automation), note any that are off or unavailable, " +
				"look at last_triggered, and flag ones that reference entities that do not exist or are unavailable. Report problems with a suggested fix each; change nothing without asking."
		},
	},
}

// Prompts are the Home Assistant prompts.
func Prompts() []*toolkit.Prompt {
	out := make([]*toolkit.Prompt, 0, len(prompts))
	for _, p := range prompts {
		out = append(out, &toolkit.Prompt{
			Toolsets: p.toolsets,
			Prompt:   &mcp.Prompt{Name: p.name, Title: p.title, Description: p.description, Arguments: p.args},
			Handler: func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				args := req.Params.Arguments
				for _, a := range p.args {
					if a.Required && args[a.Name] == "" {
						return nil, fmt.Errorf("prompt %s needs the argument %s (%s)", p.name, a.Name, a.Description)
					}
				}
				return &mcp.GetPromptResult{
					Description: p.description,
					Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: p.text(args)}}},
				}, nil
			},
		})
	}
	return out
}
