package app

import "github.com/hamcp/hamcp/src/sensitive"

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
