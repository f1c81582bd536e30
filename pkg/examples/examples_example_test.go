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
		fmt.Println(m.GraphName, m.GraphHash == "", m.NodeNames())
	}
	// Output:
	// data_pipeline false [extract transform load]
	// content_classifier false [classify handle_question handle_complaint handle_feedback summarize]
	// support_agent false [classify_request draft_reply finalize_reply]
	// research_agent false [plan search draft review publish escalate]
	// reply_writer false [compose]
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

// ResearchAgent fans out one search branch per source, each under the search node's own
// retry policy, joins the findings in source order, and waits for an approval.
func ExampleResearchAgent() {
	g, err := examples.ResearchAgent()
	if err != nil {
		fmt.Println(err)
		return
	}
	m := g.Manifest()
	fmt.Println(m.GraphHash, m.EventHandlerNames, m.Reducers)
	fmt.Println("search attempts:", g.NodePolicy("search").Retry.MaxAttempts)
	// Output:
	// f808bdc33d582085 [approval] map[findings:append]
	// search attempts: 3
}
