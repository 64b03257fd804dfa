// Package tplguard reads a Jinja template before Home Assistant renders it and refuses the shapes
// whose work the model could make unbounded. ha_render_template hands a template the model wrote to
// Home Assistant, which renders it on its event loop (the REST /api/template view calls Template.async_render
// directly, with no timeout; only the WebSocket render_template runs a separate timed render, and
// only when the client asks for one). While it renders, the home stops: no automation runs, no
// device answers. What HA bounds on its own, in its ImmutableSandboxedEnvironment:
//   - range() yields at most 100,000 items (Jinja's MAX_RANGE); more raises OverflowError,
//   - the output is cut at 256 KiB (MAX_TEMPLATE_OUTPUT), but only after the whole render,
//   - recursion stops at Python's recursion limit (about 1,000 frames),
//   - lists and dicts cannot be changed in place (no .append), namespace() attributes can.
//
// What it does not bound: time. Nested loops multiply (three range(100000) loops are 10^15
// steps), '*' repeats strings and lists ('x' * 10**9 builds a gigabyte before the output cap is
// looked at), '**' on integers grows without limit (Jinja even folds 10**10**9 at compile time,
// since the sandbox intercepts no operators), format widths pad ('%0999999999d'), a macro that calls
// itself twice does 2^1000 work before the recursion limit, and a namespace attribute that doubles
// in a loop grows exponentially. So before sending, the guard reads the template and refuses the
// shapes whose work the model could make unbounded, saying what to change.
//
// Why a lexer and parser of our own rather than gonja's (which the simulator uses): gonja's grammar
// is not Jinja's (it refuses some of HA's templates and accepts others), its recursive parser
// panics on some inputs, and it would tie the production client to the test simulator's setup of
// it. Jinja's expression grammar is small; this one reads it in one pass with bounded recursion,
// so the guard's work grows linearly with the template. A template it cannot read is refused: it
// would be refused by HA as well, or is a form the guard cannot vouch for.
package tplguard

import "fmt"

const (
	tplMaxBytes      = 64 << 10 // whole template
	tplMaxLoopDepth  = 3        // loops inside loops (macros called in a loop count as their loops)
	tplMaxIterations = 10000    // product of the constant range() lengths along one loop nest
	tplMaxNesting    = 32       // brackets, unary operators and conditional chains inside one another
	tplMaxRepeat     = 10000    // '*' count of a string or list whose length is known
	tplMaxRepeatAny  = 100      // '*' count of a value whose length is not known
	tplMaxBuilt      = 64 << 10 // length of a string or list built by '*' from known parts
	tplMaxExponent   = 64       // '**' exponent on an integer
	tplMaxWidth      = 10000    // padding widths: format specs, center, ljust, indent, ...
)

// Error is a refusal: Msg says what to change. Syntax is set when the template cannot be read,
// rather than reads as too much work.
type Error struct {
	Msg    string
	Syntax bool
}

func (e *Error) Error() string { return e.Msg }

// Check returns nil when the template's work is bounded, else an *Error naming what to change.
func Check(src string) error {
	if len(src) > tplMaxBytes {
		return &Error{Msg: fmt.Sprintf("is %d bytes; keep it under %d KiB", len(src), tplMaxBytes>>10)}
	}
	g := &tplGuard{src: src, vars: map[string]tplInfo{}, macros: map[string]bool{}}
	return g.run()
}

// guardError carries a refusal up through the parser.
type guardError struct {
	msg    string
	syntax bool // the template cannot be read, rather than does too much
}

func (e *guardError) Error() string { return e.msg }
