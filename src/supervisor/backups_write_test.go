package supervisor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitJob polls a job until it is done.
func waitJob(t *testing.T, c *Client, id string) Job {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		j, err := c.Job(context.Background(), id)
		if err != nil {
			t.Fatalf("Job(%s): %v", id, err)
		}
		if j.Done {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never finished: %+v", id, j)
		}
	}
}

// TestBackupLifecycle makes a partial backup in the background, follows its job to the slug,
// restores part of it, and deletes it.
func TestBackupLifecycle(t *testing.T) {
	c := simClient(t)
	ctx := context.Background()
	job, slug, err := c.NewBackup(ctx, BackupRequest{Name: "Lifecycle", Partial: true, Folders: []string{"share"}, Addons: []string{"core_mosquitto"}})
	if err != nil || job == "" || slug != "" {
		t.Fatalf("NewBackup() = %q, %q, %v (background: no slug yet)", job, slug, err)
	}
	j := waitJob(t, c, job)
	if len(j.Errors) > 0 || j.Reference == nil {
		t.Fatalf("job: %+v", j)
	}
	slug = *j.Reference
	info, err := c.BackupInfo(ctx, slug)
	if err != nil || info.Name != "Lifecycle" || info.Type != "partial" || info.HomeAssistant != nil || len(info.Addons) != 1 || info.Addons[0].Slug != "core_mosquitto" {
		t.Fatalf("BackupInfo() = %+v, %v", info, err)
	}
	rjob, err := c.RestoreBackup(ctx, slug, RestoreRequest{Partial: true, Folders: []string{"share"}})
	if err != nil || rjob == "" {
		t.Fatalf("RestoreBackup() = %q, %v", rjob, err)
	}
	if j := waitJob(t, c, rjob); len(j.Errors) > 0 {
		t.Fatalf("restore job: %+v", j)
	}
	if err := c.DeleteBackup(ctx, slug); err != nil {
		t.Fatal(err)
	}
	wantAPIError(t, c.DeleteBackup(ctx, slug), 404)
	_, err = c.RestoreBackup(ctx, slug, RestoreRequest{})
	wantAPIError(t, err, 404)
	_, err = c.Job(ctx, "0123456789abcdef0123456789abcdef")
	wantAPIError(t, err, 404)
}

// TestBackupEncryptedRestore: a protected backup restored without its password fails with the
// Supervisor's 400 naming the job, whose error says why.
func TestBackupEncryptedRestore(t *testing.T) {
	c := simClient(t)
	ctx := context.Background()
	job, _, err := c.NewBackup(ctx, BackupRequest{Name: "Locked", Password: "s3cret", Partial: true, Folders: []string{"ssl"}})
	if err != nil {
		t.Fatal(err)
	}
	slug := *waitJob(t, c, job).Reference
	defer c.DeleteBackup(ctx, slug)
	_, err = c.RestoreBackup(ctx, slug, RestoreRequest{})
	if e := wantAPIError(t, err, 400); e.Message == "" {
		t.Fatal(e)
	}
}

// TestBackupIDs: a slug or job id that could steer the path never leaves the client.
func TestBackupIDs(t *testing.T) {
	c := simClient(t)
	ctx := context.Background()
	for _, id := range []string{"", "../core/restart", "a/b", "x?y", "%2e%2e"} {
		if _, err := c.BackupInfo(ctx, id); !errors.Is(err, ErrBadID) {
			t.Errorf("BackupInfo(%q) = %v", id, err)
		}
		if err := c.DeleteBackup(ctx, id); !errors.Is(err, ErrBadID) {
			t.Errorf("DeleteBackup(%q) = %v", id, err)
		}
		if _, err := c.Job(ctx, id); !errors.Is(err, ErrBadID) {
			t.Errorf("Job(%q) = %v", id, err)
		}
	}
}
