package launch

// Unexported names the external tests (package launch_test) read.
var (
	HostJSON                   = renderHostJSON
	LoadKeys                   = loadKeys
	NewLogger                  = newLogger
	NamesFor                   = namesFor
	MemoryRetention            = memoryRetention
	ServerConfigFromEnv        = serverConfigFromEnv
	ErrDistributedNeedsStorage = errDistributedNeedsStorage
	ErrLockNotFromSettings     = errLockNotFromSettings
	StepLeaseFrom              = stepLeaseFrom
)

// HostFunctionTimeout is host.json's functionTimeout.
const HostFunctionTimeout = hostFunctionTimeout
