package apierror

import (
	"context"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// NewWorkRefused returns the 507 (StorageFull) of a request that creates new work when the
// memory budget b cannot take its body (membudget.Budget.Admits with the declared
// Content-Length; an undeclared or empty one counts as one byte), so the route refuses it
// before reading the body. ctx carries the caller's identity (membudget.NewWork). It is nil
// when b is nil, when the body fits, and when the declared length passes maxBody (the
// route's body cap answers that request, without reading it either).
func NewWorkRefused(ctx context.Context, b *membudget.Budget, r *http.Request, maxBody int64) error {
	if b == nil || (maxBody > 0 && r.ContentLength > maxBody) {
		return nil
	}
	return StorageFull(b.Admits(ctx, r.ContentLength))
}
