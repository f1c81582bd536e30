package funchost

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})

func TestFunctionApp_HandleHTTP_Conflicts(t *testing.T) {
	type fn struct {
		name, route string
		methods     []string
	}
	tests := []struct {
		name    string
		first   fn
		second  fn
		wantErr string // "" means both register
	}{
		{"identical routes", fn{"a", "items/{id}", nil}, fn{"b", "items/{id}", nil}, "conflicts with the route defined by function"},
		{"identical ignoring case and slashes", fn{"a", "Items/{id}", []string{"GET"}}, fn{"b", "/items/{id}/", []string{"get", "post"}}, "conflicts"},
		{"identical routes, disjoint methods", fn{"a", "items/{id}", []string{"GET"}}, fn{"b", "items/{id}", []string{"POST"}}, ""},
		{"literal sorts first", fn{"a_recent", "items/recent", nil}, fn{"b_item", "items/{id}", nil}, ""},
		{"literal sorts last", fn{"z_recent", "items/recent", nil}, fn{"b_item", "items/{id}", nil}, "more specific route"},
		{"constraint makes them disjoint", fn{"z_recent", "items/recent", nil}, fn{"b_item", "items/{id:int}", nil}, ""},
		{"crossed specificity", fn{"a", "x/{p}", nil}, fn{"b", "{q}/y", nil}, "can match the same URL"},
		{"two parameters", fn{"a", "x/{p}", nil}, fn{"b", "x/{q}", nil}, "can match the same URL"},
		{"empty route vs optional", fn{"a", "{x?}", nil}, fn{"b", "/", nil}, "more specific route"},
		{"optional tail sorts last", fn{"a", "runs", nil}, fn{"b", "runs/{id?}", nil}, ""},
		{"different lengths", fn{"a", "x/{p}", nil}, fn{"b", "x/{p}/y", nil}, ""},
		{"optional tail overlaps", fn{"z", "runs", nil}, fn{"a", "runs/{id?}", nil}, "more specific route"},
		{"catch-all after literal", fn{"a", "files/readme", nil}, fn{"b", "files/{*rest}", nil}, ""},
		{"catch-all sorts first", fn{"a", "files/{*rest}", nil}, fn{"b", "files/readme", nil}, "more specific route"},
		{"duplicate name", fn{"Same", "a", nil}, fn{"same", "b", nil}, "already registered"},
		{"reserved admin prefix", fn{"a", "x", nil}, fn{"b", "administrators/list", nil}, "built in routes"},
		{"reserved runtime prefix", fn{"a", "x", nil}, fn{"b", "/Runtime/x", nil}, "built in routes"},
		{"invalid name", fn{"a", "x", nil}, fn{"9bad", "y", nil}, "must match"},
		{"name host", fn{"a", "x", nil}, fn{"HOST", "y", nil}, "must match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := NewFunctionApp()
			if err := app.HandleHTTP(HTTPFunction{Name: tc.first.name, Route: tc.first.route, Methods: tc.first.methods, Handler: okHandler}); err != nil {
				t.Fatalf("first: %v", err)
			}
			err := app.HandleHTTP(HTTPFunction{Name: tc.second.name, Route: tc.second.route, Methods: tc.second.methods, Handler: okHandler})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("second: unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("second: error = %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wantErr != "" && len(app.HTTPFunctions()) != 1 {
				t.Fatalf("a refused function was kept")
			}
		})
	}
}

func TestFunctionApp_Mount_RefusesDuplicates(t *testing.T) {
	a, b := NewFunctionApp(), NewFunctionApp()
	mustHandle(t, a, HTTPFunction{Name: "fg_health", Route: "health", Handler: okHandler})
	mustHandle(t, b, HTTPFunction{Name: "health", Route: "health", Handler: okHandler})
	if err := a.Mount(b); !errors.Is(err, ErrRouteConflict) {
		t.Fatalf("Mount err = %v, want ErrRouteConflict", err)
	}
	c := NewFunctionApp()
	mustHandle(t, c, HTTPFunction{Name: "other", Route: "other", Handler: okHandler})
	if err := c.HandleQueue(QueueFunction{Name: "work", QueueName: "q", Handler: func(context.Context, QueueMessage) (Outputs, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := a.Mount(c); err != nil {
		t.Fatalf("Mount: %v", err)
	}
	if got := len(a.HTTPFunctions()) + len(a.QueueFunctions()); got != 3 {
		t.Fatalf("functions after mount = %d, want 3", got)
	}
}

func TestFunctionApp_HTTPFunctions_HostOrder(t *testing.T) {
	app := NewFunctionApp()
	for _, n := range []string{"b_fn", "A_fn", "a_Gn", "_"[1:] + "Z"} {
		mustHandle(t, app, HTTPFunction{Name: n, Route: "r/" + n, Handler: okHandler})
	}
	var names []string
	for _, f := range app.HTTPFunctions() {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), "A_fn,a_Gn,b_fn,Z"; got != want {
		t.Fatalf("order = %s, want %s", got, want)
	}
}

func TestFunctionApp_HandleTimerAndQueue_Validation(t *testing.T) {
	app := NewFunctionApp()
	if err := app.HandleTimer(TimerFunction{Name: "t", Schedule: "*/5 * * * *", Handler: func(context.Context, TimerInfo) (Outputs, error) { return nil, nil }}); !errors.Is(err, ErrInvalidFunction) {
		t.Errorf("5-field schedule: err = %v, want ErrInvalidFunction", err)
	}
	if err := app.HandleQueue(QueueFunction{Name: "q", Handler: func(context.Context, QueueMessage) (Outputs, error) { return nil, nil }}); !errors.Is(err, ErrInvalidFunction) {
		t.Errorf("no queue name: err = %v, want ErrInvalidFunction", err)
	}
	if err := app.HandleHTTP(HTTPFunction{Name: "h", Route: "h"}); !errors.Is(err, ErrInvalidFunction) {
		t.Errorf("nil handler: err = %v, want ErrInvalidFunction", err)
	}
	if err := app.HandleHTTP(HTTPFunction{Name: "h", Route: "h", AuthLevel: "system", Handler: okHandler}); !errors.Is(err, ErrInvalidFunction) {
		t.Errorf("bad auth level: err = %v, want ErrInvalidFunction", err)
	}
}

func mustHandle(t testing.TB, app *FunctionApp, fn HTTPFunction) {
	t.Helper()
	if err := app.HandleHTTP(fn); err != nil {
		t.Fatalf("HandleHTTP(%s): %v", fn.Name, err)
	}
}
