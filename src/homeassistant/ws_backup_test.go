package homeassistant

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestWSCoreBackups drives core's backup integration as a Container install has it: one local
// agent, generate in the background, info, details, delete, and HA's own refusals.
func TestWSCoreBackups(t *testing.T) {
	t.Parallel()
	h := ownHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	agents, err := c.BackupAgents(ctx)
	if err != nil || LocalBackupAgent(agents) != "backup.local" {
		t.Fatalf("BackupAgents() = %v, %v", agents, err)
	}
	job, err := c.GenerateBackup(ctx, BackupRequest{AgentIDs: []string{"backup.local"}, Name: "Client test", ExcludeDatabase: true})
	if err != nil || len(job) != 8 {
		t.Fatalf("GenerateBackup() = %q, %v", job, err)
	}
	var info CoreBackupInfo
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if info, err = c.BackupInfo(ctx); err != nil {
			t.Fatal(err)
		}
		if info.State == "idle" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backup never finished: %+v", info)
		}
	}
	if len(info.Backups) != 1 || info.LastActionEvent == nil || info.LastActionEvent.State != "completed" {
		t.Fatalf("BackupInfo() = %+v", info)
	}
	b := info.Backups[0]
	if b.BackupID != job || b.Name != "Client test" || b.DatabaseIncluded || !b.HomeAssistantIncluded || b.LocalAgent() != "backup.local" || b.Size() == 0 || b.Protected() {
		t.Fatalf("backup: %+v", b)
	}
	if d, err := c.BackupDetails(ctx, job); err != nil || d == nil || d.BackupID != job {
		t.Fatalf("BackupDetails() = %+v, %v", d, err)
	}
	if d, err := c.BackupDetails(ctx, "0badc0de"); err != nil || d != nil {
		t.Fatalf("BackupDetails(unknown) = %+v, %v", d, err)
	}
	tests := []struct {
		name string
		call func() error
		code string
		msg  string
	}{
		{"no agent", func() error { _, err := c.GenerateBackup(ctx, BackupRequest{AgentIDs: []string{}}); return err },
			"home_assistant_error", "At least one available backup agent must be selected, got []"},
		{"unknown agent", func() error {
			_, err := c.GenerateBackup(ctx, BackupRequest{AgentIDs: []string{"cloud.nope"}})
			return err
		},
			"home_assistant_error", "got ['cloud.nope']"},
		{"folders", func() error {
			return c.Call(ctx, "backup/generate", map[string]any{"agent_ids": []string{"backup.local"}, "include_folders": []string{"share"}}, nil)
		}, "home_assistant_error", "Addons and folders are not supported by core backup"},
		{"bad folder", func() error {
			return c.Call(ctx, "backup/generate", map[string]any{"agent_ids": []string{"backup.local"}, "include_folders": []string{"etc"}}, nil)
		}, "invalid_format", "expected Folder @ data['include_folders'][0]"},
		{"no agent_ids", func() error { return c.Call(ctx, "backup/generate", map[string]any{}, nil) },
			"invalid_format", "required key not provided @ data['agent_ids']"},
		{"restore unknown", func() error { return c.RestoreBackup(ctx, "0badc0de", "backup.local", "", false) },
			"home_assistant_error", "Backup 0badc0de not found in agent backup.local"},
		{"restore folders", func() error {
			return c.Call(ctx, "backup/restore", map[string]any{"backup_id": job, "agent_id": "backup.local", "restore_folders": []string{"share"}}, nil)
		}, "home_assistant_error", "Addons and folders are not supported in core restore"},
		{"restore nothing", func() error {
			return c.Call(ctx, "backup/restore", map[string]any{"backup_id": job, "agent_id": "backup.local", "restore_homeassistant": false, "restore_database": false}, nil)
		}, "home_assistant_error", "Home Assistant or database must be included in restore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var api *APIError
			if err := tt.call(); !errors.As(err, &api) || api.Code != tt.code || !strings.Contains(api.Message, tt.msg) {
				t.Fatalf("got %v, want %s %q", err, tt.code, tt.msg)
			}
		})
	}
	if failed, err := c.DeleteBackup(ctx, job); err != nil || len(failed) != 0 {
		t.Fatalf("DeleteBackup() = %v, %v", failed, err)
	}
	// Home Assistant answers the same for an id nobody has.
	if failed, err := c.DeleteBackup(ctx, job); err != nil || len(failed) != 0 {
		t.Fatalf("DeleteBackup(again) = %v, %v", failed, err)
	}
	if info, err := c.BackupInfo(ctx); err != nil || len(info.Backups) != 0 {
		t.Fatalf("after delete: %+v, %v", info, err)
	}
}

// TestWSUpdateReleaseNotes: the notes of an entity that has them, and HA's answers for one
// that does not, one that does not exist, and a malformed id.
func TestWSUpdateReleaseNotes(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	notes, err := c.UpdateReleaseNotes(ctx, "update.mushroom_update")
	if err != nil || !strings.Contains(notes, "What's Changed") {
		t.Fatalf("UpdateReleaseNotes() = %q, %v", notes, err)
	}
	for _, tt := range []struct{ id, code, msg string }{
		{"update.home_assistant_core_update", "not_supported", "Entity does not support release notes"},
		{"update.nothing", "not_found", "Entity not found"},
		{"Update Core", "invalid_format", "is an invalid entity ID"},
	} {
		var api *APIError
		if _, err := c.UpdateReleaseNotes(ctx, tt.id); !errors.As(err, &api) || api.Code != tt.code || !strings.Contains(api.Message, tt.msg) {
			t.Errorf("UpdateReleaseNotes(%s) = %v, want %s", tt.id, err, tt.code)
		}
	}
}
