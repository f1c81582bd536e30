package funchost

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestBindQueueName_WritesBindingExpressions(t *testing.T) {
	app := testApp(t) // queue trigger on work-items with an output to next
	if err := app.BindQueueName("work-items", "WORK_QUEUE"); err != nil {
		t.Fatal(err)
	}
	if err := app.BindQueueName("next", "NEXT_QUEUE"); err != nil {
		t.Fatal(err)
	}
	if err := app.BindQueueName("unused", "UNUSED_QUEUE"); err != nil {
		t.Fatal(err)
	}
	fj := app.FunctionJSONs()["work"]
	if got := fj.Bindings[0].QueueName; got != "%WORK_QUEUE%" {
		t.Errorf("trigger queueName = %q, want %%WORK_QUEUE%%", got)
	}
	if got := fj.Bindings[1].QueueName; got != "%NEXT_QUEUE%" {
		t.Errorf("output queueName = %q, want %%NEXT_QUEUE%%", got)
	}
	want := []AppSetting{
		{Name: "NEXT_QUEUE", Value: "next", Functions: []string{"work"}},
		{Name: "WORK_QUEUE", Value: "work-items", Functions: []string{"work"}},
	}
	if got := app.AppSettings(); !reflect.DeepEqual(got, want) {
		t.Errorf("AppSettings = %+v, want %+v (an unread setting is not listed)", got, want)
	}
}

func TestBindQueueName_Refusals(t *testing.T) {
	app := NewFunctionApp()
	if err := app.BindQueueName("q1", "Q"); err != nil {
		t.Fatal(err)
	}
	if err := app.BindQueueName("Q1", "Q"); err != nil {
		t.Errorf("binding the same queue to the same setting again: %v", err)
	}
	for _, tc := range []struct{ queue, setting, want string }{
		{"q1", "OTHER", "bound to Q"},
		{"q2", "Q", `names queue "q1"`},
		{"", "X", "empty queue name"},
		{"q3", "%X%", "setting name"},
		{"q3", "A-B", "setting name"},
	} {
		if err := app.BindQueueName(tc.queue, tc.setting); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("BindQueueName(%q, %q) = %v, want an error with %q", tc.queue, tc.setting, err, tc.want)
		}
	}
}

func TestMount_CarriesQueueSettings(t *testing.T) {
	sub := NewFunctionApp()
	if err := sub.HandleQueue(QueueFunction{Name: "w", QueueName: "jobs",
		Handler: func(context.Context, QueueMessage) (Outputs, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := sub.BindQueueName("jobs", "JOBS_QUEUE"); err != nil {
		t.Fatal(err)
	}
	app := NewFunctionApp()
	if err := app.Mount(sub); err != nil {
		t.Fatal(err)
	}
	if got := app.FunctionJSONs()["w"].Bindings[0].QueueName; got != "%JOBS_QUEUE%" {
		t.Errorf("mounted trigger queueName = %q, want %%JOBS_QUEUE%%", got)
	}
}
