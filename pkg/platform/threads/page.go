package threads

import (
	"slices"
	"strings"
)

// SortAndPage orders threads newest CreatedAt first (ties by ThreadID) and applies q's Offset
// and Limit. Backends that filter client-side use it so every backend pages alike.
func SortAndPage(ts []Thread, q Query) []Thread {
	slices.SortFunc(ts, func(a, b Thread) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ThreadID, b.ThreadID)
	})
	if q.Offset > 0 {
		if q.Offset >= len(ts) {
			return []Thread{}
		}
		ts = ts[q.Offset:]
	}
	if q.Limit > 0 && len(ts) > q.Limit {
		ts = ts[:q.Limit]
	}
	return ts
}
