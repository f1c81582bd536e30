package a2aserver

import (
	"errors"
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

func TestRPCError_MapsEachKind(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err      error
		code     int
		internal bool
	}{
		{engine.ErrRunNotFound, CodeTaskNotFound, false},
		{fmt.Errorf("get: %w", engine.ErrRunNotFound), CodeTaskNotFound, false},
		{&engine.RunFinishedError{InstanceID: "r", Status: engine.StatusCompleted}, CodeTaskNotCancelable, false},
		{&durable.EventPayloadError{Event: "approval", Field: "approved", Reason: "want a boolean"}, CodeInvalidParams, false},
		{&engine.UnknownEventError{Event: "x", Graph: "g"}, CodeInvalidParams, false},
		{&engine.VersionUnavailableError{Graph: "g"}, CodeInternalError, false},
		{fmt.Errorf("list: %w", engine.ErrInvalidQuery), CodeInvalidParams, false},
		{rpcErr(CodeUnsupportedOperation, "no"), CodeUnsupportedOperation, false},
		{errors.New("table storage: 500"), CodeInternalError, true},
	} {
		e, internal := rpcError(tt.err)
		if e.Code != tt.code || internal != tt.internal {
			t.Errorf("rpcError(%v) = %d internal=%v, want %d internal=%v", tt.err, e.Code, internal, tt.code, tt.internal)
		}
		if internal && e.Message != "internal error" {
			t.Errorf("an internal error shows %q", e.Message)
		}
	}
}
