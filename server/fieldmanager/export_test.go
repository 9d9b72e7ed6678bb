package fieldmanager

// Update's two ways of recording a create, for the test that they agree.
var (
	CreatedByShortcut = func(f *FieldManager, obj Object, manager string) ([]any, bool) {
		PlainNumbers(obj)
		return f.created(obj, manager)
	}
	CreatedByFieldManager = func(f *FieldManager, obj Object, manager string) Object {
		PlainNumbers(obj)
		return f.update(nil, obj, manager)
	}
)
