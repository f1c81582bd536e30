package runsapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMount_OpenAPI_DocumentsRealStatusesAndGraphInputs(t *testing.T) {
	h, _ := mountedApp(t)
	raw, err := json.Marshal(h.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]struct{ Responses map[string]json.RawMessage } `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]string{
		"/api/graphs/{graph_name}/runs":               {"202", "400", "404", "409", "413"},
		"/api/runs/{instance_id}/events/{event_name}": {"202", "404", "409", "413"},
		"/api/runs/{instance_id}/cancel":              {"202", "400", "404", "409", "413"},
	} {
		got := doc.Paths[path]["post"].Responses
		if _, ok := got["200"]; ok {
			t.Errorf("%s documents 200; it answers 202", path)
		}
		for _, status := range want {
			if _, ok := got[status]; !ok {
				t.Errorf("%s does not document %s (has %v)", path, status, got)
			}
		}
	}
	in, ok := doc.Components.Schemas["RunInput_support_agent"]
	if !ok || in.Properties["user_message"] == nil || in.Properties["approved"] == nil {
		t.Fatalf("no run input schema from SupportState: %+v", in)
	}
	if strings.Contains(string(raw), "pyFalsy") {
		t.Fatal("openapi.json uses internal wording (pyFalsy)")
	}
}

// Issue #21: the combined app's document keeps the runs service's x-afdg-graphs key, and
// documents the cancel body as optional.
func TestMount_OpenAPI_KeepsRegisteredGraphsAndOptionalCancelBody(t *testing.T) {
	h, _ := mountedApp(t)
	raw, err := json.Marshal(h.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Required bool `json:"required"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Graphs []struct {
					GraphName string `json:"graph_name"`
				} `json:"x-afdg-graphs"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range doc.Components.Schemas["RegisteredGraphs"].Graphs {
		names = append(names, g.GraphName)
	}
	if !strings.Contains(strings.Join(names, ","), "support_agent") {
		t.Fatalf("RegisteredGraphs x-afdg-graphs = %v, want the durable graphs", names)
	}
	cancel := doc.Paths["/api/runs/{instance_id}/cancel"]["post"].RequestBody
	start := doc.Paths["/api/graphs/{graph_name}/runs"]["post"].RequestBody
	if cancel == nil || cancel.Required || start == nil || !start.Required {
		t.Fatalf("cancel body %+v (want optional), start body %+v (want required)", cancel, start)
	}
}
