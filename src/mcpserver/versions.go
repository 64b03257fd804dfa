package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// firstCacheVersion is the protocol version that added ttlMs and cacheScope to list, read and
// discovery results.
const firstCacheVersion = "2026-07-28"

// olderClientResults gives a client of an earlier protocol version the results of its version:
// the go-sdk writes the 2026-07-28 cache fields into every cacheable result, whatever the
// client negotiated, and a strict client of 2025 rejects fields its schema does not have.
func olderClientResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil {
			return res, err
		}
		if _, ok := res.(mcp.CacheableResult); !ok {
			return res, nil
		}
		if v, ok := req.(interface{ ProtocolVersion() string }); ok && v.ProtocolVersion() >= firstCacheVersion {
			return res, nil
		}
		return withoutCacheFields{res}, nil
	}
}

// withoutCacheFields is a cacheable result written without ttlMs and cacheScope.
type withoutCacheFields struct{ mcp.Result }

func (r withoutCacheFields) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "ttlMs")
	delete(m, "cacheScope")
	return json.Marshal(m)
}
