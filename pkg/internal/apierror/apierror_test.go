package apierror_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

func TestShape_Reply_WritesEachSurfaceShape(t *testing.T) {
	t.Parallel()
	notFound := apierror.Newf(apierror.ErrNotFound, "Thread %s not found", "'café'")
	conflict := &apierror.Error{Kind: apierror.ErrConflict, Message: "instance already exists",
		Fields: []apierror.Field{{Name: "instance_id", Value: "r"}, {Name: "runtime_status", Value: "Running"}}}
	secret := fmt.Errorf("storage: key=secret: %w", errors.New("boom"))
	full := &membudget.ExceededError{Limit: 10, Used: 9, Want: 2, NewWork: true}
	fullOfAlice := &membudget.ExceededError{Owner: "alice", Limit: 10, Used: 9, Want: 2, NewWork: true}
	tests := []struct {
		name       string
		shape      apierror.Shape
		err        error
		wantStatus int
		wantBody   string
	}{
		{"hosting", apierror.Hosting, notFound, 404, `{"error":"error","detail":"Thread 'café' not found"}`},
		{"platform", apierror.Platform, notFound, 404, `{"detail": "Thread 'caf\u00e9' not found"}`},
		{"runs", apierror.Runs, notFound, 404, `{"error": "Thread 'caf\u00e9' not found"}`},
		{"runs fields", apierror.Runs, conflict, 409, `{"error": "instance already exists", "instance_id": "r", "runtime_status": "Running"}`},
		{"hosting internal", apierror.Hosting, secret, 500, `{"error":"error","detail":"Internal server error"}`},
		{"platform internal", apierror.Platform, secret, 500, `{"detail": "Internal server error"}`},
		{"runs internal", apierror.Runs, secret, 500, `{"error": "internal error"}`},
		{"wrapped keeps its message", apierror.Hosting, fmt.Errorf("admit: %w", notFound), 404, `{"error":"error","detail":"Thread 'café' not found"}`},
		{"explicit status", apierror.Hosting, &apierror.Error{Status: 418, Message: "teapot"}, 418, `{"error":"error","detail":"teapot"}`},
		{"validation", apierror.Hosting, apierror.Invalid("input", "Field required"), 422, `{"error":"error","detail":"Validation error: input: Field required"}`},
		{"graph failed", apierror.Platform, apierror.GraphFailed, 500, `{"detail": "Graph execution failed"}`},
		{"unread late", apierror.Hosting, apierror.Unread("Request body not received in time", true), 408, `{"error":"error","detail":"Request body not received in time"}`},
		{"unread", apierror.Platform, apierror.Unread("Malformed request body: invalid chunked encoding", false), 400, `{"detail": "Malformed request body: invalid chunked encoding"}`},
		{"no caller", apierror.Hosting, apierror.UnresolvedCaller(apierror.NewKind(apierror.ErrUnauthorized, "none")), 401, `{"error":"error","detail":"Unauthorized: the request carries no caller identity"}`},
		{"untrusted peer", apierror.Platform, apierror.UnresolvedCaller(apierror.NewKind(apierror.ErrForbidden, "peer")), 403, `{"detail": "Forbidden: the identity header is only accepted from a trusted proxy"}`},
		{"invalid identity", apierror.Platform, apierror.UnresolvedCaller(apierror.NewKind(apierror.ErrBadRequest, "bad")), 400, `{"detail": "` + apierror.InvalidIdentityMessage + `"}`},
		{"wait bound", apierror.Platform, apierror.WaitExceeded(1500 * time.Millisecond), 504,
			`{"detail": "Graph run did not finish within 1.5 s; it goes on in the background"}`},
		{"budget, hosting", apierror.Hosting, fmt.Errorf("put checkpoint: %w", full), 507,
			`{"error":"error","detail":"` + apierror.StorageFullMessage + `"}`},
		{"budget of an identity, platform", apierror.Platform, fmt.Errorf("create thread: %w", fullOfAlice), 507,
			`{"detail": "` + apierror.IdentityStorageFullMessage + `"}`},
		{"budget, runs", apierror.Runs, fmt.Errorf("start run: %w", full), 507,
			`{"error": "` + apierror.StorageFullMessage + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := tt.shape.Reply(tt.err)
			if status != tt.wantStatus || string(body) != tt.wantBody {
				t.Errorf("Reply = %d %s, want %d %s", status, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

func TestStatus_KindsAndTheirCases(t *testing.T) {
	t.Parallel()
	invalidConfig := apierror.NewKind(apierror.ErrBadRequest, "invalid config")
	tests := []struct {
		err  error
		want int
	}{
		{apierror.New(apierror.ErrBadRequest, "x"), 400},
		{apierror.New(apierror.ErrUnauthorized, "x"), 401},
		{apierror.New(apierror.ErrForbidden, "x"), 403},
		{apierror.New(apierror.ErrNotFound, "x"), 404},
		{apierror.New(apierror.ErrRequestTimeout, "x"), 408},
		{apierror.New(apierror.ErrConflict, "x"), 409},
		{apierror.New(apierror.ErrTooLarge, "x"), 413},
		{apierror.New(apierror.ErrValidation, "x"), 422},
		{apierror.New(apierror.ErrInternal, "x"), 500},
		{apierror.New(apierror.ErrNotImplemented, "x"), 501},
		{apierror.New(apierror.ErrBusy, "x"), 503},
		{apierror.New(apierror.ErrWaitExceeded, "x"), 504},
		{apierror.New(apierror.ErrStorageFull, "x"), 507},
		{fmt.Errorf("submit: %w", &membudget.ExceededError{}), 507},
		{apierror.New(invalidConfig, "x"), 400},
		{fmt.Errorf("read body: %w", apierror.ErrBadRequest), 400},
		{errors.New("anything else"), 500},
		{nil, 500},
	}
	for _, tt := range tests {
		if got := apierror.Status(tt.err); got != tt.want {
			t.Errorf("Status(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	if err := apierror.New(invalidConfig, "x"); !errors.Is(err, invalidConfig) || !errors.Is(err, apierror.ErrBadRequest) {
		t.Errorf("%v is not both its case and its kind", err)
	}
}

func TestShape_Write_SetsContentType(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	apierror.Runs.Write(rec, apierror.New(apierror.ErrBusy, "instance is busy, retry later"))
	if rec.Code != 503 || rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != `{"error": "instance is busy, retry later"}` {
		t.Errorf("Write = %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

// NewWorkRefused refuses a body the budget cannot take with the 507 of whose limit it hit,
// leaves a body past the route's cap to the cap, and counts an undeclared length as a byte.
func TestNewWorkRefused_DeclaredBodyAgainstTheBudget(t *testing.T) {
	t.Parallel()
	b, err := membudget.New(membudget.Limits{Total: 8000, PerIdentity: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Grow(t.Context(), "eve", 1750); err != nil { // eve at 7/8 of her share
		t.Fatal(err)
	}
	if err := b.Grow(t.Context(), "", 4000); err != nil { // 5750 of the total's 7000 for new work
		t.Fatal(err)
	}
	eve, alice := membudget.NewWork(t.Context(), "eve"), membudget.NewWork(t.Context(), "alice")
	req := func(n int64) *http.Request {
		r := httptest.NewRequest("POST", "/", nil)
		r.ContentLength = n
		return r
	}
	tests := []struct {
		name string
		ctx  context.Context
		b    *membudget.Budget
		n    int64
		want string // "" admitted
	}{
		{"no budget", eve, nil, 100, ""},
		{"eve past her share", eve, b, 1, apierror.IdentityStorageFullMessage},
		{"eve, an undeclared length", eve, b, -1, apierror.IdentityStorageFullMessage},
		{"eve, a body past the cap", eve, b, 2001, ""},
		{"alice within", alice, b, 1250, ""},
		{"alice past the total", alice, b, 1251, apierror.StorageFullMessage},
	}
	for _, tt := range tests {
		err := apierror.NewWorkRefused(tt.ctx, tt.b, req(tt.n), 2000)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want admitted", tt.name, err)
			}
			continue
		}
		if msg, _ := apierror.Message(err); apierror.Status(err) != http.StatusInsufficientStorage || msg != tt.want {
			t.Errorf("%s: %d %q, want 507 %q", tt.name, apierror.Status(err), msg, tt.want)
		}
	}
	if b.Used() != 5750 {
		t.Fatalf("used %d, want 5750: nothing accounted", b.Used())
	}
}
