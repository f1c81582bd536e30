package funchost

// AddComponent records v as a part built on this function app (the graph hosting app, say), so
// that whoever serves the app can ask its parts about themselves (launch asks the hosting app
// for its thread lock) while this package knows nothing of them.
func (a *FunctionApp) AddComponent(v any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.components = append(a.components, v)
}

// Components returns the parts recorded by AddComponent, in the order they were added.
func (a *FunctionApp) Components() []any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]any(nil), a.components...)
}
