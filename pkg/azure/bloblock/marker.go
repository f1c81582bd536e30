package bloblock

import "github.com/funcgraph/funcgraph/pkg/checkpoint"

// DefaultBlobPrefix is where marker blobs live when Options.BlobPrefix is empty.
const DefaultBlobPrefix = "thread-locks/"

// markerName returns the marker blob for one key: prefix + enc(graph) + "/" + enc(thread),
// enc being checkpoint.Escape (the checkpointer's names escape their segments alike).
func markerName(prefix, graphName, threadID string) string {
	return prefix + checkpoint.Escape(graphName) + "/" + checkpoint.Escape(threadID)
}
