package toolkit

// Paging defaults shared by every list tool.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Page is embedded in the args of every tool that returns a list.
type Page struct {
	Limit  int `json:"limit,omitempty" jsonschema:"page size (default 100)" validate:"omitempty,min=1,max=1000"`
	Offset int `json:"offset,omitempty" jsonschema:"next_offset of the previous page" validate:"omitempty,min=0"`
}

// Effective returns the limit and offset with defaults applied.
func (p Page) Effective() (limit, offset int) {
	limit = p.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		limit = MaxLimit
	}
	offset = p.Offset
	if offset < 0 {
		offset = 0
	}
	return limit, offset
}

// List is the uniform shape of a paged result.
type List[T any] struct {
	Total      int  `json:"total"`
	Count      int  `json:"count"`
	Offset     int  `json:"offset"`
	NextOffset *int `json:"next_offset,omitempty"`
	Items      []T  `json:"items"`
}

// Paginate slices all according to p. Items is never nil so it encodes as [].
func Paginate[T any](all []T, p Page) List[T] {
	limit, offset := p.Effective()
	total := len(all)
	if offset > total {
		offset = total
	}
	end := min(offset+limit, total)
	return Window(all[offset:end], total, Page{Limit: limit, Offset: offset})
}

// Window builds a List from one already-fetched page (items) of a set of total items,
// e.g. rows read with SQL LIMIT/OFFSET.
func Window[T any](items []T, total int, p Page) List[T] {
	_, offset := p.Effective()
	if items == nil {
		items = []T{}
	}
	l := List[T]{Total: total, Count: len(items), Offset: offset, Items: items}
	if next := offset + len(items); next < total && len(items) > 0 {
		l.NextOffset = &next
	}
	return l
}
