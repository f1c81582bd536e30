package azsdk

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// CreateContainer creates the container of c unless it exists (an existing container is not
// an error). It returns the SDK's error unreduced.
func CreateContainer(ctx context.Context, c *container.Client) error {
	if _, err := c.Create(ctx, nil); err != nil && Classify(err).Kind != AlreadyExists {
		return err
	}
	return nil
}
