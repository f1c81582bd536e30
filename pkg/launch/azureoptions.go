package launch

import "github.com/funcgraph/funcgraph/pkg/azure"

// azureOptions are the options FromEnv builds its Azure clients with: nil, the SDK defaults
// (and, under identity-based settings, the credential the settings describe). Tests of this
// package set a credential and a transport here to answer as a storage account would; they
// do not run in parallel with other tests while they do.
var azureOptions *azure.Options
