package funchosttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

const queueFunc = `{"bindings":[{"name":"msg","type":"queueTrigger","direction":"in","queueName":"work-items","connection":"AzureWebJobsStorage"}]}`

func failing() *recorder {
	return &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) {
		w.WriteHeader(http.StatusInternalServerError)
	}}
}

// The queue-trigger payload (double-encoded string and message metadata).
func TestEmulator_QueuePayload_MatchesGolden(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) { writeResult(w, map[string]any{}) }}
	e := start(t, writeApp(t, "", map[string]string{"worker": queueFunc}), rec, funchosttest.Options{})
	e.EnqueueBase64("work-items", `hello "world"`)
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	inv := rec.last(t)
	checkGolden(t, "queue_double_encoded", inv)
	if got := inv.Payload["Data"].(map[string]any)["msg"]; got != `"hello \"world\""` {
		t.Errorf("Data.msg = %q, want the double-encoded string", got)
	}
	checkQueueMetadata(t, inv.Payload["Metadata"].(map[string]any), "1")
	if len(e.Queue("work-items")) != 0 {
		t.Errorf("queue after success = %q, want empty", e.Queue("work-items"))
	}
}

var queueTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`)

// checkQueueMetadata asserts the host's queue-trigger Metadata: Id and PopReceipt
// double-encoded, DequeueCount a string, the times as Json.NET writes a DateTimeOffset.
func checkQueueMetadata(t *testing.T, md map[string]any, count string) {
	t.Helper()
	if md["DequeueCount"] != count {
		t.Errorf("Metadata.DequeueCount = %#v, want the string %q", md["DequeueCount"], count)
	}
	for _, key := range []string{"Id", "PopReceipt"} {
		s, _ := md[key].(string)
		var inner string
		if json.Unmarshal([]byte(s), &inner) != nil || inner == "" {
			t.Errorf("Metadata.%s = %#v, want a double-encoded string", key, md[key])
		}
	}
	for _, key := range []string{"InsertionTime", "ExpirationTime", "NextVisibleTime"} {
		if s, _ := md[key].(string); !queueTimeRE.MatchString(s) {
			t.Errorf("Metadata.%s = %#v, want yyyy-MM-ddTHH:mm:ss+00:00", key, md[key])
		}
	}
}

func TestEmulator_QueueTrigger_Encodings(t *testing.T) {
	cases := []struct {
		name    string
		host    string
		single  bool
		enqueue func(e *funchosttest.Emulator)
		want    any // Data.msg
	}{
		{"base64 double-encoded", "", false, func(e *funchosttest.Emulator) { e.EnqueueBase64("work-items", "hi") }, `"hi"`},
		{"base64 single-encoded", "", true, func(e *funchosttest.Emulator) { e.EnqueueBase64("work-items", "hi") }, `hi`},
		{"messageEncoding none", `{"customHandler":{"description":{"defaultExecutablePath":"x"}},"extensions":{"queues":{"messageEncoding":"none"}}}`, false,
			func(e *funchosttest.Emulator) { e.Enqueue("work-items", "aGk=") }, `"aGk="`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) { writeResult(w, nil) }}
			e := start(t, writeApp(t, tc.host, map[string]string{"worker": queueFunc}), rec, funchosttest.Options{SingleEncodedStrings: tc.single})
			tc.enqueue(e)
			if err := e.DrainQueues(t.Context()); err != nil {
				t.Fatal(err)
			}
			p := rec.last(t).Payload
			if got := p["Data"].(map[string]any)["msg"]; got != tc.want {
				t.Errorf("Data.msg = %q, want %q", got, tc.want)
			}
			md := p["Metadata"].(map[string]any)
			if tc.single {
				// the docs' shape: plain strings, a numeric count
				if id, _ := md["Id"].(string); md["DequeueCount"] != float64(1) || !guidRE.MatchString(id) {
					t.Errorf("single-encoded Metadata = %v, want DequeueCount 1 and a plain Id", md)
				}
			} else {
				checkQueueMetadata(t, md, "1")
			}
		})
	}
}

func TestEmulator_QueueTrigger_NotBase64GoesToPoison(t *testing.T) {
	rec := &recorder{}
	e := start(t, writeApp(t, "", map[string]string{"worker": queueFunc}), rec, funchosttest.Options{})
	e.Enqueue("work-items", "not base64!")
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rec.count() != 0 || len(e.Queue("work-items")) != 0 || !reflect.DeepEqual(e.Queue("work-items-poison"), []string{"not base64!"}) {
		t.Errorf("invocations %d, queue %q, poison %q; want 0, empty, the message", rec.count(), e.Queue("work-items"), e.Queue("work-items-poison"))
	}
}

func TestEmulator_QueueTrigger_RetriesThenPoison(t *testing.T) {
	cases := []struct {
		name     string
		host     string
		attempts int
	}{
		{"default five dequeues", "", 5},
		{"maxDequeueCount from host.json", `{"customHandler":{"description":{"defaultExecutablePath":"x"}},"extensions":{"queues":{"maxDequeueCount":2}}}`, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := failing()
			e := start(t, writeApp(t, tc.host, map[string]string{"worker": queueFunc}), rec, funchosttest.Options{})
			e.EnqueueBase64("work-items", "doomed")
			if err := e.DrainQueues(t.Context()); err != nil {
				t.Fatal(err)
			}
			if rec.count() != tc.attempts {
				t.Errorf("attempts = %d, want %d", rec.count(), tc.attempts)
			}
			for i, inv := range rec.calls {
				if got := inv.Payload["Metadata"].(map[string]any)["DequeueCount"]; got != strconv.Itoa(i+1) {
					t.Errorf("attempt %d DequeueCount = %v", i+1, got)
				}
			}
			if len(e.Queue("work-items")) != 0 || !reflect.DeepEqual(e.QueueContents("work-items-poison"), []string{"doomed"}) {
				t.Errorf("queue %q, poison %q", e.Queue("work-items"), e.QueueContents("work-items-poison"))
			}
		})
	}
}

// Delivery through funchost's custom handler: outputs are applied and the message deleted.
func TestEmulator_QueueTrigger_ThroughFunchost(t *testing.T) {
	app := funchost.NewFunctionApp()
	var seen []string
	err := app.HandleQueue(funchost.QueueFunction{Name: "step", QueueName: "in-q",
		Outputs: []funchost.OutputBinding{{Name: "next", Type: "queue", QueueName: "out-q"}},
		Handler: func(_ context.Context, msg funchost.QueueMessage) (funchost.Outputs, error) {
			seen = append(seen, string(msg.Body))
			if msg.DequeueCount < 2 {
				return nil, errors.New("transient")
			}
			return funchost.Outputs{"next": map[string]any{"done": string(msg.Body)}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e := funchosttest.StartApp(t, app, funchosttest.Options{})
	e.EnqueueBase64("in-q", `{"job":1}`)
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"job":1}`, `{"job":1}`}; !reflect.DeepEqual(seen, want) {
		t.Errorf("handler saw %q, want %q (one failure, one retry)", seen, want)
	}
	var out map[string]string
	contents := e.QueueContents("out-q")
	if len(contents) != 1 || json.Unmarshal([]byte(contents[0]), &out) != nil || out["done"] != `{"job":1}` {
		t.Errorf("out-q = %q", contents)
	}
	if len(e.Queue("in-q")) != 0 || len(e.Queue("in-q-poison")) != 0 {
		t.Errorf("in-q = %q, poison = %q; want both empty", e.Queue("in-q"), e.Queue("in-q-poison"))
	}
}

func TestEmulator_QueuePoller_DeliversInBackground(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) { writeResult(w, nil) }}
	e := start(t, writeApp(t, "", map[string]string{"worker": queueFunc}), rec, funchosttest.Options{QueuePollInterval: 5 * time.Millisecond})
	e.EnqueueBase64("work-items", "bg")
	deadline := time.Now().Add(5 * time.Second)
	for rec.count() == 0 || len(e.Queue("work-items")) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("poller did not deliver: %d invocations, queue %q", rec.count(), e.Queue("work-items"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
