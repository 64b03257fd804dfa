package fsguard

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// Sentinel errors, for errors.Is. Not-found and already-exists errors wrap fs.ErrNotExist and fs.ErrExist.
var (
	// ErrOutsideRoots: the path is malformed, names no configured root, or resolves outside its root.
	ErrOutsideRoots = errors.New("path is outside the allowed roots")
	// ErrReadOnly: the path is in a read-only root or a protected system directory.
	ErrReadOnly = errors.New("path is read-only")
	// ErrHardLink: the file has more than one hard link, so its content is never read or copied.
	ErrHardLink = errors.New("file has more than one hard link")
	// ErrUnsupportedType: devices, FIFOs and sockets are never opened or copied.
	ErrUnsupportedType = errors.New("not a regular file, directory or symlink")
)

// PathError reports a refused or failed operation on a user path. Its message names the path, what went
// wrong, and — when the path itself was the problem — which roots are allowed.
type PathError struct {
	Op     string // "resolve", "read", "write", …
	Path   string // the path as the caller gave it
	Reason string // what went wrong and what to do
	Roots  []string
	Err    error // a sentinel above, or the underlying error
}

func (e *PathError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q: %s", e.Op, e.Path, e.Reason)
	if len(e.Roots) > 0 {
		fmt.Fprintf(&b, " (allowed roots: %s)", strings.Join(e.Roots, ", "))
	}
	return b.String()
}

func (e *PathError) Unwrap() error { return e.Err }

// opError turns an error from an os.Root call into a PathError that says what happened in user terms.
func (f *FS) opError(op, path string, err error) error {
	return f.contextError(op, path, "", err)
}

// contextError is opError with a note on what was being done and what it means for the user's data.
func (f *FS) contextError(op, path, context string, err error) error {
	if pe, ok := err.(*PathError); ok && context == "" {
		return pe
	}
	reason, escape := describe(err)
	if context != "" {
		reason = context + ": " + reason
	}
	pe := &PathError{Op: op, Path: path, Reason: reason, Err: err}
	if escape {
		pe.Roots = f.aliases
		pe.Err = fmt.Errorf("%w: %w", ErrOutsideRoots, err)
	}
	return pe
}

// describe says in user terms what an error from the file system means, and whether it was an escape.
func describe(err error) (reason string, escape bool) {
	var pe *PathError
	switch {
	case errors.As(err, &pe):
		return pe.Reason, errors.Is(err, ErrOutsideRoots)
	case isEscape(err):
		return "resolves outside its root (a symlink or .. leading out, or an absolute symlink); such links are never followed", true
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory", false
	case errors.Is(err, fs.ErrExist):
		return "already exists", false
	case errors.Is(err, syscall.ELOOP):
		return "symlink loop or chain too long", false
	case errors.Is(err, syscall.ENOTDIR):
		return "a parent of this path is not a directory", false
	case errors.Is(err, syscall.ENOSPC):
		return "no space left on the device", false
	case errors.Is(err, fs.ErrPermission):
		return "permission denied by the operating system", false
	}
	return err.Error(), false
}

// isEscape recognises os.Root's refusal to leave the root. The os package does not export this error, so
// the message is matched; it only shapes the text shown to the user, never the decision to refuse.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
