package engine_test

import (
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// A child run's id derives from its parent's step: every attempt of the step names the same
// child, and a later run that reuses the parent's id (a new nonce) names another. An id that
// would pass 256 characters is hashed.
func ExampleChildInstanceID() {
	fmt.Println(engine.ChildInstanceID("order-42", 1, "3f9a1b2c4d5e", 2))
	long := engine.ChildInstanceID(strings.Repeat("x", 250), 1, "3f9a1b2c4d5e", 2)
	fmt.Println(len(long), strings.HasPrefix(long, engine.ChildRunPrefix))
	// Output:
	// child~order-42~1.3f9a1b2c4d5e~2
	// 46 true
}
