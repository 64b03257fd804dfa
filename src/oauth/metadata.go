package oauth

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/hamcp/hamcp/src/authn"
)

var scopesSupported = []string{authn.ScopeFull, authn.ScopeReadOnly}

// asMetadata is RFC 8414 authorization server metadata. It is hamcp's own type rather than the
// SDK's so that no empty required-looking fields (jwks_uri) are sent.
type asMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethods          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation              string   `json:"service_documentation,omitempty"`
	ProtectedResources                []string `json:"protected_resources,omitempty"`
	// RFC 8414 defaults this to true; hamcp has no request_uri support.
	RequestURIParameterSupported bool `json:"request_uri_parameter_supported"`
}

func (s *Server) asMetadata() asMetadata {
	authMethods := []string{"none", "client_secret_post", "client_secret_basic"}
	return asMetadata{
		Issuer:                            s.issuer,
		AuthorizationEndpoint:             s.issuer + "/authorize",
		TokenEndpoint:                     s.issuer + "/token",
		RegistrationEndpoint:              s.issuer + "/register",
		RevocationEndpoint:                s.issuer + "/revoke",
		ScopesSupported:                   scopesSupported,
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethods:          authMethods,
		RevocationEndpointAuthMethods:     authMethods,
		CodeChallengeMethodsSupported:     []string{"S256"},
		ClientIDMetadataDocumentSupported: true,
		AuthorizationResponseIssSupported: true,
		ProtectedResources:                []string{s.resource},
	}
}

func (s *Server) prm() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               s.resource,
		AuthorizationServers:   []string{s.issuer},
		ScopesSupported:        scopesSupported,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "hamcp (Home Assistant)",
	}
}

// cors lets browser-based clients (the MCP Inspector) read metadata and call the token endpoints;
// none of these rely on cookies, so any origin is fine.
func cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if c.Request().Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			h.Set("Access-Control-Max-Age", "86400")
			return c.NoContent(http.StatusNoContent)
		}
		return next(c)
	}
}

// Mount adds every OAuth route to e.
func (s *Server) Mount(e *echo.Echo) {
	prm := echo.WrapHandler(auth.ProtectedResourceMetadataHandler(s.prm()))
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource" + s.o.ResourcePath} {
		e.Match([]string{http.MethodGet, http.MethodOptions}, p, prm)
	}
	meta := cors(func(c echo.Context) error { return c.JSON(http.StatusOK, s.asMetadata()) })
	// RFC 8414 and OpenID discovery, root and path-inserted/appended forms: clients of each spec
	// revision probe a different one, and some derive the path from the MCP endpoint.
	for _, p := range []string{
		"/.well-known/oauth-authorization-server",
		"/.well-known/oauth-authorization-server" + s.o.ResourcePath,
		"/.well-known/openid-configuration",
		"/.well-known/openid-configuration" + s.o.ResourcePath,
		s.o.ResourcePath + "/.well-known/openid-configuration",
	} {
		e.Match([]string{http.MethodGet, http.MethodOptions}, p, meta)
	}
	e.Match([]string{http.MethodPost, http.MethodOptions}, "/register", cors(s.register))
	e.Match([]string{http.MethodPost, http.MethodOptions}, "/token", cors(s.token))
	e.Match([]string{http.MethodPost, http.MethodOptions}, "/revoke", cors(s.revoke))
	e.GET("/authorize", s.authorize)
	e.GET("/oauth/ha-callback", s.haCallback)
	e.GET("/oauth/consent", s.consentForm)
	e.POST("/oauth/consent", s.consentAnswer)
}
