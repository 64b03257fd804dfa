package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"golang.org/x/oauth2"
)

// haUser is what Home Assistant's auth/current_user says about the person who logged in.
type haUser struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	IsOwner bool   `json:"is_owner"`
	IsAdmin bool   `json:"is_admin"`
}

// haConfig is hamcp as an IndieAuth client of Home Assistant: its client id is its own external URL,
// it has no secret, and HA wants the client id in the form body.
func (s *Server) haConfig() *oauth2.Config {
	return &oauth2.Config{
		ClientID:    s.haClientID,
		RedirectURL: s.haRedirect,
		Endpoint: oauth2.Endpoint{
			AuthURL:   s.haBrowser + "/auth/authorize",
			TokenURL:  s.haInternal + "/auth/token",
			AuthStyle: oauth2.AuthStyleInParams,
		},
	}
}

// errHA wraps failures talking to Home Assistant; its text is safe to show the user.
type errHA struct{ msg string }

func (e *errHA) Error() string { return e.msg }

// haIdentify exchanges Home Assistant's code, asks HA who the user is, and revokes the HA session
// straight away: hamcp needs the identity, never HA's tokens.
func (s *Server) haIdentify(ctx context.Context, code string) (haUser, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tok, err := s.haConfig().Exchange(context.WithValue(ctx, oauth2.HTTPClient, s.o.HTTPClient), code)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			status := 0
			if re.Response != nil {
				status = re.Response.StatusCode
			}
			return haUser{}, &errHA{fmt.Sprintf("Home Assistant refused the login code (HTTP %d %s %s). Start again from your assistant.", status, re.ErrorCode, re.ErrorDescription)}
		}
		return haUser{}, &errHA{"Home Assistant could not be reached to finish the login: " + redactErr(err)}
	}
	defer s.haRevoke(tok.RefreshToken)
	u, err := s.haCurrentUser(ctx, tok.AccessToken)
	if err != nil {
		return haUser{}, &errHA{"Home Assistant did not say who logged in: " + redactErr(err)}
	}
	return u, nil
}

// haRevoke ends the HA session created for the login (POST /auth/revoke always answers 200).
func (s *Server) haRevoke(refreshToken string) {
	if refreshToken == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.haInternal+"/auth/revoke",
		strings.NewReader(url.Values{"token": {refreshToken}}.Encode()))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.o.HTTPClient.Do(req)
	if err != nil {
		s.log.Warn("could not revoke the Home Assistant login session; it expires on its own after 90 days unused", "err", redactErr(err))
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.log.Warn("Home Assistant did not accept the revocation of the login session", "status", resp.StatusCode)
	}
}

// haCurrentUser runs auth/current_user over HA's WebSocket API with the user's access token.
func (s *Server) haCurrentUser(ctx context.Context, accessToken string) (haUser, error) {
	wsURL := "ws" + strings.TrimPrefix(s.haInternal, "http") + "/api/websocket"
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: s.o.HTTPClient})
	if err != nil {
		return haUser{}, fmt.Errorf("connect to %s: %w", wsURL, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	var msg struct {
		ID      int    `json:"id"`
		Type    string `json:"type"`
		Message string `json:"message"`
		Success bool   `json:"success"`
		Result  haUser `json:"result"`
		Error   *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := wsjson.Read(ctx, conn, &msg); err != nil || msg.Type != "auth_required" {
		return haUser{}, fmt.Errorf("expected auth_required from the WebSocket API (got %q, %v)", msg.Type, err)
	}
	if err := wsjson.Write(ctx, conn, map[string]string{"type": "auth", "access_token": accessToken}); err != nil {
		return haUser{}, err
	}
	if err := wsjson.Read(ctx, conn, &msg); err != nil {
		return haUser{}, err
	}
	if msg.Type != "auth_ok" {
		return haUser{}, fmt.Errorf("the WebSocket API refused the new access token: %s %s", msg.Type, msg.Message)
	}
	if err := wsjson.Write(ctx, conn, map[string]any{"id": 1, "type": "auth/current_user"}); err != nil {
		return haUser{}, err
	}
	for {
		msg.Error = nil
		if err := wsjson.Read(ctx, conn, &msg); err != nil {
			return haUser{}, err
		}
		if msg.ID != 1 || msg.Type != "result" {
			continue
		}
		if !msg.Success {
			if msg.Error != nil {
				return haUser{}, fmt.Errorf("auth/current_user failed: %s: %s", msg.Error.Code, msg.Error.Message)
			}
			return haUser{}, errors.New("auth/current_user failed")
		}
		if msg.Result.ID == "" {
			return haUser{}, errors.New("auth/current_user returned no user id")
		}
		conn.Close(websocket.StatusNormalClosure, "")
		return msg.Result, nil
	}
}

// redactErr keeps error text short and free of query strings, which could carry codes.
func redactErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		u := ue.URL
		if i := strings.IndexByte(u, '?'); i >= 0 {
			u = u[:i]
		}
		return ue.Op + " " + u + ": " + ue.Err.Error()
	}
	return err.Error()
}
