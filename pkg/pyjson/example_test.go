package pyjson_test

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

func ExampleMarshal() {
	body, _ := pyjson.Marshal(map[string]any{"error": "unknown graph 'café'", "ok": false})
	fmt.Println(string(body))
	// Output: {"error": "unknown graph 'caf\u00e9'", "ok": false}
}
