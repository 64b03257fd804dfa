package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Backend is what a client says about the service it talks to; Do performs its requests.
// Each client keeps its own error types: the hooks turn failures into them.
type Backend struct {
	Name string // prefixes the errors Do words itself, e.g. "homeassistant"
	Base string // scheme://host[:port][/prefix], no trailing slash
	HTTP *http.Client
	// Timeout bounds a call whose context has no deadline; 0 leaves it unbounded.
	Timeout time.Duration
	// MaxErrorBody is how much of a non-2xx body Status sees.
	MaxErrorBody int64
	// Status turns a non-2xx answer (its status and the start of its body) into an error.
	Status func(status int, body []byte) error
	// Unreachable turns a failure of the connection (no answer, or a body cut short) into an
	// error; cancelled says the caller gave up rather than the backend failing or timing out.
	Unreachable func(err error, cancelled bool) error
}

// Request is one call to a Backend.
type Request struct {
	Method string
	Path   string // below Base, starting with "/"
	Query  url.Values
	Body   []byte // sent as application/json; nil sends no body
	Token  string // sent as a bearer token; never logged
	Accept string
}

// Do sends r and hands a 2xx answer to read (nil skips the body). A read error stays as read
// returned it unless the connection failed meanwhile, which Unreachable words.
func (b Backend) Do(ctx context.Context, r Request, read func(*http.Response) error) error {
	if _, ok := ctx.Deadline(); !ok && b.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.Timeout)
		defer cancel()
	}
	target := b.Base + r.Path
	if len(r.Query) > 0 {
		target += "?" + r.Query.Encode()
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target, body)
	if err != nil {
		return fmt.Errorf("%s: building %s %s: %w", b.Name, r.Method, r.Path, err)
	}
	req.Header.Set("Authorization", "Bearer "+r.Token)
	req.Header.Set("Accept", r.Accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.HTTP.Do(req)
	if err != nil {
		return b.unreachable(ctx, err)
	}
	defer DrainClose(resp)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, b.MaxErrorBody))
		return b.Status(resp.StatusCode, data)
	}
	if read == nil {
		return nil
	}
	watched := &watchedBody{ReadCloser: resp.Body}
	resp.Body = watched
	if err := read(resp); err != nil {
		switch {
		case watched.err != nil:
			// The body itself failed (connection reset, cut short, deadline): the cause is
			// the transport's, whatever read made of it.
			return b.unreachable(ctx, watched.err)
		case ctx.Err() != nil || isNetError(err):
			return b.unreachable(ctx, err)
		}
		return err
	}
	return nil
}

func (b Backend) unreachable(ctx context.Context, err error) error {
	return b.Unreachable(err, errors.Is(ctx.Err(), context.Canceled))
}

// watchedBody remembers the first error of the body other than its end, so that a failed
// connection is told apart from an answer that does not parse.
type watchedBody struct {
	io.ReadCloser
	err error
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

func isNetError(err error) bool {
	var nerr net.Error
	return errors.As(err, &nerr)
}

// ErrTooLarge is matched by the error of a body over its bound.
var ErrTooLarge = errors.New("body too large")

// TooLargeError is a body over the bound its reader set.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string        { return fmt.Sprintf("body larger than %d bytes", e.Limit) }
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Limit reads at most limit bytes of r and fails with a *TooLargeError when r has more, where
// io.LimitReader would end silently and leave a truncated answer to parse.
func Limit(r io.Reader, limit int64) io.Reader { return &limited{r: r, left: limit, limit: limit} }

type limited struct {
	r           io.Reader
	left, limit int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{Limit: l.limit}
	}
	// One byte more than allowed tells "exactly at the limit" from "over it".
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		n = int(l.left)
		l.left = -1
		return n, &TooLargeError{Limit: l.limit}
	}
	l.left -= int64(n)
	return n, err
}

// ReadAll reads a whole body of at most limit bytes.
func ReadAll(r io.Reader, limit int64) ([]byte, error) { return io.ReadAll(Limit(r, limit)) }
