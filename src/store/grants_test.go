package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestGrantsPersistAndExpire(t *testing.T) {
	s, path := openTemp(t)
	ctx := context.Background()
	hour := time.Hour
	grants := []GrantRecord{
		{Key: "token:a", Category: "filesystem", Via: "code", GrantedAt: t0, ExpiresAt: t0.Add(8 * hour)},
		{Key: "token:a", Category: "database", Via: "approval", GrantedAt: t0, ExpiresAt: t0.Add(1 * hour)},
		{Key: "token:b", Category: "command", Via: "elicitation", GrantedAt: t0, ExpiresAt: t0.Add(8 * hour)},
	}
	for _, g := range grants {
		if err := s.SaveGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	// Upsert: a renewed grant replaces the old row.
	renewed := grants[2]
	renewed.Via, renewed.ExpiresAt = "approval", t0.Add(9*hour)
	if err := s.SaveGrant(ctx, renewed); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	tests := []struct {
		name string
		now  time.Time
		want []GrantRecord
	}{
		{"all live", t0.Add(time.Minute), []GrantRecord{grants[1], grants[0], renewed}},
		{"database expired", t0.Add(2 * hour), []GrantRecord{grants[0], renewed}},
		{"expiry instant is expired", t0.Add(8 * hour), []GrantRecord{renewed}},
		{"all expired", t0.Add(10 * hour), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.LoadGrants(ctx, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("grant %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestDeleteGrants(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	for _, g := range []GrantRecord{
		{Key: "k1", Category: "filesystem", Via: "code", GrantedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		{Key: "k1", Category: "database", Via: "code", GrantedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		{Key: "k2", Category: "filesystem", Via: "code", GrantedAt: t0, ExpiresAt: t0.Add(time.Hour)},
	} {
		if err := s.SaveGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteGrant(ctx, "k1", "database"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGrants(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.LoadGrants(ctx, t0)
	if len(got) != 1 || got[0].Key != "k1" || got[0].Category != "filesystem" {
		t.Fatalf("after deletes: %+v, want only k1/filesystem", got)
	}
	if err := s.SaveGrant(ctx, GrantRecord{Category: "filesystem"}); err == nil || !strings.Contains(err.Error(), "key and category are required") {
		t.Fatalf("SaveGrant without key: %v", err)
	}
}
