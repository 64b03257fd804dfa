package hubitat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hamcp/hamcp/src/internal/httpx"
)

// ErrUnavailable means the hub could not be reached: connection refused, a timeout, or the live
// event link being down (a reboot), in which case calls fail at once instead of waiting.
var ErrUnavailable = errors.New("hubitat hub is not reachable")

// ErrUnauthorized means the hub refused the Maker API token or the Hub Security login.
var ErrUnauthorized = errors.New("hubitat hub refused the credentials")

// ErrDeviceNotFound is the answer for an unknown device and for one Maker API or hubitat_devices
// does not authorise: the two are indistinguishable on purpose, as in the hub's own app.
var ErrDeviceNotFound = errors.New("device not found")

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("hubitat client is closed")

// ErrNoLogin is returned by admin calls when the hub wants a Hub Security login and none is set.
var ErrNoLogin = errors.New("hubitat hub security is on: set hubitat_username and hubitat_password")

// APIError is an error answer from the hub: its status, the route (Path, without host or query)
// and its message (JSON or text). It matches ErrUnauthorized for 401/403 and ErrUnavailable for a
// gateway failure.
type APIError = httpx.APIError[service]

// service is the hub as its APIErrors name it.
type service struct{}

func (service) Name() string        { return "hubitat" }
func (service) Unauthorized() error { return ErrUnauthorized }
func (service) Unavailable() error  { return ErrUnavailable }

// scrubbed hides a secret in an error's text while keeping errors.Is/As working.
type scrubbed struct {
	err     error
	secrets []string
}

func (s *scrubbed) Error() string { return scrubText(s.err.Error(), s.secrets...) }
func (s *scrubbed) Unwrap() error { return s.err }

func scrubText(text string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			text = strings.ReplaceAll(text, sec, "[redacted]")
		}
	}
	return text
}

// scrub wraps err so that neither the token nor the password can appear in its text, whatever
// a lower layer (a url.Error quoting the request URL) put there.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	var s *scrubbed
	if errors.As(err, &s) {
		return err
	}
	return &scrubbed{err: err, secrets: []string{c.token, c.password, c.ruleToken}}
}

func unavailable(where string, cause error) error {
	return fmt.Errorf("%w (%s): %w", ErrUnavailable, where, httpx.Cause(cause))
}

func clean(s string) string { return httpx.CleanLine(s, 200) }
