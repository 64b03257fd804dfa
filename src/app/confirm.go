package app

import (
	"regexp"

	"github.com/hamcp/hamcp/src/sensitive"
)

// confirmTrusted reads the confirm_trusted option: the confirmation classes for which the model's
// confirm=true stands in for the user.
func confirmTrusted(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		c, err := sensitive.ParseClass(n)
		if err != nil {
			return nil, err
		}
		out = append(out, string(c))
	}
	return out, nil
}

// entityIDShape is what the sensitive_entities option accepts: Home Assistant's entity id form.
var entityIDShape = regexp.MustCompile(`^[a-z0-9_]+\.[a-z0-9_]+$`)
