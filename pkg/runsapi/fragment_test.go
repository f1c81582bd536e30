package runsapi

import (
	"encoding/json"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

func TestFragmentOf_WireOrder(t *testing.T) {
	t.Parallel()
	m := durable.GraphManifest{
		GraphName: "g", Version: "0.1.0", GraphHash: "0123456789abcdef", StateModelName: "testState", Entrypoint: "a",
		Nodes:             []durable.NodeDefinition{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "solo"}, {Name: "fb"}},
		EventHandlerNames: []string{"go"},
	}
	frag, _ := json.Marshal(fragmentOf(m))
	wantFrag := `{"graph_name":"g","version":"0.1.0","graph_hash":"` + m.GraphHash + `","entrypoint":"a","state_model_name":"testState","nodes":["a","b","c","solo","fb"],"events":["go"]}`
	if string(frag) != wantFrag {
		t.Fatalf("fragment:\n got %s\nwant %s", frag, wantFrag)
	}
}
