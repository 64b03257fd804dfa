package httpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/authn"
)

type tokenKey struct{}

func tokenInfo(r *http.Request) *auth.TokenInfo {
	if ti, ok := r.Context().Value(tokenKey{}).(*auth.TokenInfo); ok {
		return ti
	}
	return auth.TokenInfoFromContext(r.Context())
}

// authenticate checks the bearer token through the verifier chain. Tokens are only accepted
// in the Authorization header, never in the URL. On success the token info is handed to the
// go-sdk (which binds sessions to the token's user) through its own middleware.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	if s.o.NoAuth {
		return next
	}
	sdk := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		return tokenInfo(r), nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return func(c echo.Context) error {
		r := c.Request()
		h := r.Header.Get("Authorization")
		scheme, token, found := strings.Cut(h, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return s.challenge(c, "", "a bearer token is required: send Authorization: Bearer <token>")
		}
		info, err := s.o.Verifier.Verify(r.Context(), strings.TrimSpace(token))
		switch {
		case errors.Is(err, authn.ErrUnavailable):
			c.Response().Header().Set("Retry-After", "5")
			return refusal(c, http.StatusServiceUnavailable, "the token cannot be checked right now because Home Assistant is not reachable; try again shortly")
		case errors.Is(err, authn.ErrForbidden):
			writeRPCError(c.Response(), http.StatusForbidden, &rpcError{Code: codeUnauthorized, Message: err.Error()})
			return nil
		case err != nil:
			return s.challenge(c, "invalid_token", "the access token is invalid, expired or revoked")
		}
		r = r.WithContext(context.WithValue(r.Context(), tokenKey{}, info))
		c.SetRequest(r)
		var nextErr error
		sdk(http.HandlerFunc(func(w http.ResponseWriter, r2 *http.Request) {
			c.SetRequest(r2)
			nextErr = next(c)
		})).ServeHTTP(c.Response(), r)
		return nextErr
	}
}

// challenge answers 401 with a WWW-Authenticate header that points OAuth clients at the
// protected resource metadata once OAuth is on.
func (s *Server) challenge(c echo.Context, errCode, msg string) error {
	parts := []string{`Bearer realm="hamcp"`}
	if s.o.ResourceMetadataURL != "" {
		parts = append(parts, fmt.Sprintf(`resource_metadata="%s"`, s.o.ResourceMetadataURL))
	}
	if errCode != "" {
		parts = append(parts, fmt.Sprintf(`error="%s"`, errCode))
	}
	c.Response().Header().Set("WWW-Authenticate", strings.Join(parts, ", "))
	// The body is a JSON-RPC error (MCP's -32001), so a client that reads only bodies still
	// learns why; OAuth clients follow the header.
	writeRPCError(c.Response(), http.StatusUnauthorized, &rpcError{Code: codeUnauthorized, Message: msg})
	return nil
}

// TokenInfo returns the authenticated identity of a request served by a MountAuthed route.
func TokenInfo(r *http.Request) *auth.TokenInfo { return tokenInfo(r) }
