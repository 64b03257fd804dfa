package toolkit

// MCP 2026-07-28 has no server-to-client requests: a server that needs the user's answer returns an
// input_required result (SEP-2322, "multi round-trip requests") holding the question and an opaque
// requestState, and the client retries the same call with the user's answer. Call.Confirm is the one
// place hamcp asks the user (permission grants through the Gate, per-action confirmations), so it is the
// one place that switches: on 2026-07-28 it looks for a verified answer on this round and otherwise
// records the question; run then answers with the input_required result instead of the tool's output.
//
// 2025 sessions keep Session.Elicit: the go-sdk's own bridge (serverMultiRoundTripMiddleware) re-invokes
// a handler only once, so a call needing two answers (a permission, then a confirmation) would hand a 2025
// client an input_required result it cannot read; and a blocking prompt lets the permission manager hold
// concurrent calls of one session on the same question.
//
// The requestState is hamcp's word, not the client's: an HMAC (a per-process key) over the round's nonce,
// its expiry, the question it asked, the answers already verified, and — only inside the MAC — the tool,
// the exact arguments and the credential scope (grant key and token user). A client cannot make one,
// change the answers in it, or carry it to another call, tool, argument set or token; each nonce is spent
// by its first use, so a "yes" cannot be replayed to run a confirmed action twice. What it cannot prove
// is that the answer came from the user's eyes rather than from the model: as with form-mode elicitation
// in a session, the client attests it (docs/security.md).

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version20260728 is the first protocol version without server-to-client requests.
const version20260728 = "2026-07-28"

// inputKey names hamcp's one question per round in inputRequests/inputResponses.
const inputKey = "hamcp_confirm"

// stateTTL bounds how long the user may take to answer before the client retries (like a pending request).
const stateTTL = 10 * time.Minute

// maxStateLen refuses absurd requestState values before any decoding.
const maxStateLen = 4096

// stateKey signs every requestState of this process; a restart invalidates open questions, which are
// then simply asked again.
var stateKey = func() [32]byte {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		panic("toolkit: no randomness for the requestState key: " + err.Error())
	}
	return k
}()

// roundState is the signed payload of a requestState. The call it belongs to is not in it: it is bound
// by the MAC alone, so the state reveals nothing of the arguments or the credential.
type roundState struct {
	ID      string          `json:"id"`  // this round's nonce, spent on first use
	Exp     int64           `json:"exp"` // unix seconds
	Ask     string          `json:"ask"` // questionID of the question this round asked
	Answers map[string]bool `json:"ans,omitempty"`
}

// round is what one call knows about the multi round-trip exchange it belongs to.
type round struct {
	bind    []byte          // tool, arguments and credential scope: what the MAC binds
	answers map[string]bool // verified answers, by questionID
	ask     *mcp.ElicitParams
	askID   string
}

// errInputRequired is what Confirm returns on 2026-07-28 when the user has not answered yet. The callers
// (the permission manager through the Gate, confirm.go) stop and let run answer input_required; it
// satisfies InputRequired so the permission manager neither falls back to an approval request nor
// records a decision.
type errInputRequired struct{}

func (errInputRequired) Error() string {
	return "the question goes back to the client in an input_required result (MCP 2026-07-28)"
}

// InputRequired marks the error for packages that must not import the toolkit (permission).
func (errInputRequired) InputRequired() bool { return true }

// asksOnRetry reports whether err means the question was deferred to the client's retry.
func asksOnRetry(err error) bool {
	var e errInputRequired
	return errors.As(err, &e)
}

// modern reports whether the call is on MCP 2026-07-28 or later, where only input_required can ask.
func (c *Call) modern() bool {
	if c.req == nil || c.req.Session == nil {
		return false
	}
	p := c.req.Session.InitializeParams()
	return p != nil && p.ProtocolVersion >= version20260728
}

// beginRound reads the client's retry (requestState and inputResponses) before anything of args is
// consumed. A state that fails its MAC or belongs to another call is refused; one that expired or was
// already used is ignored, so the question is simply asked again.
func (c *Call) beginRound(args map[string]any) error {
	if !c.modern() {
		return nil
	}
	c.rt = &round{bind: c.binding(args), answers: map[string]bool{}}
	p := c.req.Params
	if p == nil || p.RequestState == "" {
		return nil
	}
	st, err := openState(p.RequestState, c.rt.bind)
	if err != nil {
		return &Error{Code: "invalid_request_state", Field: "requestState", Message: err.Error(),
			Hint: "repeat the call without requestState and inputResponses; hamcp asks the user again"}
	}
	if time.Now().Unix() >= st.Exp || !spent.use(st.ID, time.Unix(st.Exp, 0)) {
		return nil // expired or replayed: ask afresh
	}
	for k, v := range st.Answers {
		c.rt.answers[k] = v
	}
	if resp, ok := p.InputResponses[inputKey].(*mcp.ElicitResult); ok {
		allow, _ := resp.Content["allow"].(bool)
		c.rt.answers[st.Ask] = resp.Action == "accept" && allow
	}
	return nil
}

// binding names the exact call: tool, arguments in canonical JSON (sorted keys), and the credential
// scope. Each part is length-prefixed so no two calls share a binding.
func (c *Call) binding(args map[string]any) []byte {
	a, _ := json.Marshal(args)
	parts := []string{c.Tool, string(a), c.SessionKey, c.Principal().Credential()}
	var b []byte
	for _, s := range parts {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

// askOnRetry answers Confirm on 2026-07-28: the verified answer to this question, or errInputRequired
// after recording the question for run's input_required result.
func (c *Call) askOnRetry(message, checkbox, bind string) (bool, error) {
	id := questionID(message, checkbox)
	if bind != "" {
		id = questionID(message, checkbox+"\x00"+bind)
	}
	if ans, ok := c.rt.answers[id]; ok {
		return ans, nil
	}
	if c.rt.ask == nil { // one question per round; a second one waits for the next
		c.rt.ask, c.rt.askID = confirmParams(message, checkbox), id
	}
	return false, errInputRequired{}
}

// inputRequired is the result of a round that asked the user something, or nil.
func (c *Call) inputRequired() *mcp.CallToolResult {
	if c.rt == nil || c.rt.ask == nil {
		return nil
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	st := roundState{ID: hex.EncodeToString(nonce[:]), Exp: time.Now().Add(stateTTL).Unix(), Ask: c.rt.askID, Answers: c.rt.answers}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{inputKey: c.rt.ask},
		RequestState:  sealState(st, c.rt.bind),
	}
}

// questionID names a question by its text, so an answer is used only for the question it answered.
func questionID(message, checkbox string) string {
	h := sha256.New()
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(message))))
	h.Write([]byte(message))
	h.Write([]byte(checkbox))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// confirmParams is the one form hamcp shows, in a session or in an input_required result: a single
// required checkbox.
func confirmParams(message, checkbox string) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Message: message,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"allow": map[string]any{"type": "boolean", "title": checkbox, "default": false},
			},
			"required": []string{"allow"},
		},
	}
}

func stateMAC(payload, bind []byte) []byte {
	m := hmac.New(sha256.New, stateKey[:])
	m.Write([]byte("hamcp mrtr v1\x00"))
	m.Write(binary.BigEndian.AppendUint32(nil, uint32(len(bind))))
	m.Write(bind)
	m.Write(payload)
	return m.Sum(nil)
}

func sealState(st roundState, bind []byte) string {
	payload, _ := json.Marshal(st)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(stateMAC(payload, bind))
}

var errBadState = errors.New("requestState was not issued by hamcp for this exact call (tool, arguments and credential)")

// openState verifies a requestState against the call's binding and returns its payload.
func openState(s string, bind []byte) (roundState, error) {
	var st roundState
	if len(s) > maxStateLen {
		return st, errBadState
	}
	p64, m64, ok := strings.Cut(s, ".")
	if !ok {
		return st, errBadState
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p64)
	mac, err2 := enc.DecodeString(m64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, stateMAC(payload, bind)) {
		return st, errBadState
	}
	if err := json.Unmarshal(payload, &st); err != nil || st.ID == "" || st.Ask == "" {
		return roundState{}, errBadState
	}
	return st, nil
}

// spentNonces remembers the nonces of used requestStates until they expire anyway.
type spentNonces struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

var spent = &spentNonces{seen: map[string]time.Time{}}

// use marks id used and reports whether it was fresh.
func (s *spentNonces) use(id string, exp time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.seen[id]; dup {
		return false
	}
	if len(s.seen) >= 1024 {
		now := time.Now()
		for k, e := range s.seen {
			if now.After(e) {
				delete(s.seen, k)
			}
		}
	}
	s.seen[id] = exp
	return true
}
