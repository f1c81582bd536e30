package a2aserver

import "encoding/json"

// The A2A v1.0 objects the endpoint reads and writes, in their JSON-RPC binding (ProtoJSON
// member names, enums by their proto names).

// Task states (TaskState), as the JSON binding spells them.
const (
	StateSubmitted     = "TASK_STATE_SUBMITTED"
	StateWorking       = "TASK_STATE_WORKING"
	StateInputRequired = "TASK_STATE_INPUT_REQUIRED"
	StateCompleted     = "TASK_STATE_COMPLETED"
	StateFailed        = "TASK_STATE_FAILED"
	StateCanceled      = "TASK_STATE_CANCELED"
)

// Message roles (Role).
const (
	RoleUser  = "ROLE_USER"
	RoleAgent = "ROLE_AGENT"
)

// ProtocolVersion is the A2A version served, the card's protocolVersion.
const ProtocolVersion = "1.0"

// Part is one piece of a message or an artifact: exactly one of Text, Data (any JSON value),
// URL or Raw.
type Part struct {
	Text      *string         `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Raw       *string         `json:"raw,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// Message is one turn of the conversation.
type Message struct {
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId,omitempty"`
	TaskID           string          `json:"taskId,omitempty"`
	Role             string          `json:"role"`
	Parts            []Part          `json:"parts"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
}

// TaskStatus is a task's state, with the agent's message about it.
type TaskStatus struct {
	State     string   `json:"state"`
	Message   *Message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

// Artifact is an output of a task: the run's output.
type Artifact struct {
	ArtifactID  string          `json:"artifactId"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []Part          `json:"parts"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

// Task is a durable run seen as an A2A task.
type Task struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    TaskStatus      `json:"status"`
	Artifacts []Artifact      `json:"artifacts,omitempty"`
	History   []Message       `json:"history,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// TaskStatusUpdateEvent is a streamed change of a task's status.
type TaskStatusUpdateEvent struct {
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Status    TaskStatus `json:"status"`
}

// TaskArtifactUpdateEvent is a streamed artifact of a task.
type TaskArtifactUpdateEvent struct {
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  Artifact `json:"artifact"`
	// Append adds the artifact's parts to those sent before under its id.
	Append    bool `json:"append,omitempty"`
	LastChunk bool `json:"lastChunk"`
}

// StreamResponse is one event of a stream: exactly one member set.
type StreamResponse struct {
	Task           *Task                    `json:"task,omitempty"`
	Message        *Message                 `json:"message,omitempty"`
	StatusUpdate   *TaskStatusUpdateEvent   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *TaskArtifactUpdateEvent `json:"artifactUpdate,omitempty"`
}

// SendMessageConfiguration tunes SendMessage.
type SendMessageConfiguration struct {
	AcceptedOutputModes []string `json:"acceptedOutputModes,omitempty"`
	HistoryLength       *int     `json:"historyLength,omitempty"`
	// ReturnImmediately answers with the task as soon as the run is started (or the event
	// stored), without waiting for it to finish or to need input.
	ReturnImmediately bool `json:"returnImmediately,omitempty"`
	// Blocking is the pre-1.0 spelling of the opposite of ReturnImmediately: false asks for
	// an immediate answer.
	Blocking *bool `json:"blocking,omitempty"`
	// TaskPushNotificationConfig is refused: push notifications are not supported.
	TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig,omitempty"`
	// PushNotificationConfig is the pre-1.0 spelling, refused alike.
	PushNotificationConfig json.RawMessage `json:"pushNotificationConfig,omitempty"`
}

// SendMessageRequest is the params of SendMessage and SendStreamingMessage.
type SendMessageRequest struct {
	Message       *Message                  `json:"message"`
	Configuration *SendMessageConfiguration `json:"configuration,omitempty"`
	Metadata      json.RawMessage           `json:"metadata,omitempty"`
}

// SendMessageResponse is the result of SendMessage: a task for a durable graph, a message
// for a hosted one.
type SendMessageResponse struct {
	Task    *Task    `json:"task,omitempty"`
	Message *Message `json:"message,omitempty"`
}

// GetTaskRequest is the params of GetTask, CancelTask and SubscribeToTask.
type GetTaskRequest struct {
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength,omitempty"`
}

// ListTasksRequest is the params of ListTasks.
type ListTasksRequest struct {
	ContextID        string `json:"contextId,omitempty"`
	Status           string `json:"status,omitempty"`
	PageSize         int    `json:"pageSize,omitempty"`
	PageToken        string `json:"pageToken,omitempty"`
	HistoryLength    *int   `json:"historyLength,omitempty"`
	IncludeArtifacts *bool  `json:"includeArtifacts,omitempty"`
}

// ListTasksResponse is the result of ListTasks. TotalSize counts this page's tasks: the
// engine keeps no count of a caller's runs.
type ListTasksResponse struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	PageSize      int    `json:"pageSize"`
	TotalSize     int    `json:"totalSize"`
}
