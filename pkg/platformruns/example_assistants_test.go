package platformruns_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// Durable graphs as assistants: a run of support_agent on a thread stops at its wait for the
// approval event (an interrupt), and a resume delivers the approval. In an app,
// NewAssistants' result is platform.Options.Durable (launch.Assemble sets it).
func ExampleNewAssistants() {
	reg := durable.NewRegistry()
	if err := reg.Register(examples.MustSupportAgent()); err != nil {
		fmt.Println(err)
		return
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	_ = eng.Start(ctx)
	defer eng.Close()

	assistants := platformruns.NewAssistants(eng, reg.Public())
	fmt.Println(assistants.Graphs()[0].Name, platformruns.InstanceID("t1"))
	st, err := assistants.Run(ctx, platform.DurableRunRequest{ThreadID: "t1", Graph: "support_agent",
		Input: json.RawMessage(`{"user_message": "refund please"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Interrupt.Event, st.Interrupt.ResumeNode)
	st, err = assistants.Run(ctx, platform.DurableRunRequest{ThreadID: "t1", Graph: "support_agent",
		Resume: json.RawMessage(`{"approved": true, "reviewer": "ana"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	var final struct {
		FinalResponse string `json:"final_response"`
	}
	_ = json.Unmarshal(st.Values, &final)
	fmt.Println(st.Interrupt == nil, final.FinalResponse)
	// Output:
	// support_agent thread-t1
	// approval draft_reply
	// true We have queued your refund review. A team member will validate the invoice and confirm next steps. Reviewer: ana.
}
