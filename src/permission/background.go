package permission

import (
	"context"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// auditWait is the most a tool call waits for room in the audit queue before the entry is dropped
// (and counted). The queue only fills if the disk stalls.
const auditWait = 50 * time.Millisecond

// background runs goroutines that Close waits for, and refuses new ones once closing.
type background struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (b *background) Go(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Go(f)
	return true
}

func (b *background) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.wg.Wait()
}

// grantOp is one change to the persisted token grants, applied in the order the grants changed.
type grantOp struct {
	del bool // delete rec's grant (all of the key's when all is set) instead of saving rec
	all bool
	rec store.GrantRecord
}

// enqueue is called under Manager.mu, so the queue order is the order the grants changed in memory.
func (m *Manager) enqueue(op grantOp) {
	if m.store == nil {
		return
	}
	m.opsMu.Lock()
	m.ops = append(m.ops, op)
	m.opsMu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default: // the writer is already due to look
	}
}

// writer is the one goroutine that writes to the store, so tool calls never wait on the disk.
func (m *Manager) writer() {
	batch := make([]store.AuditEntry, 0, auditBatch)
	for {
		select {
		case e := <-m.audits:
			m.writeAudits(append(batch[:0], e))
		case <-m.kick:
			m.flushOps()
		case <-m.stop:
			m.writeAudits(batch[:0])
			m.flushOps()
			return
		}
	}
}

// auditBatch bounds how many queued entries go into one transaction.
const auditBatch = 256

// writeAudits writes batch and whatever else is queued, auditBatch entries a transaction.
func (m *Manager) writeAudits(batch []store.AuditEntry) {
	for {
		for len(batch) < auditBatch {
			select {
			case e := <-m.audits:
				batch = append(batch, e)
				continue
			default:
			}
			break
		}
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := m.store.AppendAudits(ctx, batch); err != nil {
			m.log.Error("permission: audit entries not written", "entries", len(batch), "first_tool", batch[0].Tool, "err", err)
		}
		cancel()
		if len(batch) < auditBatch {
			return
		}
		batch = batch[:0]
	}
}

func (m *Manager) flushOps() {
	m.opsMu.Lock()
	ops := m.ops
	m.ops = nil
	m.opsMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, op := range ops {
		var err error
		switch {
		case op.del && op.all:
			err = m.store.DeleteGrants(ctx, op.rec.Key)
		case op.del:
			err = m.store.DeleteGrant(ctx, op.rec.Key, op.rec.Category)
		default:
			err = m.store.SaveGrant(ctx, op.rec)
		}
		if err != nil {
			m.log.Error("permission: token grant change not saved; it holds until restart", "category", op.rec.Category, "err", err)
		}
	}
}

// Audit queues an entry for the audit log. It waits at most a moment for room, so a slow disk never
// holds up a tool call; an entry that cannot be queued is counted and reported at Close.
func (m *Manager) Audit(ctx context.Context, e store.AuditEntry) {
	if m.store == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = m.clock()
	}
	select {
	case <-m.stop: // the writer has drained its queue or is about to
		m.drops.Add(1)
		return
	case m.audits <- e:
		return
	default:
	}
	t := time.NewTimer(auditWait)
	defer t.Stop()
	select {
	case m.audits <- e:
	case <-t.C:
		m.drops.Add(1)
	case <-ctx.Done():
		m.drops.Add(1)
	case <-m.stop:
		m.drops.Add(1)
	}
}

// record audits a permission event (request, grant, denial, page view) without ever blocking: it
// may run while Manager.mu is held.
func (m *Manager) record(r Request, outcome, detail string, now time.Time) {
	if m.store == nil {
		return
	}
	e := store.AuditEntry{Time: now, SessionID: r.SessionKey, Client: r.Client, Tool: r.Tool,
		Category: string(r.Category), ArgsSummary: r.ArgsSummary, Outcome: outcome, Detail: detail, Kind: "permission"}
	select {
	case m.audits <- e:
	default:
		m.drops.Add(1)
	}
}
