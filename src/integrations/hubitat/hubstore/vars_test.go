package hubstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestRuleVariables(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	if _, ok, err := s.RuleVariable(ctx, "away"); ok || err != nil {
		t.Fatalf("before any write: ok %v, err %v", ok, err)
	}
	for i, v := range []string{"no", "yes"} {
		if err := s.SetRuleVariable(ctx, "away", v, t0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetRuleVariable(ctx, "Away", "case matters", t0); err != nil {
		t.Fatal(err)
	}
	v, ok, err := s.RuleVariable(ctx, "away")
	if !ok || err != nil || v.Value != "yes" || !v.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("away: %+v %v %v", v, ok, err)
	}
	all, err := s.RuleVariables(ctx)
	if err != nil || len(all) != 2 || all[0].Name != "Away" || all[1].Name != "away" {
		t.Errorf("list: %+v %v", all, err)
	}
	if err := s.SetRuleVariable(ctx, "", "x", t0); err == nil {
		t.Error("an empty name was stored")
	}
}

// The model sets these variables: the store stops growing at its bound, while existing ones can
// still change.
func TestRuleVariablesBounded(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now()
	// Fill it in one transaction (a thousand separate commits take seconds).
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxRuleVariables - 1 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO hubitat_rule_variables (name, value, updated_at) VALUES (?, '1', 0)`, fmt.Sprintf("v%04d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRuleVariable(ctx, "last", "1", now); err != nil {
		t.Fatalf("the last one that fits: %v", err)
	}
	if err := s.SetRuleVariable(ctx, "one_more", "1", now); !errors.Is(err, ErrTooManyRuleVariables) {
		t.Fatalf("past the bound: %v", err)
	}
	if err := s.SetRuleVariable(ctx, "v0007", "2", now); err != nil {
		t.Fatalf("updating an existing one at the bound: %v", err)
	}
}
