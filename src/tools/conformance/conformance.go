// Package conformance is the fixture toolset the official MCP conformance suite
// (@modelcontextprotocol/conformance) expects of a server under test: the test_* tools, the
// test:// resources and the test_* prompts of its "everything server" contract. Nothing of Home
// Assistant is in it; it exists so the suite can check hamcp's protocol handling (content
// types, logging, progress, sampling, elicitation, resources, prompts, completion) end to end.
// Only `hamcp demo --conformance` enables it.
package conformance

//lint:file-ignore SA1019 the conformance suite exercises sampling, roots and logging, deprecated by SEP-2577 but still in the protocol.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/completion"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Toolset is the toolset name of the fixture tools.
const Toolset = "conformance"

// The fixture resources' URIs, as the suite names them.
const (
	StaticTextURI   = "test://static-text"
	StaticBinaryURI = "test://static-binary"
	WatchedURI      = "test://watched-resource"
	TemplateURI     = "test://template/{id}/data"
)

// The suite's minimal media: a 1×1 red PNG and a silent WAV.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func mustDecode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

var (
	pngData = mustDecode(pngBase64)
	wavData = mustDecode(wavBase64)
)

// blocks lets a handler answer MCP content blocks (toolkit.Contents).
type blocks []mcp.Content

func (b blocks) MCPContent() []mcp.Content { return b }

type noArgs struct{}

// Fixtures are the toolset with its resources and prompts. The watched resource announces an
// update every WatchEvery while ctx lives.
type Fixtures struct {
	ctx        context.Context
	WatchEvery time.Duration
	mu         sync.Mutex
	watching   map[*mcp.Server]bool
}

// New returns the fixtures; ctx ends the watched resource's updates.
func New(ctx context.Context) *Fixtures {
	return &Fixtures{ctx: ctx, WatchEvery: 3 * time.Second, watching: map[*mcp.Server]bool{}}
}

func define[In any](name, desc string, h func(ctx context.Context, c *toolkit.Call, in In) (blocks, error)) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[In, blocks]{
		Name: name, Toolset: Toolset, Description: desc, ReadOnly: true, Idempotent: true, Handler: h,
	})
}

// defineInteractive declares a fixture that talks to the client while it runs (log, progress,
// sampling, elicitation) or needs its answer on an event stream (SSE polling).
func defineInteractive[In any](name, desc string, h func(ctx context.Context, c *toolkit.Call, in In) (blocks, error)) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[In, blocks]{
		Name: name, Toolset: Toolset, Description: desc, ReadOnly: true, Idempotent: true, Handler: h,
	})
}

func text(s string) blocks { return blocks{&mcp.TextContent{Text: s}} }

// Tools returns the fixture tools.
func (f *Fixtures) Tools() []*toolkit.Tool {
	return []*toolkit.Tool{
		define("test_simple_text", "Conformance fixture: answers one text block.", func(context.Context, *toolkit.Call, noArgs) (blocks, error) {
			return text("This is a simple text response for testing."), nil
		}),
		define("test_image_content", "Conformance fixture: answers one PNG image block.", func(context.Context, *toolkit.Call, noArgs) (blocks, error) {
			return blocks{&mcp.ImageContent{Data: pngData, MIMEType: "image/png"}}, nil
		}),
		define("test_audio_content", "Conformance fixture: answers one WAV audio block.", func(context.Context, *toolkit.Call, noArgs) (blocks, error) {
			return blocks{&mcp.AudioContent{Data: wavData, MIMEType: "audio/wav"}}, nil
		}),
		define("test_embedded_resource", "Conformance fixture: answers one embedded text resource.", func(context.Context, *toolkit.Call, noArgs) (blocks, error) {
			return blocks{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource"}}}, nil
		}),
		define("test_multiple_content_types", "Conformance fixture: answers text, an image and an embedded resource.", func(context.Context, *toolkit.Call, noArgs) (blocks, error) {
			return blocks{
				&mcp.TextContent{Text: "This is text content"},
				&mcp.ImageContent{Data: pngData, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-in-multiple", MIMEType: "text/plain", Text: "This is an embedded resource"}},
			}, nil
		}),
		defineInteractive("test_tool_with_logging", "Conformance fixture: sends three info log messages while it runs.", func(ctx context.Context, c *toolkit.Call, _ noArgs) (blocks, error) {
			for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				c.Log(ctx, "info", msg)
				if err := pause(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			return text("Tool with logging executed successfully"), nil
		}),
		defineInteractive("test_tool_with_progress", "Conformance fixture: reports progress 0, 50 and 100 of 100.", func(ctx context.Context, c *toolkit.Call, _ noArgs) (blocks, error) {
			for _, p := range []float64{0, 50, 100} {
				c.Progress(ctx, p, 100, fmt.Sprintf("Completed step %.0f of 100", p))
				if err := pause(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			return text("progress reported"), nil
		}),
		define("test_error_handling", "Conformance fixture: always fails, as a tool error.", func(context.Context, *toolkit.Call, noArgs) (blocks, error) {
			return nil, &toolkit.Error{Code: "error", Message: "This tool intentionally returns an error for testing"}
		}),
		defineInteractive("test_sampling", "Conformance fixture: asks the client's model to complete the prompt (sampling).", f.sampling),
		defineInteractive("test_elicitation", "Conformance fixture: asks the user for a username (elicitation).", func(ctx context.Context, c *toolkit.Call, in struct {
			Message string `json:"message" jsonschema:"the message to show the user"`
		}) (blocks, error) {
			return elicit(ctx, c, in.Message, &jsonschema.Schema{
				Type:       "object",
				Properties: map[string]*jsonschema.Schema{"username": {Type: "string", Description: "Your preferred username"}},
				Required:   []string{"username"},
			})
		}),
		defineInteractive("test_elicitation_sep1034_defaults", "Conformance fixture: elicitation whose fields have defaults (SEP-1034).", func(ctx context.Context, c *toolkit.Call, _ noArgs) (blocks, error) {
			return elicit(ctx, c, "Test defaults for primitives", sep1034Schema)
		}),
		defineInteractive("test_elicitation_sep1330_enums", "Conformance fixture: elicitation with every enum form (SEP-1330).", func(ctx context.Context, c *toolkit.Call, _ noArgs) (blocks, error) {
			return elicit(ctx, c, "Test enum schemas", sep1330Schema)
		}),
		schema202012Tool(),
		defineInteractive("test_reconnection", "Conformance fixture for SSE polling (SEP-1699): answers after a short pause.", func(ctx context.Context, _ *toolkit.Call, _ noArgs) (blocks, error) {
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return nil, err
			}
			return text("Reconnection test completed successfully."), nil
		}),
	}
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *Fixtures) sampling(ctx context.Context, c *toolkit.Call, in struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}) (blocks, error) {
	ss := c.Session()
	if ss == nil {
		return nil, &toolkit.Error{Code: "unsupported", Message: "sampling needs a session (stdio or Streamable HTTP with initialize)"}
	}
	res, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, fmt.Errorf("sampling failed: %w", err)
	}
	reply := "(non-text response)"
	if tc, ok := res.Content.(*mcp.TextContent); ok {
		reply = tc.Text
	}
	return text("LLM response: " + reply), nil
}

func elicit(ctx context.Context, c *toolkit.Call, message string, schema any) (blocks, error) {
	ss := c.Session()
	if ss == nil {
		return nil, &toolkit.Error{Code: "unsupported", Message: "elicitation needs a session (stdio or Streamable HTTP with initialize)"}
	}
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return nil, fmt.Errorf("elicitation failed: %w", err)
	}
	content, _ := json.Marshal(res.Content)
	return text(fmt.Sprintf("Elicitation result: action=%s, content=%s", res.Action, content)), nil
}

var sep1034Schema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
		"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
		"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
	},
}

var sep1330Schema = func() map[string]any {
	titled := []map[string]any{
		{"const": "value1", "title": "First Option"},
		{"const": "value2", "title": "Second Option"},
		{"const": "value3", "title": "Third Option"},
	}
	untitled := []string{"option1", "option2", "option3"}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "enum": untitled},
			"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
			"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti":  map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"type": "string", "enum": untitled}},
			"titledMulti":    map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"type": "string", "anyOf": titled}},
		},
	}
}()

type address struct {
	Street string `json:"street,omitempty"`
	City   string `json:"city,omitempty"`
}

type contactArgs struct {
	Name          string   `json:"name,omitempty"`
	Address       *address `json:"address,omitempty"`
	ContactMethod string   `json:"contactMethod,omitempty" validate:"omitempty,oneof=phone email"`
	Phone         string   `json:"phone,omitempty"`
	Email         string   `json:"email,omitempty"`
}

// schema202012Tool is declared like every tool (its schema inferred from contactArgs), then its
// schema gains the JSON Schema 2020-12 keywords the suite checks survive tools/list untouched
// ($schema, $defs with $anchor, $ref, allOf/anyOf, if/then/else, additionalProperties:false),
// which no Go type expresses.
func schema202012Tool() *toolkit.Tool {
	t := define("json_schema_2020_12_tool", "Conformance fixture: a tool whose input schema uses JSON Schema 2020-12 keywords (SEP-1613, SEP-2106).",
		func(_ context.Context, _ *toolkit.Call, in contactArgs) (blocks, error) {
			b, _ := json.Marshal(in)
			return text("JSON Schema 2020-12 tool called with: " + string(b)), nil
		})
	s := t.Definition().InputSchema.(*jsonschema.Schema)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Defs = map[string]*jsonschema.Schema{"address": {
		Anchor: "addressDef", Type: "object",
		Properties: map[string]*jsonschema.Schema{"street": {Type: "string"}, "city": {Type: "string"}},
	}}
	s.Properties["address"] = &jsonschema.Schema{Ref: "#/$defs/address"}
	s.AllOf = []*jsonschema.Schema{{AnyOf: []*jsonschema.Schema{{Required: []string{"phone"}}, {Required: []string{"email"}}}}}
	s.If = &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"contactMethod": {Const: jsonschema.Ptr[any]("phone")}}, Required: []string{"contactMethod"}}
	s.Then = &jsonschema.Schema{Required: []string{"phone"}}
	s.Else = &jsonschema.Schema{Required: []string{"email"}}
	// additionalProperties:false is already there: the toolkit refuses unknown arguments.
	return t
}

var templateRe = regexp.MustCompile(`^test://template/([^/]+)/data$`)

// Install adds the fixture resources and prompts to a server (an mcpserver extension) and
// starts the watched resource's updates for it.
func (f *Fixtures) Install(s *mcp.Server, _ bool) {
	textRes := func(uri, mime, body string) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{URI: StaticTextURI, Name: "static-text", Description: "A static text resource for testing", MIMEType: "text/plain"},
		textRes(StaticTextURI, "text/plain", "This is the content of the static text resource."))
	s.AddResource(&mcp.Resource{URI: StaticBinaryURI, Name: "static-binary", Description: "A static binary resource (image) for testing", MIMEType: "image/png"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: StaticBinaryURI, MIMEType: "image/png", Blob: pngData}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: WatchedURI, Name: "watched-resource", Description: "A resource that announces an update every few seconds", MIMEType: "text/plain"},
		textRes(WatchedURI, "text/plain", "Watched resource content"))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: TemplateURI, Name: "template", Description: "A resource template with parameter substitution", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			m := templateRe.FindStringSubmatch(req.Params.URI)
			if m == nil {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			b, _ := json.Marshal(map[string]any{"id": m[1], "templateTest": true, "data": "Data for ID: " + m[1]})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
	for _, p := range slices.Concat(prompts, []prompt{inputRequiredPrompt}) {
		s.AddPrompt(p.def, p.get)
	}
	for _, t := range rawTools() { // the 2026-07-28 fixtures (mrtr.go)
		s.AddTool(t.def, t.h)
	}
	f.watch(s)
}

func (f *Fixtures) watch(s *mcp.Server) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watching[s] {
		return
	}
	f.watching[s] = true
	go func() {
		t := time.NewTicker(f.WatchEvery)
		defer t.Stop()
		for {
			select {
			case <-f.ctx.Done():
				return
			case <-t.C:
				_ = s.ResourceUpdated(f.ctx, &mcp.ResourceUpdatedNotificationParams{URI: WatchedURI})
			}
		}
	}()
}

type prompt struct {
	def *mcp.Prompt
	get mcp.PromptHandler
}

func messages(desc string, ms ...*mcp.PromptMessage) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Description: desc, Messages: ms}, nil
}

func user(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }

var prompts = []prompt{
	{&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return messages("A simple test prompt", user(&mcp.TextContent{Text: "This is a simple prompt for testing."}))
		}},
	{&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return messages("A prompt with arguments", user(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}))
		}},
	{&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			return messages("A prompt with an embedded resource",
				user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				user(&mcp.TextContent{Text: "Please process the embedded resource above."}))
		}},
	{&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return messages("A prompt with an image",
				user(&mcp.ImageContent{Data: pngData, MIMEType: "image/png"}),
				user(&mcp.TextContent{Text: "Please analyze the image above."}))
		}},
}

// Completions declares the fixture prompts and template for completion/complete: resourceUri
// completes to the fixture resources; the free-text arguments answer an empty list.
func Completions() *completion.Set {
	set := completion.NewSet()
	for _, p := range slices.Concat(prompts, []prompt{inputRequiredPrompt}) {
		set.Prompt(p.def.Name, nil)
	}
	set.Prompt("test_prompt_with_embedded_resource", map[string]completion.Source{
		"resourceUri": completion.Values(StaticTextURI, StaticBinaryURI, WatchedURI),
	})
	set.Template(TemplateURI, nil)
	return set
}
