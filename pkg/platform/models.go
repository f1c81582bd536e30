package platform

import (
	"encoding/json"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// Wire models of the platform routes; fields are in the contract's key order and bodies are
// written in the json.dumps style.

// assistantBody is one assistant: one per registered graph.
type assistantBody struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config"`
	CreatedAt   string         `json:"created_at"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	UpdatedAt   string         `json:"updated_at"`
	Context     map[string]any `json:"context"`
}

// threadBody is the wire form of a thread.
type threadBody struct {
	ThreadID    string          `json:"thread_id"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
	Metadata    map[string]any  `json:"metadata"`
	Status      string          `json:"status"`
	Values      json.RawMessage `json:"values"`
	AssistantID *string         `json:"assistant_id"`
	Interrupts  map[string]any  `json:"interrupts"`
}

// checkpointBody is the wire form of a checkpoint reference; all four keys are always present.
type checkpointBody struct {
	ThreadID      string  `json:"thread_id"`
	CheckpointNS  string  `json:"checkpoint_ns"`
	CheckpointID  *string `json:"checkpoint_id"`
	CheckpointMap any     `json:"checkpoint_map"`
}

// threadStateBody is the wire form of one state view.
type threadStateBody struct {
	Values           any             `json:"values"`
	Next             []string        `json:"next"`
	Checkpoint       checkpointBody  `json:"checkpoint"`
	Metadata         map[string]any  `json:"metadata"`
	CreatedAt        *string         `json:"created_at"`
	ParentCheckpoint *checkpointBody `json:"parent_checkpoint"`
	Tasks            []any           `json:"tasks"`
	Interrupts       []any           `json:"interrupts"`
}

// timeText renders t as UTC ISO-8601 with microseconds, ending in Z.
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func wireThread(t threads.Thread) threadBody {
	out := threadBody{
		ThreadID: t.ThreadID, CreatedAt: timeText(t.CreatedAt), UpdatedAt: timeText(t.UpdatedAt),
		Metadata: t.Metadata, Status: string(t.Status), Values: t.Values, Interrupts: map[string]any{},
	}
	if out.Values == nil {
		out.Values = json.RawMessage("null")
	}
	if t.AssistantID != "" {
		a := t.AssistantID
		out.AssistantID = &a
	}
	return out
}

func checkpointOf(ref CheckpointRef) checkpointBody {
	c := checkpointBody{ThreadID: ref.ThreadID, CheckpointNS: ref.NS}
	if ref.ID != "" {
		id := ref.ID
		c.CheckpointID = &id
	}
	return c
}

// refFromConfig reads configurable.{thread_id, checkpoint_ns, checkpoint_id} of a state
// view's config; ok is false for a nil config.
func refFromConfig(cfg map[string]any, threadID string) (CheckpointRef, bool) {
	if cfg == nil {
		return CheckpointRef{}, false
	}
	c, _ := cfg["configurable"].(map[string]any)
	ref := CheckpointRef{ThreadID: threadID}
	if v, ok := c["thread_id"].(string); ok && v != "" {
		ref.ThreadID = v
	}
	ref.NS, _ = c["checkpoint_ns"].(string)
	ref.ID, _ = c["checkpoint_id"].(string)
	return ref, true
}
