package conformance

// The MCP 2026-07-28 fixtures of conformance 0.2.x: the multi round-trip (SEP-2322) tools and prompt
// of the input-required-result-* scenarios, the SEP-2575 diagnostic tools of server-stateless, and the
// x-mcp-header tool of http-custom-header-server-validation. They are plain go-sdk handlers, not
// toolkit tools, because the suite checks protocol-level behaviour the toolkit deliberately hides from
// toolsets: raw inputRequests keyed as the suite names them, JSON-RPC errors (-32602 for a tampered
// requestState, -32021 for a missing client capability), and the client's per-request capabilities.
// hamcp's own tools ask the user through toolkit/mrtr.go instead.

//lint:file-ignore SA1019 the conformance suite exercises sampling, roots and logging, deprecated by SEP-2577 but still in the protocol.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stateKey signs the fixtures' requestState, so a tampered one is refused as SEP-2322 requires.
var stateKey = func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return k
}()

func stateMAC(s string) string {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}

// seal returns s with its MAC; unseal returns s when the MAC holds.
func seal(s string) string { return s + "~" + stateMAC(s) }

func unseal(state string) (string, bool) {
	s, mac, ok := strings.Cut(state, "~")
	return s, ok && hmac.Equal([]byte(mac), []byte(stateMAC(s)))
}

var errTampered = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: it fails its integrity check; call again without it"}

func stringSchema(field string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{field: {Type: "string"}}, Required: []string{field}}
}

func askName() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: stringSchema("name")}
}

func askConfirm() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, Required: []string{"ok"}}}
}

func askSampling(prompt string) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}, MaxTokens: 100}
}

// accepted is the content of an accepted elicitation answer under key, or nil.
func accepted(r mcp.InputResponseMap, key string) map[string]any {
	if e, ok := r[key].(*mcp.ElicitResult); ok && e != nil && e.Action == "accept" {
		return e.Content
	}
	return nil
}

func sampled(r mcp.InputResponseMap, key string) (string, bool) {
	res, ok := r[key].(*mcp.CreateMessageWithToolsResult)
	if !ok || res == nil {
		return "", false
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, true
		}
	}
	return "(non-text response)", true
}

func done(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func need(state string, reqs mcp.InputRequestMap) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

type rawTool struct {
	def *mcp.Tool
	h   mcp.ToolHandler
}

var noInput = json.RawMessage(`{"type":"object"}`)

func rawTools() []rawTool {
	tool := func(name, desc string, h mcp.ToolHandler) rawTool {
		return rawTool{&mcp.Tool{Name: name, Description: "Conformance fixture: " + desc, InputSchema: noInput}, h}
	}
	return []rawTool{
		tool("test_input_required_result_elicitation", "asks for the caller's name in an input_required result (SEP-2322).",
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if name, _ := accepted(req.Params.InputResponses, "user_name")["name"].(string); name != "" {
					return done("Hello, " + name + "!"), nil
				}
				return need("", mcp.InputRequestMap{"user_name": askName()}), nil
			}),
		tool("test_input_required_result_sampling", "asks the client's model a question in an input_required result.",
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if text, ok := sampled(req.Params.InputResponses, "capital_question"); ok {
					return done("Sampling response: " + text), nil
				}
				return need("", mcp.InputRequestMap{"capital_question": askSampling("What is the capital of France?")}), nil
			}),
		tool("test_input_required_result_list_roots", "asks for the client's roots in an input_required result.",
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if res, ok := req.Params.InputResponses["client_roots"].(*mcp.ListRootsResult); ok && res != nil {
					uris := make([]string, 0, len(res.Roots))
					for _, r := range res.Roots {
						uris = append(uris, r.URI)
					}
					return done(fmt.Sprintf("Client exposed %d root(s): %s", len(uris), strings.Join(uris, ", "))), nil
				}
				return need("", mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}), nil
			}),
		tool("test_input_required_result_request_state", "round-trips a signed requestState beside a confirmation.", confirmWithState("request_state")),
		tool("test_input_required_result_tampered_state", "refuses a retry whose requestState fails its integrity check.", confirmWithState("tampered_state")),
		tool("test_input_required_result_multiple_inputs", "asks for a name, a completion and the roots in one round.",
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				r := req.Params.InputResponses
				name, _ := accepted(r, "user_name")["name"].(string)
				greeting, sampledOK := sampled(r, "greeting")
				roots, rootsOK := r["client_roots"].(*mcp.ListRootsResult)
				if name != "" && sampledOK && rootsOK && roots != nil {
					return done(fmt.Sprintf("%s %s — %d root(s) visible", greeting, name, len(roots.Roots))), nil
				}
				return need(seal("multiple_inputs"), mcp.InputRequestMap{
					"user_name": askName(), "greeting": askSampling("Generate a greeting"), "client_roots": &mcp.ListRootsParams{},
				}), nil
			}),
		tool("test_input_required_result_multi_round", "two rounds of questions, its progress kept in a signed requestState.",
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if req.Params.RequestState == "" {
					return need(seal("round=1"), mcp.InputRequestMap{"step1": &mcp.ElicitParams{Message: "Step 1: What is your name?", RequestedSchema: stringSchema("name")}}), nil
				}
				state, ok := unseal(req.Params.RequestState)
				if !ok {
					return nil, errTampered
				}
				if state == "round=1" {
					name, _ := accepted(req.Params.InputResponses, "step1")["name"].(string)
					if name == "" {
						name = "unknown"
					}
					return need(seal("round=2;name="+name), mcp.InputRequestMap{"step2": &mcp.ElicitParams{
						Message: "Step 2: What is your favorite color?", RequestedSchema: stringSchema("color")}}), nil
				}
				color, _ := accepted(req.Params.InputResponses, "step2")["color"].(string)
				if color == "" {
					color = "unknown"
				}
				return done(fmt.Sprintf("Multi-round complete: %s likes %s", strings.TrimPrefix(state, "round=2;name="), color)), nil
			}),
		tool("test_input_required_result_capabilities", "asks only for the input kinds the request's client capabilities declare.",
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if len(req.Params.InputResponses) > 0 {
					return done("Capability-aware input requests fulfilled"), nil
				}
				caps := req.ClientCapabilities()
				reqs := mcp.InputRequestMap{}
				if caps != nil && caps.Elicitation != nil {
					reqs["user_name"] = askName()
				}
				if caps != nil && caps.Sampling != nil {
					reqs["greeting"] = askSampling("Generate a short greeting")
				}
				if caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged) {
					reqs["client_roots"] = &mcp.ListRootsParams{}
				}
				if len(reqs) == 0 {
					return done("No declared client capability supports an in-band input request"), nil
				}
				return need("", reqs), nil
			}),
		tool("test_missing_capability", "needs the sampling client capability; without it the call is refused with -32021 (SEP-2575).",
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if caps := req.ClientCapabilities(); caps != nil && caps.Sampling != nil {
					return done("Client declared the sampling capability; tool executed."), nil
				}
				data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
				return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "this tool needs the sampling client capability, which the request does not declare", Data: data}
			}),
		tool("test_streaming_elicitation", "answers on its response stream with nothing but its result (SEP-2575: no server-to-client requests).",
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return done("stream observed: result frames only, no top-level requests"), nil
			}),
		tool("test_logging_tool", "logs one message, which must reach the client only when the request asked for a log level.",
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "test_logging_tool executed"})
				return done("Log attempted; the SDK sends it only at the level the request's _meta asked for."), nil
			}),
		{&mcp.Tool{Name: "test_x_mcp_header", Description: "Conformance fixture: one argument mirrored into the Mcp-Param-Region header (SEP-2243).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"region":{"type":"string","description":"mirrored into Mcp-Param-Region","x-mcp-header":"Region"},` +
				`"level":{"type":"integer","description":"not mirrored"}}}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct {
					Region string `json:"region"`
				}
				_ = json.Unmarshal(req.Params.Arguments, &in)
				return done("region=" + in.Region), nil
			}},
	}
}

// confirmWithState asks for a confirmation with a signed requestState and completes only when a retry
// brings both the accepted answer and the state unaltered.
func confirmWithState(state string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if s := req.Params.RequestState; s != "" {
			if got, ok := unseal(s); !ok || got != state {
				return nil, errTampered
			}
			if accepted(req.Params.InputResponses, "confirm") != nil {
				return done("state-ok: requestState received and confirmation accepted"), nil
			}
		}
		return need(seal(state), mcp.InputRequestMap{"confirm": askConfirm()}), nil
	}
}

// inputRequiredPrompt is the prompts/get fixture of SEP-2322: it asks for context first.
var inputRequiredPrompt = prompt{&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Conformance fixture: asks for context in an input_required result (SEP-2322)"},
	func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if c := accepted(req.Params.InputResponses, "user_context"); c != nil {
			ctx, _ := c["context"].(string)
			return messages("A prompt with elicited context", user(&mcp.TextContent{Text: "Context: " + ctx}))
		}
		return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": &mcp.ElicitParams{
			Message: "Please provide context for the prompt", RequestedSchema: stringSchema("context")}}}, nil
	}}
