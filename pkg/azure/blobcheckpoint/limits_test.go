package blobcheckpoint_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure/blobcheckpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// Arguments beyond Azure's limits are refused before any request: the container client
// points at a closed port, so a request would fail with a different error.
func TestSaver_LimitsCheckedBeforeRequests(t *testing.T) {
	c, err := container.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/none", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := blobcheckpoint.New(c, blobcheckpoint.Options{})
	ctx := t.Context()
	long := strings.Repeat("é", checkpoint.MaxNameLength/4)
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"thread id too long once escaped", s.Put(ctx, long, "", checkpoint.Checkpoint{ID: "c1"}, nil), checkpoint.ErrInvalidArgument},
		{"channel name too long", s.Put(ctx, "t", "", checkpoint.Checkpoint{ID: "c1", ChannelVersions: map[string]string{long: "1"}}, nil), checkpoint.ErrInvalidArgument},
		{"write metadata above 8 KiB", s.PutWrites(ctx, checkpoint.Ref{ThreadID: "t", ID: "c1"}, []checkpoint.Write{
			{TaskID: "x", TaskPath: strings.Repeat("/", checkpoint.MaxMetadataBytes/3+1), Idx: 0, Value: checkpoint.Value{SerdeType: "json"}}}), checkpoint.ErrInvalidArgument},
		{"negative retention", func() error { _, err := s.Prune(ctx, "t", "", -1); return err }(), checkpoint.ErrInvalidArgument},
		{"value above the cap", s.Put(ctx, "t", "", checkpoint.Checkpoint{ID: "c1", ChannelVersions: map[string]string{"a": "1"}},
			map[string]checkpoint.Value{"a": {SerdeType: "json", Data: make([]byte, checkpoint.MaxValueBytes+1)}}), checkpoint.ErrTooLarge},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v; want %v", tt.name, tt.err, tt.want)
		}
	}
}
