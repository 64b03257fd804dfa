package toolkit

// Condition is a permission category only some calls of a tool need, decided from the call's decoded
// arguments before the handler runs: ha_manage_addons needs command to install an add-on but nothing to
// list them; ha_call_service needs command for shell_command.* but not for light.turn_on. Deciding it
// here, not in the handler, means no handler can forget to ask, and a `confirm` argument (the model's
// word) can never stand in for the grant (the user's word).
type Condition[In any] struct {
	Category Category
	// When says which calls need it, in words for DOCS.md's tool → grant table,
	// e.g. "action install, uninstall, start, stop, restart or update".
	When string
	// Applies decides it for one call.
	Applies func(in In) bool
}

// needed lists the categories one call must be granted, the tool's own first.
func (c *Condition[In]) needed(always Category, in In) []Category {
	var out []Category
	if always != "" {
		out = append(out, always)
	}
	if c != nil && c.Applies(in) && c.Category != always {
		out = append(out, c.Category)
	}
	return out
}

// Grant is one permission a tool's calls may need.
type Grant struct {
	Category Category
	When     string // "" = every call
}

func grantsOf[In any](always Category, cond *Condition[In]) []Grant {
	var out []Grant
	if always != "" {
		out = append(out, Grant{Category: always})
	}
	if cond != nil {
		if cond.Category == "" || cond.When == "" || cond.Applies == nil {
			panic("toolkit: a Condition needs a category, a When for the documentation and Applies")
		}
		out = append(out, Grant{Category: cond.Category, When: cond.When})
	}
	return out
}

// Grants lists the permissions the tool's calls may need (none for an open tool).
func (t *Tool) Grants() []Grant { return t.grants }
