package sandboxes

import (
	"testing"

	format "kubeplay/playground/scenario"
)

// TestOwnTemplate: the scenario a visitor starts from is one (the browser
// test runs it).
func TestOwnTemplate(t *testing.T) {
	if _, err := format.Parse([]byte(ownTemplate)); err != nil {
		t.Error(err)
	}
}
