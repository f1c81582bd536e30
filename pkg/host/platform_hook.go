package host

// Options returns the app's options with every default applied, for surfaces mounted on the
// app (the platform routes read the request limits and the auth level from it).
func (a *GraphHostApp) Options() Options { return a.opts }
