package blobstore

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

func answer(status int, code string, header http.Header) error {
	return fmt.Errorf("call: %w", &azcore.ResponseError{StatusCode: status, ErrorCode: code,
		RawResponse: &http.Response{StatusCode: status, Header: header}})
}

// Each answer of the blob service to a log's append or read maps to the contract's error: a
// full log (Azure's 50 000 blocks, which Azurite's test cannot reach cheaply, or the seal) to
// the live appends limit, a moved append position to a conflict.
func TestLive_Classify_AnswersToContractErrors(t *testing.T) {
	t.Parallel()
	l := NewLive(nil, &LiveOptions{MaxAppends: 7})
	const key = "run/n/live"
	tests := []struct {
		status int
		code   string
		want   error
		limit  string
	}{
		{412, "AppendPositionConditionNotMet", engine.ErrConflict, ""},
		{409, "BlockCountExceedsLimit", engine.ErrTooLarge, "live appends"},
		{409, "BlobIsSealed", engine.ErrTooLarge, "live appends"},
		{404, "BlobNotFound", engine.ErrNotFound, ""},
		{413, "RequestBodyTooLarge", engine.ErrTooLarge, ""},
		{404, "ContainerNotFound", nil, ""},
		{503, "ServerBusy", nil, ""},
	}
	for _, tt := range tests {
		err := l.classify(key, answer(tt.status, tt.code, nil))
		for _, s := range []error{engine.ErrConflict, engine.ErrTooLarge, engine.ErrNotFound} {
			if errors.Is(err, s) != (s == tt.want) {
				t.Errorf("%d %s: err = %v, want %v", tt.status, tt.code, err, tt.want)
			}
		}
		var le *engine.LimitError
		if tt.limit != "" && (!errors.As(err, &le) || le.Limit != tt.limit || le.Max != 7 || le.Key != key) {
			t.Errorf("%d %s: err = %v, want a %s *LimitError of max 7 on %s", tt.status, tt.code, err, tt.limit, key)
		}
	}
}

func TestLive_NewLive_AppendLimitWithinAzures(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts *LiveOptions
		want int
	}{{nil, engine.MaxLiveAppends}, {&LiveOptions{}, engine.MaxLiveAppends}, {&LiveOptions{MaxAppends: -1}, engine.MaxLiveAppends},
		{&LiveOptions{MaxAppends: 3}, 3}, {&LiveOptions{MaxAppends: engine.MaxLiveAppends + 1}, engine.MaxLiveAppends}} {
		if got := NewLive(nil, tt.opts).maxAppends; got != tt.want {
			t.Errorf("NewLive(%+v).maxAppends = %d, want %d", tt.opts, got, tt.want)
		}
	}
}

func TestLive_UnsatisfiedLength_FromContentRange(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		header string
		want   int64
	}{{"bytes */11", 11}, {"bytes */0", 0}, {"", -1}, {"bytes 0-1/2", -1}, {"bytes */x", -1}, {"bytes */-3", -1}} {
		err := answer(416, "InvalidRange", http.Header{"Content-Range": {tt.header}})
		if got := unsatisfiedLength(err); got != tt.want {
			t.Errorf("Content-Range %q: length %d, want %d", tt.header, got, tt.want)
		}
	}
	if got := unsatisfiedLength(errors.New("dial: refused")); got != -1 {
		t.Errorf("a transport error: length %d, want -1", got)
	}
}
