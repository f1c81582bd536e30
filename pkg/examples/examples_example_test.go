package examples_test

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/examples"
)

func ExampleAll() {
	graphs, err := examples.All()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range graphs {
		m := g.Manifest()
		fmt.Println(m.GraphName, m.GraphHash == "", m.Nodes.Names())
	}
	// Output:
	// data_pipeline false [extract transform load]
	// content_classifier false [classify handle_question handle_complaint handle_feedback summarize]
	// support_agent false [classify_request draft_reply finalize_reply]
}

func ExampleSupportAgent() {
	g, err := examples.SupportAgent()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Manifest().GraphHash, g.Manifest().EventHandlerNames)
	// Output: af183f226f37e6fc [approval]
}
