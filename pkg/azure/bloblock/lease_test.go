package bloblock

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/funcgraph/funcgraph/pkg/lock"
)

// The lock's behaviour on storage is tested against Azurite (integration_*_test.go), with
// faultproxy for the failures. These are the pure parts: how an error is read.

// TestLeaseErrors_Classification covers the codes Azurite does not answer with (it says
// LeaseAlreadyPresent where Azure says LeaseIsBreakingAndCannotBeAcquired, and never answers
// LeaseLost or a 412 to a lease call): the lock's rules read any 409, or any code starting
// with "lease", as held elsewhere, and a lease-lost code or any 412 on renewal as definitive.
func TestLeaseErrors_Classification(t *testing.T) {
	respErr := func(status int, code string) error {
		return fmt.Errorf("acquire: %w", &azcore.ResponseError{StatusCode: status, ErrorCode: code})
	}
	tests := []struct {
		err                error
		conflict, definite bool
	}{
		{respErr(http.StatusConflict, "LeaseAlreadyPresent"), true, false},
		{respErr(http.StatusConflict, "SomethingElse"), true, false},
		{respErr(http.StatusConflict, "LeaseIsBreakingAndCannotBeAcquired"), true, false},
		{respErr(http.StatusPreconditionFailed, "leaseIsBreakingAndCannotBeAcquired"), true, true},
		{respErr(http.StatusConflict, "LeaseIdMismatchWithLeaseOperation"), true, true},
		{respErr(http.StatusConflict, "leaselost"), true, true},
		{respErr(http.StatusConflict, "LeaseNotPresentWithLeaseOperation"), true, true},
		{respErr(http.StatusPreconditionFailed, "LeaseIdMissing"), true, true},
		{respErr(http.StatusPreconditionFailed, "ConditionNotMet"), false, true},
		{respErr(http.StatusConflict, "LeaseIsBrokenAndCannotBeRenewed"), true, false},
		{respErr(http.StatusServiceUnavailable, "ServerBusy"), false, false},
		{respErr(http.StatusInternalServerError, "InternalError"), false, false},
		{respErr(http.StatusForbidden, "AuthorizationFailure"), false, false},
		{context.DeadlineExceeded, false, false},
		{errors.New("connection reset by peer"), false, false},
	}
	for _, tt := range tests {
		if got := isLeaseConflict(tt.err); got != tt.conflict {
			t.Errorf("isLeaseConflict(%v) = %v, want %v", tt.err, got, tt.conflict)
		}
		if got := isDefinitiveLoss(tt.err); got != tt.definite {
			t.Errorf("isDefinitiveLoss(%v) = %v, want %v", tt.err, got, tt.definite)
		}
	}
}

func TestContextWithLoss_InProcess_CancelIsTheCause(t *testing.T) {
	in := lock.NewInProcessThreadLock()
	tok, _, _ := in.Acquire(t.Context(), "g", "t", 0)
	ctx, cancel := lock.ContextWithLoss(t.Context(), in, "g", "t", tok)
	if ctx.Err() != nil {
		t.Error("in-process context cancelled early")
	}
	cancel()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause after cancel = %v, want context.Canceled", context.Cause(ctx))
	}
}
